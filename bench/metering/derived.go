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

// derived measures a metering pass of another design against the passes just run
// (issues 29 and 34, bench/README.md "A pass derived from the meters"): each
// account's charges for a window of time computed from the meters as they are at
// an hour's start (started, rate, cap, stopped), with nothing written per meter or
// per hour, read in one walk of an index of the meters by account. For each pass
// with hours it times that computation over the pass's window and holds its sums
// against the ledger the pass wrote: they must agree to the ten-thousandth for every
// account, or the design computes something else than Berth's billing does. It
// runs in a transaction it rolls back (the index it needs made in it, its time
// shown apart: it is what a migration to the design would cost).
func (b *bench) derived(ctx context.Context) (ok bool, err error) {
	return b.derivedAfter(ctx, nil)
}

// derivedAfter is derived after the statements spoil, run first in its transaction
// (for a test to see the comparison fail).
func (b *bench) derivedAfter(ctx context.Context, spoil []string) (ok bool, err error) {
	fmt.Fprintln(b.out, "\nderived: each account's charges of a pass computed from the meters (no write per meter or hour), against the ledger:")
	ok = true
	err = b.rolledBack(ctx, func(tx *sql.Tx) error {
		for _, q := range spoil {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		t := time.Now()
		if _, err := tx.ExecContext(ctx, `CREATE INDEX meters_derived ON meters (account_id, started_at, rate, monthly_cap, stopped_at)`); err != nil {
			return err
		}
		fmt.Fprintf(b.out, "  %-58s %9s\n", "index meters (account_id, started_at, rate, monthly_cap, stopped_at)", seconds(time.Since(t)))
		if b.db.Postgres() {
			if _, err := tx.ExecContext(ctx, `ANALYZE meters`); err != nil {
				return err
			}
		}
		from := t0
		for _, p := range passes(b.cfg.servers+b.cfg.volumes, 0) {
			if !p.at.After(from) {
				continue
			}
			q := derivedSQL(b.db.Postgres(), from, p.at)
			t := time.Now()
			got, err := accountSums(ctx, tx, q)
			if err != nil {
				return fmt.Errorf("derived: %w", err)
			}
			d := time.Since(t)
			want, err := accountSums(ctx, tx, b.db.Rebind(`SELECT account_id, -SUM(amount) FROM transactions
				WHERE type = 'charge' AND resource_type IN ('server', 'volume') AND period_start > ? AND period_start <= ?
				GROUP BY account_id`), ms(from), ms(p.at))
			if err != nil {
				return err
			}
			differ, total := 0, int64(0)
			for a, w := range want {
				total += w
				if got[a] != w {
					differ++
				}
			}
			for a, g := range got {
				if _, in := want[a]; !in && g != 0 {
					differ++
				}
			}
			verdict := "OK  "
			if differ > 0 {
				verdict, ok = "FAIL", false
			}
			fmt.Fprintf(b.out, "  %s %-53s %9s  %d accounts, %d differ from the ledger, charged %s\n", verdict, p.name, seconds(d), len(want), differ, hosting.Money(total))
			from = p.at
		}
		explain := "EXPLAIN QUERY PLAN "
		if b.db.Postgres() {
			explain = "EXPLAIN "
		}
		plan, err := b.queryPlan(ctx, tx, explain+derivedSQL(b.db.Postgres(), t0, t0.Add(time.Hour)), nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(b.out, "  query plan:\n%s", plan)
		return nil
	})
	return ok, err
}

// accountSums runs q, whose rows are (account, amount), into a map.
func accountSums(ctx context.Context, tx *sql.Tx, q string, args ...any) (map[int64]int64, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[int64]int64{}
	for rows.Next() {
		var a, s int64
		if err := rows.Scan(&a, &s); err != nil {
			return nil, err
		}
		m[a] = s
	}
	return m, rows.Err()
}

// derivedSQL is the query of each account's charges for the hours that start in
// (from, to], from the meters alone: a meter's hours start at started_at and every
// hour after, before stopped_at; in each calendar month it is charged rate an hour
// until monthly_cap. What a meter owes for the window is, in each month the window
// touches, what it owes for the month up to the window's end less what it owed up
// to its start. The times are literals (the query is built from times, not input).
func derivedSQL(postgres bool, from, to time.Time) string {
	least := "MIN"
	if postgres {
		least = "LEAST"
	}
	// hours started at or before t (ms), of the meter, before it stopped
	started := func(t int64) string {
		last := fmt.Sprintf("%s(%d, COALESCE(stopped_at - 1, %d))", least, t, t)
		return fmt.Sprintf("(CASE WHEN %s >= started_at THEN (%s - started_at) / 3600000 + 1 ELSE 0 END)", last, last)
	}
	// owed in the month starting at m for its hours up to t
	owed := func(m, t int64) string {
		hours := fmt.Sprintf("(%s - %s)", started(t), started(m-1))
		return fmt.Sprintf("(CASE WHEN monthly_cap IS NULL THEN rate * %s ELSE %s(monthly_cap, rate * %s) END)", hours, least, hours)
	}
	var terms []string
	for m := billing.MonthStart(from); m.Before(to); m = billing.MonthEnd(m) {
		lo, hi := max(ms(from), ms(m)-1), min(ms(to), ms(billing.MonthEnd(m))-1)
		if hi > lo {
			terms = append(terms, owed(ms(m), hi)+" - "+owed(ms(m), lo))
		}
	}
	return fmt.Sprintf(`SELECT account_id, SUM(%s) FROM meters WHERE stopped_at IS NULL OR stopped_at > %d GROUP BY account_id`,
		strings.Join(terms, " + "), ms(from))
}
