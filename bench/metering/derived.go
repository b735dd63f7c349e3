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

// derived holds what each pass charged against a reference computed apart (issues 29
// and 34, bench/README.md): the pass derives each account's charges from the meters
// in Go (billing.Lines) and writes their sum as the ledger's rows of its window; the
// reference derives them from the same meters in SQL arithmetic alone (derivedSQL:
// what each meter owes for the window, by calendar month within its cap), summed by
// account. For each pass with hours it times that query over the pass's window and
// holds its sums against the rows the pass wrote for it: they must agree to the
// ten-thousandth for every account, or one of the two computes something else than
// the billing of docs/api.md. It runs in a transaction it rolls back.
func (b *bench) derived(ctx context.Context) (ok bool, err error) {
	return b.derivedAfter(ctx, nil)
}

// derivedAfter is derived after the statements spoil, run first in its transaction
// (for a test to see the comparison fail).
func (b *bench) derivedAfter(ctx context.Context, spoil []string) (ok bool, err error) {
	fmt.Fprintln(b.out, "\nderived: each account's charges of a pass computed in SQL from the meters, against the rows the pass wrote:")
	ok = true
	err = b.rolledBack(ctx, func(tx *sql.Tx) error {
		for _, q := range spoil {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		from := t0
		for _, p := range passes(b.cfg.servers+b.cfg.volumes, 0) {
			if !p.at.After(from) {
				continue
			}
			t := time.Now()
			got, err := accountSums(ctx, tx, derivedSQL(b.db.Postgres(), from, p.at))
			if err != nil {
				return fmt.Errorf("derived: %w", err)
			}
			d := time.Since(t)
			// The pass's rows: those of the hours that start in (from, p.at], each
			// starting where the account was charged to, or at a UTC day's start.
			want, err := accountSums(ctx, tx, b.db.Rebind(`SELECT account_id, -SUM(amount) FROM transactions
				WHERE window_end IS NOT NULL AND period_start > ? AND period_start <= ?
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

// meterEnds is when a meter's hours end, as the index meters_account has it (an
// open meter's: never), so that the query reads that index alone.
const meterEnds = `COALESCE(stopped_at, 9223372036854775807)`

// derivedSQL is the query of each account's charges for the hours that start in
// (from, to], from the meters alone (hosting.Meter): a meter's hours start at
// billed_from and every hour after, before stopped_at; in each calendar month it is
// charged rate an hour until monthly_cap, less what the resource was charged before
// billed_from that month (month_charged, in month_start's month). What a meter owes
// for the window is, in each month the window touches, what it owes for the month up
// to the window's end less what it owed up to its start. The times are literals
// (the query is built from times, not input).
func derivedSQL(postgres bool, from, to time.Time) string {
	least, greatest := "MIN", "MAX"
	if postgres {
		least, greatest = "LEAST", "GREATEST"
	}
	// hours that start at or before t (ms), of the meter, before it stops
	started := func(t int64) string {
		last := fmt.Sprintf("%s(%d, %s - 1)", least, t, meterEnds)
		return fmt.Sprintf("(CASE WHEN %s >= billed_from THEN (%s - billed_from) / 3600000 + 1 ELSE 0 END)", last, last)
	}
	// owed in the month starting at m for its hours up to t
	owed := func(m, t int64) string {
		hours := fmt.Sprintf("(%s - %s)", started(t), started(m-1))
		left := fmt.Sprintf("%s(monthly_cap - CASE WHEN month_start = %d THEN month_charged ELSE 0 END, 0)", greatest, m)
		return fmt.Sprintf("(CASE WHEN monthly_cap IS NULL THEN rate * %s ELSE %s(%s, rate * %s) END)", hours, least, left, hours)
	}
	var terms []string
	for m := billing.MonthStart(from); m.Before(to); m = billing.MonthEnd(m) {
		lo, hi := max(ms(from), ms(m)-1), min(ms(to), ms(billing.MonthEnd(m))-1)
		if hi > lo {
			terms = append(terms, owed(ms(m), hi)+" - "+owed(ms(m), lo))
		}
	}
	return fmt.Sprintf(`SELECT account_id, SUM(%s) FROM meters WHERE %s > %d GROUP BY account_id`,
		strings.Join(terms, " + "), meterEnds, ms(from))
}
