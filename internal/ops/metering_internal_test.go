package ops

import (
	"testing"
	"time"
)

func TestNextMeterLimit(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		name               string
		limit, hours, most int
		took, target       time.Duration
		want               int
	}{
		{"on target keeps it", 10_000, 10_000, 20_000, 500 * ms, 500 * ms, 10_000},
		{"twice the target halves it", 10_000, 10_000, 20_000, 1000 * ms, 500 * ms, 5_000},
		{"a tenth of the target grows it twice at most", 5_000, 5_000, 20_000, 50 * ms, 500 * ms, 10_000},
		{"never above the most", 15_000, 15_000, 20_000, 100 * ms, 500 * ms, 20_000},
		{"never below an eighth of the most", 5_000, 5_000, 20_000, 10_000 * ms, 500 * ms, 2_500},
		{"never below the least", 1_000, 1_000, 2_000, 10_000 * ms, 500 * ms, minMeterBatch},
		{"the least is the most when the most is smaller", 100, 100, 100, 10_000 * ms, 500 * ms, 100},
		{"a quick one that ran out of hours says nothing", 10_000, 30, 20_000, 2 * ms, 500 * ms, 10_000},
		{"a slow one that ran out of hours shrinks it", 16_000, 7_000, 20_000, 1000 * ms, 500 * ms, 3_500},
		{"half the limit counts as full", 10_000, 5_000, 20_000, 100 * ms, 500 * ms, 20_000},
		{"nothing charged", 10_000, 0, 20_000, 900 * ms, 500 * ms, 10_000},
		{"no time measured", 10_000, 10_000, 20_000, 0, 500 * ms, 10_000},
		{"one hour at a time", 1, 1, 1, 10 * ms, 500 * ms, 1},
		{"a slow hour at the least", minMeterBatch, minMeterBatch, 2_000, time.Hour, 500 * ms, minMeterBatch},
		{"large figures do not overflow", 1 << 40, 1 << 40, 1 << 41, time.Nanosecond, time.Hour, 1 << 41},
	} {
		if got := nextMeterLimit(c.limit, c.hours, c.took, c.target, c.most); got != c.want {
			t.Errorf("%s: nextMeterLimit(%d, %d, %v, %v, %d) = %d, want %d", c.name, c.limit, c.hours, c.took, c.target, c.most, got, c.want)
		}
	}
}
