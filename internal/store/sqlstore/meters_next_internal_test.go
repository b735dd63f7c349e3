package sqlstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testpg"
)

// TestMetersNextOrdersABatch: a metering step takes the due meters in the order
// (next_at, id), a batch at a time (ORDER BY next_at, id LIMIT; chargeStatements).
// The index it reads them through must hold that order, or PostgreSQL sorts every
// due meter to find a batch's first (0.47 s a step at 2,000,000 due, whatever the
// batch's size; bench/metering.sh). SQLite's index holds the rowid, the id, after
// next_at of itself; PostgreSQL's has the id as a column (migration 00027), and a
// batch's plan reads the index in order, with no sort, on a table of many meters.
func TestMetersNextOrdersABatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := OpenPostgres(ctx, testpg.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var cols string
	err = db.write.QueryRowContext(ctx, `SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM pg_index i
		JOIN pg_class c ON c.oid = i.indexrelid
		CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
		WHERE c.relname = 'meters_next'`).Scan(&cols)
	if err != nil || cols != "next_at,id" {
		t.Fatalf("meters_next on %q, %v; want next_at,id", cols, err)
	}
	// 20,000 meters all due in the same minute, as after an outage, and statistics.
	err = db.InTx(ctx, func(tx store.Tx) error {
		_, err := tx.CreateAccount(ctx, hosting.Account{Email: "m@example.com", Name: "m", PasswordHash: "h", Language: "en", Currency: "EUR"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO meters (account_id, resource_type, resource_id, resource_name, rate, started_at, next_at, month_start, month_charged)
			SELECT (SELECT MIN(id) FROM accounts), 'server', i, 's', 1, 0, 3600000 + i % 60, 0, 0 FROM generate_series(1, 20000) AS i`,
		`ANALYZE meters`,
	} {
		if _, err := db.write.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// The step's own statement that stages a batch of 1,000.
	q := on(db.d, db.write)
	upto := time.UnixMilli(7_200_000).UTC()
	stage := q.chargeStatements(store.ChargeStep{MonthStart: time.UnixMilli(0).UTC(), Upto: upto, Now: upto, Limit: 1000}).stage
	rows, err := q.q.QueryContext(ctx, "EXPLAIN "+stage.Query, stage.Args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	text := strings.Join(plan, "\n")
	if strings.Contains(text, "Sort") || !strings.Contains(text, "meters_next") {
		t.Errorf("a batch of due meters is not read in the index's order:\n%s", text)
	}
}
