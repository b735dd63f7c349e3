package simdriver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

// The load model: every machine looks different, and none is a constant or noise.
func TestLoadIsPlausible(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC).Unix()
	const minutes = 24 * 60
	type summary struct{ mean, sd, lag1, minU, maxU, dayRange float64 }
	sum := func(name string) summary {
		l := loadOf(name)
		var u [minutes]float64
		var s summary
		s.minU = 1
		hourly := make([]float64, 24)
		for i := range u {
			u[i], _, _, _, _ = l.rates(float64(start + int64(i)*60))
			s.mean += u[i] / minutes
			s.minU, s.maxU = min(s.minU, u[i]), max(s.maxU, u[i])
			hourly[i/60] += u[i] / 60
		}
		var cov, v float64
		for i := range u {
			v += (u[i] - s.mean) * (u[i] - s.mean)
			if i > 0 {
				cov += (u[i] - s.mean) * (u[i-1] - s.mean)
			}
		}
		s.sd, s.lag1 = math.Sqrt(v/minutes), cov/v
		lo, hi := 1.0, 0.0
		for _, h := range hourly {
			lo, hi = min(lo, h), max(hi, h)
		}
		s.dayRange = hi - lo
		return s
	}
	seen := map[string]bool{}
	for i := range 40 {
		name := fmt.Sprintf("server-%06d", i)
		s := sum(name)
		if s.minU <= 0 || s.maxU > 1 {
			t.Errorf("%s: utilisation %v–%v outside (0, 1]", name, s.minU, s.maxU)
		}
		if s.sd == 0 {
			t.Errorf("%s: constant load", name)
		}
		// Minute to minute the load is related (not white noise), and it moves over
		// the day.
		if s.lag1 < 0.5 {
			t.Errorf("%s: lag-1 autocorrelation %.2f: noise, not a machine", name, s.lag1)
		}
		if s.dayRange < 0.3*s.mean {
			t.Errorf("%s: hourly means vary by %.4f around %.4f: flat", name, s.dayRange, s.mean)
		}
		seen[fmt.Sprintf("%.4f", s.mean)] = true
	}
	if len(seen) < 35 {
		t.Errorf("only %d distinct mean loads among 40 machines", len(seen))
	}
}

// Counters integrate the load: a longer span counts more, split spans add up.
func TestIntegrate(t *testing.T) {
	t.Parallel()
	l := loadOf("server-abc123")
	from := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC).UnixMilli()
	hour := l.integrate(from, from+3600_000, 2)
	var parts counters
	for i := int64(0); i < 60; i++ {
		parts = parts.plus(l.integrate(from+i*60_000, from+(i+1)*60_000, 2))
	}
	near := func(a, b int64) bool { return math.Abs(float64(a-b)) <= 1e-6*float64(max(a, b))+60 }
	if !near(hour.cpu, parts.cpu) || !near(hour.rx, parts.rx) || !near(hour.write, parts.write) {
		t.Errorf("an hour at once %+v, minute by minute %+v", hour, parts)
	}
	if hour.cpu <= 0 || hour.cpu > 2*3600*1e9 {
		t.Errorf("cpu ns in an hour on 2 vCPUs: %d", hour.cpu)
	}
}

// Counters outlive the driver: a new driver on the same database goes on from them.
func TestStatsPersist(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir(), Storage())
	clock := time.Now() // Create waits on the real clock
	d := New(db.WriteDB(), 0.0001, db.Rebind)
	d.now = func() time.Time { return clock }
	if _, err := d.Create(ctx, "k", compute.Spec{Name: "server-keep01", VCPUs: 2, MemoryMB: 2048, DiskGB: 40}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Stats(ctx, "server-keep01"); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour)
	before, err := d.Stats(ctx, "server-keep01")
	if err != nil {
		t.Fatal(err)
	}
	// An hour of a running 2-vCPU machine: some CPU, at most all of it.
	if before.CPUTimeNS == 0 || before.CPUTimeNS > 2*3600e9 || before.NetTxBytes == 0 || before.DiskWriteBytes == 0 {
		t.Fatalf("after an hour: %+v", before)
	}
	again := New(db.WriteDB(), 0.0001, db.Rebind)
	again.now = func() time.Time { return clock.Add(time.Minute) }
	after, err := again.Stats(ctx, "server-keep01")
	if err != nil {
		t.Fatal(err)
	}
	if after.CPUTimeNS <= before.CPUTimeNS || after.NetRxBytes <= before.NetRxBytes || after.DiskReadBytes <= before.DiskReadBytes {
		t.Fatalf("after a restart: %+v, before %+v", after, before)
	}
}

// StatsOf reads many machines as Stats reads each: the same counters, a destroyed or
// unknown machine absent, more machines than one chunk, names repeated; on both
// stores (the upsert of a chunk is one statement in either dialect).
func TestStatsOf(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) *sqlstore.DB{
		"sqlite":   func(t *testing.T) *sqlstore.DB { return sqlstoretest.SQLite(t, t.TempDir(), Storage()) },
		"postgres": func(t *testing.T) *sqlstore.DB { return sqlstoretest.Postgres(t, Storage()) },
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := open(t)
			const n = statsChunk + 37
			clock := time.Now()
			seedMachines(t, db, n, clock.Add(-time.Minute))
			d := New(db.WriteDB(), 0.0001, db.Rebind)
			d.now = func() time.Time { return clock }
			if err := d.Destroy(ctx, "k-gone", machineName(3)); err != nil {
				t.Fatal(err)
			}
			names := []string{"server-unknown", machineName(0)}
			for i := range n {
				names = append(names, machineName(i))
			}
			first, failed := d.StatsOf(ctx, names)
			if len(failed) != 0 {
				t.Fatal(failed)
			}
			if len(first) != n-1 {
				t.Fatalf("StatsOf of %d machines (one destroyed, one unknown, one repeated): %d read", n, len(first))
			}
			if _, ok := first[machineName(3)]; ok {
				t.Errorf("a destroyed machine was read")
			}
			clock = clock.Add(time.Hour)
			second, failed := d.StatsOf(ctx, names)
			if len(failed) != 0 {
				t.Fatal(failed)
			}
			// Stats of one machine, a minute on, goes on from what StatsOf stored.
			clock = clock.Add(time.Minute)
			for _, i := range []int{0, statsChunk, n - 1} {
				m := machineName(i)
				one, err := d.Stats(ctx, m)
				if err != nil {
					t.Fatal(err)
				}
				if !second[m].Running || second[m].VCPUs != 2 || second[m].CPUTimeNS == 0 || second[m].CPUTimeNS > 2*3600e9+2*60e9 {
					t.Errorf("%s after an hour: %+v", m, second[m])
				}
				if one.CPUTimeNS <= second[m].CPUTimeNS || one.NetTxBytes <= second[m].NetTxBytes {
					t.Errorf("%s: Stats %+v did not go on from StatsOf %+v", m, one, second[m])
				}
				if first[m].CPUTimeNS != 0 {
					t.Errorf("%s: counters start at the first reading, got %+v", m, first[m])
				}
			}
			if _, err := d.Stats(ctx, machineName(3)); !errors.Is(err, compute.ErrNotFound) {
				t.Errorf("Stats of a destroyed machine: %v, want ErrNotFound", err)
			}
		})
	}
}

func machineName(i int) string { return fmt.Sprintf("server-%06d", i) }

// seedMachines writes n running machines straight into sim_machines, ready at ready.
func seedMachines(t testing.TB, db *sqlstore.DB, n int, ready time.Time) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.WriteDB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for i := range n {
		if _, err := tx.ExecContext(ctx, db.Rebind(`INSERT INTO sim_machines (name, state, vcpus, memory_mb, disk_gb, image, ready_at, created_at)
			VALUES (?, 'running', 2, 2048, 40, 'debian-12', ?, ?)`), machineName(i), ready.UnixMilli(), ready.UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkStats is a sampler round over 10,000 running machines on SQLite: one
// transaction a machine (Stats) against StatsOf.
func BenchmarkStats(b *testing.B) {
	ctx := context.Background()
	db := sqlstoretest.SQLite(b, b.TempDir(), Storage())
	const n = 10000
	seedMachines(b, db, n, time.Now().Add(-time.Minute))
	d := New(db.WriteDB(), 1, db.Rebind)
	names := make([]string, n)
	for i := range names {
		names[i] = machineName(i)
	}
	b.Run("Stats", func(b *testing.B) {
		for b.Loop() {
			for _, m := range names {
				if _, err := d.Stats(ctx, m); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("StatsOf", func(b *testing.B) {
		for b.Loop() {
			got, failed := d.StatsOf(ctx, names)
			if len(failed) != 0 || len(got) != n {
				b.Fatal(len(got), failed)
			}
		}
	})
}

// A machine's IPv6 address is a valid, distinct address whatever its row: up to row
// 65,535 it is 2001:db8:<row>::1, as it always was; past it the fourth group once
// took five hex digits ("2001:db8:10000::1", no address at all).
func TestAddressesPastSixteenBits(t *testing.T) {
	t.Parallel()
	for row, want := range map[int64]string{1: "2001:db8:1::1", 0xffff: "2001:db8:ffff::1", 0x10000: "2001:db8::1:1",
		1_000_000: "2001:db8:4240::f:1", 1<<32 + 7: "2001:db8:7::1:0:1"} {
		if _, v6 := addresses(row); v6 != want {
			t.Errorf("row %d: %s, want %s", row, v6, want)
		}
	}
	seen := map[string]int64{}
	for _, row := range []int64{1, 2, 0xffff, 0x10000, 0x10001, 0x20000, 0x1ffff, 1_000_000, 2_000_001} {
		for _, r := range []int64{row, row + 0x10000} {
			v4, v6 := addresses(r)
			a, err := netip.ParseAddr(v6)
			if err != nil || !a.Is6() || a.String() != v6 {
				t.Errorf("row %d: %q is not an IPv6 address as written: %v", r, v6, err)
			}
			if _, err := netip.ParseAddr(v4); err != nil {
				t.Errorf("row %d: %q: %v", r, v4, err)
			}
			if other, ok := seen[v6]; ok && other != r {
				t.Errorf("rows %d and %d share %s", other, r, v6)
			}
			seen[v6] = r
		}
	}
}
