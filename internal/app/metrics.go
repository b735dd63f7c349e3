package app

import (
	"context"
	"time"

	"github.com/berthhq/berth/internal/httpapi"
	"github.com/berthhq/berth/internal/metrics"
)

// sampleInterval is the metrics sampling interval: a minute, scaled like the
// simulated driver's durations (docs/api.md, Shapes and small rules), and never below 10 ms.
func (a *App) sampleInterval() time.Duration {
	return max(time.Duration(float64(metrics.Interval)*a.cfg.SimTimeScale), 10*time.Millisecond)
}

// startSampler starts recording metrics of every live server; the process that works
// the operations (the one holding the lock) is the one that samples.
func (a *App) startSampler() {
	ctx, cancel := context.WithCancel(context.Background())
	s := metrics.NewSampler(a.DB, a.metricsBackend(), a.driver, a.sampleInterval(), a.log)
	s.Leads = a.lead.Leads // one process samples: the leader (on SQLite, the only one)
	if a.Service.TestClocks() {
		s.Shift = a.Service.ClockAhead
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	a.stopSampler = func() {
		cancel()
		<-done
	}
}

// metricsReader answers the metrics route from the stored samples.
func (a *App) metricsReader() httpapi.MetricsReader {
	return metrics.NewReader(a.metricsBackend(), a.sampleInterval())
}

// metricsBackend keeps the samples: the SQL store unless --metrics-url names a
// time-series database.
func (a *App) metricsBackend() metrics.Backend {
	if a.metrics != nil {
		return a.metrics
	}
	return a.DB
}
