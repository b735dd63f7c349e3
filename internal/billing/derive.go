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
	EachLine(meters, from, to, func(l Line) { out = append(out, l) })
	return out
}

// EachLine calls f with each of Lines' charges, in their order, without gathering
// or sorting them: a meter's hours start one in each hour of the clock, at the same
// offset in it (its BilledFrom's minutes, seconds and milliseconds), so the order
// by hour, then meter id, is by clock hour, then offset, then meter id. A meter's
// amounts are kept hour by hour as its month's running total (monthOwed's once at
// its first hour in a month), so a pass over many hours costs no more an hour than
// an addition.
func EachLine(meters []hosting.Meter, from, to time.Time, f func(Line)) {
	ws := make([]lineWalk, 0, len(meters))
	var start, end int64 // the clock hours walked: [start, end) in Unix nanoseconds
	for i := range meters {
		m := &meters[i]
		last := to
		if m.StoppedAt != nil && m.StoppedAt.Before(last) {
			last = *m.StoppedAt
		}
		first := NextHour(*m, from)
		if !first.Before(last) {
			continue
		}
		clock := first.Truncate(Hour)
		w := lineWalk{m: m, base: first, first: first.UnixNano(), last: last.UnixNano(), offset: int64(first.Sub(clock))}
		if len(ws) == 0 || clock.UnixNano() < start {
			start = clock.UnixNano()
		}
		end = max(end, w.last)
		ws = append(ws, w)
	}
	slices.SortFunc(ws, func(a, b lineWalk) int {
		if c := cmp.Compare(a.offset, b.offset); c != 0 {
			return c
		}
		return cmp.Compare(a.m.ID, b.m.ID)
	})
	for clock := start; clock < end; clock += int64(Hour) {
		for i := range ws {
			w := &ws[i]
			if at := clock + w.offset; at >= w.first && at < w.last {
				h := w.base.Add(time.Duration(at - w.first))
				if a := w.amount(h, at); a > 0 {
					f(Line{Meter: w.m, Hour: h, Amount: a})
				}
			}
		}
	}
}

// lineWalk is a meter as EachLine walks its hours.
type lineWalk struct {
	m *hosting.Meter
	// base is its first hour walked, first that in Unix nanoseconds; last is where
	// its hours walked end; offset is its hours' offset in a clock hour.
	base                time.Time
	first, last, offset int64
	// monthEnd is the end of the month of the hour last walked (Unix nanoseconds; 0:
	// none yet), owed what the meter charged that month before its next hour, left
	// what the cap leaves of the month (capped meters).
	monthEnd   int64
	owed, left hosting.Money
}

// amount is what w's meter charges for its hour at h (at, in Unix nanoseconds), the
// hour after the last one asked for, or its first walked: HourAmount.
func (w *lineWalk) amount(h time.Time, at int64) hosting.Money {
	m := w.m
	if m.MonthlyCap == nil {
		return m.Rate
	}
	if at >= w.monthEnd {
		month := MonthStart(h)
		w.monthEnd = MonthEnd(month).UnixNano()
		w.left = max(*m.MonthlyCap-carried(*m, month), 0)
		w.owed = monthOwed(*m, month, h)
	}
	next := min(w.owed+m.Rate, w.left)
	a := next - w.owed
	w.owed = next
	return a
}
