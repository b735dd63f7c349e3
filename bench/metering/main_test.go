package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testpg"
)

// stores are the databases the bench runs on: SQLite in a temp dir, and PostgreSQL
// on the tests' server (skipped, loudly, without BERTH_TEST_DATABASE_URL; failed
// under BERTH_POSTGRES_REQUIRED=1).
var stores = []struct {
	name   string
	config func(t *testing.T) config
}{
	{"sqlite", func(t *testing.T) config { return tiny(config{dir: t.TempDir()}) }},
	{"postgres", func(t *testing.T) config { return tiny(config{database: testpg.Require(t)}) }},
}

// tiny sizes cfg for a test: 100 servers and 100 volumes over 10 accounts, 150
// licenses, metered 30 hours (or license months) a transaction.
func tiny(cfg config) config {
	cfg.servers, cfg.volumes, cfg.accounts, cfg.licenses, cfg.batch = 100, 100, 10, 150, 30
	return cfg
}

// TestBench runs bench/metering.sh's round at a tiny size on each store: the
// seeding, the three passes with their hours, every ledger check passing, the
// breakdown with the store's query plans, and on PostgreSQL the database the round
// created dropped afterwards. Then it spoils the ledger, one way at a time in a
// transaction rolled back, and expects the check that guards against it to fail:
// the checks can see what they claim to.
func TestBench(t *testing.T) {
	t.Parallel()
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			cfg := s.config(t)
			cfg.breakdown, cfg.derived = true, true
			var out bytes.Buffer
			b, err := open(ctx, cfg, &out)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.close() })
			ok, results, err := b.round(ctx)
			if err != nil || !ok || strings.Contains(out.String(), "FAIL") || !strings.Contains(out.String(), "\nall checks passed\n") {
				t.Fatalf("round: ok %v, err %v; output:\n%s", ok, err, out.String())
			}
			assertOutput(t, s.name, out.String())
			created := regexp.MustCompile(`database (berth_metering_\w+), created for this run`).FindStringSubmatch(out.String())
			checkSpoils(ctx, t, b, results)
			checkDerivedSpoiled(ctx, t, b)
			if err := b.close(); err != nil {
				t.Error(err)
			}
			if s.name == "postgres" {
				if created == nil {
					t.Fatalf("the output names no database")
				}
				assertDropped(t, cfg.database, created[1])
			}
		})
	}
}

// TestBenchWithoutLicenses runs a tiny round as the program runs by default, without
// licenses: no license step then makes SQLite's staging tables, which the checks read.
func TestBenchWithoutLicenses(t *testing.T) {
	t.Parallel()
	cfg := tiny(config{dir: t.TempDir()})
	cfg.licenses, cfg.breakdown, cfg.derived = 0, true, true
	var out bytes.Buffer
	ok, err := run(context.Background(), cfg, &out)
	if err != nil || !ok {
		t.Fatalf("round: ok %v, err %v; output:\n%s", ok, err, out.String())
	}
}

// assertOutput checks a tiny round's figures and plans.
func assertOutput(t *testing.T, store, output string) {
	t.Helper()
	for _, want := range []string{
		"seeded 10 accounts, 100 running servers and 100 volumes",
		"OK   pass 1: one hour due per meter: 200 hours charged, want 200",
		"OK   pass 3: catch-up after a 5-hour outage: 1000 hours charged, want 1000",
		"OK   pass 4: first of the month, licenses + an hour: 350 hours charged, want 350",
		"OK   1900 charges shown, want 1900",
		"OK   every held license charged exactly once for the new month (0 are not)",
		"\npass 4 split: licenses 150 months wall_ms ",
		map[string]string{"sqlite": "SEARCH accounts USING COVERING INDEX accounts_next_due", "postgres": "Buffers: shared hit="}[store],
	} {
		if !strings.Contains(output, want) {
			t.Errorf("the output lacks %q:\n%s", want, output)
		}
	}
	// A transaction charges whole accounts (a step ends after the account that takes
	// it to its limit) until 30 hours: pass 1 two accounts of 20 hours each time, 5,
	// and one that finds nothing due; pass 3 an account of 100 hours each time, 10 + 1;
	// the one with nothing due 1; pass 4 5 for its 150 license months (licenses first,
	// each transaction full), then 5 + 1 for its hours.
	for pass, txs := range map[string]string{"1": "6", "2": "1", "3": "11", "4": "11"} {
		if !regexp.MustCompile(`\npass ` + pass + `: .* ` + txs + ` +[0-9.]+\n`).MatchString(output) {
			t.Errorf("pass %s did not take %s transactions:\n%s", pass, txs, output)
		}
	}
	if !regexp.MustCompile(`\npass 4 split: licenses 150 months wall_ms [0-9.]+ in 5 transactions of their own \| hours 200 wall_ms [0-9.]+\n`).
		MatchString(output) {
		t.Errorf("pass 4's split is not 5 transactions of license months and 200 hours:\n%s", output)
	}
	// The breakdown's step: all 10 accounts, an hour of each of their 200 meters, a
	// row each, as ChargeDue and part by part.
	for _, re := range []string{
		`\n  ChargeDue, one call \(no commit\) +10 accounts +200 hours +10 rows `,
		`\n  meters: SELECT .* +10 calls +200 rows `,
		`\n  ledger: INSERT INTO transactions .* +10 calls +10 rows `,
		`\n  all parts \(no commit\) +10 accounts +200 hours +10 rows `,
	} {
		if !regexp.MustCompile(re).MatchString(output) {
			t.Errorf("the breakdown lacks %s:\n%s", re, output)
		}
	}
	// Each pass's rows agree with the charges the SQL derives from the meters, for all
	// 10 accounts (the servers' and volumes' hours; pass 4's licenses are not meters').
	for _, pass := range []string{"pass 1: one hour due per meter", "pass 3: catch-up after a 5-hour outage", "pass 4: first of the month, licenses \\+ an hour"} {
		if !regexp.MustCompile(`\n  OK   ` + pass + ` +[0-9.]+s  10 accounts, 0 differ from the ledger, charged [1-9][0-9.]*\n`).MatchString(output) {
			t.Errorf("no derived line of %s agreeing with the ledger:\n%s", pass, output)
		}
	}
	if store == "sqlite" {
		// The step reads an account's meters in one range of their index, which holds
		// all it reads, and the SQL derivation all of them in one walk of it.
		if !strings.Contains(output, "\n  meters:\n    SEARCH meters USING COVERING INDEX meters_account (account_id=? AND <expr>>?)\n") {
			t.Errorf("the step does not read an account's meters from meters_account alone:\n%s", output)
		}
		if !strings.Contains(output, "SCAN meters USING COVERING INDEX meters_account") {
			t.Errorf("the derived charges are not one walk of their index:\n%s", output)
		}
	}
}

// checkDerivedSpoiled changes one meter's rate, in the derived comparison's own
// transaction (rolled back), and expects the comparison to fail for its account in
// every pass: it can see a difference.
func checkDerivedSpoiled(ctx context.Context, t *testing.T, b *bench) {
	t.Helper()
	var out bytes.Buffer
	b.out = &out
	ok, err := b.derivedAfter(ctx, []string{`UPDATE meters SET rate = rate + 1 WHERE id = (SELECT MIN(id) FROM meters)`})
	if err != nil {
		t.Fatal(err)
	}
	if ok || strings.Count(out.String(), "FAIL") != 3 || strings.Count(out.String(), "1 differ from the ledger") != 3 {
		t.Errorf("a meter's rate changed, and the derived charges still agree with the ledger (ok %v):\n%s", ok, out.String())
	}
}

// assertDropped checks that the database name is gone from server.
func assertDropped(t *testing.T, server, name string) {
	t.Helper()
	admin, err := sql.Open("pgx", server)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var n int
	if err := admin.QueryRow(`SELECT COUNT(*) FROM pg_database WHERE datname = $1`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("database %s is still there after the round", name)
	}
}

// checkSpoils spoils b's ledger one way at a time and expects the checks that
// guard against that to fail.
func checkSpoils(ctx context.Context, t *testing.T, b *bench, results []ops.MeterResult) {
	t.Helper()
	// The last row a pass wrote (pass 4's last account's, the last of its ledger),
	// and a server's first hour, a row of its own.
	lastWindow := `(SELECT MAX(id) FROM transactions WHERE window_end IS NOT NULL)`
	firstHour := func(typ string) string {
		return `(SELECT MIN(id) FROM transactions WHERE type = 'charge' AND resource_type = '` + typ + `')`
	}
	lastLicense := `(SELECT MAX(id) FROM transactions WHERE type = 'charge' AND resource_type = 'license')`
	spoils := []struct {
		name  string
		sql   []string
		fails []string // the start of the checks' lines
	}{
		{"credit moved without a transaction", []string{`UPDATE accounts SET credit = credit + 1 WHERE id = 1`},
			[]string{"credit == SUM(transactions.amount)"}},
		{"a pass's row's balance_after off", []string{`UPDATE transactions SET balance_after = balance_after - 1 WHERE id = ` + lastWindow},
			[]string{"balance_after == running sum"}},
		{"a window charged twice", []string{`DROP INDEX transactions_window_once`,
			`INSERT INTO transactions (account_id, type, amount, balance_after, description, resource_type, resource_id, resource_name,
				period_start, created_at, lines, lines_before, window_end, first_line)
			SELECT t.account_id, t.type, t.amount, a.credit + t.amount, t.description, t.resource_type, t.resource_id, t.resource_name,
				t.period_start, t.created_at, t.lines, a.ledger_lines, t.window_end, t.first_line
			FROM transactions t JOIN accounts a ON a.id = t.account_id WHERE t.id = ` + lastWindow,
			`UPDATE accounts SET credit = credit + t.amount, ledger_lines = ledger_lines + t.lines
			FROM transactions t WHERE t.id = ` + lastWindow + ` AND accounts.id = t.account_id`},
			[]string{"no (resource_type, resource_id, hour) charged twice", "every account's charges for its servers and volumes"}},
		{"a pass's row lost", []string{`DELETE FROM transactions WHERE id = ` + lastWindow},
			[]string{"every account's ledger shows all its entries", "every account's charges for its servers and volumes"}},
		{"a pass's row's amount off, its balance and the credit with it", []string{
			`UPDATE accounts SET credit = credit - 1 WHERE id = (SELECT account_id FROM transactions WHERE id = ` + lastWindow + `)`,
			`UPDATE transactions SET amount = amount - 1, balance_after = balance_after - 1 WHERE id = ` + lastWindow},
			[]string{"every account's ledger shows all its entries", "every account's charges for its servers and volumes"}},
		{"a pass's row across two days", []string{`UPDATE transactions SET window_end = window_end + 86400000 WHERE id = ` + lastWindow},
			[]string{"every row a pass wrote holds"}},
		{"an hour charged late", []string{`UPDATE transactions SET period_start = period_start + 3600000 WHERE id = ` + firstHour("server")},
			[]string{"every server and volume charged exactly the hours", "no (resource_type, resource_id, hour) charged twice"}},
		{"a server charged the wrong price", []string{`UPDATE transactions SET amount = amount - 1 WHERE id = ` + firstHour("server")},
			[]string{"every server's hourly charge"}},
		{"a volume charged the wrong price", []string{`UPDATE transactions SET amount = amount - 1 WHERE id = ` + firstHour("volume")},
			[]string{"every volume's hourly charge"}},
		{"a rate changed after charging", []string{`UPDATE meters SET rate = rate + 1 WHERE id = 3`},
			[]string{"every account's ledger shows all its entries", "every meter as opened", "ledger's charges"}},
		{"a meter stopped", []string{`UPDATE meters SET stopped_at = billed_from WHERE id = 2`},
			[]string{"every meter as opened", "every account's burn", "every account's ledger shows all its entries"}},
		{"an account due an hour late", []string{`UPDATE accounts SET next_due = next_due + 3600000 WHERE id = 1`},
			[]string{"every account with meters charged past"}},
		{"an account charged to an hour back", []string{`UPDATE accounts SET charged_to = charged_to - 3600000 WHERE id = 1`},
			[]string{"every account with meters charged past"}},
		{"a license charged twice for the new month", []string{`DROP INDEX transactions_charge_once`,
			`INSERT INTO transactions (account_id, type, amount, balance_after, description, resource_type, resource_id, resource_name,
				period_start, created_at)
			SELECT account_id, type, amount, balance_after, description, resource_type, resource_id, resource_name, period_start, created_at
			FROM transactions WHERE id = ` + lastLicense}, []string{"every held license charged exactly once for the new month"}},
		{"a license not charged for the new month", []string{`DELETE FROM transactions WHERE id = ` + lastLicense},
			[]string{"every held license charged exactly once for the new month"}},
		{"a license's new month charged at another price", []string{`UPDATE transactions SET amount = amount - 1 WHERE id = ` + lastLicense},
			[]string{"every license's charge for the new month"}},
		{"a license not moved on", []string{`UPDATE server_licenses SET paid_through = ` + fmt.Sprint(ms(firstOfMonth)) + ` WHERE id = 7`},
			[]string{"every held license paid through"}},
		{"a license's use not recorded", []string{`DELETE FROM license_usage WHERE server_license_id = 9 AND month = ` +
			fmt.Sprint(ms(firstOfMonth))}, []string{"149 licenses' use recorded"}},
		{"charge_batch left behind", []string{`INSERT INTO charge_batch (meter_id, account_id, resource_type, resource_id, resource_name,
			period_start, day, amount) VALUES (1, 1, 'server', 1, 'x', 0, 0, 0)`}, []string{"charge_batch left empty"}},
	}
	out := b.out.(*bytes.Buffer)
	for _, sp := range spoils {
		out.Reset()
		ok := spoilAndCheck(ctx, t, b, sp.sql, results)
		for _, fails := range sp.fails {
			if ok || !strings.Contains(out.String(), "\nFAIL "+fails) {
				t.Errorf("%s: checks ok %v, want the check %q failed:\n%s", sp.name, ok, fails, out.String())
			}
		}
	}
}

// spoilAndCheck runs the statements in a transaction, checks the ledger through it
// and rolls it back.
func spoilAndCheck(ctx context.Context, t *testing.T, b *bench, stmts []string, results []ops.MeterResult) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ok, err := b.checkAfter(ctx, stmts, results)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}
