package hosting

import (
	"math"
	"testing"
	"time"
)

func TestClockOffset(t *testing.T) {
	t.Parallel()
	capMS := MaxClockAhead.Milliseconds()
	if capMS != 876000*3600*1000 {
		t.Fatalf("the limit is %d ms, want 100 years of 365 days", capMS)
	}
	for _, tc := range []struct {
		name string
		ms   int64
		want time.Duration
	}{
		{"zero", 0, 0},
		{"one ms", 1, time.Millisecond},
		{"a year", 8760 * 3600 * 1000, 8760 * time.Hour},
		{"1 ms below the limit", capMS - 1, MaxClockAhead - time.Millisecond},
		{"at the limit", capMS, MaxClockAhead},
		{"1 ms over the limit", capMS + 1, MaxClockAhead},
		// 293 advances of 8760h, stored before the limit: as a duration it wrapped.
		{"past what a duration holds", 293 * 8760 * 3600 * 1000, MaxClockAhead},
		{"MaxInt64/1e6 + 1", math.MaxInt64/int64(time.Millisecond) + 1, MaxClockAhead},
		{"near MaxInt64", math.MaxInt64 - 1, MaxClockAhead},
		{"MaxInt64", math.MaxInt64, MaxClockAhead},
		{"negative", -1, 0},
		{"MinInt64", math.MinInt64, 0},
	} {
		if got := ClockOffset(tc.ms); got != tc.want {
			t.Errorf("%s: ClockOffset(%d) = %s, want %s", tc.name, tc.ms, got, tc.want)
		}
		if got := ClockOffset(tc.ms); got < 0 || got > MaxClockAhead {
			t.Errorf("%s: ClockOffset(%d) = %s, outside 0..%s", tc.name, tc.ms, got, MaxClockAhead)
		}
	}
}

func TestClockAdvanceLeft(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ahead, want time.Duration
	}{
		{0, MaxClockAhead},
		{-time.Hour, MaxClockAhead},
		{8760 * time.Hour, MaxClockAhead - 8760*time.Hour},
		{MaxClockAhead - time.Millisecond, time.Millisecond},
		{MaxClockAhead, 0},
		{MaxClockAhead + time.Hour, 0},
		{math.MaxInt64, 0},
		{math.MinInt64, MaxClockAhead},
	} {
		if got := ClockAdvanceLeft(tc.ahead); got != tc.want {
			t.Errorf("ClockAdvanceLeft(%d) = %s, want %s", tc.ahead, got, tc.want)
		}
	}
}

func TestFormatClockDuration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{MaxClockAhead, "876000h"},
		{0, "0s"},
		{time.Millisecond, "1ms"},
		{90 * time.Minute, "1h30m"},
		{time.Hour + time.Second, "1h0m1s"},
		{time.Hour - time.Millisecond, "59m59.999s"},
		{time.Hour - time.Nanosecond, "59m59.999s"},
		{10 * time.Minute, "10m"},
	} {
		got := FormatClockDuration(tc.d)
		if got != tc.want {
			t.Errorf("FormatClockDuration(%d) = %q, want %q", tc.d, got, tc.want)
		}
		if back, err := time.ParseDuration(got); err != nil || back != tc.d.Truncate(time.Millisecond) {
			t.Errorf("%q does not parse back to %s: %s, %v", got, tc.d.Truncate(time.Millisecond), back, err)
		}
	}
}
