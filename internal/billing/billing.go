// Package billing holds the rules of money over time (docs/api.md, Billing): the hours a
// meter charges, the monthly cap, what a snapshot costs, and the burn figures of
// GET /billing. It does no I/O: the store runs a metering pass as set-based SQL built
// on these same rules, and the tests hold the two to each other.
package billing

import (
	"time"

	"github.com/berthhq/berth/internal/hosting"
)

// Hour is the unit of billing: each started hour of a resource is charged as it starts.
const Hour = time.Hour

// MonthStart is the start (UTC) of the calendar month t falls in.
func MonthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// MonthEnd is the start (UTC) of the calendar month after t's.
func MonthEnd(t time.Time) time.Time { return MonthStart(t).AddDate(0, 1, 0) }

// HourCharge is what one more hour costs at rate when the month has been charged
// charged already: the rate, or what is left below the cap (never negative).
func HourCharge(rate hosting.Money, cap *hosting.Money, charged hosting.Money) hosting.Money {
	if cap == nil {
		return rate
	}
	left := *cap - charged
	switch {
	case left <= 0:
		return 0
	case left < rate:
		return left
	}
	return rate
}

// ServerRate is what a server of plan costs an hour, and its monthly cap.
func ServerRate(plan hosting.Plan) (rate hosting.Money, cap *hosting.Money) {
	c := plan.PriceMonthly
	return plan.PriceHourly, &c
}

// SnapshotRate is what a stored snapshot of sizeGB costs an hour.
func SnapshotRate(sizeGB int, perGBHour hosting.Money) hosting.Money {
	return hosting.Money(sizeGB) * perGBHour
}

// RestOfMonth is what meter m will still charge from now to the end of now's calendar
// month if nothing changes: its hours yet to start that month, within its cap.
func RestOfMonth(m hosting.Meter, now time.Time) hosting.Money {
	if m.NextAt == nil {
		return 0
	}
	end := MonthEnd(now)
	if m.StoppedAt != nil && m.StoppedAt.Before(end) {
		end = *m.StoppedAt
	}
	next := *m.NextAt
	if next.Before(MonthStart(now)) {
		next = MonthStart(now) // hours of an earlier month are not this month's
	}
	if !next.Before(end) {
		return 0
	}
	hours := int64((end.Sub(next) + Hour - 1) / Hour)
	charged := hosting.Money(0)
	if m.MonthStart.Equal(MonthStart(now)) {
		charged = m.MonthCharged
	}
	total := hosting.Money(hours) * m.Rate
	if m.MonthlyCap != nil && charged+total > *m.MonthlyCap {
		total = max(*m.MonthlyCap-charged, 0)
	}
	return total
}

// Summary is what GET /billing shows.
type Summary struct {
	Credit      hosting.Money
	Currency    string
	HourlyBurn  hosting.Money
	MonthlyBurn hosting.Money
	// DaysLeft is how many whole days the credit lasts at HourlyBurn (nil when nothing
	// is billed; 0 when the credit is used up).
	DaysLeft    *int64
	MonthToDate hosting.Money
	Budget      *hosting.Money
}

// Summarize computes an account's billing figures at now from its meters and what its
// ledger charged this month (net of refunds).
func Summarize(a hosting.Account, meters []hosting.Meter, monthToDate hosting.Money, now time.Time) Summary {
	s := Summary{Credit: a.Credit, Currency: a.Currency, MonthToDate: monthToDate, MonthlyBurn: monthToDate, Budget: a.Budget}
	for _, m := range meters {
		if m.Active() {
			s.HourlyBurn += m.Rate
		}
		s.MonthlyBurn += RestOfMonth(m, now)
	}
	if s.HourlyBurn > 0 {
		days := int64(0)
		if s.Credit > 0 {
			days = int64(s.Credit / (s.HourlyBurn * 24))
		}
		s.DaysLeft = &days
	}
	return s
}
