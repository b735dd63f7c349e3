package metrics_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/metrics"
)

func TestParseRange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", time.Hour, true},
		{"1h", time.Hour, true},
		{"6h", 6 * time.Hour, true},
		{"24h", 24 * time.Hour, true},
		{"7d", 7 * 24 * time.Hour, true},
		{"1d", 0, false},
		{"2h", 0, false},
		{"1H", 0, false},
		{" 1h", 0, false},
		{"168h", 0, false},
		{"-", 0, false},
	} {
		r, ok := metrics.ParseRange(tc.in)
		if ok != tc.ok || r.Span != tc.want {
			t.Errorf("ParseRange(%q) = %v, %v; want %v, %v", tc.in, r, ok, tc.want, tc.ok)
		}
		if ok && tc.in != "" && r.Name != tc.in {
			t.Errorf("ParseRange(%q).Name = %q", tc.in, r.Name)
		}
	}
}

func TestStepAndWindow(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_123, 0)
	for _, tc := range []struct {
		rng      string
		interval time.Duration
		step     int64
		points   int64
	}{
		{"1h", time.Minute, 60, 60},
		{"6h", time.Minute, 60, 360},
		{"24h", time.Minute, 240, 360},
		{"7d", time.Minute, 1680, 360},
		{"1h", 60 * time.Millisecond, 10, 360}, // test speed: the range decides
		{"7d", 60 * time.Millisecond, 1680, 360},
		{"1h", 5 * time.Minute, 300, 12}, // a coarse interval: never finer than it
	} {
		r, _ := metrics.ParseRange(tc.rng)
		step := metrics.Step(r, tc.interval)
		from, to := metrics.Window(r, step, now)
		if step != tc.step || (to-from)/step != tc.points || from%step != 0 || to <= now.Unix() || to-step > now.Unix() {
			t.Errorf("%s at %v: step %d window [%d, %d) = %d buckets; want step %d, %d buckets ending after now",
				tc.rng, tc.interval, step, from, to, (to-from)/step, tc.step, tc.points)
		}
		if span := to - from; span > int64(r.Span.Seconds())+step {
			t.Errorf("%s: window of %d s, range %v", tc.rng, span, r.Span)
		}
	}
}

func at(sec int64) time.Time { return time.Unix(sec, 0) }

func TestDownsample(t *testing.T) {
	t.Parallel()
	s := func(sec int64, cpu float64, n int64) metrics.Sample {
		return metrics.Sample{At: at(sec), CPU: cpu, NetIn: n, NetOut: 2 * n, DiskRead: 3 * n, DiskWrite: 4 * n}
	}
	b := func(sec int64, cpu, n float64) metrics.Bucket {
		return metrics.Bucket{At: sec, CPU: cpu, NetIn: n, NetOut: 2 * n, DiskRead: 3 * n, DiskWrite: 4 * n}
	}
	for _, tc := range []struct {
		name    string
		samples []metrics.Sample
		step    int64
		want    []metrics.Bucket
	}{
		{"none", nil, 60, []metrics.Bucket{}},
		{"one per bucket keeps values", []metrics.Sample{s(60, 1.5, 10), s(120, 2.5, 20)}, 60,
			[]metrics.Bucket{b(60, 1.5, 10), b(120, 2.5, 20)}},
		{"averaged into aligned buckets", []metrics.Sample{s(1000, 10, 100), s(1100, 20, 200), s(1200, 30, 301), s(1300, 40, 400)}, 240,
			// buckets start at 960 and 1200
			[]metrics.Bucket{b(960, 15, 150), b(1200, 35, 350.5)}},
		{"gaps stay gaps", []metrics.Sample{s(0, 1, 1), s(600, 3, 3)}, 60,
			[]metrics.Bucket{b(0, 1, 1), b(600, 3, 3)}},
		{"a bucket at zero", []metrics.Sample{s(0, 4, 4), s(59, 2, 2), s(60, 1, 1)}, 60,
			[]metrics.Bucket{b(0, 3, 3), b(60, 1, 1)}},
	} {
		if got := metrics.Downsample(tc.samples, tc.step); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The reader answers the window of a range, rounded.
func TestReaderSeries(t *testing.T) {
	t.Parallel()
	st := &memStore{samples: map[int64][]metrics.Sample{}}
	now := time.Unix(1_800_000_000, 0) // a multiple of 60 and of 240
	for i := range 3 * 24 * 60 {
		sec := now.Unix() - int64(i)*60
		st.samples[7] = append(st.samples[7], metrics.Sample{ServerID: 7, At: at(sec), CPU: 100.0 / 3, NetIn: int64(i % 2)})
	}
	rd := metrics.NewReader(st, time.Minute)
	for _, tc := range []struct {
		rng    string
		points int
		first  int64
	}{
		{"1h", 60, now.Unix() - 59*60},
		{"24h", 360, now.Unix() - 359*240},
		{"7d", 155, now.Unix() - 3*24*3600 + 60 - (now.Unix()-3*24*3600+60)%1680}, // only 3 days of data
	} {
		r, _ := metrics.ParseRange(tc.rng)
		s, err := rd.Series(context.Background(), 7, r, now)
		if err != nil {
			t.Fatal(err)
		}
		if s.Range != tc.rng || len(s.CPU) != tc.points || s.CPU[0].At != tc.first || s.CPU[len(s.CPU)-1].At > now.Unix() {
			t.Errorf("%s: %d points from %d to %d, want %d from %d", tc.rng, len(s.CPU), s.CPU[0].At, s.CPU[len(s.CPU)-1].At, tc.points, tc.first)
		}
		if s.CPU[1].Value != 33.33 || (tc.rng != "1h" && s.NetIn[1].Value != 0.5) {
			t.Errorf("%s: cpu %v net %v, want 33.33 and 0.5", tc.rng, s.CPU[1], s.NetIn[1])
		}
	}
}

// A week of minute samples comes back as at most MaxPoints points per series.
func TestDownsampleWeek(t *testing.T) {
	t.Parallel()
	r, _ := metrics.ParseRange("7d")
	now := time.Unix(1_800_000_000, 0)
	step := metrics.Step(r, time.Minute)
	from, to := metrics.Window(r, step, now)
	var samples []metrics.Sample
	for sec := from; sec < to; sec += 60 {
		samples = append(samples, metrics.Sample{At: at(sec), CPU: 50})
	}
	cpu := metrics.Downsample(samples, step)
	if len(cpu) != metrics.MaxPoints {
		t.Fatalf("%d points, want %d", len(cpu), metrics.MaxPoints)
	}
	for i, p := range cpu {
		if p.CPU != 50 || (i > 0 && p.At != cpu[i-1].At+step) {
			t.Fatalf("point %d = %v", i, p)
		}
	}
}
