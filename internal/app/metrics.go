package app

import (
	"context"
	"time"

	"github.com/berthhq/berth/internal/httpapi"
	"github.com/berthhq/berth/internal/metrics"
	"github.com/berthhq/berth/internal/metrics/victoria"
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
	s.Leads = a.lead.Leads            // one process samples: the leader (on SQLite, the only one)
	s.Spread = a.sampleInterval() / 4 // a round over many servers shares the CPU with requests
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

// openMetrics opens the metrics backend of Config.MetricsURL, if any. One that does
// not answer yet is logged, not fatal: its samples are gaps in the charts until it
// does, as a berthd that was down leaves.
func (a *App) openMetrics(ctx context.Context) error {
	if a.cfg.MetricsURL == "" {
		return nil
	}
	vm, err := victoria.New(a.cfg.MetricsURL)
	if err != nil {
		return err
	}
	ping, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := vm.Ping(ping); err != nil {
		a.log.Warn("metrics: VictoriaMetrics does not answer", "url", a.cfg.MetricsURL, "err", err)
	}
	a.metrics = vm
	return nil
}

// metricsBackend keeps the samples: the SQL store unless --metrics-url names a
// time-series database.
func (a *App) metricsBackend() metrics.Backend {
	if a.metrics != nil {
		return a.metrics
	}
	return a.DB
}
