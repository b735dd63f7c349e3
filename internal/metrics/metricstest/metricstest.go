// Package metricstest is the conformance suite every metrics.Backend passes: the SQL
// store on SQLite and PostgreSQL (internal/store/sqlstore) and VictoriaMetrics
// (internal/metrics/victoria). What GET /servers/{id}/metrics shows is the same from
// each: the same samples give the same buckets.
package metricstest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/metrics"
)

// Options adapt the suite to a backend.
type Options struct {
	// Servers returns n server ids not used before in this backend (the SQL store
	// prunes only the samples of servers it has rows of). Default: 1, 2, 3, ...
	Servers func(t *testing.T, n int) []int64
	// Settle is called between writes and the reads that must see them (a backend
	// that makes what it was sent searchable a moment later flushes it). Default none.
	Settle func(t testing.TB)
	// OwnRetention: the backend ages samples out by itself (VictoriaMetrics'
	// -retentionPeriod); PruneMetricSamples removes nothing and answers 0.
	OwnRetention bool
	// KeepsOneOfSameSecond: a second sample of a server and second is not sure to
	// replace the first; the backend keeps, of each value, one of the two
	// (VictoriaMetrics 1.79 has no update: of two samples of one series and timestamp
	// it answers either, whichever its merge met last, series by series).
	// The sampler never writes two samples of one server in one second but at a
	// sampling interval under a second (tests); a test clock's backfill may meet a
	// sample already taken.
	KeepsOneOfSameSecond bool
}

// Tolerance is how far a bucket's average from one backend may be from
// metrics.Downsample's of the same samples, relative to the value: the SQL store
// averages integers (CPU in hundredths) in the database and divides after, Go sums
// floats in another order; both are exact to about 1e-15, and the series' values are
// rounded to 0.01 (CPU) and 0.1 (bytes per second) after.
const Tolerance = 1e-9

// Run runs the suite against b.
func Run(t *testing.T, b metrics.Backend, o Options) {
	ctx := context.Background()
	next := int64(0)
	if o.Servers == nil {
		o.Servers = func(t *testing.T, n int) []int64 {
			ids := make([]int64, n)
			for i := range ids {
				next++
				ids[i] = next
			}
			return ids
		}
	}
	settle := func(t *testing.T) {
		t.Helper()
		if o.Settle != nil {
			o.Settle(t)
		}
	}
	add := func(t *testing.T, ss ...metrics.Sample) {
		t.Helper()
		if err := b.AddMetricSamples(ctx, ss); err != nil {
			t.Fatalf("AddMetricSamples(%d samples): %v", len(ss), err)
		}
	}
	read := func(t *testing.T, id int64, from, to time.Time) []metrics.Sample {
		t.Helper()
		got, err := b.MetricSamples(ctx, id, from, to)
		if err != nil {
			t.Fatalf("MetricSamples(%d): %v", id, err)
		}
		return got
	}
	// Whole hours some hours back: within any retention of a day or more, and a
	// backend that refuses samples from the future (VictoriaMetrics: past 2 days)
	// takes them.
	t0 := time.Now().UTC().Truncate(time.Hour).Add(-6 * time.Hour)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	sample := func(id int64, sec int, cpu float64) metrics.Sample {
		return metrics.Sample{ServerID: id, AccountID: 7, At: at(sec), CPU: cpu, NetIn: 1 << 20, NetOut: 5, DiskRead: 0, DiskWrite: 1 << 40}
	}

	t.Run("SamplesRoundTrip", func(t *testing.T) {
		id := o.Servers(t, 1)[0]
		// Out of order, CPU beyond 0.01 and outside 0–100: stored to 0.01, clamped.
		add(t, sample(id, 120, 12.345), sample(id, 0, 100), sample(id, 60, 0), sample(id, 180, 150), sample(id, 240, -3))
		settle(t)
		want := []metrics.Sample{sample(id, 0, 100), sample(id, 60, 0), sample(id, 120, 12.35), sample(id, 180, 100), sample(id, 240, 0)}
		same(t, "MetricSamples", read(t, id, t0, at(3600)), want)
	})

	t.Run("RangeIsHalfOpen", func(t *testing.T) {
		id := o.Servers(t, 1)[0]
		add(t, sample(id, 99, 1), sample(id, 100, 2), sample(id, 101, 3), sample(id, 199, 4), sample(id, 200, 5))
		settle(t)
		same(t, "[100, 200)", read(t, id, at(100), at(200)), []metrics.Sample{sample(id, 100, 2), sample(id, 101, 3), sample(id, 199, 4)})
		same(t, "[100, 101)", read(t, id, at(100), at(101)), []metrics.Sample{sample(id, 100, 2)})
		same(t, "[100, 100)", read(t, id, at(100), at(100)), nil)
		same(t, "[200, 100)", read(t, id, at(200), at(100)), nil)
		bs, err := b.MetricBuckets(ctx, id, at(100), at(200), 100)
		if err != nil || len(bs) != 1 || bs[0].At != at(100).Unix() || bs[0].CPU != 3 {
			t.Fatalf("MetricBuckets [100, 200) step 100 = %+v, %v; want one bucket of CPU 3 (2, 3, 4)", bs, err)
		}
	})

	t.Run("SameSecondReplaces", func(t *testing.T) {
		id := o.Servers(t, 1)[0]
		first, second := sample(id, 300, 10), sample(id, 300, 50)
		second.NetIn, second.DiskWrite = 7, 9
		add(t, sample(id, 240, 1), first)
		settle(t)
		add(t, second)
		settle(t)
		got := read(t, id, t0, at(3600))
		if len(got) != 2 {
			t.Fatalf("MetricSamples = %+v; want the sample at 240 and one at 300", got)
		}
		if o.KeepsOneOfSameSecond {
			g := got[1]
			if !g.At.Equal(first.At) || (g.CPU != first.CPU && g.CPU != second.CPU) || (g.NetIn != first.NetIn && g.NetIn != second.NetIn) ||
				g.NetOut != first.NetOut || g.DiskRead != first.DiskRead || (g.DiskWrite != first.DiskWrite && g.DiskWrite != second.DiskWrite) {
				t.Fatalf("the sample at 300 = %+v; want each value of %+v or of %+v", g, first, second)
			}
		} else {
			same(t, "MetricSamples", got, []metrics.Sample{sample(id, 240, 1), second})
		}
		bs, err := b.MetricBuckets(ctx, id, t0, at(3600), 3600)
		if err != nil || len(bs) != 1 || bs[0].CPU != (1+got[1].CPU)/2 {
			t.Fatalf("MetricBuckets = %+v, %v; want the average of 1 and %v: one sample a second", bs, err, got[1].CPU)
		}
	})

	t.Run("Empty", func(t *testing.T) {
		id := o.Servers(t, 1)[0]
		settle(t)
		same(t, "MetricSamples of a server without samples", read(t, id, t0, at(86400)), nil)
		bs, err := b.MetricBuckets(ctx, id, t0, at(3600), 60)
		if err != nil || bs == nil || len(bs) != 0 {
			t.Fatalf("MetricBuckets of a server without samples = %#v, %v; want an empty list", bs, err)
		}
		s, err := metrics.NewReader(b, time.Minute).Series(ctx, id, metrics.Ranges[0], at(3600))
		if err != nil || len(s.CPU)+len(s.NetIn)+len(s.NetOut)+len(s.DiskRead)+len(s.DiskWrite) != 0 || s.CPU == nil || s.StepSeconds != 60 {
			t.Fatalf("Series of a server without samples = %+v, %v; want five empty series", s, err)
		}
	})

	t.Run("ServersApart", func(t *testing.T) {
		ids := o.Servers(t, 3)
		var all []metrics.Sample
		for i, id := range ids {
			for sec := 0; sec < 600; sec += 60 {
				s := sample(id, sec, float64(i*10+sec/60))
				s.NetIn, s.AccountID = int64(i), int64(i%2+1) // two accounts
				all = append(all, s)
			}
		}
		add(t, all...)
		settle(t)
		for i, id := range ids {
			got := read(t, id, t0, at(600))
			same(t, fmt.Sprintf("server %d", id), got, all[i*10:(i+1)*10])
			bs, err := b.MetricBuckets(ctx, id, t0, at(600), 600)
			if err != nil || len(bs) != 1 || bs[0].CPU != float64(i*10)+4.5 || bs[0].NetIn != float64(i) {
				t.Fatalf("server %d: buckets %+v, %v; want its own ten samples' average", id, bs, err)
			}
		}
	})

	t.Run("BucketsAverage", func(t *testing.T) {
		id := o.Servers(t, 1)[0]
		var written []metrics.Sample
		for i := range 500 {
			written = append(written, metrics.Sample{ServerID: id, At: at(i * 37), CPU: float64(i%101) + 0.25,
				NetIn: int64(i * i), NetOut: int64(i), DiskRead: int64(1000 - i), DiskWrite: 3 << 30})
		}
		add(t, written...)
		settle(t)
		from, to := at(300), at(4*3600)
		var inRange []metrics.Sample
		for _, s := range written {
			if !s.At.Before(from) && s.At.Before(to) {
				inRange = append(inRange, stored(s))
			}
		}
		same(t, "MetricSamples", read(t, id, from, to), inRange)
		for _, step := range []int64{1, 60, 240, 1680, 7 * 86400} {
			want := metrics.Downsample(inRange, step)
			got, err := b.MetricBuckets(ctx, id, from, to, step)
			if err != nil || len(got) != len(want) || len(got) == 0 {
				t.Fatalf("step %d: %d buckets, %v; want %d", step, len(got), err, len(want))
			}
			for i := range got {
				if !close(got[i], want[i]) || got[i].At%step != 0 {
					t.Fatalf("step %d bucket %d: %+v, want %+v", step, i, got[i], want[i])
				}
			}
		}
	})

	t.Run("SeriesOfARange", func(t *testing.T) {
		id := o.Servers(t, 1)[0]
		now := t0.Add(3*time.Hour + 30*time.Second)
		var written []metrics.Sample
		for sec := -2 * 3600; sec <= 3*3600+30; sec += 60 {
			written = append(written, metrics.Sample{ServerID: id, At: at(sec + 7), CPU: float64((sec/60)%97) / 4,
				NetIn: int64(sec + 7200), NetOut: 3, DiskRead: int64(sec % 1000), DiskWrite: 1 << 33})
		}
		add(t, written...)
		settle(t)
		for _, r := range metrics.Ranges[:3] {
			got, err := metrics.NewReader(b, time.Minute).Series(ctx, id, r, now)
			if err != nil {
				t.Fatal(err)
			}
			step := metrics.Step(r, time.Minute)
			from, to := metrics.Window(r, step, now)
			var in []metrics.Sample
			for _, s := range written {
				if s.At.Unix() >= from && s.At.Unix() < to {
					in = append(in, stored(s))
				}
			}
			want := metrics.Downsample(in, step)
			if len(got.CPU) != len(want) || len(want) == 0 || got.StepSeconds != step {
				t.Fatalf("%s: %d points of step %d, want %d of %d", r.Name, len(got.CPU), got.StepSeconds, len(want), step)
			}
			for i, w := range want {
				if got.CPU[i].At != w.At || math.Abs(got.CPU[i].Value-w.CPU) > 0.005+Tolerance ||
					math.Abs(got.NetIn[i].Value-w.NetIn) > 0.05+Tolerance || got.DiskWrite[i].Value != 1<<33 {
					t.Fatalf("%s point %d: cpu %+v net in %+v, want the average %+v", r.Name, i, got.CPU[i], got.NetIn[i], w)
				}
			}
		}
	})

	t.Run("AccountClockAhead", func(t *testing.T) {
		// A sandbox account whose test clock runs a day ahead: its samples are at
		// times on its clock, and its charts read at its now.
		id := o.Servers(t, 1)[0]
		ahead := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Minute)
		add(t, metrics.Sample{ServerID: id, At: ahead.Add(-2 * time.Minute), CPU: 20}, metrics.Sample{ServerID: id, At: ahead.Add(-time.Minute), CPU: 40})
		settle(t)
		s, err := metrics.NewReader(b, time.Minute).Series(ctx, id, metrics.Ranges[0], ahead)
		if err != nil || len(s.CPU) != 2 || s.CPU[0] != (metrics.Point{At: ahead.Add(-2 * time.Minute).Unix(), Value: 20}) || s.CPU[1].Value != 40 {
			t.Fatalf("Series at a clock a day ahead = %+v, %v; want the two samples", s.CPU, err)
		}
	})

	t.Run("ARound", func(t *testing.T) {
		// One sampling round of many servers in one write.
		ids := o.Servers(t, 200)
		var round []metrics.Sample
		for i, id := range ids {
			for k := range 5 {
				round = append(round, metrics.Sample{ServerID: id, AccountID: int64(i%7 + 1), At: at(7200 + 60*k), CPU: float64(i % 100),
					NetIn: int64(i), NetOut: int64(k), DiskRead: 1, DiskWrite: 2})
			}
		}
		add(t, round...)
		settle(t)
		for i, id := range ids {
			if got := read(t, id, at(7200), at(7500)); len(got) != 5 || got[0].CPU != float64(i%100) || got[4].NetOut != 4 {
				t.Fatalf("server %d: %+v; want its 5 samples", id, got)
			}
		}
	})

	t.Run("Prune", func(t *testing.T) {
		ids := o.Servers(t, 2)
		add(t, sample(ids[0], 0, 1), sample(ids[0], 60, 2), sample(ids[0], 120, 3), sample(ids[1], 0, 4), sample(ids[1], 59, 5))
		settle(t)
		n, err := b.PruneMetricSamples(ctx, at(60))
		if err != nil {
			t.Fatal(err)
		}
		settle(t)
		wantLeft := map[int64]int{ids[0]: 2, ids[1]: 0}
		if o.OwnRetention {
			// Retention is the backend's: nothing within it goes.
			if n != 0 {
				t.Fatalf("PruneMetricSamples = %d; want 0 (retention is the backend's own)", n)
			}
			wantLeft = map[int64]int{ids[0]: 3, ids[1]: 2}
		} else if n < 3 {
			// Other subtests' samples older than at(60) go too.
			t.Fatalf("PruneMetricSamples = %d; want at least these servers' 3", n)
		}
		for id, want := range wantLeft {
			if got := read(t, id, t0.Add(-time.Hour), at(3600)); len(got) != want {
				t.Errorf("server %d keeps %d samples, want %d", id, len(got), want)
			}
		}
	})
}

// stored is a sample as backends keep it: CPU clamped to 0–100, to 0.01.
func stored(s metrics.Sample) metrics.Sample {
	s.CPU = math.Round(min(max(s.CPU, 0), 100)*100) / 100
	return s
}

// one is a sample without its account, which backends need not answer.
func one(s metrics.Sample) metrics.Sample {
	s.AccountID = 0
	s.At = s.At.UTC()
	return s
}

func same(t *testing.T, what string, got, want []metrics.Sample) {
	t.Helper()
	g, w := make([]metrics.Sample, len(got)), make([]metrics.Sample, len(want))
	for i := range got {
		g[i] = one(got[i])
	}
	for i := range want {
		w[i] = one(stored(want[i]))
	}
	if !slices.Equal(g, w) {
		t.Fatalf("%s = %+v\nwant %+v", what, g, w)
	}
}

func close(a, b metrics.Bucket) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) <= Tolerance*max(1, math.Abs(y)) }
	return a.At == b.At && near(a.CPU, b.CPU) && near(a.NetIn, b.NetIn) && near(a.NetOut, b.NetOut) &&
		near(a.DiskRead, b.DiskRead) && near(a.DiskWrite, b.DiskWrite)
}
