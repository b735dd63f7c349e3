package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// The metering pass derived from the meters (issues 29 and 34; hosting.Meter,
// billing.Lines). A step takes the accounts with an hour due, by when it is due
// (accounts.next_due), and for each reads its meters that may still charge (one walk
// of meters_account), computes the charges of the hours that start from its
// charged_to to the step's end, and writes them as one row of the ledger a UTC day
// (split at LinesPerRow hours), with the day's spending, the credit, and where it got
// (charged_to, next_due). Nothing is written per meter or per hour: a pass costs a
// read of each meter and a few rows an account, whatever the hours charged. The
// ledger shows the rows again hour by hour (Transactions), from the same meters,
// which never change once an hour of theirs is charged.

// The queries of a metering step and of the ledger's pages, each held to its index
// (TestMeteringQueryPlans): none grows with the installation.
const (
	// dueAccountsQuery lists the accounts with an hour due (accounts_next_due).
	dueAccountsQuery = `SELECT id FROM accounts WHERE next_due <= ?`
	// passMetersQuery reads what a metering step needs of an account's meters whose
	// hours may start at or after a time: the columns of meters_account alone, which
	// holds them (no read of the table).
	passMetersQuery = `SELECT id, billed_from, ` + meterEnds + `, rate, monthly_cap, month_start, month_charged FROM meters
		WHERE account_id = ? AND ` + meterEnds + ` > ?`
	// rowMetersQuery reads an account's meters whose hours may start in a span of
	// time, for a row of the ledger (what it shows of them: their resources too).
	rowMetersQuery = `SELECT ` + meterCols + ` FROM meters WHERE account_id = ? AND ` + meterEnds + ` > ? AND billed_from < ?`
	// pageQuery reads the rows of an account's ledger that show entries in a range
	// (transactions_lines).
	pageQuery = `SELECT ` + txCols + `, lines, lines_before, window_end, first_line FROM transactions
		WHERE account_id = ? AND lines_before < ? AND lines_before > ? ORDER BY lines_before DESC`
)

// passMeters reads an account's meters whose hours may start at or after from, with
// what a step charges by (passMetersQuery): their resources are left out.
func (q queries) passMeters(ctx context.Context, account int64, from time.Time) ([]hosting.Meter, error) {
	rows, err := q.q.QueryContext(ctx, passMetersQuery, account, ms(from))
	return collect(rows, err, func(sc func(...any) error) (hosting.Meter, error) {
		m := hosting.Meter{AccountID: account}
		var billed, ends, rate, monthStart, charged int64
		var cap sql.NullInt64
		if err := sc(&m.ID, &billed, &ends, &rate, &cap, &monthStart, &charged); err != nil {
			return m, err
		}
		m.BilledFrom, m.Rate, m.MonthlyCap = fromMS(billed), hosting.Money(rate), nullMoney(cap)
		if ends != math.MaxInt64 {
			m.StoppedAt = fromNullMS(sql.NullInt64{Int64: ends, Valid: true})
		}
		m.MonthStart, m.MonthCharged = fromMS(monthStart), hosting.Money(charged)
		return m, nil
	})
}

// ChargeDue runs one metering step (store.ChargeStep).
func (q queries) ChargeDue(ctx context.Context, st store.ChargeStep) (store.ChargeResult, error) {
	var res store.ChargeResult
	and, args := "", []any{ms(st.Upto)}
	if st.Account != 0 {
		and, args = ` AND id = ?`, append(args, st.Account)
	}
	const accountsPerStep = 256
	ids, err := column[int64](ctx, q.q, dueAccountsQuery+and+` ORDER BY next_due, id LIMIT ?`,
		append(args, accountsPerStep)...)
	if err != nil {
		return res, err
	}
	for _, id := range ids {
		if err := q.meterAccount(ctx, id, st.Upto.Add(time.Millisecond), st.Now, &res); err != nil {
			return res, err
		}
		if st.Limit > 0 && res.Hours >= st.Limit {
			break
		}
	}
	return res, nil
}

// meterAccount charges an account's hours that start from its charged_to to before
// to, written at now, into res.
func (q queries) meterAccount(ctx context.Context, account int64, to, now time.Time, res *store.ChargeResult) error {
	var credit, burn, chargedTo, ledgerLines int64
	err := q.q.QueryRowContext(ctx, `SELECT credit, burn, charged_to, ledger_lines FROM accounts WHERE id = ?`+q.forNoKeyUpdate(), account).
		Scan(&credit, &burn, &chargedTo, &ledgerLines)
	if err != nil {
		return err
	}
	from := fromMS(chargedTo)
	if to.Before(from) {
		to = from // charged ahead of the step already (its test clock runs ahead)
	}
	meters, err := q.passMeters(ctx, account, from)
	if err != nil {
		return err
	}
	var nextDue sql.NullInt64
	for i := range meters {
		m := &meters[i]
		res.Hours += int(billing.HoursIn(*m, from, to))
		if h := billing.NextHour(*m, to); m.StoppedAt == nil || h.Before(*m.StoppedAt) {
			if !nextDue.Valid || ms(h) < nextDue.Int64 {
				nextDue = sql.NullInt64{Int64: ms(h), Valid: true}
			}
		}
	}
	// The rows: the lines of each UTC day, LinesPerRow at most a row, in the
	// ledger's order (billing.EachLine), summed as they come.
	type row struct {
		day, first, lines, amount int64
	}
	var rows []row
	billing.EachLine(meters, from, to, func(l billing.Line) {
		day := ms(l.Hour) / msPerDay
		if n := len(rows); n == 0 || rows[n-1].day != day {
			rows = append(rows, row{day: day})
		} else if rows[n-1].lines == LinesPerRow {
			rows = append(rows, row{day: day, first: rows[n-1].first + LinesPerRow})
		}
		r := &rows[len(rows)-1]
		r.lines++
		r.amount += int64(l.Amount)
	})
	insert, id := q.txInsert(`account_id, type, amount, balance_after, description, resource_type, resource_id, resource_name,
		period_start, created_at, lines, lines_before, window_end, first_line`)
	balance, total, dayTotal := credit, int64(0), int64(0)
	for i, r := range rows {
		// The window's part in the day is the row's span.
		spanFrom, spanTo := max(ms(from), r.day*msPerDay), min(ms(to), (r.day+1)*msPerDay)
		balance -= r.amount
		if _, err := q.q.ExecContext(ctx, insert+id+`?, 'charge', ?, ?, '', '', NULL, '', ?, ?, ?, ?, ?, ?)`, account, -r.amount, balance,
			spanFrom, ms(now), r.lines, ledgerLines, spanTo, r.first); err != nil {
			return conflict(err)
		}
		ledgerLines += r.lines
		total += r.amount
		dayTotal += r.amount
		if i+1 < len(rows) && rows[i+1].day == r.day {
			continue
		}
		if _, err := q.q.ExecContext(ctx, `INSERT INTO account_spend (account_id, day, amount) VALUES (?, ?, ?)
			ON CONFLICT (account_id, day) DO UPDATE SET amount = account_spend.amount + excluded.amount`, account, r.day, -dayTotal); err != nil {
			return err
		}
		dayTotal = 0
	}
	if err := q.execOne(ctx, `UPDATE accounts SET credit = ?, ledger_lines = ?, charged_to = ?, next_due = ? WHERE id = ?`,
		balance, ledgerLines, ms(to), nextDue, account); err != nil {
		return err
	}
	res.Accounts++
	if total <= 0 {
		return nil
	}
	res.Total += hosting.Money(total)
	if balance < 0 {
		res.Overdrawn = append(res.Overdrawn, account)
	}
	// Below a number of days of the burn now, and at or above it before the step.
	crossed := func(days int64) bool {
		line := burn * days * 24
		return burn > 0 && balance < line && balance+total >= line
	}
	if crossed(hosting.CreditLowDays) {
		res.CreditLow = append(res.CreditLow, account)
	}
	if crossed(hosting.CreditMailDays) {
		res.CreditMail = append(res.CreditMail, account)
	}
	return nil
}

// Transactions lists an account's ledger, newest first: limit entries from offset
// (limit 0: all), and how many there are in all. A metering pass's row shows as its
// hours, from the meters (billing.Lines), each with an id of its row's block and the
// balance after it.
func (q queries) Transactions(ctx context.Context, accountID int64, limit, offset int) ([]hosting.Transaction, int, error) {
	var total int64
	err := q.q.QueryRowContext(ctx, `SELECT ledger_lines FROM accounts WHERE id = ?`, accountID).Scan(&total)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, 0, err
	}
	out := []hosting.Transaction{}
	hi := total - int64(max(offset, 0)) // the entries shown: positions [lo, hi), oldest 0
	if hi <= 0 {
		return out, int(total), nil
	}
	lo := int64(0)
	if limit > 0 {
		lo = max(hi-int64(limit), 0)
	}
	rows, err := q.q.QueryContext(ctx, pageQuery, accountID, hi, lo-LinesPerRow)
	type ledgerRow struct {
		t                        hosting.Transaction
		lines, before, firstLine int64
		windowEnd                sql.NullInt64
	}
	list, err := collect(rows, err, func(sc func(...any) error) (ledgerRow, error) {
		var r ledgerRow
		t, err := scanTransaction(func(dest ...any) error {
			return sc(append(dest, &r.lines, &r.before, &r.windowEnd, &r.firstLine)...)
		})
		r.t = t
		return r, err
	})
	if err != nil {
		return nil, 0, err
	}
	for _, r := range list {
		if r.before+r.lines <= lo {
			continue
		}
		if !r.windowEnd.Valid {
			out = append(out, r.t)
			continue
		}
		lines, err := q.rowLines(ctx, r.t, r.firstLine, r.lines, fromMS(r.windowEnd.Int64))
		if err != nil {
			return nil, 0, err
		}
		for j := len(lines) - 1; j >= 0; j-- {
			if p := r.before + int64(j); p >= lo && p < hi {
				out = append(out, lines[j])
			}
		}
	}
	return out, int(total), nil
}

// rowLines are the entries a metering pass's row t shows: the charges of its
// account's hours in [t.PeriodStart, end) from first on, n of them, oldest first.
func (q queries) rowLines(ctx context.Context, t hosting.Transaction, first, n int64, end time.Time) ([]hosting.Transaction, error) {
	from := *t.PeriodStart
	rows, err := q.q.QueryContext(ctx, rowMetersQuery, t.AccountID, ms(from), ms(end))
	meters, err := collect(rows, err, scanMeter)
	if err != nil {
		return nil, err
	}
	all := billing.Lines(meters, from, end)
	if first+n > int64(len(all)) {
		return nil, fmt.Errorf("ledger row %d: %d hours from %d, its meters have %d", t.ID, n, first, len(all))
	}
	balance := t.BalanceAfter - t.Amount // before the row
	out := make([]hosting.Transaction, 0, n)
	for j, l := range all[first : first+n] {
		balance -= l.Amount
		hour, id := l.Hour, l.Meter.ResourceID
		out = append(out, hosting.Transaction{ID: t.ID + int64(j), AccountID: t.AccountID, Type: hosting.TxCharge, Amount: -l.Amount,
			BalanceAfter: balance, ResourceType: l.Meter.ResourceType, ResourceID: &id, ResourceName: l.Meter.ResourceName,
			PeriodStart: &hour, CreatedAt: t.CreatedAt})
	}
	if balance != t.BalanceAfter {
		return nil, fmt.Errorf("ledger row %d: its hours come to %s, the row to %s", t.ID, t.BalanceAfter-balance+t.Amount, t.Amount)
	}
	return out, nil
}
