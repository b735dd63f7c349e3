package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/metrics"
)

// memStore is an in-memory metrics.Store.
type memStore struct {
	mu      sync.Mutex
	targets []metrics.Target // by id, as the store lists them
	samples map[int64][]metrics.Sample
	lists   int   // calls of MetricTargets
	adds    []int // the samples of each call of AddMetricSamples
}

func (m *memStore) MetricTargets(context.Context) ([]metrics.Target, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lists++
	return append([]metrics.Target(nil), m.targets...), nil
}

func (m *memStore) MetricTargetsAfter(_ context.Context, after int64) ([]metrics.Target, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []metrics.Target
	for _, t := range m.targets {
		if t.ServerID > after {
			out = append(out, t)
		}
	}
	return out, nil
}

func (m *memStore) AddMetricSamples(_ context.Context, ss []metrics.Sample) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.adds = append(m.adds, len(ss))
	for _, s := range ss {
		m.samples[s.ServerID] = append(m.samples[s.ServerID], s)
	}
	return nil
}

func (m *memStore) PruneMetricSamples(_ context.Context, before time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for id, ss := range m.samples {
		var keep []metrics.Sample
		for _, s := range ss {
			if s.At.Before(before) {
				n++
			} else {
				keep = append(keep, s)
			}
		}
		m.samples[id] = keep
	}
	return n, nil
}

func (m *memStore) MetricSamples(_ context.Context, id int64, from, to time.Time) ([]metrics.Sample, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []metrics.Sample
	for _, s := range m.samples[id] {
		if !s.At.Before(from) && s.At.Before(to) {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

func (m *memStore) MetricBuckets(ctx context.Context, id int64, from, to time.Time, step int64) ([]metrics.Bucket, error) {
	ss, err := m.MetricSamples(ctx, id, from, to)
	return metrics.Downsample(ss, step), err
}

// fakeMachines hands out counters the test sets.
type fakeMachines struct {
	now      func() time.Time
	counters map[string]compute.Stats
	fail     map[string]error
}

func (f *fakeMachines) Stats(_ context.Context, name string) (compute.Stats, error) {
	if err := f.fail[name]; err != nil {
		return compute.Stats{}, err
	}
	s, ok := f.counters[name]
	if !ok {
		return compute.Stats{}, compute.ErrNotFound
	}
	s.At = f.now()
	return s, nil
}

func TestSampler(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := time.Unix(1_800_000_000, 0)
	now := func() time.Time { return clock }
	st := &memStore{samples: map[int64][]metrics.Sample{},
		targets: []metrics.Target{{ServerID: 1, Name: "server-a"}, {ServerID: 2, Name: "server-b"}, {ServerID: 3, Name: "server-gone"}, {ServerID: 4, Name: "server-err"}}}
	drv := &fakeMachines{now: now, counters: map[string]compute.Stats{
		"server-a": {Running: true, VCPUs: 2},
		"server-b": {Running: true, VCPUs: 1, CPUTimeNS: 5e12, NetRxBytes: 1e9},
	}, fail: map[string]error{"server-err": errors.New("hypervisor down")}}
	s := metrics.NewSampler(st, st, drv, time.Minute, nil)
	s.Now = now
	advance := func(d time.Duration, change func()) {
		clock = clock.Add(d)
		change()
	}

	// First round: only baselines, nothing stored; the failing machine is reported.
	if err := s.SampleOnce(ctx); err == nil {
		t.Error("a failing machine was not reported")
	}
	if n := len(st.samples[1]) + len(st.samples[2]); n != 0 {
		t.Fatalf("first round stored %d samples, want only baselines", n)
	}

	// A minute later: a at 50 % of 2 vCPUs, 1 MB/s in; b stopped (counters still).
	advance(time.Minute, func() {
		a := drv.counters["server-a"]
		a.CPUTimeNS += 60e9 // one vCPU-minute of two
		a.NetRxBytes += 60e6
		a.NetTxBytes += 6e6
		a.DiskReadBytes += 600
		a.DiskWriteBytes += 1200
		drv.counters["server-a"] = a
		b := drv.counters["server-b"]
		b.Running = false
		drv.counters["server-b"] = b
	})
	_ = s.SampleOnce(ctx)
	want := metrics.Sample{ServerID: 1, At: clock, CPU: 50, NetIn: 1e6, NetOut: 1e5, DiskRead: 10, DiskWrite: 20}
	if got := st.samples[1]; len(got) != 1 || got[0] != want {
		t.Fatalf("a: %+v, want %+v", got, want)
	}
	if got := st.samples[2]; len(got) != 1 || got[0].CPU != 0 || got[0].NetIn != 0 {
		t.Fatalf("stopped b: %+v, want a zero sample", got)
	}

	// b restarted: its counters began again from zero. What they count since is the rate.
	advance(30*time.Second, func() {
		drv.counters["server-b"] = compute.Stats{Running: true, VCPUs: 1, CPUTimeNS: 15e9, NetRxBytes: 3000}
	})
	_ = s.SampleOnce(ctx)
	if got := st.samples[2]; len(got) != 2 || got[1].CPU != 50 || got[1].NetIn != 100 {
		t.Fatalf("b after a counter reset: %+v, want 50 %% and 100 B/s", got)
	}

	// CPU is capped at 100 % (counters read slightly apart).
	advance(time.Minute, func() {
		a := drv.counters["server-a"]
		a.CPUTimeNS += 2*60e9 + 1e9
		drv.counters["server-a"] = a
	})
	_ = s.SampleOnce(ctx)
	if got := st.samples[1]; got[len(got)-1].CPU != 100 {
		t.Fatalf("a: cpu %v, want 100", got[len(got)-1].CPU)
	}

	// No time passed: no sample.
	n := len(st.samples[1])
	_ = s.SampleOnce(ctx)
	if len(st.samples[1]) != n {
		t.Fatal("a sample for zero elapsed time")
	}

	// A week and a bit later everything so far is pruned; the new sample stays.
	advance(metrics.Retention+time.Minute, func() {})
	_ = s.SampleOnce(ctx)
	if got := st.samples[1]; len(got) != 1 || !got[0].At.Equal(clock) {
		t.Fatalf("after the retention: %+v, want only the newest", got)
	}
	if math.Abs(st.samples[1][0].CPU) > 100 {
		t.Fatal("cpu out of range")
	}
}

// Run samples at its interval until its context ends.
func TestSamplerRun(t *testing.T) {
	t.Parallel()
	st := &memStore{samples: map[int64][]metrics.Sample{}, targets: []metrics.Target{{ServerID: 1, Name: "server-a"}}}
	var mu sync.Mutex
	var cpu uint64
	drv := statsFunc(func(string) (compute.Stats, error) {
		mu.Lock()
		defer mu.Unlock()
		cpu += 5e6
		return compute.Stats{At: time.Now(), Running: true, VCPUs: 1, CPUTimeNS: cpu}, nil
	})
	s := metrics.NewSampler(st, st, drv, 5*time.Millisecond, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, _ := st.MetricSamples(ctx, 1, time.Time{}, time.Now().Add(time.Hour))
		if len(got) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d samples after 5 s", len(got))
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
}

type statsFunc func(name string) (compute.Stats, error)

func (f statsFunc) Stats(_ context.Context, name string) (compute.Stats, error) { return f(name) }

// A server new to the sampler has its first point within two Firsts (10 s at the
// default scale), not two intervals; then it is read once an interval, and the
// others keep their cadence meanwhile.
func TestSamplerFirstPointSoon(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	now := start
	clock := func() time.Time { return now }
	st := &memStore{samples: map[int64][]metrics.Sample{}, targets: []metrics.Target{{ServerID: 1, Name: "old"}}}
	drv := &fakeMachines{now: clock, counters: map[string]compute.Stats{
		"old": {Running: true, VCPUs: 1}, "new": {Running: true, VCPUs: 1}}}
	s := metrics.NewSampler(st, st, drv, metrics.Interval, nil)
	s.Now = clock
	if p := s.Period(); p != 5*time.Second {
		t.Fatalf("period %s at the default interval, want 5s", p)
	}
	ctx := context.Background()
	tick := func() {
		t.Helper()
		if err := s.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		now = now.Add(s.Period())
	}
	at := func(id int64) []time.Duration {
		var out []time.Duration
		for _, sm := range st.samples[id] {
			out = append(out, sm.At.Sub(start))
		}
		return out
	}
	// "old" gets its baseline at 0 and first point at 5 s, then one a minute.
	for now.Before(start.Add(30 * time.Second)) {
		tick()
	}
	// "new" comes up at 30 s: its first point by 40 s.
	st.mu.Lock()
	st.targets = append(st.targets, metrics.Target{ServerID: 2, Name: "new"})
	st.mu.Unlock()
	for now.Before(start.Add(2*time.Minute + 6*time.Second)) {
		tick()
	}
	sec := time.Second
	if got, want := at(1), []time.Duration{5 * sec, 65 * sec, 125 * sec}; !slicesEqual(got, want) {
		t.Errorf("old server's points at %v, want %v", got, want)
	}
	if got, want := at(2), []time.Duration{35 * sec, 95 * sec}; !slicesEqual(got, want) {
		t.Errorf("new server's points at %v, want %v (the first within 10 s of it coming up)", got, want)
	}
	// 26 ticks in 126 s: every server listed once an interval (at 0, 60 and 120 s),
	// not every tick.
	if st.lists != 3 {
		t.Errorf("every server listed %d times in 26 ticks over 2 minutes, want 3 (once a minute)", st.lists)
	}
}

func slicesEqual(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// batchMachines is a driver that reads many machines at once (compute.StatsBatcher),
// one host at a time, as the libvirt driver does: a machine's host is the letter
// after "server-". It counts its calls, both kinds.
type batchMachines struct {
	fakeMachines
	calls [][]string
	stats int           // calls of Stats, one machine each
	down  map[byte]bool // hosts that cannot be reached
}

func (b *batchMachines) Stats(ctx context.Context, name string) (compute.Stats, error) {
	b.stats++
	return b.fakeMachines.Stats(ctx, name)
}

func (b *batchMachines) StatsOf(ctx context.Context, names []string) (map[string]compute.Stats, map[string]error) {
	b.calls = append(b.calls, names)
	out, failed := map[string]compute.Stats{}, map[string]error{}
	for _, n := range names {
		if h := n[len("server-")]; b.down[h] {
			failed[n] = fmt.Errorf("%w: host %c", compute.ErrUnavailable, h)
		} else if s, err := b.fakeMachines.Stats(ctx, n); err == nil {
			out[n] = s
		}
	}
	return out, failed
}

// A driver that reads machines at once gets one call a round with the servers due,
// never one a machine; a host that cannot be reached is a gap in its machines'
// charts only (the other host's are stored that round) and keeps their baselines,
// so the next round stores their points at once.
func TestSamplerBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := time.Unix(1_800_000_000, 0)
	now := func() time.Time { return clock }
	st := &memStore{samples: map[int64][]metrics.Sample{},
		targets: []metrics.Target{{ServerID: 1, Name: "server-a1"}, {ServerID: 2, Name: "server-b1"}, {ServerID: 3, Name: "server-gone"},
			{ServerID: 4, Name: "server-a2"}}}
	drv := &batchMachines{fakeMachines: fakeMachines{now: now, counters: map[string]compute.Stats{
		"server-a1": {Running: true, VCPUs: 1}, "server-b1": {Running: true, VCPUs: 1}, "server-a2": {Running: true, VCPUs: 1}}},
		down: map[byte]bool{}}
	s := metrics.NewSampler(st, st, drv, time.Minute, nil)
	s.Now = now
	run := func(d time.Duration) error {
		clock = clock.Add(d)
		for name, c := range drv.counters {
			c.CPUTimeNS += uint64(d) / 2
			drv.counters[name] = c
		}
		return s.Tick(ctx)
	}
	if err := run(0); err != nil {
		t.Fatal(err)
	}
	if len(drv.calls) != 1 || len(drv.calls[0]) != 4 {
		t.Fatalf("first round: calls %v, want one with the four servers", drv.calls)
	}
	drv.down['a'] = true
	err := run(5 * time.Second)
	if err == nil || !errors.Is(err, compute.ErrUnavailable) || !strings.Contains(err.Error(), "2 of 4 machines") {
		t.Fatalf("a round with host a down: %v; want its 2 machines' failure told", err)
	}
	if got := st.samples[2]; len(got) != 1 || got[0].CPU != 50 {
		t.Errorf("server b1 on the host that answered: %+v, want its point at 50 %% that round", got)
	}
	for _, id := range []int64{1, 4} {
		if got := st.samples[id]; len(got) != 0 {
			t.Errorf("server %d on the host that failed: %+v, want a gap", id, got)
		}
	}
	drv.down['a'] = false
	if err := run(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{1, 4} {
		if got := st.samples[id]; len(got) != 1 || got[0].CPU != 50 {
			t.Errorf("server %d after its host's failed round: %+v, want one point at 50 %% from the baseline kept", id, got)
		}
	}
	if n := len(drv.calls); n != 3 || drv.stats != 0 {
		t.Fatalf("%d batch calls and %d single ones after three rounds; want 3 and none", n, drv.stats)
	}
	// Sampled servers wait an interval; the one without a machine is read each round.
	if err := run(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if last := drv.calls[len(drv.calls)-1]; len(last) != 1 || last[0] != "server-gone" {
		t.Errorf("a round between intervals read %v, want only server-gone", last)
	}
}

// manyServers is a sampler of n running servers on one host of a batching driver,
// on a clock the test moves.
func manyServers(n int) (*metrics.Sampler, *memStore, *batchMachines, *time.Time) {
	clock := time.Unix(1_800_000_000, 0)
	now := func() time.Time { return clock }
	st := &memStore{samples: map[int64][]metrics.Sample{}}
	drv := &batchMachines{fakeMachines: fakeMachines{now: now, counters: map[string]compute.Stats{}}, down: map[byte]bool{}}
	for i := range n {
		name := fmt.Sprintf("server-a%d", i)
		st.targets = append(st.targets, metrics.Target{ServerID: int64(i + 1), Name: name})
		drv.counters[name] = compute.Stats{Running: true, VCPUs: 1}
	}
	s := metrics.NewSampler(st, st, drv, time.Minute, nil)
	s.Now = now
	return s, st, drv, &clock
}

// A round reads, rates and stores its servers 10,000 at a time, so that what it
// holds at once does not grow with the installation: 25,000 servers are three
// batch reads and, once they have baselines, three stores.
func TestSamplerRoundInChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const n = 25_000
	s, st, drv, clock := manyServers(n)
	if err := s.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	*clock = clock.Add(time.Minute)
	if err := s.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, c := range drv.calls {
		sizes = append(sizes, len(c))
	}
	if want := []int{10_000, 10_000, 5_000, 10_000, 10_000, 5_000}; !slices.Equal(sizes, want) {
		t.Errorf("batch reads of %v servers, want %v", sizes, want)
	}
	if want := []int{10_000, 10_000, 5_000}; !slices.Equal(st.adds, want) {
		t.Errorf("samples stored %v at a time, want %v", st.adds, want)
	}
	if len(st.samples) != n {
		t.Errorf("%d servers have a sample, want %d", len(st.samples), n)
	}
}

// With Spread, a round's chunks start evenly over it (25,000 servers: three chunks,
// the second a third of the way in, the third two thirds), and a round cut short by
// its context ends at once.
func TestSamplerSpreadsARound(t *testing.T) {
	t.Parallel()
	s, _, drv, clock := manyServers(25_000)
	s.Spread = 600 * time.Millisecond
	start := time.Now()
	if err := s.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Errorf("a round of three chunks spread over 600 ms took %s, want at least 400 ms", took)
	}
	if len(drv.calls) != 3 {
		t.Fatalf("%d batch reads, want 3", len(drv.calls))
	}

	ctx, cancel := context.WithCancel(context.Background())
	s.Spread = time.Hour
	*clock = clock.Add(time.Minute)
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	start = time.Now()
	if err := s.Tick(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("a round cut short: %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a round cut short took %s", took)
	}
}
