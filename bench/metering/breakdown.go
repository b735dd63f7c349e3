package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore"
)

// breakdown runs one charge step at clock now statement by statement, in a
// transaction it rolls back, printing each statement's time; then the query plan of
// each from a second run of the step, rolled back too. On PostgreSQL that second run
// is EXPLAIN (ANALYZE, BUFFERS), which runs each statement (its actual rows, times
// and pages read), and it finds the dead rows the first run left.
func (b *bench) breakdown(ctx context.Context, now time.Time) error {
	// The statements ChargeDue runs, from the store itself: an hour of every meter,
	// in one step (a pass takes them in steps of ops.DefaultMeterBatch).
	stmts := b.db.ChargeStepStatements(store.ChargeStep{MonthStart: billing.MonthStart(now), Upto: now, Now: now})
	fmt.Fprintf(b.out, "\nbreakdown: one charge step at %s (an hour per meter), statement by statement, rolled back:\n", now.Format(time.RFC3339))
	if err := b.breakStatements(ctx, stmts, nil); err != nil {
		return err
	}
	if b.cfg.licenses == 0 {
		return nil
	}
	// The license step of pass 4, again: every license's new month, in one step,
	// after the month's charges and moves are undone in the same transaction (not
	// timed).
	at := t0.Add(7*time.Hour + time.Minute)
	undo := []string{
		`DELETE FROM transactions WHERE type = 'charge' AND resource_type = 'license' AND period_start = ` + fmt.Sprint(ms(firstOfMonth)),
		`DELETE FROM license_usage WHERE month = ` + fmt.Sprint(ms(firstOfMonth)),
		`UPDATE server_licenses SET paid_through = ` + fmt.Sprint(ms(firstOfMonth)),
	}
	fmt.Fprintf(b.out, "\nbreakdown: one license step at %s (every license's month), statement by statement, rolled back:\n", at.Format(time.RFC3339))
	return b.breakStatements(ctx, b.db.LicenseStepStatements(store.LicenseStep{Month: firstOfMonth, Now: at}), undo)
}

// breakStatements runs stmts in a transaction it rolls back, after the statements
// setup (not timed), printing each one's time; then the query plan of each from a
// second run, rolled back too.
func (b *bench) breakStatements(ctx context.Context, stmts []sqlstore.NamedStatement, setup []string) error {
	var total time.Duration
	err := b.rolledBack(ctx, func(tx *sql.Tx) error {
		for _, q := range setup {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		for _, s := range stmts {
			t := time.Now()
			rows, err := b.exec(ctx, tx, s.Query, s.Args)
			if err != nil {
				return fmt.Errorf("%s: %w", s.Name, err)
			}
			d := time.Since(t)
			total += d
			fmt.Fprintf(b.out, "  %-46s %8d rows %9s\n", s.Name, rows, seconds(d))
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "  %-46s %13s %9s\n", "all statements (no commit)", "", seconds(total))
	explain := "EXPLAIN QUERY PLAN"
	if b.db.Postgres() {
		explain = "EXPLAIN (ANALYZE, BUFFERS)"
	}
	fmt.Fprintf(b.out, "\nquery plans (%s, a second run of the step, rolled back):\n", explain)
	return b.rolledBack(ctx, func(tx *sql.Tx) error {
		for _, q := range setup {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		for _, s := range stmts {
			plan, err := b.queryPlan(ctx, tx, explain+" "+s.Query, s.Args)
			if err != nil {
				return fmt.Errorf("%s: explain: %w", s.Name, err)
			}
			fmt.Fprintf(b.out, "  %s:\n%s", s.Name, plan)
			if !b.db.Postgres() { // EXPLAIN QUERY PLAN ran nothing; the next statements need this one's rows
				if _, err := b.exec(ctx, tx, s.Query, s.Args); err != nil {
					return fmt.Errorf("%s: %w", s.Name, err)
				}
			}
		}
		return nil
	})
}

// rolledBack runs fn in a write transaction and rolls it back.
func (b *bench) rolledBack(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := b.db.WriteDB().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

// exec runs query, reading every row of a SELECT, and returns the rows it read or wrote.
func (b *bench) exec(ctx context.Context, tx *sql.Tx, query string, args []any) (int64, error) {
	query = b.db.Rebind(query)
	if !strings.HasPrefix(strings.TrimSpace(query), "SELECT") {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil || strings.HasPrefix(strings.TrimSpace(query), "CREATE") {
			return 0, err // SQLite's count for a CREATE is the statement's before it
		}
		return res.RowsAffected()
	}
	r, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var rows int64
	for r.Next() {
		rows++
	}
	return rows, r.Err()
}

// queryPlan is the plan of an EXPLAIN statement, indented: on SQLite its rows as a
// tree, on PostgreSQL its text as it comes.
func (b *bench) queryPlan(ctx context.Context, tx *sql.Tx, explain string, args []any) (string, error) {
	rows, err := tx.QueryContext(ctx, b.db.Rebind(explain), args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	depth := map[int64]int{}
	var out strings.Builder
	for rows.Next() {
		if b.db.Postgres() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return "", err
			}
			fmt.Fprintf(&out, "    %s\n", line)
			continue
		}
		var id, parent, notused int64
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			return "", err
		}
		depth[id] = depth[parent] + 1
		fmt.Fprintf(&out, "    %s%s\n", strings.Repeat("  ", depth[id]-1), detail)
	}
	return out.String(), rows.Err()
}
