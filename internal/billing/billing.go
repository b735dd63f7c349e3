// Package billing holds the rules of money over time (docs/api.md, Billing): the hours a
// meter charges, the monthly cap, what a snapshot costs, and the burn figures of
// GET /billing. It does no I/O: the store runs a metering pass as set-based SQL built
// on these same rules, and the tests hold the two to each other.
package billing

import (
	"math"
	"math/big"
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

// RestOfMonth is what meter m will still charge from its account's chargedTo (every
// hour before it is charged) to the end of now's calendar month if nothing changes:
// its hours not charged yet that month, within its cap.
func RestOfMonth(m hosting.Meter, chargedTo, now time.Time) hosting.Money {
	month := MonthStart(now)
	if chargedTo.Before(month) {
		chargedTo = month // hours of an earlier month are not this month's
	}
	return max(Owed(m, chargedTo, MonthEnd(now)), 0)
}

// Summary is what GET /billing shows.
type Summary struct {
	Credit      hosting.Money
	Currency    string
	HourlyBurn  hosting.Money
	MonthlyBurn hosting.Money
	// DaysLeft is how many whole days the credit lasts at HourlyBurn and the
	// licenses' charges on each first of a month (nil when nothing is billed; 0 when
	// the credit is used up).
	DaysLeft    *int64
	MonthToDate hosting.Money
	Budget      *hosting.Money
}

// Summarize computes an account's billing figures at now from its meters (charged
// for every hour starting before chargedTo), what its ledger charged this month (net
// of refunds) and what its held licenses will cost on each first of a month (this
// month's are in monthToDate already).
func Summarize(a hosting.Account, meters []hosting.Meter, chargedTo time.Time, monthToDate, licensesMonthly hosting.Money, now time.Time) Summary {
	s := Summary{Credit: a.Credit, Currency: a.Currency, MonthToDate: monthToDate, MonthlyBurn: monthToDate, Budget: a.Budget}
	for _, m := range meters {
		if m.Active() {
			s.HourlyBurn += m.Rate
		}
		s.MonthlyBurn += RestOfMonth(m, chargedTo, now)
	}
	s.DaysLeft = DaysLeft(s.Credit, s.HourlyBurn, licensesMonthly, now)
	return s
}

// exactMonths is how many firsts of a month DaysLeft steps through one by one before
// it takes a year's average: a year ahead is exact, beyond it a day or so either way
// does not matter to anyone reading it.
const exactMonths = 13

// DaysLeft is how many whole days from now credit lasts at hourly an hour, less
// licenses on each first of a month: nil when neither is billed, 0 when the credit is
// used up. The credit is used up at the moment the hours have taken it to zero, or at
// the first of a month whose licenses take it to zero or below. Exact (in big
// integers: money times nanoseconds) over the next exactMonths months, then at a
// year's average; with no licenses it is credit / (hourly × 24), whole days.
func DaysLeft(credit, hourly, licenses hosting.Money, now time.Time) *int64 {
	if hourly <= 0 && licenses <= 0 {
		return nil
	}
	days := func(d *big.Int) *int64 {
		n := new(big.Int).Quo(d, big.NewInt(int64(24*time.Hour)))
		v := int64(math.MaxInt64)
		if n.IsInt64() {
			v = n.Int64()
		}
		return &v
	}
	if credit <= 0 {
		return days(new(big.Int))
	}
	perHour := big.NewInt(int64(Hour))
	h := big.NewInt(int64(max(hourly, 0)))
	lic := new(big.Int).Mul(big.NewInt(int64(max(licenses, 0))), perHour)
	// left is the credit in ten-thousandths × nanoseconds of an hour, so that the
	// hours' cost of any span is hourly × its nanoseconds, exactly.
	left := new(big.Int).Mul(big.NewInt(int64(credit)), perHour)
	elapsed := new(big.Int) // nanoseconds from now
	t := now
	for range exactMonths {
		next := MonthEnd(t)
		span := big.NewInt(int64(next.Sub(t)))
		cost := new(big.Int).Mul(h, span)
		if h.Sign() > 0 && left.Cmp(cost) <= 0 {
			return days(elapsed.Add(elapsed, new(big.Int).Quo(left, h)))
		}
		left.Sub(left, cost)
		elapsed.Add(elapsed, span)
		t = next
		if left.Cmp(lic) <= 0 {
			return days(elapsed)
		}
		left.Sub(left, lic)
	}
	// A year's average from here: 365 days of hours and 12 firsts of a month.
	year := new(big.Int).Mul(h, big.NewInt(int64(365*24*time.Hour)))
	year.Add(year, new(big.Int).Mul(lic, big.NewInt(12)))
	rest := new(big.Int).Mul(left, big.NewInt(int64(365*24*time.Hour)))
	return days(elapsed.Add(elapsed, rest.Quo(rest, year)))
}
