// Command metering times Berth's metering pass over many running servers on SQLite.
//
// It seeds a fresh data dir with batched set-based SQL (not through the API, which
// would take hours for 100,000 servers): ACCOUNTS accounts with ample credit, written
// as a top-up so that credit == the sum of the ledger, and SERVERS running servers
// spread over them, on plans 1-5 at location 1, each with its meter and its first
// hour charged (as ordering does) at T0. Then, with ops.Service.Now set:
//
//  1. one pass at T0+1h+1min: exactly one hour due per server;
//  2. a second pass at the same clock: nothing due (the cost of a no-op pass);
//  3. a catch-up pass at T0+6h+1min, as after a 5-hour outage: 5 hours per server.
//
// It then checks the ledger (credit == sum of transactions per account, every
// balance_after, no (resource, hour) charged twice, the number and sum of charges,
// every meter's next hour) and exits 1 on any failure. Last, unless -breakdown=false,
// it times each statement of one more step (an hour per server, at T0+7h+1min) in a
// transaction it rolls back, with SQLite's plan of each.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
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

func main() {
	servers := flag.Int("servers", 100000, "running servers")
	volumes := flag.Int("volumes", 0, "volumes (every other one attached to a server), billed by the hour as servers are")
	accounts := flag.Int("accounts", 1000, "accounts the servers are spread over")
	dir := flag.String("dir", "", "data dir (default: a temp dir, removed)")
	breakdown := flag.Bool("breakdown", true, "time each statement of a charge step (rolled back) and show its query plan")
	flag.Parse()
	if *servers <= 0 || *accounts <= 0 || *volumes < 0 {
		flag.Usage()
		os.Exit(2)
	}
	temp := *dir == ""
	if temp {
		d, err := os.MkdirTemp("", "berth-metering-bench.")
		if err != nil {
			log.Fatal(err)
		}
		*dir = d
	}
	ok := run(*dir, *servers, *volumes, *accounts, *breakdown)
	if temp {
		os.RemoveAll(*dir)
	}
	if !ok {
		os.Exit(1)
	}
}

func run(dir string, servers, volumes, accounts int, breakdown bool) bool {
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, dir)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	var at time.Time // the clock of each pass
	svc := ops.New(ops.Deps{Store: db, Clock: func() time.Time { return at }})
	if err := svc.EnsureCatalog(ctx, catalog.Default()); err != nil {
		log.Fatal(err)
	}

	start := time.Now()
	if err := seed(ctx, db.WriteDB(), servers, volumes, accounts); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("seeded %d accounts, %d running servers and %d volumes with meters and first-hour charges (plans 1-%d, location %d) in %s\n",
		accounts, servers, volumes, plans, locationID, seconds(time.Since(start)))
	metered := servers + volumes
	dbSize(db.WriteDB(), dir)

	type pass struct {
		name      string
		at        time.Time
		wantHours int
	}
	passes := []pass{
		{"pass 1: one hour due per meter", t0.Add(time.Hour + time.Minute), metered},
		{"pass 2: same clock, nothing due", t0.Add(time.Hour + time.Minute), 0},
		{"pass 3: catch-up after a 5-hour outage", t0.Add(6*time.Hour + time.Minute), 5 * metered},
	}
	ok := true
	check := func(good bool, format string, args ...any) {
		word := "OK  "
		if !good {
			word, ok = "FAIL", false
		}
		fmt.Printf("%s %s\n", word, fmt.Sprintf(format, args...))
	}
	fmt.Printf("\nT0 = %s (every server ordered, its first hour charged)\n", t0.Format(time.RFC3339))
	fmt.Printf("%-52s %8s %12s %9s %12s %10s %8s\n", "pass (clock)", "hours", "charged", "overdrawn", "wall time ms", "CPU ms", "hours/s")
	var results []ops.MeterResult
	for _, p := range passes {
		at = p.at
		t, c := time.Now(), cpuTime()
		res, err := svc.Meter(ctx)
		took, cpu := time.Since(t), cpuTime()-c
		if err != nil {
			log.Fatalf("%s: %v", p.name, err)
		}
		results = append(results, res)
		rate := "-"
		if res.Hours > 0 {
			rate = fmt.Sprintf("%.0f", float64(res.Hours)/took.Seconds())
		}
		fmt.Printf("%-52s %8d %12s %9d %12.3f %10.3f %8s\n", p.name+" (T0+"+at.Sub(t0).String()+")", res.Hours, res.Total, res.Overdrawn,
			float64(took.Microseconds())/1000, float64(cpu.Microseconds())/1000, rate)
	}
	dbSize(db.WriteDB(), dir)

	fmt.Println("\nchecks:")
	for i, p := range passes {
		check(results[i].Hours == p.wantHours, "%s: %d hours charged, want %d", p.name, results[i].Hours, p.wantHours)
		check(results[i].Overdrawn == 0, "%s: %d accounts overdrawn, want 0", p.name, results[i].Overdrawn)
	}
	w := db.WriteDB()
	count := func(query string) int64 {
		var n int64
		if err := w.QueryRowContext(ctx, query).Scan(&n); err != nil {
			log.Fatalf("%s: %v", query, err)
		}
		return n
	}
	n := count(`SELECT COUNT(*) FROM accounts a
		WHERE a.credit <> (SELECT COALESCE(SUM(t.amount), 0) FROM transactions t WHERE t.account_id = a.id)`)
	check(n == 0, "credit == SUM(transactions.amount) for every account (%d accounts differ)", n)
	n = count(`SELECT COUNT(*) FROM (SELECT balance_after,
			SUM(amount) OVER (PARTITION BY account_id ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running
		FROM transactions) WHERE balance_after <> running`)
	check(n == 0, "balance_after == running sum of the account's ledger for every transaction (%d differ)", n)
	n = count(`SELECT COUNT(*) FROM (SELECT 1 FROM transactions WHERE type = 'charge'
		GROUP BY resource_type, resource_id, period_start HAVING COUNT(*) > 1)`)
	check(n == 0, "no (resource_type, resource_id, period_start) charged twice (%d are)", n)
	// The first hour at order, one in pass 1, five in pass 3.
	want := int64(7 * metered)
	n = count(`SELECT COUNT(*) FROM transactions WHERE type = 'charge'`)
	check(n == want, "%d charge transactions, want %d (7 hours × %d servers and volumes)", n, want, metered)
	n = count(`SELECT COUNT(*) FROM (SELECT resource_id FROM transactions WHERE type = 'charge' AND resource_type = 'server'
		GROUP BY resource_id HAVING COUNT(*) <> 7 OR MIN(period_start) <> ` + msStr(t0) + ` OR MAX(period_start) <> ` + msStr(t0.Add(6*time.Hour)) + `)`)
	check(n == 0, "every server charged exactly the hours T0 .. T0+6h (%d are not)", n)
	n = count(`SELECT COUNT(*) FROM transactions t JOIN servers s ON s.id = t.resource_id JOIN plans p ON p.id = s.plan_id
		WHERE t.type = 'charge' AND t.resource_type = 'server' AND t.amount <> -p.price_hourly`)
	check(n == 0, "every hourly charge is its plan's price_hourly (%d are not)", n)
	var charged int64
	if err := w.QueryRowContext(ctx, `SELECT -SUM(amount) FROM transactions WHERE type = 'charge'`).Scan(&charged); err != nil {
		log.Fatal(err)
	}
	var sum hosting.Money
	for _, r := range results {
		sum += r.Total
	}
	first := hosting.Money(count(`SELECT SUM(rate) FROM meters`))
	check(hosting.Money(charged) == first+sum, "ledger's charges %s == first hours %s + the passes' totals %s",
		hosting.Money(charged), first, sum)
	n = count(`SELECT COUNT(*) FROM meters WHERE next_at IS NOT ` + msStr(t0.Add(7*time.Hour)) + ` OR month_charged <> 7 * rate`)
	check(n == 0, "every meter's next hour is T0+7h and its month_charged 7 × rate (%d are not)", n)
	n = count(`SELECT COUNT(*) FROM charge_batch`)
	check(n == 0, "charge_batch left empty (%d rows)", n)

	if breakdown {
		if err := explainStep(ctx, w, t0.Add(7*time.Hour+time.Minute)); err != nil {
			log.Fatal(err)
		}
	}
	if ok {
		fmt.Println("\nall checks passed")
	} else {
		fmt.Println("\nSOME CHECKS FAILED")
	}
	return ok
}

// cpuTime is the CPU time (user and system) this process has used. SQLite runs in
// it (pure Go), so on a machine shared with other work this stays comparable when
// wall time does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(t time.Time) int64           { return t.UnixMilli() }
func msStr(t time.Time) string       { return fmt.Sprint(ms(t)) }
func seconds(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

// seed writes the accounts, servers, meters and ledger in a few set-based statements
// (recursive CTEs), in one transaction per table.
func seed(ctx context.Context, w *sql.DB, servers, volumes, accounts int) error {
	month := billing.MonthStart(t0)
	steps := []struct {
		what  string
		query string
		args  []any
	}{
		{"accounts", `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO accounts (email, name, password_hash, credit, server_quota, created_at)
			SELECT 'bench-' || i || '@berth.local', 'Bench ' || i, '', ?, 1000000, ? FROM n`,
			[]any{accounts, topUp, ms(t0) - 3600_000}},
		{"top-ups", `INSERT INTO transactions (account_id, type, amount, balance_after, description, created_at)
			SELECT id, 'topup', credit, credit, 'bench credit', created_at FROM accounts ORDER BY id`, nil},
		// Server i belongs to account 1 + (i-1) % ACCOUNTS, has plan 1 + (i-1) % 5 and
		// image 1 + (i-1) % 4.
		{"servers", `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO servers (account_id, name, display_name, status, location_id, plan_id, image_id, vcpus, memory_mb, disk_gb,
				ipv4, ipv6, created_at)
			SELECT 1 + (i - 1) % ?, printf('bench-%07d', i), printf('bench-%07d', i), 'running', ?, p.id, 1 + (i - 1) % ?,
				p.vcpus, p.memory_mb, p.disk_gb, printf('100.%d.%d.%d', 64 + i / 65536, (i / 256) % 256, i % 256),
				printf('2001:db8:%x::1', i), ?
			FROM n JOIN plans p ON p.id = 1 + (i - 1) % ?
			ORDER BY i`,
			[]any{servers, accounts, locationID, images, ms(t0), plans}},
		// As ops' openServerMeter: first hour charged at order, next hour T0+1h.
		{"meters", `INSERT INTO meters (account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at, next_at,
				month_start, month_charged)
			SELECT s.account_id, 'server', s.id, s.name, p.price_hourly, p.price_monthly, ?, ?, ?, p.price_hourly
			FROM servers s JOIN plans p ON p.id = s.plan_id ORDER BY s.id`,
			[]any{ms(t0), ms(t0.Add(time.Hour)), ms(month)}},
		// Volume i belongs to account 1 + (i-1) % ACCOUNTS, is 10 to 100 GB in location 1,
		// every other one attached to server i (when there is one), as ops'
		// openVolumeMeter bills it: size × the location's prices.
		{"volumes", `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO volumes (account_id, name, size_gb, location_id, server_id, format, status, created_at)
			SELECT 1 + (i - 1) % ?, printf('vol-%07d', i), 10 * (1 + i % 10), ?,
				CASE WHEN i % 2 = 0 AND i <= ? THEN i END, 'ext4', 'available', ?
			FROM n WHERE ? > 0 ORDER BY i`,
			[]any{max(volumes, 1), accounts, locationID, servers, ms(t0), volumes}},
		{"volume meters", `INSERT INTO meters (account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at, next_at,
				month_start, month_charged)
			SELECT v.account_id, 'volume', v.id, v.name, v.size_gb * l.volume_price_gb_hour, v.size_gb * l.volume_price_gb_month, ?, ?, ?,
				v.size_gb * l.volume_price_gb_hour
			FROM volumes v JOIN locations l ON l.id = v.location_id ORDER BY v.id`,
			[]any{ms(t0), ms(t0.Add(time.Hour)), ms(month)}},
		// The first hours, as AddCoveredTransaction writes them: in meter order per
		// account, each showing the balance after it.
		{"first-hour charges", `INSERT INTO transactions (account_id, type, amount, balance_after, description, resource_type, resource_id,
				resource_name, period_start, created_at)
			SELECT m.account_id, 'charge', -m.rate,
				a.credit - SUM(m.rate) OVER (PARTITION BY m.account_id ORDER BY m.id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
				'', m.resource_type, m.resource_id, m.resource_name, m.started_at, m.started_at
			FROM meters m JOIN accounts a ON a.id = m.account_id
			ORDER BY m.id`, nil},
		{"credit", `UPDATE accounts SET credit = credit - t.total
			FROM (SELECT account_id, SUM(rate) AS total FROM meters GROUP BY account_id) AS t
			WHERE accounts.id = t.account_id`, nil},
	}
	for _, s := range steps {
		t := time.Now()
		tx, err := w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, s.query, s.args...)
		if err != nil {
			tx.Rollback()
			return fmt.Errorf("seed %s: %w", s.what, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("seed %s: %w", s.what, err)
		}
		n, _ := res.RowsAffected()
		fmt.Printf("  seed %-19s %8d rows %9s\n", s.what+":", n, seconds(time.Since(t)))
	}
	// No ANALYZE: berthd never runs it, so the planner sees what it sees in production.
	t := time.Now()
	if _, err := w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return err
	}
	fmt.Printf("  seed %-19s %13s %9s\n", "checkpoint:", "", seconds(time.Since(t)))
	return nil
}

// dbSize prints the database's size: its pages, and the files on disk.
func dbSize(w *sql.DB, dir string) {
	var pages, size int64
	if err := w.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		log.Fatal(err)
	}
	if err := w.QueryRow(`PRAGMA page_size`).Scan(&size); err != nil {
		log.Fatal(err)
	}
	file := func(name string) float64 {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return 0
		}
		return float64(st.Size()) / (1 << 20)
	}
	fmt.Printf("database: %.1f MiB (%d pages of %d bytes); berth.db %.1f MiB, berth.db-wal %.1f MiB\n",
		float64(pages*size)/(1<<20), pages, size, file("berth.db"), file("berth.db-wal"))
}

// The statements of sqlstore's ChargeDue (internal/store/sqlstore/billing.go), copied
// to time them one by one. Keep them in step with it; the pass above runs the real ones.
const (
	dueWhere = ` next_at IS NOT NULL AND next_at <= ? AND (stopped_at IS NULL OR next_at < stopped_at) `
	capLeft  = `(monthly_cap - CASE WHEN month_start = ? THEN month_charged ELSE 0 END)`
)

// explainStep runs one charge step at clock now, statement by statement, in a
// transaction it rolls back, printing each statement's time and query plan.
func explainStep(ctx context.Context, w *sql.DB, now time.Time) error {
	month, upto, nowMS := ms(billing.MonthStart(now)), ms(now), ms(now)
	stmts := []struct {
		name  string
		query string
		args  []any
	}{
		{"EarliestDue: SELECT MIN(next_at)", `SELECT MIN(next_at) FROM meters WHERE` + dueWhere, []any{upto}},
		{"stage: INSERT INTO charge_batch", `INSERT INTO charge_batch (meter_id, account_id, resource_type, resource_id, resource_name, period_start, amount)
			SELECT id, account_id, resource_type, resource_id, resource_name, next_at,
				CASE WHEN monthly_cap IS NULL THEN rate
					WHEN ` + capLeft + ` <= 0 THEN 0
					WHEN ` + capLeft + ` < rate THEN ` + capLeft + `
					ELSE rate END
			FROM meters WHERE` + dueWhere + `AND next_at >= ?`, []any{month, month, month, upto, month}},
		{"ledger: INSERT INTO transactions", `INSERT INTO transactions (account_id, type, amount, balance_after, description, resource_type, resource_id, resource_name, period_start, created_at)
			SELECT b.account_id, 'charge', -b.amount,
				a.credit - SUM(b.amount) OVER (PARTITION BY b.account_id ORDER BY b.meter_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
				'', b.resource_type, b.resource_id, b.resource_name, b.period_start, ?
			FROM charge_batch b JOIN accounts a ON a.id = b.account_id
			WHERE b.amount > 0
			ORDER BY b.account_id, b.meter_id`, []any{nowMS}},
		{"credit: UPDATE accounts FROM", `UPDATE accounts SET credit = credit - t.total
			FROM (SELECT account_id, SUM(amount) AS total FROM charge_batch WHERE amount > 0 GROUP BY account_id) AS t
			WHERE accounts.id = t.account_id`, nil},
		{"meters: UPDATE meters FROM", `UPDATE meters SET
				month_charged = CASE WHEN meters.month_start = ? THEN meters.month_charged ELSE 0 END + b.amount,
				month_start = ?,
				next_at = CASE WHEN meters.stopped_at IS NOT NULL AND meters.next_at + 3600000 >= meters.stopped_at
					THEN NULL ELSE meters.next_at + 3600000 END
			FROM charge_batch AS b WHERE b.meter_id = meters.id AND meters.id IN (SELECT meter_id FROM charge_batch)`, []any{month, month}},
		{"total: SELECT SUM(amount)", `SELECT COALESCE(SUM(amount), 0) FROM charge_batch`, nil},
		{"overdrawn: SELECT accounts", `SELECT a.id FROM accounts a
			WHERE a.credit < 0 AND a.id IN (SELECT account_id FROM charge_batch WHERE amount > 0) ORDER BY a.id`, nil},
		{"clear: DELETE FROM charge_batch", `DELETE FROM charge_batch`, nil},
	}
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	fmt.Printf("\nbreakdown: one charge step at %s (an hour per server), statement by statement, rolled back:\n", now.Format(time.RFC3339))
	var total time.Duration
	var plans []string
	for _, s := range stmts {
		plan, err := queryPlan(ctx, tx, s.query, s.args)
		if err != nil {
			return fmt.Errorf("%s: explain: %w", s.name, err)
		}
		plans = append(plans, fmt.Sprintf("  %s:\n%s", s.name, plan))
		t := time.Now()
		var rows int64
		if strings.HasPrefix(strings.TrimSpace(s.query), "SELECT") {
			r, err := tx.QueryContext(ctx, s.query, s.args...)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			for r.Next() {
				rows++
			}
			r.Close()
			if err := r.Err(); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
		} else {
			res, err := tx.ExecContext(ctx, s.query, s.args...)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			rows, _ = res.RowsAffected()
		}
		d := time.Since(t)
		total += d
		fmt.Printf("  %-36s %8d rows %9s\n", s.name, rows, seconds(d))
	}
	fmt.Printf("  %-36s %13s %9s\n", "all statements (no commit)", "", seconds(total))
	fmt.Println("\nquery plans (EXPLAIN QUERY PLAN):")
	for _, p := range plans {
		fmt.Print(p)
	}
	return nil
}

// queryPlan is SQLite's EXPLAIN QUERY PLAN of query, indented as a tree.
func queryPlan(ctx context.Context, tx *sql.Tx, query string, args []any) (string, error) {
	rows, err := tx.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	depth := map[int64]int{}
	var b strings.Builder
	for rows.Next() {
		var id, parent, notused int64
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			return "", err
		}
		depth[id] = depth[parent] + 1
		fmt.Fprintf(&b, "    %s%s\n", strings.Repeat("  ", depth[id]-1), detail)
	}
	return b.String(), rows.Err()
}
