package billing

import (
	"cmp"
	"slices"
	"time"

	"github.com/berthhq/berth/internal/hosting"
)

// The charges of the metering pass are derived from the meters (issues 29 and 34):
// a meter's hours start at its BilledFrom and every hour after, before its
// StoppedAt; in each calendar month it charges its rate an hour until what the
// resource was charged that month (its MonthCharged, in its MonthStart's month,
// counted first) reaches its cap. An account's charges for a span of time are the
// hours of its meters that start in it (Lines); the pass writes their sum, and the
// ledger shows them again, one by one, from the same meters. Each account's
// ChargedTo says where the pass got: every hour starting before it is charged.

// HoursIn is how many of m's hours start in [from, to).
func HoursIn(m hosting.Meter, from, to time.Time) int64 {
	if m.StoppedAt != nil && m.StoppedAt.Before(to) {
		to = *m.StoppedAt
	}
	return hoursBefore(m.BilledFrom, to) - hoursBefore(m.BilledFrom, from)
}

// hoursBefore is how many hours of a grid starting at start begin before t.
func hoursBefore(start, t time.Time) int64 {
	if !t.After(start) {
		return 0
	}
	return int64((t.Sub(start)-1)/Hour) + 1
}

// carried is what the resource was charged before m in the month starting at month.
func carried(m hosting.Meter, month time.Time) hosting.Money {
	if m.MonthStart.Equal(month) {
		return m.MonthCharged
	}
	return 0
}

// monthOwed is what m charges in the calendar month starting at month for its hours
// that start before t.
func monthOwed(m hosting.Meter, month, t time.Time) hosting.Money {
	if end := MonthEnd(month); t.After(end) {
		t = end
	}
	n := HoursIn(m, month, t)
	if n <= 0 {
		return 0
	}
	total := hosting.Money(n) * m.Rate
	if m.MonthlyCap != nil {
		total = min(total, max(*m.MonthlyCap-carried(m, month), 0))
	}
	return total
}

// Owed is what m charges for its hours that start in [from, to).
func Owed(m hosting.Meter, from, to time.Time) hosting.Money {
	if from.Before(m.BilledFrom) {
		from = m.BilledFrom
	}
	if m.StoppedAt != nil && m.StoppedAt.Before(to) {
		to = *m.StoppedAt
	}
	var sum hosting.Money
	for month := MonthStart(from); month.Before(to); month = MonthEnd(month) {
		sum += monthOwed(m, month, to) - monthOwed(m, month, from)
	}
	return sum
}

// HourAmount is what m charges for its hour starting at h (one of its hours).
func HourAmount(m hosting.Meter, h time.Time) hosting.Money {
	month := MonthStart(h)
	return monthOwed(m, month, h.Add(time.Nanosecond)) - monthOwed(m, month, h)
}

// NextHour is the start of m's first hour at or after t (t itself when m has not
// begun by then: its BilledFrom). It may be at or after StoppedAt.
func NextHour(m hosting.Meter, t time.Time) time.Time {
	if !t.After(m.BilledFrom) {
		return m.BilledFrom
	}
	return m.BilledFrom.Add(time.Duration(hoursBefore(m.BilledFrom, t)) * Hour)
}

// MonthCarried is what a meter following m from its hour at h carries: what the
// resource was charged in h's month before h, by m and the meters before it.
func MonthCarried(m hosting.Meter, h time.Time) hosting.Money {
	month := MonthStart(h)
	return carried(m, month) + monthOwed(m, month, h)
}

// Line is one charge of the ledger a metering pass writes: one hour of one meter.
type Line struct {
	Meter  *hosting.Meter
	Hour   time.Time
	Amount hosting.Money
}

// Lines are the charges of meters for their hours that start in [from, to), an
// hour past its cap (0) left out, in the ledger's order: by hour, then by meter id.
func Lines(meters []hosting.Meter, from, to time.Time) []Line {
	var out []Line
	for i := range meters {
		m := &meters[i]
		last := to
		if m.StoppedAt != nil && m.StoppedAt.Before(last) {
			last = *m.StoppedAt
		}
		for h := NextHour(*m, from); h.Before(last); h = h.Add(Hour) {
			if a := HourAmount(*m, h); a > 0 {
				out = append(out, Line{Meter: m, Hour: h, Amount: a})
			}
		}
	}
	slices.SortFunc(out, func(a, b Line) int {
		if c := a.Hour.Compare(b.Hour); c != 0 {
			return c
		}
		return cmp.Compare(a.Meter.ID, b.Meter.ID)
	})
	return out
}
