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

// assertOutput checks a tiny round's figures and plans.
func assertOutput(t *testing.T, store, output string) {
	t.Helper()
	for _, want := range []string{
		"seeded 10 accounts, 100 running servers and 100 volumes",
		"OK   pass 1: one hour due per meter: 200 hours charged, want 200",
		"OK   pass 3: catch-up after a 5-hour outage: 1000 hours charged, want 1000",
		"OK   pass 4: first of the month, licenses + an hour: 350 hours charged, want 350",
		"OK   1900 charge transactions, want 1900",
		"OK   every held license charged exactly once for the new month (0 are not)",
		"\npass 4 split: licenses 150 months wall_ms ",
		map[string]string{"sqlite": "SEARCH meters USING INDEX meters_next", "postgres": "Buffers: shared hit="}[store],
	} {
		if !strings.Contains(output, want) {
			t.Errorf("the output lacks %q:\n%s", want, output)
		}
	}
	// A pass takes as many transactions as its hours need at 30 a transaction: pass 1's
	// 200 hours 7, pass 3's 1,000 hours 34; the one with nothing due 1; pass 4 5 for
	// its 150 license months (licenses first, each transaction full), then 7 for
	// its hours.
	for pass, txs := range map[string]string{"1": "7", "2": "1", "3": "34", "4": "12"} {
		if !regexp.MustCompile(`\npass ` + pass + `: .* ` + txs + ` +[0-9.]+\n`).MatchString(output) {
			t.Errorf("pass %s did not take %s transactions:\n%s", pass, txs, output)
		}
	}
	if !regexp.MustCompile(`\npass 4 split: licenses 150 months wall_ms [0-9.]+ in 5 transactions of their own \| hours 200 wall_ms [0-9.]+\n`).
		MatchString(output) {
		t.Errorf("pass 4's split is not 5 transactions of license months and 200 hours:\n%s", output)
	}
	if !regexp.MustCompile(`\n  ledger: INSERT INTO transactions +200 rows`).MatchString(output) {
		t.Errorf("the breakdown's ledger insert wrote no 200 rows:\n%s", output)
	}
	// Each pass's charges derived from the meters agree with its ledger, for all 10
	// accounts (the servers' and volumes' hours; pass 4's licenses are not meters').
	for _, pass := range []string{"pass 1: one hour due per meter", "pass 3: catch-up after a 5-hour outage", "pass 4: first of the month, licenses \\+ an hour"} {
		if !regexp.MustCompile(`\n  OK   ` + pass + ` +[0-9.]+s  10 accounts, 0 differ from the ledger, charged [1-9][0-9.]*\n`).MatchString(output) {
			t.Errorf("no derived line of %s agreeing with the ledger:\n%s", pass, output)
		}
	}
	if store == "sqlite" && !strings.Contains(output, "SCAN meters USING COVERING INDEX meters_derived") {
		t.Errorf("the derived charges are not one walk of their index:\n%s", output)
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

// checkSpoils spoils b's ledger one way at a time and expects the check that
// guards against that to fail.
func checkSpoils(ctx context.Context, t *testing.T, b *bench, results []ops.MeterResult) {
	t.Helper()
	lastCharge := `(SELECT MAX(id) FROM transactions WHERE type = 'charge')`
	lastLicense := `(SELECT MAX(id) FROM transactions WHERE type = 'charge' AND resource_type = 'license')`
	spoils := []struct {
		name  string
		sql   []string
		fails string // the start of the check's line
	}{
		{"credit moved without a transaction", []string{`UPDATE accounts SET credit = credit + 1 WHERE id = 1`},
			"credit == SUM(transactions.amount)"},
		{"a balance_after off", []string{`UPDATE transactions SET balance_after = balance_after - 1 WHERE id = ` + lastCharge},
			"balance_after == running sum"},
		{"an hour charged twice", []string{`DROP INDEX transactions_charge_once`,
			`INSERT INTO transactions (account_id, type, amount, balance_after, description, resource_type, resource_id, resource_name,
				period_start, created_at)
			SELECT account_id, type, amount, balance_after, description, resource_type, resource_id, resource_name, period_start, created_at
			FROM transactions WHERE id = ` + lastCharge}, "no (resource_type, resource_id, period_start) charged twice"},
		{"an hour not charged", []string{`DELETE FROM transactions WHERE id = ` + lastCharge}, "1899 charge transactions, want 1900"},
		{"an hour charged late", []string{`UPDATE transactions SET period_start = period_start + 3600000 WHERE id = ` + lastCharge},
			"every server and volume charged exactly the hours"},
		{"a server charged the wrong price", []string{`UPDATE transactions SET amount = amount - 1
			WHERE id = (SELECT MIN(id) FROM transactions WHERE type = 'charge' AND resource_type = 'server')`}, "every server's hourly charge"},
		{"a volume charged the wrong price", []string{`UPDATE transactions SET amount = amount - 1
			WHERE id = (SELECT MIN(id) FROM transactions WHERE type = 'charge' AND resource_type = 'volume')`}, "every volume's hourly charge"},
		{"a license charged twice for the new month", []string{`DROP INDEX transactions_charge_once`,
			`INSERT INTO transactions (account_id, type, amount, balance_after, description, resource_type, resource_id, resource_name,
				period_start, created_at)
			SELECT account_id, type, amount, balance_after, description, resource_type, resource_id, resource_name, period_start, created_at
			FROM transactions WHERE id = ` + lastLicense}, "every held license charged exactly once for the new month"},
		{"a license not charged for the new month", []string{`DELETE FROM transactions WHERE id = ` + lastLicense},
			"every held license charged exactly once for the new month"},
		{"a license's new month charged at another price", []string{`UPDATE transactions SET amount = amount - 1 WHERE id = ` + lastLicense},
			"every license's charge for the new month"},
		{"a license not moved on", []string{`UPDATE server_licenses SET paid_through = ` + fmt.Sprint(ms(firstOfMonth)) + ` WHERE id = 7`},
			"every held license paid through"},
		{"a license's use not recorded", []string{`DELETE FROM license_usage WHERE server_license_id = 9 AND month = ` +
			fmt.Sprint(ms(firstOfMonth))}, "149 licenses' use recorded"},
		{"a meter an hour ahead", []string{`UPDATE meters SET next_at = next_at + 3600000 WHERE id = 1`}, "every meter's next hour"},
		{"a meter stopped", []string{`UPDATE meters SET next_at = NULL WHERE id = 2`}, "every meter's next hour"},
		{"charge_batch left behind", []string{`INSERT INTO charge_batch (meter_id, account_id, resource_type, resource_id, resource_name,
			period_start, day, amount) VALUES (1, 1, 'server', 1, 'x', 0, 0, 0)`}, "charge_batch left empty"},
		{"a rate changed after charging", []string{`UPDATE meters SET rate = rate + 1 WHERE id = 3`}, "ledger's charges"},
	}
	out := b.out.(*bytes.Buffer)
	for _, sp := range spoils {
		out.Reset()
		ok := spoilAndCheck(ctx, t, b, sp.sql, results)
		if ok || !strings.Contains(out.String(), "\nFAIL "+sp.fails) {
			t.Errorf("%s: checks ok %v, want the check %q failed:\n%s", sp.name, ok, sp.fails, out.String())
		}
	}
}

// spoilAndCheck runs the statements in a transaction, checks the ledger through it
// and rolls it back.
func spoilAndCheck(ctx context.Context, t *testing.T, b *bench, stmts []string, results []ops.MeterResult) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tx, err := b.db.WriteDB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ok, err := b.check(ctx, tx, results)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}
