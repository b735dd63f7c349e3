package metrics

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/berthhq/berth/internal/compute"
)

// HistoryReader tells what a machine's counters would have read over a stretch of
// time it was not sampled in (the sim driver answers from its load model).
type HistoryReader interface {
	// History returns readings from from to to, step apart, as if the machine had
	// been in its present state all along.
	History(ctx context.Context, name string, from, to time.Time, step time.Duration) ([]compute.Stats, error)
}

// Backfill stores the samples targets' machines would have given from from to to
// (a test clock's advance skips that time): every Interval over the last day of it,
// every 10 Intervals before that, nothing older than Retention before to. What the
// day's charts show is then what they would show had the time passed; the week's,
// averaged over its buckets of about half an hour, too.
func Backfill(ctx context.Context, st Backend, h HistoryReader, targets []Target, from, to time.Time) error {
	from = maxTime(from, to.Add(-Retention))
	day := maxTime(from, to.Add(-24*time.Hour))
	for _, tg := range targets {
		var samples []Sample
		for _, part := range []struct {
			from, to time.Time
			step     time.Duration
		}{{from, day, 10 * Interval}, {day, to, Interval}} {
			if !part.to.After(part.from) {
				continue
			}
			readings, err := h.History(ctx, tg.Name, part.from, part.to, part.step)
			if errors.Is(err, compute.ErrNotFound) {
				// No machine (a provisioning that failed): no load, as the sampler
				// finds none.
				break
			}
			if err != nil {
				return fmt.Errorf("history of %s: %w", tg.Name, err)
			}
			for i := 1; i < len(readings); i++ {
				if sm, ok := Rates(readings[i-1], readings[i]); ok {
					sm.ServerID, sm.AccountID = tg.ServerID, tg.AccountID
					samples = append(samples, sm)
				}
			}
		}
		if len(samples) > 0 {
			if err := st.AddMetricSamples(ctx, samples); err != nil {
				return fmt.Errorf("store samples of %s: %w", tg.Name, err)
			}
		}
	}
	return nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
