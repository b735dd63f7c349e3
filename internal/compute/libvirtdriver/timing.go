package libvirtdriver

import "time"

// timing records how long each step of one call took, for the call's log line: the
// operator sees which step is slow on a host (a disk overlay on a busy pool, a guest's
// start), and bench/libvirt-boot.sh reads it for its breakdown. A nil *timing
// records nothing.
type timing struct {
	start, last time.Time
	attrs       []any
}

func newTiming() *timing {
	now := time.Now()
	return &timing{start: now, last: now}
}

// step ends a step: its duration goes to the log line as NAME_ms.
func (t *timing) step(name string) {
	if t == nil {
		return
	}
	now := time.Now()
	t.attrs = append(t.attrs, name+"_ms", ms(now.Sub(t.last)))
	t.last = now
}

// log returns the attributes for the log line, with the total.
func (t *timing) log(attrs ...any) []any {
	return append(append(attrs, t.attrs...), "total_ms", ms(time.Since(t.start)))
}

// ms is a duration in milliseconds with a tenth.
func ms(d time.Duration) float64 { return float64(d.Microseconds()/100) / 10 }
