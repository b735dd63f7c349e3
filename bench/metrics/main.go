// Command metrics measures Berth's metrics storage and reads: it seeds DAYS days of
// one-minute samples for SERVERS servers through the store (in the order the sampler
// writes them: minute by minute, every server), reports the bytes the table takes per
// server and day (SQLite's dbstat), then times QUERIES random `7d` (and 24h, 1h)
// reads through metrics.Reader, the code GET /v1/servers/{id}/metrics runs after its
// server lookup, JSON encoding included.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/metrics"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store/sqlstore"
)

func main() {
	servers := flag.Int("servers", 1000, "servers")
	days := flag.Int("days", 7, "days of samples to seed")
	queries := flag.Int("queries", 1000, "timed reads per range")
	extra := flag.Int("extra-hours", 24, "hours sampled after the seed with hourly pruning (steady state)")
	dir := flag.String("dir", "", "data dir (default: a temp dir, removed)")
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "berth-metrics-bench.")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, *dir)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	// Prune seeks each server through the servers table: give it the servers.
	if err := ops.New(ops.Deps{Store: db}).EnsureCatalog(ctx, catalog.Default()); err != nil {
		log.Fatal(err)
	}
	if err := seedServers(db, *servers); err != nil {
		log.Fatal(err)
	}

	end := time.Now().Truncate(time.Minute)
	start := end.Add(-time.Duration(*days) * 24 * time.Hour)
	gen := newGenerator(*servers)
	t0 := time.Now()
	if err := write(ctx, db, gen, start, end); err != nil {
		log.Fatal(err)
	}
	seedTime := time.Since(t0)
	rows := int64(*servers) * int64(end.Sub(start)/time.Minute)
	tableBytes, err := tableSize(db)
	if err != nil {
		log.Fatal(err)
	}
	perServerDay := float64(tableBytes) / float64(*servers) / float64(*days)
	fmt.Printf("seeded %d rows (%d servers × %d days × 1440) in %v (%.0f rows/s)\n", rows, *servers, *days, seedTime.Round(time.Millisecond), float64(rows)/seedTime.Seconds())
	fmt.Printf("metric_samples: %d bytes = %.1f KiB per server per day (%.1f bytes per sample)\n",
		tableBytes, perServerDay/1024, perServerDay/1440)
	fileSize(*dir)

	// Steady state: sample on with hourly pruning (deleted pages are reused).
	if *extra > 0 {
		var pruneTimes []time.Duration
		from := end
		for h := 0; h < *extra; h++ {
			to := from.Add(time.Hour)
			if err := write(ctx, db, gen, from, to); err != nil {
				log.Fatal(err)
			}
			t := time.Now()
			if _, err := db.PruneMetricSamples(ctx, to.Add(-metrics.Retention)); err != nil {
				log.Fatal(err)
			}
			pruneTimes = append(pruneTimes, time.Since(t))
			from = to
		}
		end = from
		b, err := tableSize(db)
		if err != nil {
			log.Fatal(err)
		}
		var kept int64
		if err := db.WriteDB().QueryRow(`SELECT COUNT(*) FROM metric_samples`).Scan(&kept); err != nil {
			log.Fatal(err)
		}
		slices.Sort(pruneTimes)
		fmt.Printf("after %d more hours with hourly pruning: %d rows kept, %.1f KiB per server per day; prune of an hour's rows: median %v, max %v\n",
			*extra, kept, float64(b)/float64(kept)*1440/1024, pruneTimes[len(pruneTimes)/2].Round(time.Microsecond), pruneTimes[len(pruneTimes)-1].Round(time.Microsecond))
	}

	rd := metrics.NewReader(db, metrics.Interval)
	for _, name := range []string{"7d", "24h", "1h"} {
		r, _ := metrics.ParseRange(name)
		var lat []time.Duration
		points := 0
		for range *queries {
			id := int64(rand.IntN(*servers)) + 1
			t := time.Now()
			s, err := rd.Series(ctx, id, r, end)
			if err != nil {
				log.Fatal(err)
			}
			if _, err := json.Marshal(s); err != nil {
				log.Fatal(err)
			}
			lat = append(lat, time.Since(t))
			points = len(s.CPU)
		}
		slices.Sort(lat)
		pct := func(p float64) time.Duration {
			return lat[int(math.Ceil(p*float64(len(lat))))-1].Round(time.Microsecond)
		}
		fmt.Printf("range %-3s: %d queries, %d points per series: p50 %v p90 %v p99 %v max %v\n", name, len(lat), points, pct(0.5), pct(0.9), pct(0.99), lat[len(lat)-1].Round(time.Microsecond))
	}
}

func seedServers(db *sqlstore.DB, n int) error {
	tx, err := db.WriteDB().Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Only the ids matter to the metrics code; satisfy the schema's references.
	stmts := []string{
		`INSERT INTO accounts (email, password_hash, name, server_quota, created_at) VALUES ('bench@example.com', '', 'bench', 100000, 0)`,
	}
	for _, s := range stmts {
		if _, err := tx.Exec(s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	for i := 1; i <= n; i++ {
		if _, err := tx.Exec(`INSERT INTO servers (account_id, name, display_name, status, location_id, plan_id, image_id, vcpus, memory_mb, disk_gb, created_at)
			VALUES (1, ?, 'bench', 'running', 1, 1, 1, 2, 2048, 40, 0)`, fmt.Sprintf("server-%06d", i)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// generator makes plausible values: per server, traffic levels spread over four
// orders of magnitude, a daily curve and noise (the sizes SQLite's varints see).
type generator struct {
	base []struct{ cpu, net, disk, phase float64 }
}

func newGenerator(n int) *generator {
	g := &generator{}
	for range n {
		g.base = append(g.base, struct{ cpu, net, disk, phase float64 }{
			cpu: 2 + 40*rand.Float64(), net: math.Pow(10, 3+3*rand.Float64()), disk: math.Pow(10, 3+4*rand.Float64()), phase: 24 * rand.Float64(),
		})
	}
	return g
}

func (g *generator) sample(i int, at time.Time) metrics.Sample {
	b := g.base[i]
	day := 0.6 + 0.4*math.Sin(2*math.Pi*(float64(at.Unix())/3600-b.phase)/24)
	n := func() float64 { return 0.8 + 0.4*rand.Float64() }
	return metrics.Sample{ServerID: int64(i + 1), At: at, CPU: min(100, b.cpu*day*n()),
		NetIn: int64(b.net * day * n()), NetOut: int64(3 * b.net * day * n()),
		DiskRead: int64(b.disk * day * n()), DiskWrite: int64(0.5 * b.disk * day * n())}
}

// write stores a sample per server and minute in [from, to), an hour a transaction.
func write(ctx context.Context, db *sqlstore.DB, g *generator, from, to time.Time) error {
	var batch []metrics.Sample
	for at := from; at.Before(to); at = at.Add(time.Minute) {
		for i := range g.base {
			batch = append(batch, g.sample(i, at))
		}
		if at.Minute() == 59 || !at.Add(time.Minute).Before(to) {
			if err := db.AddMetricSamples(ctx, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	return nil
}

func tableSize(db *sqlstore.DB) (int64, error) {
	var n int64
	err := db.WriteDB().QueryRow(`SELECT SUM(pgsize) FROM dbstat WHERE name = 'metric_samples'`).Scan(&n)
	return n, err
}

func fileSize(dir string) {
	st, err := os.Stat(filepath.Join(dir, "berth.db"))
	if err == nil {
		fmt.Printf("berth.db: %.1f MiB (whole database, WAL not checkpointed)\n", float64(st.Size())/(1<<20))
	}
}
