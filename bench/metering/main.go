// Command metering times Berth's metering pass over many running servers and volumes,
// on SQLite or on PostgreSQL.
//
// It opens a fresh database (a temp data dir on SQLite; with -database, a database
// it creates on that PostgreSQL server and drops afterwards), migrates it as berthd
// does, and seeds it with batched set-based SQL (not through the API, which would
// take hours for 100,000 servers): ACCOUNTS accounts with ample credit, written as a
// top-up so that credit == the sum of the ledger, SERVERS running servers spread over
// them, on plans 1-5 at location 1, and VOLUMES volumes, each with its meter and its
// first hour charged (as ordering does) at T0, and LICENSES held licenses (products
// 1 and 3, per vCPU and per server, one or two a server), each accepted at T0 and
// charged its month then, as accepting one does. T0 is seven hours before a month
// begins. Then, with ops.Service.Now set:
//
//  1. one pass at T0+1h+1min: exactly one hour due per meter;
//  2. a second pass at the same clock: nothing due (the cost of a no-op pass);
//  3. a catch-up pass at T0+6h+1min, as after a 5-hour outage: 5 hours per meter;
//  4. the first-of-month pass at T0+7h+1min, one minute into the new month: every
//     license's month (docs/api.md, Licenses) and one hour per meter; the licenses'
//     part of it (their transactions, or the license steps of a transaction that
//     charged hours too) is timed apart from the hours'.
//
// It then checks the database (checks.go) and exits 1 on any failure: credit == the
// sum of the ledger's rows per account; the ledger as the API shows it (the store's
// Transactions, a pass's row as its hours): every balance_after, no (resource, hour)
// charged twice, each server and volume charged its 8 hours at its price; each
// account's charges against what its resources owe by the seed's prices; the meters
// as opened and every account charged to the last pass; each license charged the new
// month exactly once and moved on. Unless -derived=false, it computes each pass's
// charges by account in SQL arithmetic from the meters (derived.go), timed, and fails
// when they differ from the rows the pass wrote. Last, unless -breakdown=false, it
// runs one more metering step (an hour per meter, at T0+8h+1min) as the store does,
// then part by part (breakdown.go: the accounts due, the account and meter reads, the
// computation in Go, each kind of write), in transactions it rolls back, with the
// plans of its reads, and the license step statement by statement with theirs:
// SQLite's EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN (ANALYZE, BUFFERS).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore"
)

// t0 is when every server was ordered (its first hour charged then) and every
// license accepted: seven hours before December begins, so that pass 4, at
// T0+7h+1min, is the first of the month's.
var t0 = time.Date(2026, 11, 30, 17, 10, 0, 0, time.UTC)

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
	// licenses is how many held licenses the servers have (at most two each).
	licenses int
	// cpuProfile, when set, is a file the CPU profile of pass profilePass is written to.
	cpuProfile  string
	profilePass int
	// dir is the SQLite data dir ("": a temp dir, removed); database, when set, a
	// PostgreSQL server's URL on which the run creates a database of its own.
	dir, database string
	breakdown     bool
	// derived: also compute each pass's charges in SQL from the meters (derived.go)
	// and hold them against the rows the pass wrote.
	derived bool
	// batch is the most meter hours a metering transaction charges (0: Berth's);
	// txTarget, how long one should take (0: Berth's).
	batch    int
	txTarget time.Duration
}

func main() {
	var cfg config
	flag.IntVar(&cfg.servers, "servers", 100000, "running servers")
	flag.IntVar(&cfg.volumes, "volumes", 0, "volumes (every other one attached to a server), billed by the hour as servers are")
	flag.IntVar(&cfg.accounts, "accounts", 1000, "accounts the servers are spread over")
	flag.IntVar(&cfg.licenses, "licenses", 0, "held licenses (at most two a server), charged their month by pass 4, the first of the month's")
	flag.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write the CPU profile of a pass (-profile-pass) to this file (go tool pprof)")
	flag.IntVar(&cfg.profilePass, "profile-pass", 4, "the pass -cpuprofile profiles: 1 (an hour due), 3 (the catch-up) or 4 (the first of the month's)")
	flag.StringVar(&cfg.dir, "dir", "", "SQLite data dir (default: a temp dir, removed)")
	flag.StringVar(&cfg.database, "database", "", "PostgreSQL instead of SQLite: the URL of a database on a server where the run may "+
		"CREATE DATABASE (postgres://...); it runs in a new database there, dropped afterwards")
	flag.IntVar(&cfg.batch, "batch", 0, "the most meter hours one metering transaction charges (default: berthd's, ops.DefaultMeterBatch or on PostgreSQL ops.PostgresMeterBatch)")
	flag.DurationVar(&cfg.txTarget, "tx-target", 0, "how long a metering transaction should take; each charges as many hours as the last ones did in that time, up to -batch (default: berthd's, ops.DefaultMeterTxTarget)")
	flag.BoolVar(&cfg.derived, "derived", true, "compute each pass's charges by account in SQL arithmetic from the meters, timed, and hold them against the rows the pass wrote")
	flag.BoolVar(&cfg.breakdown, "breakdown", true, "time one metering step (rolled back) whole and part by part, and each statement of the license step, with the query plans")
	flag.Parse()
	if cfg.servers <= 0 || cfg.accounts <= 0 || cfg.volumes < 0 || cfg.batch < 0 || cfg.txTarget < 0 || cfg.licenses < 0 || cfg.licenses > 2*cfg.servers || (cfg.dir != "" && cfg.database != "") ||
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

// round seeds the database, times the passes, checks the ledger and, unless told
// not to, holds it against the SQL derivation and breaks a metering step down;
// results are the passes'.
func (b *bench) round(ctx context.Context) (ok bool, results []ops.MeterResult, err error) {
	if err := b.seed(ctx); err != nil {
		return false, nil, err
	}
	if results, err = b.meterPasses(ctx); err != nil {
		return false, nil, err
	}
	fmt.Fprintln(b.out, "\nchecks:")
	if ok, err = b.checkAfter(ctx, nil, results); err != nil {
		return false, nil, err
	}
	if b.cfg.derived {
		dok, err := b.derived(ctx)
		if err != nil {
			return false, nil, err
		}
		ok = ok && dok
	}
	if b.cfg.breakdown {
		if err := b.breakdown(ctx, t0.Add(8*time.Hour+time.Minute)); err != nil {
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

// timedStore is the store, with the time of each transaction of a pass kept, and
// the licenses' part of the pass apart.
type timedStore struct {
	store.Store
	count   int
	longest time.Duration
	// lic is the licenses' part of the pass: the whole of each transaction that
	// charged licenses and no hours (its commit too), and in one that charged both,
	// the time in the license steps' store calls; licTxs counts the former.
	lic    time.Duration
	licTxs int
	// The transaction under way: the time in its license calls, whether it charged
	// licenses, hours.
	inLic          time.Duration
	didLic, didHrs bool
}

// InTx runs the store's transaction, timing it.
func (s *timedStore) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	s.inLic, s.didLic, s.didHrs = 0, false, false
	t := time.Now()
	err := s.Store.InTx(ctx, func(tx store.Tx) error { return fn(timedTx{tx, s}) })
	took := time.Since(t)
	s.count++
	s.longest = max(s.longest, took)
	if s.didLic && !s.didHrs {
		s.lic += took
		s.licTxs++
	} else {
		s.lic += s.inLic
	}
	return err
}

func (s *timedStore) reset() { s.count, s.longest, s.lic, s.licTxs = 0, 0, 0, 0 }

// timedTx is a transaction of a pass, timing its license calls.
type timedTx struct {
	store.Tx
	s *timedStore
}

func (t timedTx) EarliestLicenseDue(ctx context.Context, upto time.Time, account int64) (*time.Time, error) {
	start := time.Now()
	defer func() { t.s.inLic += time.Since(start) }()
	return t.Tx.EarliestLicenseDue(ctx, upto, account)
}

func (t timedTx) ChargeLicenses(ctx context.Context, step store.LicenseStep) (store.ChargeResult, error) {
	start := time.Now()
	defer func() { t.s.inLic += time.Since(start) }()
	t.s.didLic = true
	return t.Tx.ChargeLicenses(ctx, step)
}

func (t timedTx) ChargeDue(ctx context.Context, step store.ChargeStep) (store.ChargeResult, error) {
	t.s.didHrs = true
	return t.Tx.ChargeDue(ctx, step)
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
	licenseBatch := 0
	if b.db.Postgres() { // as berthd meters on PostgreSQL
		licenseBatch = ops.PostgresLicenseBatch
		if cfg.batch == 0 {
			cfg.batch = ops.PostgresMeterBatch
		}
	}
	b.svc = ops.New(ops.Deps{Store: b.timed, Clock: func() time.Time { return b.at }, MeterBatch: cfg.batch, LicenseBatch: licenseBatch,
		MeterTxTarget: cfg.txTarget})
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

// passes are the four calls of Meter, for metered meters and licenses held.
func passes(metered, licenses int) []pass {
	return []pass{
		{"pass 1: one hour due per meter", t0.Add(time.Hour + time.Minute), metered},
		{"pass 2: same clock, nothing due", t0.Add(time.Hour + time.Minute), 0},
		{"pass 3: catch-up after a 5-hour outage", t0.Add(6*time.Hour + time.Minute), 5 * metered},
		{"pass 4: first of the month, licenses + an hour", t0.Add(7*time.Hour + time.Minute), licenses + metered},
	}
}

// firstOfMonth is the month pass 4 begins, the one each license is charged then.
var firstOfMonth = t0.Add(7 * time.Hour).Truncate(24 * time.Hour)

// meterPasses times the passes, one line each. Each line ends in: hours, charged,
// overdrawn, wall time ms, CPU ms, hours/s, transactions, the longest transaction's
// ms (bench/metering.sh reads them). Pass 4's is followed by a line splitting it into
// the licenses' part and the hours'.
func (b *bench) meterPasses(ctx context.Context) ([]ops.MeterResult, error) {
	fmt.Fprintf(b.out, "\nT0 = %s (every server ordered, its first hour charged)\n", t0.Format(time.RFC3339))
	fmt.Fprintf(b.out, "CPU ms: %s\n", b.cpuWhat)
	fmt.Fprintf(b.out, "%-60s %8s %12s %9s %12s %10s %8s %4s %14s\n", "pass (clock)", "hours", "charged", "overdrawn", "wall time ms", "CPU ms", "hours/s",
		"txs", "longest tx ms")
	var results []ops.MeterResult
	for i, p := range passes(b.cfg.servers+b.cfg.volumes, b.cfg.licenses) {
		b.at = p.at
		b.timed.reset()
		stopProfile, err := b.profile(i+1 == b.cfg.profilePass)
		if err != nil {
			return nil, err
		}
		c := b.cpu()
		t := time.Now()
		res, err := b.svc.Meter(ctx)
		took := time.Since(t)
		cpu := b.cpu() - c
		if perr := stopProfile(); err == nil {
			err = perr
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		results = append(results, res)
		rate := "-"
		if res.Hours > 0 {
			rate = fmt.Sprintf("%.0f", float64(res.Hours)/took.Seconds())
		}
		fmt.Fprintf(b.out, "%-60s %8d %12s %9d %12.3f %10.3f %8s %4d %14.3f\n", p.name+" (T0+"+b.at.Sub(t0).String()+")", res.Hours, res.Total,
			res.Overdrawn, float64(took.Microseconds())/1000, float64(cpu.Microseconds())/1000, rate, b.timed.count,
			float64(b.timed.longest.Microseconds())/1000)
		if i == 3 {
			// The license months are those of this pass beyond one hour per meter.
			months := res.Hours - (b.cfg.servers + b.cfg.volumes)
			fmt.Fprintf(b.out, "pass 4 split: licenses %d months wall_ms %.3f in %d transactions of their own | hours %d wall_ms %.3f\n",
				months, float64(b.timed.lic.Microseconds())/1000, b.timed.licTxs, res.Hours-months,
				float64((took-b.timed.lic).Microseconds())/1000)
		}
	}
	return results, b.dbSize(ctx)
}

// profile starts the CPU profile when on and -cpuprofile names a file; stop ends it.
func (b *bench) profile(on bool) (stop func() error, err error) {
	if !on || b.cfg.cpuProfile == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(b.cfg.cpuProfile)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

func ms(t time.Time) int64           { return t.UnixMilli() }
func seconds(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }
