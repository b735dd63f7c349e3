package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/hosting"
)

// The statements of sqlstore's ChargeDue (internal/store/sqlstore/billing.go), copied
// to time them one by one. Keep them in step with it; the passes run the real ones.
const (
	dueWhere = ` next_at IS NOT NULL AND next_at <= ? AND (stopped_at IS NULL OR next_at < stopped_at) `
	capLeft  = `(monthly_cap - CASE WHEN month_start = ? THEN month_charged ELSE 0 END)`
)

// stepStatement is one statement of a charge step.
type stepStatement struct {
	name  string
	query string // with ? placeholders
	args  []any
}

// stepStatements are ChargeDue's statements for one step at clock now, in its order;
// on PostgreSQL with its row locks (the due meters FOR UPDATE, then the accounts).
func (b *bench) stepStatements(now time.Time) []stepStatement {
	month, upto, nowMS := ms(billing.MonthStart(now)), ms(now), ms(now)
	forUpdate := ""
	if b.db.Postgres() {
		forUpdate = " FOR UPDATE"
	}
	stmts := []stepStatement{
		{"EarliestDue: SELECT MIN(next_at)", `SELECT MIN(next_at) FROM meters WHERE` + dueWhere, []any{upto}},
		{"stage: INSERT INTO charge_batch", `INSERT INTO charge_batch (meter_id, account_id, resource_type, resource_id, resource_name, period_start, amount)
			SELECT id, account_id, resource_type, resource_id, resource_name, next_at,
				CASE WHEN monthly_cap IS NULL THEN rate
					WHEN ` + capLeft + ` <= 0 THEN 0
					WHEN ` + capLeft + ` < rate THEN ` + capLeft + `
					ELSE rate END
			FROM meters WHERE` + dueWhere + `AND next_at >= ?` + forUpdate, []any{month, month, month, upto, month}},
	}
	if b.db.Postgres() {
		stmts = append(stmts, stepStatement{"lock: SELECT accounts FOR UPDATE", `SELECT id FROM accounts
			WHERE id IN (SELECT account_id FROM charge_batch WHERE amount > 0) ORDER BY id FOR UPDATE`, nil})
	}
	return append(stmts, []stepStatement{
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
		{"credit low: SELECT accounts", `SELECT a.id FROM accounts a
			JOIN (SELECT account_id, SUM(amount) AS charged FROM charge_batch WHERE amount > 0 GROUP BY account_id) c ON c.account_id = a.id
			JOIN (SELECT account_id, SUM(rate) AS burn FROM meters WHERE next_at IS NOT NULL AND stopped_at IS NULL GROUP BY account_id) m
				ON m.account_id = a.id
			WHERE a.credit < m.burn * ? AND a.credit + c.charged >= m.burn * ? ORDER BY a.id`,
			[]any{hosting.CreditLowDays * 24, hosting.CreditLowDays * 24}},
		{"clear: DELETE FROM charge_batch", `DELETE FROM charge_batch`, nil},
	}...)
}

// breakdown runs one charge step at clock now statement by statement, in a
// transaction it rolls back, printing each statement's time; then the query plan of
// each from a second run of the step, rolled back too. On PostgreSQL that second run
// is EXPLAIN (ANALYZE, BUFFERS), which runs each statement (its actual rows, times
// and pages read), and it finds the dead rows the first run left.
func (b *bench) breakdown(ctx context.Context, now time.Time) error {
	stmts := b.stepStatements(now)
	fmt.Fprintf(b.out, "\nbreakdown: one charge step at %s (an hour per meter), statement by statement, rolled back:\n", now.Format(time.RFC3339))
	var total time.Duration
	err := b.rolledBack(ctx, func(tx *sql.Tx) error {
		for _, s := range stmts {
			t := time.Now()
			rows, err := b.exec(ctx, tx, s.query, s.args)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			d := time.Since(t)
			total += d
			fmt.Fprintf(b.out, "  %-36s %8d rows %9s\n", s.name, rows, seconds(d))
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "  %-36s %13s %9s\n", "all statements (no commit)", "", seconds(total))
	explain := "EXPLAIN QUERY PLAN"
	if b.db.Postgres() {
		explain = "EXPLAIN (ANALYZE, BUFFERS)"
	}
	fmt.Fprintf(b.out, "\nquery plans (%s, a second run of the step, rolled back):\n", explain)
	return b.rolledBack(ctx, func(tx *sql.Tx) error {
		for _, s := range stmts {
			plan, err := b.queryPlan(ctx, tx, explain+" "+s.query, s.args)
			if err != nil {
				return fmt.Errorf("%s: explain: %w", s.name, err)
			}
			fmt.Fprintf(b.out, "  %s:\n%s", s.name, plan)
			if !b.db.Postgres() { // EXPLAIN QUERY PLAN ran nothing; the next statements need this one's rows
				if _, err := b.exec(ctx, tx, s.query, s.args); err != nil {
					return fmt.Errorf("%s: %w", s.name, err)
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
		if err != nil {
			return 0, err
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
