package metrics_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/compute/simdriver"
	"github.com/berthhq/berth/internal/metrics"
	"github.com/berthhq/berth/internal/metrics/victoria"
	"github.com/berthhq/berth/internal/metrics/victoria/victoriatest"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

// discard is a Backend that keeps nothing: the round's cost without the writing.
type discard struct{ n int }

func (d *discard) AddMetricSamples(_ context.Context, s []metrics.Sample) error {
	d.n += len(s)
	return nil
}
func (*discard) PruneMetricSamples(context.Context, time.Time) (int64, error) { return 0, nil }
func (*discard) MetricSamples(context.Context, int64, time.Time, time.Time) ([]metrics.Sample, error) {
	return nil, nil
}
func (*discard) MetricBuckets(context.Context, int64, time.Time, time.Time, int64) ([]metrics.Bucket, error) {
	return []metrics.Bucket{}, nil
}

// BenchmarkSamplingRound is one sampling round (SampleOnce) over
// BERTH_BENCH_SAMPLE_SERVERS running sim servers (default 1,000,000) on SQLite,
// seeded set-based: their targets read, every machine's counters read through the
// sim driver's StatsOf (one query and one upsert each 500), the rates computed, and
// the samples written to the backend: nowhere (discard), the SQL store, and
// VictoriaMetrics when its binary is installed. The first round, baselines only, and
// the second, the first samples (logged), are not timed.
//
//	go test -run '^$' -bench BenchmarkSamplingRound -benchtime 3x -timeout 60m ./internal/metrics/
func BenchmarkSamplingRound(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("BERTH_BENCH_SAMPLE_SERVERS")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	db := sqlstoretest.SQLite(b, b.TempDir(), simdriver.Storage())
	start := time.Now()
	seedRound(b, db, n)
	b.Logf("seeded %d servers and machines in %s", n, time.Since(start).Round(time.Millisecond))
	drv := simdriver.New(db.WriteDB(), 1, db.Rebind)

	backends := []struct {
		name string
		open func(b *testing.B) metrics.Backend
	}{
		{"discard", func(*testing.B) metrics.Backend { return &discard{} }},
		{"sqlite", func(*testing.B) metrics.Backend { return db }},
		{"victoriametrics", func(b *testing.B) metrics.Backend {
			vm := victoriatest.Start(b)
			be, err := victoria.New(vm.URL)
			if err != nil {
				b.Fatal(err)
			}
			return be
		}},
	}
	for _, be := range backends {
		b.Run(fmt.Sprintf("servers=%d/backend=%s", n, be.name), func(b *testing.B) {
			backend := be.open(b)
			s := metrics.NewSampler(db, backend, drv, time.Minute, nil)
			if err := s.SampleOnce(ctx); err != nil { // baselines
				b.Fatal(err)
			}
			// The first samples, untimed: VictoriaMetrics registers five new series a
			// server then (about 5x slower than a round after), which a running
			// installation does once a server.
			first := time.Now()
			if err := s.SampleOnce(ctx); err != nil {
				b.Fatal(err)
			}
			b.Logf("first round of samples (new series): %s", time.Since(first).Round(time.Millisecond))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := s.SampleOnce(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "servers/s")
		})
	}
}

// seedRound writes n running servers of one account and their running sim machines
// in two set-based statements.
func seedRound(b *testing.B, db *sqlstore.DB, n int) {
	ctx := context.Background()
	if err := ops.New(ops.Deps{Store: db}).EnsureCatalog(ctx, catalog.Default()); err != nil {
		b.Fatal(err)
	}
	w := db.WriteDB()
	ready := time.Now().Add(-time.Hour).UnixMilli()
	for _, q := range []string{
		`INSERT INTO accounts (email, password_hash, name, server_quota, created_at) VALUES ('round@example.com', '', 'r', 0, 0)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
			INSERT INTO servers (account_id, name, display_name, status, location_id, plan_id, image_id, vcpus, memory_mb, disk_gb, created_at)
			SELECT 1, 'server-' || printf('%07d', i), 'r', 'running', 1, 1, 1, 2, 2048, 40, 0 FROM n`,
		`INSERT INTO sim_machines (name, state, vcpus, memory_mb, disk_gb, image, ready_at, created_at)
			SELECT name, 'running', vcpus, memory_mb, disk_gb, 'debian-12', ?2, ?2 FROM servers ORDER BY id`,
	} {
		if _, err := w.ExecContext(ctx, q, n, ready); err != nil {
			b.Fatalf("seed: %v", err)
		}
	}
}
