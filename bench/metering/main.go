// Command metering times Berth's metering pass over many running servers and volumes,
// on SQLite or on PostgreSQL.
//
// It opens a fresh database (a temp data dir on SQLite; with -database, a database
// it creates on that PostgreSQL server and drops afterwards), migrates it as berthd
// does, and seeds it with batched set-based SQL (not through the API, which would
// take hours for 100,000 servers): ACCOUNTS accounts with ample credit, written as a
// top-up so that credit == the sum of the ledger, SERVERS running servers spread over
// them, on plans 1-5 at location 1, and VOLUMES volumes, each with its meter and its
// first hour charged (as ordering does) at T0. Then, with ops.Service.Now set:
//
//  1. one pass at T0+1h+1min: exactly one hour due per meter;
//  2. a second pass at the same clock: nothing due (the cost of a no-op pass);
//  3. a catch-up pass at T0+6h+1min, as after a 5-hour outage: 5 hours per meter.
//
// It then checks the ledger (credit == sum of transactions per account, every
// balance_after, no (resource, hour) charged twice, the number and sum of charges,
// every meter's next hour) and exits 1 on any failure. Last, unless -breakdown=false,
// it times each statement of one more step (an hour per meter, at T0+7h+1min) in a
// transaction it rolls back, with the database's plan of each: SQLite's EXPLAIN
// QUERY PLAN, PostgreSQL's EXPLAIN (ANALYZE, BUFFERS).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore"
)

// t0 is when every server was ordered (its first hour charged then).
var t0 = time.Date(2026, 12, 1, 0, 10, 0, 0, time.UTC)

const (
	plans      = 5 // plan ids 1..5, all offered at location 1 without a capacity limit
	images     = 4 // image ids 1..4, all offered at location 1
	locationID = 1
	// topUp is each account's credit before its first charge (money is in
	// ten-thousandths): 1,000,000.0000, far more than the bench charges.
	topUp = 1_000_000 * 10_000
)

// config is one run's sizes and store.
type config struct {
	servers, volumes, accounts int
	// dir is the SQLite data dir ("": a temp dir, removed); database, when set, a
	// PostgreSQL server's URL on which the run creates a database of its own.
	dir, database string
	breakdown     bool
	// batch is the most meter hours a metering transaction charges (0: Berth's).
	batch int
}

func main() {
	var cfg config
	flag.IntVar(&cfg.servers, "servers", 100000, "running servers")
	flag.IntVar(&cfg.volumes, "volumes", 0, "volumes (every other one attached to a server), billed by the hour as servers are")
	flag.IntVar(&cfg.accounts, "accounts", 1000, "accounts the servers are spread over")
	flag.StringVar(&cfg.dir, "dir", "", "SQLite data dir (default: a temp dir, removed)")
	flag.StringVar(&cfg.database, "database", "", "PostgreSQL instead of SQLite: the URL of a database on a server where the run may "+
		"CREATE DATABASE (postgres://...); it runs in a new database there, dropped afterwards")
	flag.IntVar(&cfg.batch, "batch", 0, "the most meter hours one metering transaction charges (default: berthd's, ops.DefaultMeterBatch or on PostgreSQL ops.PostgresMeterBatch)")
	flag.BoolVar(&cfg.breakdown, "breakdown", true, "time each statement of a charge step (rolled back) and show its query plan")
	flag.Parse()
	if cfg.servers <= 0 || cfg.accounts <= 0 || cfg.volumes < 0 || cfg.batch < 0 || (cfg.dir != "" && cfg.database != "") ||
		(cfg.database != "" && !sqlstore.IsPostgresURL(cfg.database)) {
		flag.Usage()
		os.Exit(2)
	}
	// Interrupted, the run still drops its database or removes its temp dir.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	ok, err := run(ctx, cfg, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "metering:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// run is one round on a fresh database, written to out. ok is false when a check
// failed.
func run(ctx context.Context, cfg config, out io.Writer) (ok bool, err error) {
	b, err := open(ctx, cfg, out)
	if err != nil {
		return false, err
	}
	defer func() { err = errors.Join(err, b.close()) }()
	ok, _, err = b.round(ctx)
	return ok, err
}

// round seeds the database, times the three passes, checks the ledger and, unless
// told not to, breaks a charge step down; results are the passes'.
func (b *bench) round(ctx context.Context) (ok bool, results []ops.MeterResult, err error) {
	if err := b.seed(ctx); err != nil {
		return false, nil, err
	}
	if results, err = b.meterPasses(ctx); err != nil {
		return false, nil, err
	}
	fmt.Fprintln(b.out, "\nchecks:")
	if ok, err = b.check(ctx, b.db.WriteDB(), results); err != nil {
		return false, nil, err
	}
	if b.cfg.breakdown {
		if err := b.breakdown(ctx, t0.Add(7*time.Hour+time.Minute)); err != nil {
			return false, nil, err
		}
	}
	if ok {
		fmt.Fprintln(b.out, "\nall checks passed")
	} else {
		fmt.Fprintln(b.out, "\nSOME CHECKS FAILED")
	}
	return ok, results, nil
}

// bench is one round's database and service.
type bench struct {
	cfg config
	db  *sqlstore.DB
	svc *ops.Service
	out io.Writer
	at  time.Time // the clock of the pass under way
	// close closes the database and drops it or removes its dir; again, it does
	// nothing.
	close func() error
	// cpu is the CPU time this process has used and, on PostgreSQL, its server too
	// (see serverCPU); cpuWhat says which.
	cpu     func() time.Duration
	cpuWhat string
	// timed is the store the passes use, timing their transactions.
	timed *timedStore
}

// timedStore is the store, with the time of each transaction of a pass kept.
type timedStore struct {
	store.Store
	count   int
	longest time.Duration
}

// InTx runs the store's transaction, timing it.
func (s *timedStore) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	t := time.Now()
	err := s.Store.InTx(ctx, fn)
	s.count++
	s.longest = max(s.longest, time.Since(t))
	return err
}

// open opens the round's fresh database, migrated by Berth's own migrations as
// berthd migrates it, with the default catalog.
func open(ctx context.Context, cfg config, out io.Writer) (*bench, error) {
	b := &bench{cfg: cfg, out: out, cpu: cpuTime, cpuWhat: "this process (SQLite runs in it)"}
	var err error
	if cfg.database != "" {
		err = b.openPostgres(ctx)
	} else {
		err = b.openSQLite(ctx)
	}
	if err != nil {
		return nil, err
	}
	closeOnce := b.close
	var once sync.Once
	b.close = func() (err error) {
		once.Do(func() { err = closeOnce() })
		return err
	}
	if err := b.db.Migrate(ctx); err != nil {
		return nil, errors.Join(err, b.close())
	}
	b.timed = &timedStore{Store: b.db}
	if cfg.batch == 0 && b.db.Postgres() {
		cfg.batch = ops.PostgresMeterBatch // as berthd meters on PostgreSQL
	}
	b.svc = ops.New(ops.Deps{Store: b.timed, Clock: func() time.Time { return b.at }, MeterBatch: cfg.batch})
	if err := b.svc.EnsureCatalog(ctx, catalog.Default()); err != nil {
		return nil, errors.Join(err, b.close())
	}
	if err := b.describeStore(ctx); err != nil {
		return nil, errors.Join(err, b.close())
	}
	return b, nil
}

// pass is one timed call of Meter.
type pass struct {
	name      string
	at        time.Time
	wantHours int
}

// passes are the three calls of Meter, for metered meters.
func passes(metered int) []pass {
	return []pass{
		{"pass 1: one hour due per meter", t0.Add(time.Hour + time.Minute), metered},
		{"pass 2: same clock, nothing due", t0.Add(time.Hour + time.Minute), 0},
		{"pass 3: catch-up after a 5-hour outage", t0.Add(6*time.Hour + time.Minute), 5 * metered},
	}
}

// meterPasses times the passes, one line each. Each line ends in: hours, charged,
// overdrawn, wall time ms, CPU ms, hours/s, transactions, the longest transaction's
// ms (bench/metering.sh reads them).
func (b *bench) meterPasses(ctx context.Context) ([]ops.MeterResult, error) {
	fmt.Fprintf(b.out, "\nT0 = %s (every server ordered, its first hour charged)\n", t0.Format(time.RFC3339))
	fmt.Fprintf(b.out, "CPU ms: %s\n", b.cpuWhat)
	fmt.Fprintf(b.out, "%-52s %8s %12s %9s %12s %10s %8s %4s %14s\n", "pass (clock)", "hours", "charged", "overdrawn", "wall time ms", "CPU ms", "hours/s",
		"txs", "longest tx ms")
	var results []ops.MeterResult
	for _, p := range passes(b.cfg.servers + b.cfg.volumes) {
		b.at = p.at
		b.timed.count, b.timed.longest = 0, 0
		c := b.cpu()
		t := time.Now()
		res, err := b.svc.Meter(ctx)
		took := time.Since(t)
		cpu := b.cpu() - c
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		results = append(results, res)
		rate := "-"
		if res.Hours > 0 {
			rate = fmt.Sprintf("%.0f", float64(res.Hours)/took.Seconds())
		}
		fmt.Fprintf(b.out, "%-52s %8d %12s %9d %12.3f %10.3f %8s %4d %14.3f\n", p.name+" (T0+"+b.at.Sub(t0).String()+")", res.Hours, res.Total,
			res.Overdrawn, float64(took.Microseconds())/1000, float64(cpu.Microseconds())/1000, rate, b.timed.count,
			float64(b.timed.longest.Microseconds())/1000)
	}
	return results, b.dbSize(ctx)
}

func ms(t time.Time) int64           { return t.UnixMilli() }
func seconds(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }
