package metrics

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Range is a span of time a client can ask for.
type Range struct {
	Name string
	Span time.Duration
}

// Ranges are the spans a client can ask for, the default first.
var Ranges = []Range{{"1h", time.Hour}, {"6h", 6 * time.Hour}, {"24h", 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}}

// ParseRange reads a range name; "" is the default (1h). ok is false for anything
// else that is not one of Ranges.
func ParseRange(s string) (r Range, ok bool) {
	if s == "" {
		return Ranges[0], true
	}
	for _, r := range Ranges {
		if r.Name == s {
			return r, true
		}
	}
	return Range{}, false
}

// Step is the bucket width for a range: the span over MaxPoints, but never finer
// than the sampling interval, in whole seconds.
func Step(r Range, interval time.Duration) int64 {
	step := int64(math.Ceil(r.Span.Seconds() / MaxPoints))
	return max(step, int64(math.Ceil(interval.Seconds())), 1)
}

// Point is a bucket's start (Unix seconds) and its average.
type Point struct {
	At    int64
	Value float64
}

// Series is what a client sees of a range.
type Series struct {
	Range               string
	StepSeconds         int64
	CPU                 []Point // percent
	NetIn, NetOut       []Point // bytes per second
	DiskRead, DiskWrite []Point // bytes per second
}

// Window is the first bucket's start and the end (exclusive) of a range's buckets at
// now: at most MaxPoints buckets aligned to multiples of step, the last one holding
// now.
func Window(r Range, step int64, now time.Time) (from, to int64) {
	last := now.Unix() / step * step
	n := min(int64(MaxPoints), (int64(r.Span.Seconds())+step-1)/step)
	return last - (n-1)*step, last + step
}

// Downsample averages samples (oldest first) into buckets of step seconds aligned
// to multiples of step. Buckets without samples are left out, so a gap in the data
// (a machine that did not exist, a berthd that was down) is a gap in the series.
func Downsample(samples []Sample, step int64) []Bucket {
	out := []Bucket{}
	var n float64
	var b Bucket
	flush := func() {
		if n > 0 {
			out = append(out, Bucket{b.At, b.CPU / n, b.NetIn / n, b.NetOut / n, b.DiskRead / n, b.DiskWrite / n})
		}
		n = 0
	}
	for _, s := range samples {
		at := s.At.Unix()
		if start := at - mod(at, step); n == 0 || start != b.At {
			flush()
			b = Bucket{At: start}
		}
		n++
		b.CPU += s.CPU
		b.NetIn += float64(s.NetIn)
		b.NetOut += float64(s.NetOut)
		b.DiskRead += float64(s.DiskRead)
		b.DiskWrite += float64(s.DiskWrite)
	}
	flush()
	return out
}

// points turns buckets into the five series, rounded: CPU to 0.01 %, rates to
// 0.1 byte per second.
func points(bs []Bucket) (cpu, netIn, netOut, diskRead, diskWrite []Point) {
	cpu, netIn, netOut = make([]Point, len(bs)), make([]Point, len(bs)), make([]Point, len(bs))
	diskRead, diskWrite = make([]Point, len(bs)), make([]Point, len(bs))
	for i, b := range bs {
		cpu[i] = Point{b.At, round(b.CPU, 2)}
		netIn[i] = Point{b.At, round(b.NetIn, 1)}
		netOut[i] = Point{b.At, round(b.NetOut, 1)}
		diskRead[i] = Point{b.At, round(b.DiskRead, 1)}
		diskWrite[i] = Point{b.At, round(b.DiskWrite, 1)}
	}
	return cpu, netIn, netOut, diskRead, diskWrite
}

// mod is the non-negative remainder of a by b.
func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

func round(x float64, places int) float64 {
	p := math.Pow10(places)
	return math.Round(x*p) / p
}

// Reader answers series from a Backend.
type Reader struct {
	store    Backend
	interval time.Duration
}

// NewReader returns a reader for samples taken every interval.
func NewReader(st Backend, interval time.Duration) *Reader {
	return &Reader{store: st, interval: interval}
}

// Series answers a server's load over r, ending at now (the time on its account's
// clock). It fails only when the store does.
func (rd *Reader) Series(ctx context.Context, serverID int64, r Range, now time.Time) (Series, error) {
	step := Step(r, rd.interval)
	from, to := Window(r, step, now)
	buckets, err := rd.store.MetricBuckets(ctx, serverID, time.Unix(from, 0), time.Unix(to, 0), step)
	if err != nil {
		return Series{}, fmt.Errorf("metric buckets: %w", err)
	}
	s := Series{Range: r.Name, StepSeconds: step}
	s.CPU, s.NetIn, s.NetOut, s.DiskRead, s.DiskWrite = points(buckets)
	return s, nil
}
