package billing

import (
	"math"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
)

func m(s string) hosting.Money {
	v, err := hosting.ParseMoney(s)
	if err != nil {
		panic(err)
	}
	return v
}

func mp(s string) *hosting.Money { v := m(s); return &v }

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func tp(s string) *time.Time { t := at(s); return &t }

func TestMonth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, start, end string }{
		{"2026-12-15T10:30:00Z", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"2026-12-01T00:00:00Z", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"2026-11-30T23:59:59.999Z", "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z"},
		{"2028-02-29T12:00:00Z", "2028-02-01T00:00:00Z", "2028-03-01T00:00:00Z"},
		// Another zone: the month is UTC's.
		{"2026-12-01T00:30:00+01:00", "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z"},
	} {
		if got := MonthStart(at(tc.in)); !got.Equal(at(tc.start)) {
			t.Errorf("MonthStart(%s) = %s, want %s", tc.in, got, tc.start)
		}
		if got := MonthEnd(at(tc.in)); !got.Equal(at(tc.end)) {
			t.Errorf("MonthEnd(%s) = %s, want %s", tc.in, got, tc.end)
		}
	}
}

func TestHourCharge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		rate         string
		cap          *hosting.Money
		charged, out string
	}{
		{"no cap", "0.0070", nil, "100.0000", "0.0070"},
		{"far below the cap", "0.0070", mp("4.5100"), "0", "0.0070"},
		{"exactly one hour left", "0.0070", mp("4.5100"), "4.5030", "0.0070"},
		{"less than an hour left", "0.0070", mp("4.5100"), "4.5050", "0.0050"},
		{"cap reached", "0.0070", mp("4.5100"), "4.5100", "0"},
		{"past the cap (a rescale down)", "0.0070", mp("4.5100"), "7.0000", "0"},
		{"cap below one hour", "0.0070", mp("0.0030"), "0", "0.0030"},
	} {
		if got := HourCharge(m(tc.rate), tc.cap, m(tc.charged)); got != m(tc.out) {
			t.Errorf("%s: HourCharge = %s, want %s", tc.name, got, tc.out)
		}
	}
}

func TestSnapshotRate(t *testing.T) {
	t.Parallel()
	if got := SnapshotRate(20, m("0.0001")); got != m("0.0020") {
		t.Errorf("20 GB at 0.0001: %s", got)
	}
	if got := SnapshotRate(0, m("0.0001")); got != 0 {
		t.Errorf("0 GB: %s", got)
	}
}

// TestFullMonthMatchesCap: charging hour by hour with HourCharge adds up to
// min(hours × rate, cap) — the rule the metering SQL implements.
func TestFullMonthMatchesCap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rate, cap string
		hours     int
	}{
		{"0.0070", "4.5100", 744}, {"0.0100", "10.0000", 744}, {"0.1550", "99.9000", 672}, {"0.0333", "1.0000", 30},
	} {
		var total hosting.Money
		cap := m(tc.cap)
		for range tc.hours {
			total += HourCharge(m(tc.rate), &cap, total)
		}
		want := min(hosting.Money(tc.hours)*m(tc.rate), cap)
		if total != want {
			t.Errorf("%d hours at %s capped at %s: %s, want %s", tc.hours, tc.rate, tc.cap, total, want)
		}
	}
}

func TestRestOfMonth(t *testing.T) {
	t.Parallel()
	now := at("2026-12-31T20:30:00Z") // hours left start at 21:00, 22:00, 23:00
	// A meter from 21:00 (after a rescale, say), 5.0000 charged this month before it.
	server := hosting.Meter{Rate: m("0.0100"), MonthlyCap: mp("10.0000"), BilledFrom: at("2026-12-31T21:00:00Z"),
		MonthStart: at("2026-12-01T00:00:00Z"), MonthCharged: m("5.0000")}
	for _, tc := range []struct {
		name  string
		edit  func(*hosting.Meter)
		want  string
		nowAt string
	}{
		{"three hours left", nil, "0.0300", ""},
		{"near the cap", func(x *hosting.Meter) { x.MonthCharged = m("9.9850") }, "0.0150", ""},
		{"at the cap", func(x *hosting.Meter) { x.MonthCharged = m("10.0000") }, "0", ""},
		{"charged in an earlier month only", func(x *hosting.Meter) { x.MonthStart = at("2026-11-01T00:00:00Z"); x.MonthCharged = m("10.0000") }, "0.0300", ""},
		{"stopped before the end", func(x *hosting.Meter) { x.StoppedAt = tp("2026-12-31T22:00:00Z") }, "0.0100", ""},
		{"stopped at its first hour", func(x *hosting.Meter) { x.StoppedAt = tp("2026-12-31T21:00:00Z") }, "0", ""},
		{"no cap", func(x *hosting.Meter) { x.MonthlyCap = nil }, "0.0300", ""},
		{"a whole month ahead", func(x *hosting.Meter) {
			x.BilledFrom, x.MonthCharged = at("2027-02-01T00:00:00Z"), 0
		}, "0.0000", ""},
		{"month start", func(x *hosting.Meter) { x.BilledFrom, x.MonthCharged = at("2027-02-01T00:00:00Z"), 0 }, "6.7200", "2027-02-01T00:00:00Z"},
	} {
		x := server
		if tc.edit != nil {
			tc.edit(&x)
		}
		n, chargedTo := now, now
		if tc.nowAt != "" {
			n, chargedTo = at(tc.nowAt), at(tc.nowAt)
		}
		if got := RestOfMonth(x, chargedTo, n); got != m(tc.want) {
			t.Errorf("%s: RestOfMonth = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	now := at("2026-12-31T20:30:00Z")
	acct := hosting.Account{Credit: m("1.2000"), Currency: "EUR", Budget: mp("20.0000")}
	meters := []hosting.Meter{
		{Rate: m("0.0100"), MonthlyCap: mp("10.0000"), BilledFrom: at("2026-11-30T21:00:00Z"), MonthStart: at("2026-11-01T00:00:00Z")},
		{Rate: m("0.0020"), BilledFrom: at("2026-12-31T21:00:00Z"), MonthStart: at("2026-12-01T00:00:00Z")},
		// Deleted at 20:10: no hour to come; not burning.
		{Rate: m("0.0500"), BilledFrom: at("2026-12-31T19:00:00Z"), StoppedAt: tp("2026-12-31T20:10:00Z")},
	}
	s := Summarize(acct, meters, now, m("3.0000"), 0, now)
	if s.HourlyBurn != m("0.0120") || s.MonthlyBurn != m("3.0360") || s.MonthToDate != m("3.0000") || s.Credit != m("1.2000") ||
		s.Budget == nil || *s.Budget != m("20.0000") || s.Currency != "EUR" {
		t.Errorf("summary %+v", s)
	}
	// 1.2 / (0.012 × 24) = 4.17 days: 4 whole days.
	if s.DaysLeft == nil || *s.DaysLeft != 4 {
		t.Errorf("days left %v, want 4", s.DaysLeft)
	}
	if s := Summarize(hosting.Account{Credit: m("-1")}, meters, now, 0, 0, now); s.DaysLeft == nil || *s.DaysLeft != 0 {
		t.Errorf("overdrawn: days left %v, want 0", s.DaysLeft)
	}
	if s := Summarize(acct, nil, now, 0, 0, now); s.DaysLeft != nil || s.HourlyBurn != 0 || s.MonthlyBurn != 0 {
		t.Errorf("nothing billed: %+v", s)
	}
}

// TestDaysLeft: the hours run the credit down continuously, and the licenses take
// their month on each first of a month; the credit is used up when either takes it
// to zero.
func TestDaysLeft(t *testing.T) {
	t.Parallel()
	max64 := hosting.Money(math.MaxInt64)
	for _, tc := range []struct {
		name                     string
		credit, hourly, licenses hosting.Money
		now                      string
		want                     int64 // -1: nil
	}{
		{"nothing billed", m("100"), 0, 0, "2026-11-20T00:00:00Z", -1},
		{"hours only, as credit / (hourly × 24)", m("1.2000"), m("0.0120"), 0, "2026-12-31T20:30:00Z", 4},
		{"hours only, across many months", m("1000"), m("0.0100"), 0, "2026-11-20T00:00:00Z", 4166},
		{"used up", 0, m("0.0100"), m("5"), "2026-11-20T00:00:00Z", 0},
		{"overdrawn", m("-1"), m("0.0100"), 0, "2026-11-20T00:00:00Z", 0},
		// 10 days to 1 December; 0.24 a day leaves 7.60, and the licenses' 8 take it below zero.
		{"licenses due before the hours run out", m("10"), m("0.0100"), m("8"), "2026-11-21T00:00:00Z", 10},
		// The same credit without licenses lasts 41 days.
		{"the same without licenses", m("10"), m("0.0100"), 0, "2026-11-21T00:00:00Z", 41},
		// Licenses alone: 20 pays December's 15, January's 15 is more than the 5 left.
		{"licenses only", m("20"), 0, m("15"), "2026-11-20T12:00:00Z", 41},
		// Exactly the licenses' month left at the first: used up then.
		{"licenses exactly the credit", m("15"), 0, m("15"), "2026-11-20T12:00:00Z", 10},
		// 13 months exact (395 days: 94.80 of hours, 13 of licenses), then 9,892.20
		// at a year's 99.60 (87.60 of hours, 12 of licenses): 36,251.5 days more.
		{"beyond a year, a year's average", m("10000"), m("0.0100"), m("1"), "2026-11-01T00:00:00Z", 36646},
		{"the largest credit does not overflow", max64, 1, 0, "2026-11-01T00:00:00Z", math.MaxInt64 / 24},
		{"the largest credit and licenses", max64, 0, max64 / 2, "2026-11-01T00:00:00Z", 92},
	} {
		got := DaysLeft(tc.credit, tc.hourly, tc.licenses, at(tc.now))
		switch {
		case tc.want < 0 && got != nil:
			t.Errorf("%s: %d, want nil", tc.name, *got)
		case tc.want >= 0 && (got == nil || *got != tc.want):
			t.Errorf("%s: %v, want %d", tc.name, got, tc.want)
		}
	}
}
