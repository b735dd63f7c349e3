package sqlstore_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/metrics"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

func TestMetricSamples(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir())
	if err := ops.New(ops.Deps{Store: db}).EnsureCatalog(ctx, catalog.Default()); err != nil {
		t.Fatal(err)
	}
	w := db.WriteDB()
	if _, err := w.Exec(`INSERT INTO accounts (email, password_hash, name, server_quota, created_at) VALUES ('m@example.com', '', 'm', 10, 0)`); err != nil {
		t.Fatal(err)
	}
	for i, deleted := range []any{nil, nil, int64(1)} {
		if _, err := w.Exec(`INSERT INTO servers (account_id, name, display_name, status, location_id, plan_id, image_id, vcpus, memory_mb, disk_gb, created_at, deleted_at)
			VALUES (1, ?, 'm', 'running', 1, 1, 1, 1, 1024, 20, 0, ?)`, fmt.Sprintf("server-m%05d", i+1), deleted); err != nil {
			t.Fatal(err)
		}
	}

	targets, err := db.MetricTargets(ctx)
	if err != nil || len(targets) != 2 || targets[0] != (metrics.Target{ServerID: 1, AccountID: 1, Name: "server-m00001"}) || targets[1].ServerID != 2 {
		t.Fatalf("MetricTargets = %+v, %v; want the two live servers", targets, err)
	}
	if mine, err := db.AccountMetricTargets(ctx, 1); err != nil || fmt.Sprint(mine) != fmt.Sprint(targets) {
		t.Fatalf("AccountMetricTargets(1) = %+v, %v; want %+v", mine, err, targets)
	}
	if other, err := db.AccountMetricTargets(ctx, 2); err != nil || len(other) != 0 {
		t.Fatalf("AccountMetricTargets(2) = %+v, %v; want none", other, err)
	}
	for _, c := range []struct {
		after int64
		want  int
	}{{0, 2}, {1, 1}, {2, 0}, {3, 0}, {-1, 2}, {1 << 62, 0}} {
		if got, err := db.MetricTargetsAfter(ctx, c.after); err != nil || len(got) != c.want || c.want > 0 && got[len(got)-1] != targets[1] {
			t.Errorf("MetricTargetsAfter(%d) = %+v, %v; want the last %d live servers", c.after, got, err, c.want)
		}
	}

	t0 := time.Unix(1_800_000_000, 0).UTC()
	s := func(id int64, min int, cpu float64) metrics.Sample {
		return metrics.Sample{ServerID: id, At: t0.Add(time.Duration(min) * time.Minute), CPU: cpu, NetIn: 1 << 20, NetOut: 5, DiskRead: 0, DiskWrite: 1 << 40}
	}
	if err := db.AddMetricSamples(ctx, []metrics.Sample{s(1, 2, 12.345), s(1, 0, 100), s(2, 0, 1), s(1, 1, 0), s(3, 0, 7)}); err != nil {
		t.Fatal(err)
	}
	// The same second again replaces (a sampler faster than a second, in tests).
	if err := db.AddMetricSamples(ctx, []metrics.Sample{s(1, 1, 50)}); err != nil {
		t.Fatal(err)
	}
	got, err := db.MetricSamples(ctx, 1, t0, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []metrics.Sample{s(1, 0, 100), s(1, 1, 50), s(1, 2, 12.35)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("MetricSamples = %+v\nwant %+v", got, want)
	}
	if got, _ := db.MetricSamples(ctx, 1, t0.Add(time.Minute), t0.Add(2*time.Minute)); len(got) != 1 || got[0].CPU != 50 {
		t.Fatalf("[from, to) = %+v", got)
	}

	// Buckets average in the database exactly as metrics.Downsample does in Go.
	var many []metrics.Sample
	for i := range 500 {
		many = append(many, metrics.Sample{ServerID: 2, At: t0.Add(time.Duration(i*37) * time.Second), CPU: float64(i%101) + 0.25,
			NetIn: int64(i * i), NetOut: int64(i), DiskRead: int64(1000 - i), DiskWrite: 3})
	}
	if err := db.AddMetricSamples(ctx, many); err != nil {
		t.Fatal(err)
	}
	for _, step := range []int64{1, 60, 240, 1680} {
		from, to := t0.Add(5*time.Minute), t0.Add(4*time.Hour)
		samples, _ := db.MetricSamples(ctx, 2, from, to)
		want := metrics.Downsample(samples, step)
		got, err := db.MetricBuckets(ctx, 2, from, to, step)
		if err != nil || len(got) != len(want) || len(got) == 0 {
			t.Fatalf("step %d: %d buckets, %v; want %d", step, len(got), err, len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.At != w.At || math.Abs(g.CPU-w.CPU) > 1e-9 || math.Abs(g.NetIn-w.NetIn) > 1e-6 || g.NetOut != w.NetOut || g.DiskRead != w.DiskRead || g.DiskWrite != w.DiskWrite {
				t.Fatalf("step %d bucket %d: %+v, want %+v", step, i, g, w)
			}
		}
	}
	if _, err := db.WriteDB().ExecContext(ctx, `DELETE FROM metric_samples WHERE server_id = 2`); err != nil {
		t.Fatal(err)
	}
	if err := db.AddMetricSamples(ctx, []metrics.Sample{s(2, 0, 1)}); err != nil {
		t.Fatal(err)
	}

	// Prune takes every server's old samples, a deleted server's too.
	n, err := db.PruneMetricSamples(ctx, t0.Add(time.Minute))
	if err != nil || n != 3 {
		t.Fatalf("PruneMetricSamples = %d, %v; want 3", n, err)
	}
	for id, want := range map[int64]int{1: 2, 2: 0, 3: 0} {
		if got, _ := db.MetricSamples(ctx, id, t0.Add(-time.Hour), t0.Add(time.Hour)); len(got) != want {
			t.Errorf("server %d keeps %d samples, want %d", id, len(got), want)
		}
	}
}
