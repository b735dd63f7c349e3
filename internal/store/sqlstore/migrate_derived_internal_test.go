package sqlstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testpg"
)

// TestDerivedMeteringMigration: the migration to derived metering (SQLite 00035,
// PostgreSQL 00029) keeps a store that metered hour by hour as it was: the ledger
// shows the same entries with the same ids and balances, each resource was charged
// what it was, and the next pass charges the hours not charged yet, once, from where
// each meter had got to, a finished meter none. The ledger's ids then go on in
// blocks after the highest.
func TestDerivedMeteringMigration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		open   func(t *testing.T) *DB
		before int64
	}{
		{"sqlite", func(t *testing.T) *DB {
			db, err := OpenSQLite(context.Background(), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return db
		}, 34},
		{"postgres", func(t *testing.T) *DB {
			testpg.Require(t)
			db, err := OpenPostgres(context.Background(), testpg.NewDatabase(t))
			if err != nil {
				t.Fatal(err)
			}
			return db
		}, 28},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := tc.open(t)
			t.Cleanup(func() { db.Close() })
			migrateStoreUpTo(t, db, tc.before)
			t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
			at := func(d time.Duration) int64 { return t0.Add(d).UnixMilli() }
			month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
			// Server 1 (10 an hour, capped at 100 a month) charged for its hours at
			// t0, +1h and +2h (next at +3h); snapshot 2 (5) finished, stopped at +1h30
			// after its hours at t0 and +1h; volume 3 (7) stopped at +2h with its hour at
			// +30m charged and the one at +1h30 not yet.
			stmts := []string{
				`INSERT INTO accounts (id, email, name, password_hash, language, currency, credit, blocked, server_quota, created_at)
					VALUES (1, 'm@example.com', 'm', '', 'en', 'EUR', 958, 0, 5, 0)`,
				fmt.Sprintf(`INSERT INTO meters (account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at, next_at,
					stopped_at, month_start, month_charged) VALUES (1, 'server', 1, 's1', 10, 100, %d, %d, NULL, %d, 30)`, at(0), at(3*time.Hour), month),
				fmt.Sprintf(`INSERT INTO meters (account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at, next_at,
					stopped_at, month_start, month_charged) VALUES (1, 'snapshot', 2, 'p2', 5, NULL, %d, NULL, %d, %d, 10)`, at(0), at(90*time.Minute), month),
				fmt.Sprintf(`INSERT INTO meters (account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at, next_at,
					stopped_at, month_start, month_charged) VALUES (1, 'volume', 3, 'v3', 7, NULL, %d, %d, %d, %d, 7)`,
					at(30*time.Minute), at(90*time.Minute), at(2*time.Hour), month),
			}
			balance := int64(0)
			for _, e := range []struct {
				typ, res string
				id       int
				amount   int64
				hour     time.Duration
			}{
				{"topup", "", 0, 1000, -1}, {"charge", "server", 1, -10, 0}, {"charge", "snapshot", 2, -5, 0},
				{"charge", "volume", 3, -7, 30 * time.Minute}, {"charge", "server", 1, -10, time.Hour},
				{"charge", "snapshot", 2, -5, time.Hour}, {"charge", "server", 1, -10, 2 * time.Hour},
			} {
				balance += e.amount
				rid, period := "NULL", "NULL"
				if e.id != 0 {
					rid, period = fmt.Sprint(e.id), fmt.Sprint(at(e.hour))
				}
				stmts = append(stmts, fmt.Sprintf(`INSERT INTO transactions (account_id, type, amount, balance_after, description, resource_type,
					resource_id, resource_name, period_start, created_at) VALUES (1, '%s', %d, %d, '', '%s', %s, '', %s, %d)`,
					e.typ, e.amount, balance, e.res, rid, period, at(3*time.Hour)))
			}
			for _, q := range stmts {
				if _, err := db.write.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			rows, err := db.write.QueryContext(ctx, `SELECT `+txCols+` FROM transactions WHERE account_id = 1 ORDER BY id DESC`)
			before, err := collect(rows, err, scanTransaction)
			if err != nil || len(before) != 7 {
				t.Fatalf("the ledger before: %d entries, %v", len(before), err)
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			after, total, err := db.Transactions(ctx, 1, 0, 0)
			if err != nil || total != 7 || entries(after) != entries(before) {
				t.Fatalf("the ledger after: %v of %d, %v; want it as before, %v", after, total, err, before)
			}
			page, total, err := db.Transactions(ctx, 1, 2, 3)
			if err != nil || total != 7 || entries(page) != entries(before[3:5]) {
				t.Errorf("entries 4 and 5: %v, %v; want %v", page, err, before[3:5])
			}
			charged := func(when string, want map[string]hosting.Money) {
				t.Helper()
				for _, r := range []struct {
					typ string
					id  int64
				}{{hosting.ResourceServer, 1}, {hosting.ResourceSnapshot, 2}, {hosting.ResourceVolume, 3}} {
					if got, err := db.Charged(ctx, r.typ, r.id); err != nil || got != want[r.typ] {
						t.Errorf("%s: %s %d charged %s, %v; want %s", when, r.typ, r.id, got, err, want[r.typ])
					}
				}
			}
			charged("migrated", map[string]hosting.Money{"server": 30, "snapshot": 10, "volume": 7})
			due, err := db.EarliestDue(ctx, t0.Add(24*time.Hour), 0)
			if err != nil || due == nil || !due.Equal(t0.Add(90*time.Minute)) {
				t.Errorf("earliest due after the migration: %v, %v; want the volume's hour at +1h30", due, err)
			}
			// A pass at +3h: the volume's hour at +1h30 and the server's at +3h.
			var res store.ChargeResult
			if err := db.InTx(ctx, func(tx store.Tx) error {
				var err error
				res, err = tx.ChargeDue(ctx, store.ChargeStep{Upto: t0.Add(3 * time.Hour), Now: t0.Add(3 * time.Hour)})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if res.Hours != 2 || res.Total != 17 || res.Accounts != 1 {
				t.Errorf("the first pass after the migration: %+v; want 2 hours, 17", res)
			}
			charged("a pass later", map[string]hosting.Money{"server": 40, "snapshot": 10, "volume": 14})
			list, total, err := db.Transactions(ctx, 1, 0, 0)
			if err != nil || total != 9 || len(list) != 9 {
				t.Fatalf("the ledger after the pass: %d of %d entries, %v", len(list), total, err)
			}
			if entries(list[2:]) != entries(before) {
				t.Errorf("the entries before the pass changed: %v, want %v", list[2:], before)
			}
			for i, want := range []struct {
				res     string
				hour    time.Duration
				balance hosting.Money
			}{{"server", 3 * time.Hour, 941}, {"volume", 90 * time.Minute, 951}} {
				e := list[i]
				if e.ResourceType != want.res || e.PeriodStart == nil || !e.PeriodStart.Equal(t0.Add(want.hour)) || e.BalanceAfter != want.balance ||
					e.ID <= before[0].ID {
					t.Errorf("entry %d after the pass: %+v; want %s's hour at %s, balance %s, an id after %d", i, e, want.res,
						t0.Add(want.hour), want.balance, before[0].ID)
				}
			}
			// The next row of the ledger takes an id a block after the pass's row.
			var next hosting.Transaction
			if err := db.InTx(ctx, func(tx store.Tx) error {
				var err error
				next, err = tx.AddTransaction(ctx, hosting.Transaction{AccountID: 1, Type: hosting.TxTopup, Amount: 1, CreatedAt: t0})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if next.ID < list[0].ID+LinesPerRow-1 {
				t.Errorf("a top-up after the pass has id %d; want one after the pass's row's block (%d, %d ids)", next.ID, list[1].ID, LinesPerRow)
			}
		})
	}
}

// entries is a ledger's entries as text, what their pointers point to included.
func entries(list []hosting.Transaction) string {
	out := ""
	for _, t := range list {
		id, period := "-", "-"
		if t.ResourceID != nil {
			id = fmt.Sprint(*t.ResourceID)
		}
		if t.PeriodStart != nil {
			period = t.PeriodStart.UTC().Format(time.RFC3339)
		}
		out += fmt.Sprintf("%d %s %s %s %s %s %s %s %s\n", t.ID, t.Type, t.Amount, t.BalanceAfter, t.ResourceType, id, t.ResourceName,
			period, t.CreatedAt.UTC().Format(time.RFC3339))
	}
	return out
}
