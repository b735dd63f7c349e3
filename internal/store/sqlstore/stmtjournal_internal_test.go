package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/store"
)

// TestChargeStepsKeepNoStatementJournal (issue 29): the statements of a license
// step that write a row per charge end with FAIL, not ABORT,
// and check no immediate foreign key, so SQLite keeps no statement journal for them
// (orFail). The test reads their programs (EXPLAIN) for what makes SQLite keep one:
// the opcodes its own debug check, sqlite3VdbeAssertMayAbort, counts, a constraint's
// Halt or HaltIfNull with ABORT and an immediate foreign key's FkCounter. The spend
// upsert, whose DO UPDATE SQLite always runs with ABORT, shows that the check sees
// them.
func TestChargeStepsKeepNoStatementJournal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMigratedSQLite(t)
	q := on(db.d, db.write)
	if err := q.stageTable(ctx); err != nil {
		t.Fatal(err)
	}
	month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	now := month.Add(36 * time.Hour)
	c := q.chargeStatements(now)
	stage, advance, _ := q.licenseChargeSQL(store.LicenseStep{Month: month, Now: now, Limit: 1000})
	for _, s := range []NamedStatement{stage, c.totals, c.ledger, c.credit, advance} {
		if why := mayAbort(t, db, s); why != "" {
			t.Errorf("%s: SQLite keeps a statement journal for it: %s", s.Name, why)
		}
	}
	if why := mayAbort(t, db, c.spend); why == "" {
		t.Errorf("%s: no opcode that may abort found in the spend upsert", c.spend.Name)
	}
}

// mayAbort is the first opcode of s's program (EXPLAIN) for which SQLite gives s a
// statement journal, or "".
func mayAbort(t *testing.T, db *DB, s NamedStatement) string {
	t.Helper()
	rows, err := db.write.QueryContext(context.Background(), "EXPLAIN "+s.Query, s.Args...)
	if err != nil {
		t.Fatalf("%s: %v", s.Name, err)
	}
	defer rows.Close()
	const ok, abort = 0, 2 // SQLITE_OK; OE_Abort
	for rows.Next() {
		var addr, p1, p2, p3, p5 int64
		var opcode string
		var p4, comment sql.NullString
		if err := rows.Scan(&addr, &opcode, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		switch {
		case (opcode == "Halt" || opcode == "HaltIfNull") && p1 != ok && p2 == abort:
			return opcode + " with ABORT at " + strings.TrimSpace(p4.String)
		case opcode == "FkCounter" && p1 == 0 && p2 == 1:
			return "an immediate foreign key's FkCounter"
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", s.Name, err)
	}
	return ""
}

// TestLedgerForeignKeyChecksAtCommit: SQLite migration 00032 makes the ledger's
// reference to its account checked at commit (so that a charge step's INSERT needs
// no statement journal): a charge of an account that does not exist is written, its
// transaction does not commit, and the next one runs. Its Down makes it checked at
// the row again, and its Up once more.
func TestLedgerForeignKeyChecksAtCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMigratedSQLite(t)
	const orphan = `INSERT INTO transactions (account_id, type, amount, balance_after, description, created_at) VALUES (999, 'charge', -1, -1, '', 0)`
	deferred := func(when string) {
		t.Helper()
		tx, err := db.write.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, orphan); err != nil {
			tx.Rollback()
			t.Fatalf("%s: a charge of no account refused at the row: %v", when, err)
		}
		if err := tx.Commit(); err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") {
			t.Fatalf("%s: committing a charge of no account: %v, want a foreign key failure", when, err)
		}
		// SQLite leaves a transaction whose COMMIT failed open; the driver rolls it
		// back, so the writer's one connection serves the next transaction.
		var orphans int
		if err := db.InTx(ctx, func(stx store.Tx) error {
			return stx.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM transactions WHERE account_id = 999`).Scan(&orphans)
		}); err != nil || orphans != 0 {
			t.Fatalf("%s: the next write transaction: %v, %d charges of no account", when, err, orphans)
		}
	}
	deferred("migrated")
	p := storeLine(t, db)
	if _, err := p.DownTo(ctx, 31); err != nil {
		t.Fatal(err)
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.ExecContext(ctx, orphan)
	tx.Rollback()
	if err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") {
		t.Fatalf("after Down: a charge of no account: %v, want it refused at the row", err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	deferred("migrated again")
	var problems int
	if err := db.write.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_foreign_key_check`).Scan(&problems); err != nil || problems != 0 {
		t.Fatalf("foreign key check: %d problems, %v", problems, err)
	}
}
