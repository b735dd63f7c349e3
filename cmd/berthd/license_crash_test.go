package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// License months in the crash test: licenseCrashHeld held licenses, each two
// calendar months behind (last month's and this one's due), so that the first
// metering pass of serve has licenseCrashHeld × 2 license months to charge: two or
// more of its transactions (at most ops.DefaultLicenseBatch on SQLite, ops.PostgresLicenseBatch
// on PostgreSQL, license months each), long enough to be killed in the middle of.
const (
	licenseCrashHeld     = 20_000
	licenseCrashAccounts = 4
	licenseCrashKills    = 6
)

// TestLicenseMonthsAcrossSIGKILL: serve is killed (SIGKILL) again and again while its
// first-of-month metering pass charges the held licenses' months (docs/api.md,
// Licenses; issue 32), each time soon after it is seen to have committed a part of
// them (sometimes at once, sometimes up to 300 ms later: inside the next
// transaction), and restarted on the same store. In the end every license is charged
// each month due exactly once, at its price, and moved on to the next month; its
// use is recorded for each; each account's credit is the sum of its ledger and every
// balance_after the running sum; no staged charge is left behind. The licenses are
// written into the store directly (a real store, as serve's own: SQLite, or with
// BERTH_TEST_STORE=postgres PostgreSQL), paid through the start of last month, as
// if serve had not run since then.
func TestLicenseMonthsAcrossSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	store := storeFlags(t, data)
	runJSON(t, bin, append([]string{"migrate"}, store...)...)
	for i := range licenseCrashAccounts {
		runJSON(t, bin, append([]string{"admin", "account", "create", "--email", fmt.Sprintf("lic%d@example.com", i),
			"--password", "long-enough-pw", "--credit", "900000", "--quota-servers", "100000"}, store...)...)
	}
	now := time.Now().UTC()
	thisMonth := billing.MonthStart(now)
	lastMonth := thisMonth.AddDate(0, -1, 0)
	seedLicenses(t, data, lastMonth)

	db, _, rebind := storeDB(t, data)
	ctx := context.Background()
	count := func(query string, args ...any) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, rebind(query), args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return n
	}
	charged := func() int {
		return count(`SELECT COUNT(*) FROM transactions WHERE type = 'charge' AND resource_type = 'license'`)
	}
	const total = 2 * licenseCrashHeld
	addr := testnet.FreeAddr(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 32))
	midPass := 0
	for round := 1; round <= licenseCrashKills; round++ {
		before := charged()
		if before == total {
			break
		}
		d := startServe(t, bin, data, addr, "1")
		deadline := time.Now().Add(2 * time.Minute)
		for charged() == before {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no license month charged in 2 minutes (%d of %d before)\n%s", round, before, total, d.log)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if rng.IntN(2) == 0 {
			time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		}
		if err := d.cmd.Process.Kill(); err != nil { // SIGKILL
			t.Fatal(err)
		}
		_ = d.cmd.Wait()
		after := charged()
		t.Logf("round %d: killed with %d of %d license months charged (%d before it)", round, after, total, before)
		if after < total {
			midPass++
		}
	}
	if midPass == 0 {
		t.Fatalf("no kill landed in the middle of the pass: every round found it done")
	}

	d := startServe(t, bin, data, addr, "1")
	deadline := time.Now().Add(3 * time.Minute)
	for charged() < total {
		if time.Now().After(deadline) {
			t.Fatalf("after the kills, %d of %d license months charged in 3 minutes\n%s", charged(), total, d.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := d.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Wait()

	nextMonth := thisMonth.AddDate(0, 1, 0)
	if time.Now().UTC().After(nextMonth) {
		t.Skip("a month began during the test: its months due are not the ones checked")
	}
	// The licenses not charged the month of the parameter exactly once (one scan of
	// the ledger: it holds whatever the pass wrote, many rows if it ran wild).
	const onceEach = `SELECT COUNT(*) FROM server_licenses sl LEFT JOIN (SELECT resource_id, COUNT(*) AS n FROM transactions
		WHERE type = 'charge' AND resource_type = 'license' AND period_start = ? GROUP BY resource_id) c ON c.resource_id = sl.id
		WHERE c.n IS NULL OR c.n <> 1`
	type dbCheck struct {
		what  string
		query string
		args  []any
		want  int
	}
	checks := []dbCheck{
		{"license charges", `SELECT COUNT(*) FROM transactions WHERE type = 'charge' AND resource_type = 'license'`, nil, total},
		{"licenses not charged last month exactly once", onceEach,
			[]any{lastMonth.UnixMilli()}, 0},
		{"licenses not charged this month exactly once", onceEach,
			[]any{thisMonth.UnixMilli()}, 0},
		{"license charges not at the license's price", `SELECT COUNT(*) FROM transactions t
			JOIN server_licenses sl ON sl.id = t.resource_id JOIN licenses l ON l.id = sl.license_id JOIN servers s ON s.id = sl.server_id
			WHERE t.type = 'charge' AND t.resource_type = 'license'
				AND t.amount <> -(CASE WHEN l.per = 'vcpu' THEN l.price_monthly * s.vcpus ELSE l.price_monthly END)`, nil, 0},
		{"licenses not paid through next month", `SELECT COUNT(*) FROM server_licenses WHERE status <> 'active' OR paid_through <> ?`,
			[]any{nextMonth.UnixMilli()}, 0},
		{"months of use recorded", `SELECT COUNT(*) FROM license_usage WHERE month IN (?, ?)`,
			[]any{lastMonth.UnixMilli(), thisMonth.UnixMilli()}, total},
		{"accounts whose credit is not the sum of their ledger", `SELECT COUNT(*) FROM accounts a
			WHERE a.credit <> (SELECT COALESCE(SUM(t.amount), 0) FROM transactions t WHERE t.account_id = a.id)`, nil, 0},
		{"transactions whose balance_after is not the running sum", `SELECT COUNT(*) FROM (SELECT balance_after,
				SUM(amount) OVER (PARTITION BY account_id ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running
			FROM transactions) AS t WHERE balance_after <> running`, nil, 0},
		{"accounts below zero", `SELECT COUNT(*) FROM accounts WHERE credit < 0`, nil, 0},
	}
	if testenv.Postgres() {
		checks = append(checks, dbCheck{"staged charges left in charge_batch and charge_totals", `SELECT (SELECT COUNT(*) FROM charge_batch) + (SELECT COUNT(*) FROM charge_totals)`, nil, 0})
	} else {
		// SQLite stages in TEMP tables of the write connection, gone with its process.
		checks = append(checks, dbCheck{"staging tables in the database file", `SELECT COUNT(*) FROM sqlite_master WHERE name IN ('charge_batch', 'charge_totals')`, nil, 0})
	}
	for _, c := range checks {
		if got := count(c.query, c.args...); got != c.want {
			t.Errorf("%s: %d, want %d", c.what, got, c.want)
		}
	}
}

// seedLicenses writes licenseCrashHeld held licenses into the store of data, one a
// server, on servers (stopped, plan 1, without meters) spread over the accounts: each
// product 1 (per vCPU) or 3 (per server) in turn, accepted and paid through the start
// of month (its months from month on are due).
func seedLicenses(t *testing.T, data string, month time.Time) {
	t.Helper()
	ctx := context.Background()
	db, rebind := writableStoreDB(t, data)
	defer db.Close()
	started := month.Add(-24 * time.Hour).UnixMilli()
	// The rows i = 1..licenseCrashHeld; the placeholders are numbered in the order
	// they come in the statement, where the series' comes first on SQLite (a WITH),
	// last on PostgreSQL (generate_series in the FROM).
	series, from := `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) `, `n`
	serverArgs := []any{licenseCrashHeld, licenseCrashAccounts, started}
	if testenv.Postgres() {
		series, from = "", `generate_series(1, CAST(? AS BIGINT)) AS n(i)`
		serverArgs = []any{licenseCrashAccounts, started, licenseCrashHeld}
	}
	stmts := []struct {
		query string
		args  []any
	}{
		{series + `INSERT INTO servers (account_id, name, display_name, status, location_id, plan_id, image_id, vcpus, memory_mb, disk_gb,
				ipv4, ipv6, created_at)
			SELECT 1 + i % ?, 'lic-' || CAST(i AS TEXT), 'lic-' || CAST(i AS TEXT), 'stopped', 1, p.id, 1, p.vcpus, p.memory_mb, p.disk_gb,
				'100.' || CAST(64 + i / 65536 AS TEXT) || '.' || CAST((i / 256) % 256 AS TEXT) || '.' || CAST(i % 256 AS TEXT),
				'2001:db8:ffff:' || CAST(i AS TEXT) || '::1', CAST(? AS BIGINT)
			FROM ` + from + ` JOIN plans p ON p.id = 1 ORDER BY i`,
			serverArgs},
		{`INSERT INTO server_licenses (account_id, server_id, license_id, name, status, started_at, paid_through, charged_vcpus)
			SELECT s.account_id, s.id, l.id, l.name, 'active', CAST(? AS BIGINT), CAST(? AS BIGINT), s.vcpus
			FROM servers s JOIN licenses l ON l.id = CASE WHEN s.id % 2 = 0 THEN 1 ELSE 3 END
			WHERE s.name LIKE 'lic-%' ORDER BY s.id`, []any{started, month.UnixMilli()}},
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, rebind(s.query), s.args...); err != nil {
			t.Fatalf("seed: %v\n%s", err, s.query)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM server_licenses WHERE status = 'active'`).Scan(&n); err != nil ||
		n != licenseCrashHeld {
		t.Fatalf("seeded %d licenses (%v), want %d", n, err, licenseCrashHeld)
	}
}

// writableStoreDB opens the store of data for writing, while no serve runs on it.
func writableStoreDB(t *testing.T, data string) (*sql.DB, func(string) string) {
	t.Helper()
	if testenv.Postgres() {
		db, _, rebind := storeDB(t, data)
		return db, rebind
	}
	db, err := sql.Open("sqlite", "file:"+data+"/berth.db?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	return db, func(q string) string { return q }
}
