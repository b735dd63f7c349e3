package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/berthhq/berth/internal/compute"
)

// StatsReader reads a machine's counters (every compute.Driver is one).
type StatsReader interface {
	Stats(ctx context.Context, name string) (compute.Stats, error)
}

// Sampler turns counters into stored rates: it reads every live server's counters
// once an interval and stores, per server, the rates since its previous reading. The
// first reading of a server (after a start of berthd too) only sets the baseline, so
// a server new to the sampler is read every First instead until it has its first
// sample: a server that has just come up shows a point within about twice First (10 s
// at --sim-time-scale 1), not two intervals (two minutes).
type Sampler struct {
	targets  Targets
	store    Backend
	driver   StatsReader
	interval time.Duration
	log      *slog.Logger
	// Now is the clock; tests replace it.
	Now func() time.Time
	// Retention is how long samples are kept (default Retention).
	Retention time.Duration
	// Leads, when set, says whether this process samples now: of several processes
	// serving one database, only the leader does (nil: always).
	Leads func(ctx context.Context) bool
	// First is how often a server without a sample yet is read (default a twelfth of
	// the interval, at least a second: counters read closer together say little).
	First time.Duration
	// Spread, when set, is how long a round of more than one chunk (roundChunk
	// servers) takes at least: its chunks start evenly over it, so that a round over
	// a million servers, several seconds of CPU, shares the machine with the requests
	// instead of taking it in one burst. Every server of a round still counts as
	// read when the round began, so each is due an interval later as before.
	Spread time.Duration
	// Shift, when set, is how far ahead of the system clock an account's clock runs
	// (the sandbox's test clocks): its servers' samples are stored at times on it.
	Shift func(accountID int64) time.Duration

	// seen is what the sampler knows of each server it read: one map, looked up once
	// a server a tick (at a million servers, three maps cost three lookups each).
	seen   map[int64]seen
	pruned time.Time
	// list is the servers to sample as last listed whole (at listed, once an
	// interval), with those made since (ids above the last one) added each tick: a
	// tick between two lists reads only the new servers, not all of them. A server
	// deleted meanwhile stays a target until the next list; its machine is gone, so
	// it is skipped as one not made yet is.
	list   []Target
	listed time.Time
}

// sleepUntil waits until t, or until ctx ends (false).
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// roundChunk is how many servers a round reads, rates and stores at a time.
const roundChunk = 10_000

// seen is a server as the sampler last read it.
type seen struct {
	prev    compute.Stats // its last reading, the next sample's baseline
	read    time.Time     // when it was read (by Now)
	sampled bool          // it has a sample
}

// NewSampler returns a sampler reading the machines of targets every interval from
// driver into st.
func NewSampler(targets Targets, st Backend, driver StatsReader, interval time.Duration, log *slog.Logger) *Sampler {
	if log == nil {
		log = slog.Default()
	}
	return &Sampler{targets: targets, store: st, driver: driver, interval: interval, log: log, Now: time.Now, Retention: Retention,
		First: max(interval/12, time.Second), seen: map[int64]seen{}}
}

// Period is how often Run looks for servers due to be read.
func (s *Sampler) Period() time.Duration {
	if s.First <= 0 {
		return s.interval
	}
	return min(s.interval, s.First)
}

// Run samples every interval until ctx ends. Errors are logged, never fatal: a round
// that fails is a gap in the charts.
func (s *Sampler) Run(ctx context.Context) {
	t := time.NewTicker(s.Period())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if s.Leads != nil && !s.Leads(ctx) {
				continue
			}
			if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("metrics sampling", "err", err)
			}
		}
	}
}

// SampleOnce reads every live server once, stores the samples it can compute and
// prunes what is older than the retention. A machine that does not exist (yet, or
// any more) is skipped.
func (s *Sampler) SampleOnce(ctx context.Context) error { return s.sample(ctx, true) }

// Tick reads the servers due: those read an interval ago (within half a Period),
// and those without a sample yet; it prunes once an interval.
func (s *Sampler) Tick(ctx context.Context) error { return s.sample(ctx, false) }

func (s *Sampler) sample(ctx context.Context, all bool) error {
	now := s.Now()
	targets, relisted, err := s.listTargets(ctx, now, all)
	if err != nil {
		return fmt.Errorf("metric targets: %w", err)
	}
	due := make([]Target, 0, len(targets))
	for _, tg := range targets {
		if e, ok := s.seen[tg.ServerID]; !all && ok && e.sampled && now.Sub(e.read) < s.interval-s.Period()/2 {
			continue
		}
		due = append(due, tg)
	}
	// A chunk at a time: read, rated and stored before the next is read, so what a
	// round holds at once (the readings, the samples) does not grow with the
	// installation.
	var firstErr error
	chunks := (len(due) + roundChunk - 1) / roundChunk
	start := time.Now()
	i := 0
	for chunk := range slices.Chunk(due, roundChunk) {
		if i++; s.Spread > 0 && i > 1 {
			if !sleepUntil(ctx, start.Add(s.Spread*time.Duration(i-1)/time.Duration(chunks))) {
				return ctx.Err()
			}
		}
		read, failed, err := s.readStats(ctx, chunk)
		if firstErr == nil {
			firstErr = err
		}
		var samples []Sample
		for _, tg := range chunk {
			st, ok := read[tg.Name]
			if failed[tg.Name] {
				continue // a gap in the charts; the baseline stays
			}
			if !ok {
				// Gone, or not made yet: no baseline to rate against.
				delete(s.seen, tg.ServerID)
				continue
			}
			e, had := s.seen[tg.ServerID]
			prev := e.prev
			e.prev, e.read = st, now
			if had {
				if sm, ok := Rates(prev, st); ok {
					sm.ServerID, sm.AccountID = tg.ServerID, tg.AccountID
					if s.Shift != nil {
						sm.At = sm.At.Add(s.Shift(tg.AccountID))
					}
					samples = append(samples, sm)
					e.sampled = true
				}
			}
			s.seen[tg.ServerID] = e
		}
		if len(samples) > 0 {
			if err := s.store.AddMetricSamples(ctx, samples); err != nil {
				return fmt.Errorf("store samples: %w", err)
			}
		}
	}
	if relisted {
		// What the sampler knows of servers no longer listed (deleted) goes; between
		// two lists the list only grows.
		live := make(map[int64]struct{}, len(targets))
		for _, tg := range targets {
			live[tg.ServerID] = struct{}{}
		}
		for id := range s.seen {
			if _, ok := live[id]; !ok {
				delete(s.seen, id)
			}
		}
	}
	if all || now.Sub(s.pruned) >= s.interval {
		if _, err := s.store.PruneMetricSamples(ctx, now.Add(-s.Retention)); err != nil {
			return fmt.Errorf("prune samples: %w", err)
		}
		s.pruned = now
	}
	return firstErr
}

// listTargets is the servers to sample now: listed whole when all, on the first
// tick and once an interval (relisted), else the last list and the servers made
// since.
func (s *Sampler) listTargets(ctx context.Context, now time.Time, all bool) (targets []Target, relisted bool, err error) {
	if all || s.listed.IsZero() || now.Sub(s.listed) >= s.interval || now.Before(s.listed) {
		t, err := s.targets.MetricTargets(ctx)
		if err != nil {
			return nil, false, err
		}
		s.list, s.listed = t, now
		return t, true, nil
	}
	after := int64(0)
	if n := len(s.list); n > 0 {
		after = s.list[n-1].ServerID
	}
	more, err := s.targets.MetricTargetsAfter(ctx, after)
	if err != nil {
		return nil, false, err
	}
	s.list = append(s.list, more...)
	return s.list, false, nil
}

// readStats reads the counters of the due targets: many a call when the driver can
// (compute.StatsBatcher: one call a host), else one by one. A machine that does not
// exist is absent from got; one whose read failed (its host down) is in failed, the
// others read all the same, and err tells the failures.
func (s *Sampler) readStats(ctx context.Context, due []Target) (got map[string]compute.Stats, failed map[string]bool, err error) {
	failed = map[string]bool{}
	if len(due) == 0 {
		return nil, failed, nil
	}
	var firstErr error
	var firstName string
	if b, ok := s.driver.(compute.StatsBatcher); ok {
		names := make([]string, len(due))
		for i, tg := range due {
			names[i] = tg.Name
		}
		got, errs := b.StatsOf(ctx, names)
		for _, n := range names { // in the targets' order: the first failure is the same each time
			if e := errs[n]; e != nil && !failed[n] {
				failed[n] = true
				if firstErr == nil {
					firstErr, firstName = e, n
				}
			}
		}
		if firstErr != nil {
			return got, failed, fmt.Errorf("stats of %d of %d machines failed, %s: %w", len(failed), len(names), firstName, firstErr)
		}
		return got, failed, nil
	}
	got = make(map[string]compute.Stats, len(due))
	for _, tg := range due {
		st, e := s.driver.Stats(ctx, tg.Name)
		switch {
		case errors.Is(e, compute.ErrNotFound):
		case e != nil:
			failed[tg.Name] = true
			if firstErr == nil {
				firstErr, firstName = e, tg.Name
			}
		default:
			got[tg.Name] = st
		}
	}
	if firstErr != nil {
		return got, failed, fmt.Errorf("stats of %d of %d machines failed, %s: %w", len(failed), len(due), firstName, firstErr)
	}
	return got, failed, nil
}

// Rates turns two readings of one machine into a sample at cur.At. ok is false when
// no time passed between them. A counter lower than before started again from zero
// (the machine restarted): what it counts now is what it counted since.
func Rates(prev, cur compute.Stats) (s Sample, ok bool) {
	dt := cur.At.Sub(prev.At).Seconds()
	if dt <= 0 {
		return Sample{}, false
	}
	delta := func(a, b uint64) float64 {
		if b < a {
			return float64(b)
		}
		return float64(b - a)
	}
	rate := func(a, b uint64) int64 { return int64(delta(a, b)/dt + 0.5) }
	s = Sample{At: cur.At, NetIn: rate(prev.NetRxBytes, cur.NetRxBytes), NetOut: rate(prev.NetTxBytes, cur.NetTxBytes),
		DiskRead: rate(prev.DiskReadBytes, cur.DiskReadBytes), DiskWrite: rate(prev.DiskWriteBytes, cur.DiskWriteBytes)}
	s.CPU = min(100, delta(prev.CPUTimeNS, cur.CPUTimeNS)/(dt*1e9*float64(max(cur.VCPUs, 1)))*100)
	return s, true
}
