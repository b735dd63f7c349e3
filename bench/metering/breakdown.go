package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore"
)

// breakdown shows where a metering step's time goes. A step (sqlstore's ChargeDue)
// is Go code that, for each account due, reads the account and its meters, computes
// the charges of their hours (billing.Lines) and writes a ledger row a UTC day, the
// day's spending and the account; it runs inside one store call. So the breakdown
// runs one step at clock now (an hour per meter) as ChargeDue does, timed whole, then
// again part by part from the same SQL (stepSQL), each part timed: the query of the
// accounts due, the account reads, the meters reads, the computation in Go, and each
// kind of write; both in transactions rolled back. The parts must do what ChargeDue
// did (the same accounts, hours, charges and rows), or the copy of its SQL here has
// fallen behind the store's and the breakdown fails. Then the plans of the step's
// reads, and the license step of pass 4 statement by statement.
func (b *bench) breakdown(ctx context.Context, now time.Time) error {
	fmt.Fprintf(b.out, "\nbreakdown: one metering step at %s (the first %d accounts due, every hour of their meters due: one each), rolled back:\n",
		now.Format(time.RFC3339), accountsPerStep)
	whole, err := b.chargeStep(ctx, now)
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "  %-62s %7d accounts %9d hours %7d rows %9s\n", "ChargeDue, one call (no commit)", whole.accounts, whole.hours, whole.rows, seconds(whole.took))
	var parts stepParts
	if err := b.rolledBack(ctx, func(tx *sql.Tx) error {
		var err error
		parts, err = b.stepByParts(ctx, tx, now)
		return err
	}); err != nil {
		return err
	}
	fmt.Fprintln(b.out, "  its parts, one after another:")
	var sum time.Duration
	for _, p := range parts.parts {
		fmt.Fprintf(b.out, "  %-62s %7d calls %12d rows %9s\n", p.name, p.calls, p.rows, seconds(p.took))
		sum += p.took
	}
	fmt.Fprintf(b.out, "  %-62s %7d accounts %9d hours %7d rows %9s\n", "all parts (no commit)", parts.accounts, parts.hours, parts.rows, seconds(sum))
	if parts.accounts != whole.accounts || parts.hours != whole.hours || parts.total != whole.total || parts.rows != whole.rows {
		return fmt.Errorf("breakdown: its parts metered %d accounts, %d hours, %s in %d rows; ChargeDue %d, %d, %s in %d: "+
			"bench/metering/breakdown.go no longer does what internal/store/sqlstore/metering.go does",
			parts.accounts, parts.hours, parts.total, parts.rows, whole.accounts, whole.hours, whole.total, whole.rows)
	}
	if err := b.stepPlans(ctx, now); err != nil {
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

// accountsPerStep is how many accounts a step of ChargeDue takes at most.
const accountsPerStep = 256

// stepSQL is the SQL of a metering step, copied from internal/store/sqlstore/metering.go
// (dueAccountsQuery, passMetersQuery and meterAccount's statements, unexported
// there), with ? placeholders.
type stepSQL struct {
	candidates, account, meters, ledger, spend, update string
}

func (b *bench) stepSQL() stepSQL {
	// A ledger row takes a block of sqlstore.LinesPerRow ids: on SQLite the store
	// gives it, on PostgreSQL the identity counts in blocks itself.
	forUpdate, idCol, idVal := "", "id, ", fmt.Sprintf(`(SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'transactions') + %d, `,
		sqlstore.LinesPerRow)
	if b.db.Postgres() {
		forUpdate, idCol, idVal = " FOR UPDATE", "", ""
	}
	return stepSQL{
		candidates: `SELECT id FROM accounts WHERE next_due <= ? ORDER BY next_due, id LIMIT ?`,
		account:    `SELECT credit, burn, charged_to, ledger_lines FROM accounts WHERE id = ?` + forUpdate,
		// What a step charges by, all of it in meters_account: no read of the table.
		meters: `SELECT id, billed_from, ` + meterEnds + `, rate, monthly_cap, month_start, month_charged FROM meters
			WHERE account_id = ? AND ` + meterEnds + ` > ?`,
		ledger: `INSERT INTO transactions (` + idCol + `account_id, type, amount, balance_after, description, resource_type, resource_id,
			resource_name, period_start, created_at, lines, lines_before, window_end, first_line)
			VALUES (` + idVal + `?, 'charge', ?, ?, '', '', NULL, '', ?, ?, ?, ?, ?, ?)`,
		spend: `INSERT INTO account_spend (account_id, day, amount) VALUES (?, ?, ?)
			ON CONFLICT (account_id, day) DO UPDATE SET amount = account_spend.amount + excluded.amount`,
		update: `UPDATE accounts SET credit = ?, ledger_lines = ?, charged_to = ?, next_due = ? WHERE id = ?`,
	}
}

// stepFigures is what a step did and how long it took.
type stepFigures struct {
	accounts, hours, rows int
	total                 hosting.Money
	took                  time.Duration
}

// chargeStep runs one step of ChargeDue at clock now in a store transaction it rolls
// back: its figures, and the ledger rows it wrote.
func (b *bench) chargeStep(ctx context.Context, now time.Time) (stepFigures, error) {
	var f stepFigures
	err := b.db.InTx(ctx, func(tx store.Tx) error {
		t := time.Now()
		res, err := tx.ChargeDue(ctx, store.ChargeStep{Upto: now, Now: now})
		f.took = time.Since(t)
		if err != nil {
			return err
		}
		f.accounts, f.hours, f.total = res.Accounts, res.Hours, res.Total
		if err := tx.SQL().QueryRowContext(ctx, b.db.Rebind(`SELECT COUNT(*) FROM transactions WHERE window_end IS NOT NULL AND created_at = ?`),
			ms(now)).Scan(&f.rows); err != nil {
			return err
		}
		return errRolledBack
	})
	if errors.Is(err, errRolledBack) {
		err = nil
	}
	return f, err
}

// part is one kind of work of a step: how many times it ran, the rows it read or
// wrote, and its time in all.
type part struct {
	name        string
	calls, rows int
	took        time.Duration
}

// stepParts is a step run part by part.
type stepParts struct {
	stepFigures
	parts []*part
}

// stepByParts runs one step at clock now in tx as meterAccount does, timing each part.
// Its statements are prepared first (not timed), as the store's write transactions
// run theirs on SQLite and pgx caches them on PostgreSQL.
func (b *bench) stepByParts(ctx context.Context, tx *sql.Tx, now time.Time) (stepParts, error) {
	q := b.stepSQL()
	prepare := func(query string) (*sql.Stmt, error) { return tx.PrepareContext(ctx, b.db.Rebind(query)) }
	var out stepParts
	cand := &part{name: "candidates: SELECT id FROM accounts WHERE next_due <= ? …"}
	acct := &part{name: "account: SELECT credit, … FROM accounts WHERE id = ?"}
	if b.db.Postgres() {
		acct.name += " FOR UPDATE"
	}
	meters := &part{name: "meters: SELECT … FROM meters WHERE account_id = ? AND ends > ?"}
	compute := &part{name: "Go: billing.Lines, HoursIn, NextHour (rows: hours)"}
	ledger := &part{name: "ledger: INSERT INTO transactions (a row a UTC day)"}
	spend := &part{name: "spend: INSERT INTO account_spend … ON CONFLICT"}
	update := &part{name: "accounts: UPDATE accounts SET credit, …, next_due"}
	out.parts = []*part{cand, acct, meters, compute, ledger, spend, update}
	stmts := map[string]*sql.Stmt{}
	for _, s := range []string{q.candidates, q.account, q.meters, q.ledger, q.spend, q.update} {
		st, err := prepare(s)
		if err != nil {
			return out, fmt.Errorf("%s: %w", s, err)
		}
		defer st.Close()
		stmts[s] = st
	}
	timed := func(p *part, fn func() (int, error)) error {
		t := time.Now()
		n, err := fn()
		p.took += time.Since(t)
		p.calls++
		p.rows += n
		return err
	}
	var ids []int64
	if err := timed(cand, func() (int, error) {
		rows, err := stmts[q.candidates].QueryContext(ctx, ms(now), accountsPerStep)
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return 0, err
			}
			ids = append(ids, id)
		}
		return len(ids), rows.Err()
	}); err != nil {
		return out, err
	}
	for _, id := range ids {
		to := now.Add(time.Millisecond)
		var credit, burn, chargedTo, ledgerLines int64
		if err := timed(acct, func() (int, error) {
			return 1, stmts[q.account].QueryRowContext(ctx, id).Scan(&credit, &burn, &chargedTo, &ledgerLines)
		}); err != nil {
			return out, err
		}
		from := time.UnixMilli(chargedTo).UTC()
		if to.Before(from) {
			to = from
		}
		var list []hosting.Meter
		if err := timed(meters, func() (int, error) {
			var err error
			list, err = readMeters(ctx, stmts[q.meters], id, from)
			return len(list), err
		}); err != nil {
			return out, err
		}
		var rows []ledgerRow
		var days []daySpend
		var nextDue *int64
		if err := timed(compute, func() (int, error) {
			var hours int
			rows, days, nextDue, hours = chargesOf(list, from, to, credit, ledgerLines)
			out.hours += hours
			return hours, nil
		}); err != nil {
			return out, err
		}
		for _, r := range rows {
			if err := timed(ledger, func() (int, error) {
				_, err := stmts[q.ledger].ExecContext(ctx, id, -int64(r.amount), r.balance, r.from, ms(now), r.lines, r.before, r.to, r.first)
				return 1, err
			}); err != nil {
				return out, err
			}
			out.total += r.amount
		}
		for _, d := range days {
			if err := timed(spend, func() (int, error) {
				_, err := stmts[q.spend].ExecContext(ctx, id, d.day, -int64(d.amount))
				return 1, err
			}); err != nil {
				return out, err
			}
		}
		balance, lines := credit, ledgerLines
		if len(rows) > 0 {
			last := rows[len(rows)-1]
			balance, lines = last.balance, last.before+last.lines
		}
		if err := timed(update, func() (int, error) {
			_, err := stmts[q.update].ExecContext(ctx, balance, lines, ms(to), nextDue, id)
			return 1, err
		}); err != nil {
			return out, err
		}
		out.accounts++
		out.rows += len(rows)
	}
	return out, nil
}

// readMeters reads what a step charges by of an account's meters whose hours may
// start at or after from (their resources left out).
func readMeters(ctx context.Context, st *sql.Stmt, account int64, from time.Time) ([]hosting.Meter, error) {
	rows, err := st.QueryContext(ctx, account, ms(from))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []hosting.Meter
	for rows.Next() {
		m := hosting.Meter{AccountID: account}
		var billed, ends, monthStart int64
		var cap sql.NullInt64
		if err := rows.Scan(&m.ID, &billed, &ends, &m.Rate, &cap, &monthStart, &m.MonthCharged); err != nil {
			return nil, err
		}
		if cap.Valid {
			c := hosting.Money(cap.Int64)
			m.MonthlyCap = &c
		}
		if ends != math.MaxInt64 { // an open meter's end: never
			s := time.UnixMilli(ends).UTC()
			m.StoppedAt = &s
		}
		m.BilledFrom, m.MonthStart = time.UnixMilli(billed).UTC(), time.UnixMilli(monthStart).UTC()
		out = append(out, m)
	}
	return out, rows.Err()
}

// ledgerRow is a row of the ledger a step writes: lines hours of [from, to) from the
// window's first on, after before entries, charging amount and leaving balance.
type ledgerRow struct {
	from, to             int64
	amount               hosting.Money
	balance              int64
	lines, before, first int64
}

// daySpend is what a step charges an account on a UTC day (account_spend's day).
type daySpend struct {
	day    int64
	amount hosting.Money
}

// chargesOf is what a step writes for an account with credit and ledgerLines entries
// whose meters are list, for the hours in [from, to): its rows (one a UTC day, split
// at sqlstore.LinesPerRow hours), its days' spending, its next hour due (nil: none)
// and the meter hours it settles.
func chargesOf(list []hosting.Meter, from, to time.Time, credit, ledgerLines int64) (rows []ledgerRow, days []daySpend, nextDue *int64, hours int) {
	const msPerDay = 86_400_000
	for i := range list {
		m := list[i]
		hours += int(billing.HoursIn(m, from, to))
		if h := billing.NextHour(m, to); m.StoppedAt == nil || h.Before(*m.StoppedAt) {
			if due := ms(h); nextDue == nil || due < *nextDue {
				nextDue = &due
			}
		}
	}
	lines := billing.Lines(list, from, to)
	balance, before := credit, ledgerLines
	for len(lines) > 0 {
		day := ms(lines[0].Hour) / msPerDay
		n := 0
		for n < len(lines) && ms(lines[n].Hour)/msPerDay == day {
			n++
		}
		spanFrom, spanTo := max(ms(from), day*msPerDay), min(ms(to), (day+1)*msPerDay)
		var dayTotal hosting.Money
		for first := 0; first < n; first += sqlstore.LinesPerRow {
			chunk := lines[first:min(first+sqlstore.LinesPerRow, n)]
			var amount hosting.Money
			for _, l := range chunk {
				amount += l.Amount
			}
			balance -= int64(amount)
			rows = append(rows, ledgerRow{from: spanFrom, to: spanTo, amount: amount, balance: balance, lines: int64(len(chunk)),
				before: before, first: int64(first)})
			before += int64(len(chunk))
			dayTotal += amount
		}
		days = append(days, daySpend{day, dayTotal})
		lines = lines[n:]
	}
	return rows, days, nextDue, hours
}

// stepPlans prints the plans of a step's reads at clock now, for the first account
// due: SQLite's EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN (ANALYZE, BUFFERS), in a
// transaction rolled back.
func (b *bench) stepPlans(ctx context.Context, now time.Time) error {
	q := b.stepSQL()
	explain := "EXPLAIN QUERY PLAN"
	if b.db.Postgres() {
		explain = "EXPLAIN (ANALYZE, BUFFERS)"
	}
	fmt.Fprintf(b.out, "\nquery plans of the step's reads (%s), for the first account due:\n", explain)
	return b.rolledBack(ctx, func(tx *sql.Tx) error {
		var account, chargedTo int64
		err := tx.QueryRowContext(ctx, b.db.Rebind(`SELECT id, charged_to FROM accounts WHERE next_due <= ? ORDER BY next_due, id LIMIT 1`),
			ms(now)).Scan(&account, &chargedTo)
		if err != nil {
			return err
		}
		for _, s := range []struct {
			name, query string
			args        []any
		}{
			{"candidates", q.candidates, []any{ms(now), accountsPerStep}},
			{"account", q.account, []any{account}},
			{"meters", q.meters, []any{account, chargedTo}},
		} {
			plan, err := b.queryPlan(ctx, tx, explain+" "+s.query, s.args)
			if err != nil {
				return fmt.Errorf("%s: explain: %w", s.name, err)
			}
			fmt.Fprintf(b.out, "  %s:\n%s", s.name, plan)
		}
		return nil
	})
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
