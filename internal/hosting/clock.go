package hosting

import (
	"strings"
	"time"
)

// The sandbox's test clocks (docs/testing-your-client.md, "The test clock"): an
// account's clock runs ahead of the system clock by an offset that only grows, kept
// in whole milliseconds.

// MaxClockAheadYears is how many years (of 365 days) a test clock may run ahead of
// the system clock in all.
const MaxClockAheadYears = 100

// MaxClockAhead is MaxClockAheadYears as a duration: 876000h. It keeps every time an
// account's records take from its clock far from where time.Duration (292 years) and
// UnixNano (the year 2262) overflow; an offset that summed past 292 years once wrapped
// to a negative duration, and the clock read 1734.
const MaxClockAhead = MaxClockAheadYears * 365 * 24 * time.Hour

// ClockOffset is a test clock's offset as stored (milliseconds) as a duration: never
// negative, and at most MaxClockAhead; an offset stored beyond it (by a Berth before
// the limit) reads as the limit, never as a wrapped-around negative duration.
func ClockOffset(ms int64) time.Duration {
	switch {
	case ms <= 0:
		return 0
	case ms >= MaxClockAhead.Milliseconds():
		return MaxClockAhead
	}
	return time.Duration(ms) * time.Millisecond
}

// ClockAdvanceLeft is how much further a test clock ahead by ahead may move:
// MaxClockAhead less ahead (ahead is taken as ClockOffset reads it), never negative.
func ClockAdvanceLeft(ahead time.Duration) time.Duration {
	return MaxClockAhead - min(max(ahead, 0), MaxClockAhead)
}

// FormatClockDuration writes d (to the millisecond) as a Go duration a client can
// send back as an advance, without the zero units time.Duration.String ends with:
// 876000h, 1h30m, 59m59.999s, 0s.
func FormatClockDuration(d time.Duration) string {
	s := d.Truncate(time.Millisecond).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
