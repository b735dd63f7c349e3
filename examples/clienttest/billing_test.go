package clienttest

import (
	"testing"
	"time"
)

// TestMonthlyCapThroughTheClock: a server that runs a whole month costs its plan's
// monthly price, not 720 hours at the hourly one. The sandbox's test clock moves the
// account a month ahead in one call, charging every hour on the way as the real
// metering does.
func TestMonthlyCapThroughTheClock(t *testing.T) {
	c, sb := startTest(t)
	ctx := testContext(t)
	// The cap is per calendar month (UTC): first move the clock to the start of a
	// month of 31 days, so that the next 720 hours stay in it.
	now := sb.now()
	start := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	for time.Date(start.Year(), start.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day() != 31 {
		start = start.AddDate(0, 1, 0)
	}
	sb.advance((start.Sub(now).Truncate(time.Second) + time.Second).String())

	if _, err := c.CreateServer(ctx, order("month")); err != nil {
		t.Fatal(err)
	}
	sb.advance("720h")

	var billing struct {
		Credit      string `json:"credit"`
		MonthToDate string `json:"month_to_date"`
	}
	if err := c.Do(ctx, "GET", "/billing", nil, &billing); err != nil {
		t.Fatal(err)
	}
	// Plan 1 of the default catalog costs 0.0070 an hour, 4.51 a month: 721 started
	// hours would be 5.05.
	if billing.MonthToDate != "4.5100" || billing.Credit != "95.4900" {
		t.Errorf("after 720 hours: month to date %s, credit %s; want 4.5100 and 95.4900", billing.MonthToDate, billing.Credit)
	}
}
