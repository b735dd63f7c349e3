package billing

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
)

// reference charges m hour by hour as the metering pass did before it was derived
// (a month's running total per meter, HourCharge for each hour): the amount of each
// of its hours that start in [from, to), 0s included.
func reference(m hosting.Meter, from, to time.Time) map[time.Time]hosting.Money {
	out := map[time.Time]hosting.Money{}
	month, charged := m.MonthStart, m.MonthCharged
	for h := m.BilledFrom; h.Before(to) && (m.StoppedAt == nil || h.Before(*m.StoppedAt)); h = h.Add(Hour) {
		if ms := MonthStart(h); !ms.Equal(month) {
			month, charged = ms, 0
		}
		c := HourCharge(m.Rate, m.MonthlyCap, charged)
		charged += c
		if !h.Before(from) {
			out[h] = c
		}
	}
	return out
}

func TestDerivedChargesMatchHourByHour(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(34, 29))
	base := at("2026-11-28T00:00:00Z") // the month's end and two more within reach
	for i := range 3000 {
		var mt hosting.Meter
		mt.ID = int64(i + 1)
		mt.BilledFrom = base.Add(time.Duration(r.Int64N(int64(60 * 24 * time.Hour)))).Truncate(time.Millisecond)
		mt.Rate = hosting.Money(r.Int64N(200))
		if r.IntN(4) > 0 {
			c := hosting.Money(r.Int64N(20000))
			mt.MonthlyCap = &c
		}
		switch r.IntN(3) {
		case 0: // carried into BilledFrom's month
			mt.MonthStart, mt.MonthCharged = MonthStart(mt.BilledFrom), hosting.Money(r.Int64N(25000))
		case 1: // of an earlier month: counts for nothing
			mt.MonthStart, mt.MonthCharged = MonthStart(mt.BilledFrom.AddDate(0, -1, 0)), 5000
		}
		if r.IntN(2) == 0 {
			s := mt.BilledFrom.Add(time.Duration(r.Int64N(int64(50 * 24 * time.Hour))))
			mt.StoppedAt = &s
		}
		from := base.Add(time.Duration(r.Int64N(int64(70 * 24 * time.Hour))))
		to := from.Add(time.Duration(r.Int64N(int64(40 * 24 * time.Hour))))
		want := reference(mt, from, to)
		var wantSum hosting.Money
		lines := Lines([]hosting.Meter{mt}, from, to)
		got := map[time.Time]hosting.Money{}
		for _, l := range lines {
			got[l.Hour] = l.Amount
		}
		for h, a := range want {
			wantSum += a
			if got[h] != a {
				t.Fatalf("meter %+v, [%s, %s): hour %s charged %s, want %s", mt, from, to, h, got[h], a)
			}
			if HourAmount(mt, h) != a {
				t.Fatalf("meter %+v: HourAmount(%s) = %s, want %s", mt, h, HourAmount(mt, h), a)
			}
		}
		if len(got) > len(want) {
			t.Fatalf("meter %+v, [%s, %s): %d lines, want at most %d", mt, from, to, len(got), len(want))
		}
		if n := Owed(mt, from, to); n != wantSum {
			t.Fatalf("meter %+v, [%s, %s): Owed %s, want %s", mt, from, to, n, wantSum)
		}
		// What a meter following it from one of its hours carries is what the month
		// had been charged before that hour.
		if h := NextHour(mt, from); mt.StoppedAt == nil || h.Before(*mt.StoppedAt) {
			all := reference(mt, mt.BilledFrom, h)
			var carriedWant hosting.Money
			for hh, a := range all {
				if MonthStart(hh).Equal(MonthStart(h)) {
					carriedWant += a
				}
			}
			if MonthStart(h).Equal(mt.MonthStart) {
				carriedWant += mt.MonthCharged
			}
			if got := MonthCarried(mt, h); got != carriedWant {
				t.Fatalf("meter %+v: MonthCarried(%s) = %s, want %s", mt, h, got, carriedWant)
			}
		}
	}
}

// sortedLines is Lines as it was written first: every hour of every meter with
// HourAmount, then sorted by hour and meter id.
func sortedLines(meters []hosting.Meter, from, to time.Time) []Line {
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

// TestLinesAsSorted: Lines walks an account's meters clock hour by clock hour, each
// meter's amounts as a running total, and answers what gathering every hour with
// HourAmount and sorting them did: the same lines in the same order, over months'
// ends, caps reached, meters stopped and started in the span, on the hour and off
// it, several at one offset.
func TestLinesAsSorted(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(29, 34))
	base := at("2026-11-28T00:00:00Z")
	offsets := []time.Duration{0, 0, 30 * time.Minute, time.Millisecond, 59*time.Minute + 59*time.Second + 999*time.Millisecond}
	for round := range 300 {
		meters := make([]hosting.Meter, r.IntN(40))
		ids := r.Perm(1000) // an account's meters have ids of their own, in no order
		for i := range meters {
			mt := &meters[i]
			mt.ID = int64(ids[i] + 1)
			start := base.Add(time.Duration(r.IntN(24*20)) * Hour)
			if r.IntN(3) == 0 {
				start = start.Add(offsets[r.IntN(len(offsets))])
			} else {
				start = start.Add(time.Duration(r.Int64N(int64(Hour)))).Truncate(time.Millisecond)
			}
			mt.BilledFrom = start
			mt.Rate = hosting.Money(r.Int64N(300))
			if r.IntN(4) > 0 {
				c := hosting.Money(r.Int64N(30000))
				mt.MonthlyCap = &c
			}
			if r.IntN(2) == 0 {
				mt.MonthStart, mt.MonthCharged = MonthStart(start), hosting.Money(r.Int64N(20000))
			}
			if r.IntN(2) == 0 {
				s := start.Add(time.Duration(r.Int64N(int64(15 * 24 * time.Hour))))
				mt.StoppedAt = &s
			}
		}
		from := base.Add(time.Duration(r.Int64N(int64(20 * 24 * time.Hour))))
		to := from.Add(time.Duration(r.Int64N(int64(10 * 24 * time.Hour))))
		got, want := Lines(meters, from, to), sortedLines(meters, from, to)
		if len(got) != len(want) {
			t.Fatalf("round %d: %d lines, want %d", round, len(got), len(want))
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.Meter != w.Meter || !g.Hour.Equal(w.Hour) || g.Amount != w.Amount {
				t.Fatalf("round %d, line %d: meter %d at %s charging %s, want meter %d at %s charging %s", round, i,
					g.Meter.ID, g.Hour, g.Amount, w.Meter.ID, w.Hour, w.Amount)
			}
		}
	}
}

func TestLinesOrder(t *testing.T) {
	t.Parallel()
	a := hosting.Meter{ID: 2, Rate: 10, BilledFrom: at("2026-12-01T10:30:00Z")}
	b := hosting.Meter{ID: 1, Rate: 20, BilledFrom: at("2026-12-01T10:30:00Z")}
	c := hosting.Meter{ID: 3, Rate: 30, BilledFrom: at("2026-12-01T10:00:00Z"), StoppedAt: tp("2026-12-01T11:00:00Z")}
	got := Lines([]hosting.Meter{a, b, c}, at("2026-12-01T10:00:00Z"), at("2026-12-01T12:00:00Z"))
	want := []struct {
		id   int64
		hour string
	}{{3, "10:00"}, {1, "10:30"}, {2, "10:30"}, {1, "11:30"}, {2, "11:30"}}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Meter.ID != w.id || got[i].Hour.Format("15:04") != w.hour {
			t.Errorf("line %d: meter %d at %s, want %d at %s", i, got[i].Meter.ID, got[i].Hour.Format("15:04"), w.id, w.hour)
		}
	}
}

func TestNextHour(t *testing.T) {
	t.Parallel()
	mt := hosting.Meter{BilledFrom: at("2026-12-01T10:30:00Z")}
	for _, tc := range []struct{ t, want string }{
		{"2026-11-01T00:00:00Z", "2026-12-01T10:30:00Z"},
		{"2026-12-01T10:30:00Z", "2026-12-01T10:30:00Z"},
		{"2026-12-01T10:30:00.001Z", "2026-12-01T11:30:00Z"},
		{"2026-12-01T11:30:00Z", "2026-12-01T11:30:00Z"},
		{"2026-12-02T11:29:59Z", "2026-12-02T11:30:00Z"},
	} {
		if got := NextHour(mt, at(tc.t)); !got.Equal(at(tc.want)) {
			t.Errorf("NextHour(%s) = %s, want %s", tc.t, got, tc.want)
		}
	}
}
