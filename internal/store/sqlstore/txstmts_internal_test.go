package sqlstore

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/berthhq/berth/internal/store"
)

// openMigratedSQLite is a new SQLite database with the schema migrated, closed when
// the test ends.
func openMigratedSQLite(t *testing.T) *DB {
	t.Helper()
	db, err := OpenSQLite(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

// A write transaction's statement text met once runs prepared from then on, in
// every kind of call, with the same results as unprepared.
func TestWriteTransactionsRunStatementsPrepared(t *testing.T) {
	t.Parallel()
	db := openMigratedSQLite(t)
	ctx := context.Background()
	const insert = "INSERT INTO sessions_probe (v) VALUES (?)"
	if _, err := db.write.ExecContext(ctx, "CREATE TABLE sessions_probe (id INTEGER PRIMARY KEY, v TEXT)"); err != nil {
		t.Fatal(err)
	}
	var unprepared [][]string
	run := func(v string) {
		t.Helper()
		var inner *tx
		err := db.InTx(ctx, func(stx store.Tx) error {
			inner = stx.(*tx)
			q := inner.queries.q
			if _, err := q.ExecContext(ctx, insert, v); err != nil {
				return err
			}
			var n int
			if err := q.QueryRowContext(ctx, "SELECT count(*) FROM sessions_probe WHERE v = ?", v).Scan(&n); err != nil || n != 1 {
				return fmt.Errorf("count %d: %v", n, err)
			}
			rows, err := q.QueryContext(ctx, "SELECT v FROM sessions_probe ORDER BY id")
			if err != nil {
				return err
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					return err
				}
				got = append(got, s)
			}
			if got[len(got)-1] != v {
				return fmt.Errorf("last row %q, want %q", got[len(got)-1], v)
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		unprepared = append(unprepared, inner.unprepared)
	}
	run("a")
	run("b")
	run("c")
	if len(unprepared[0]) != 3 {
		t.Errorf("first transaction met %d texts for the first time, want 3: %q", len(unprepared[0]), unprepared[0])
	}
	for i, u := range unprepared[1:] {
		if len(u) != 0 {
			t.Errorf("transaction %d ran unprepared: %q", i+2, u)
		}
	}
	if db.txStmts.get(insert) == nil {
		t.Error("the insert is not kept prepared")
	}
}

// Texts that vary without end are kept only up to maxTxStmts; past it they run
// unprepared, still correctly.
func TestWriteStatementsKeptAreBounded(t *testing.T) {
	t.Parallel()
	db := openMigratedSQLite(t)
	ctx := context.Background()
	for i := range maxTxStmts + 10 {
		err := db.InTx(ctx, func(stx store.Tx) error {
			var n int
			return stx.(*tx).queries.q.QueryRowContext(ctx, fmt.Sprintf("SELECT %d", i)).Scan(&n)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	db.txStmts.mu.Lock()
	n := len(db.txStmts.m)
	db.txStmts.mu.Unlock()
	if n != maxTxStmts {
		t.Errorf("%d statements kept, want %d", n, maxTxStmts)
	}
}

// Transactions that meet new texts at once neither deadlock (one prepares after its
// commit while another holds the only write connection and looks statements up) nor
// lose a write.
func TestWriteStatementsPreparedBesideOtherTransactions(t *testing.T) {
	t.Parallel()
	db := openMigratedSQLite(t)
	ctx := context.Background()
	if _, err := db.write.ExecContext(ctx, "CREATE TABLE probe (id INTEGER PRIMARY KEY, v INTEGER)"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				err := db.InTx(ctx, func(stx store.Tx) error {
					// A new text every few rounds, the same ones across goroutines.
					q := fmt.Sprintf("INSERT INTO probe (v) VALUES (? + %d)", i%10)
					_, err := stx.(*tx).queries.q.ExecContext(ctx, q, g)
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	var n int
	if err := db.read.QueryRowContext(ctx, "SELECT count(*) FROM probe").Scan(&n); err != nil || n != 8*40 {
		t.Fatalf("%d rows (%v), want %d", n, err, 8*40)
	}
}
