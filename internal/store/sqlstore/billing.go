package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// ---- the ledger ----

const txCols = `id, account_id, type, amount, balance_after, description, resource_type, resource_id, resource_name, period_start, created_at`

// LinesPerRow is how many ids each row of the ledger takes, its own and those after
// it: the most entries one row shows (a metering pass's row, whose charges are its
// lines, each with an id of the row's block; SQLite migration 00035).
const LinesPerRow = 1024

// nextTxID is the SQL of the id of the ledger's next row on SQLite: a block of
// LinesPerRow after the highest id ever given (sqlite_sequence, which AUTOINCREMENT
// keeps), so that ids are never given twice. PostgreSQL's identity column counts in
// blocks itself (INCREMENT BY 1024).
const nextTxID = `(SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'transactions') + 1024`

// txInsert is the start of an INSERT of one ledger row, and its values' placeholders
// after the id's (SQLite: the id computed; PostgreSQL: the identity's).
func (q queries) txInsert(cols string) (insert, id string) {
	if q.d == dialectPostgres {
		return `INSERT INTO transactions (` + cols + `) VALUES (`, ``
	}
	return `INSERT INTO transactions (id, ` + cols + `) VALUES (`, nextTxID + `, `
}

func scanTransaction(sc func(...any) error) (hosting.Transaction, error) {
	var t hosting.Transaction
	var amount, balance, created int64
	var rid, period sql.NullInt64
	if err := sc(&t.ID, &t.AccountID, &t.Type, &amount, &balance, &t.Description, &t.ResourceType, &rid,
		&t.ResourceName, &period, &created); err != nil {
		return t, err
	}
	t.Amount, t.BalanceAfter, t.ResourceID, t.CreatedAt = hosting.Money(amount), hosting.Money(balance), nullInt(rid), fromMS(created)
	t.PeriodStart = fromNullMS(period)
	return t, nil
}

func (q queries) AddTransaction(ctx context.Context, t hosting.Transaction) (hosting.Transaction, error) {
	var balance, lines int64
	err := q.q.QueryRowContext(ctx, `UPDATE accounts SET credit = credit + ?, ledger_lines = ledger_lines + 1 WHERE id = ?
		RETURNING credit, ledger_lines`, int64(t.Amount), t.AccountID).Scan(&balance, &lines)
	if err != nil {
		return t, notFound(err)
	}
	return q.writeTransaction(ctx, t, balance, lines-1)
}

func (q queries) AddCoveredTransaction(ctx context.Context, t hosting.Transaction) (hosting.Transaction, error) {
	var balance, lines int64
	err := q.q.QueryRowContext(ctx, `UPDATE accounts SET credit = credit + ?, ledger_lines = ledger_lines + 1 WHERE id = ? AND credit + ? >= 0
		RETURNING credit, ledger_lines`, int64(t.Amount), t.AccountID, int64(t.Amount)).Scan(&balance, &lines)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := q.Account(ctx, t.AccountID); err != nil {
			return t, err
		}
		return t, store.ErrInsufficientCredit
	}
	if err != nil {
		return t, err
	}
	return q.writeTransaction(ctx, t, balance, lines-1)
}

// writeTransaction writes t, which takes the account's credit to balance and follows
// linesBefore entries of its ledger.
func (q queries) writeTransaction(ctx context.Context, t hosting.Transaction, balance, linesBefore int64) (hosting.Transaction, error) {
	t.BalanceAfter = hosting.Money(balance)
	var err error
	insert, id := q.txInsert(`account_id, type, amount, balance_after, description, resource_type, resource_id,
		resource_name, period_start, created_at, lines_before`)
	t.ID, err = q.insert(ctx, insert+id+`?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, t.AccountID, string(t.Type), int64(t.Amount), balance,
		t.Description, t.ResourceType, t.ResourceID, t.ResourceName, msPtr(t.PeriodStart), ms(t.CreatedAt), linesBefore)
	if err != nil || t.PeriodStart == nil || (t.Type != hosting.TxCharge && t.Type != hosting.TxRefund) {
		return t, err
	}
	_, err = q.q.ExecContext(ctx, `INSERT INTO account_spend (account_id, day, amount) VALUES (?, ?, ?)
		ON CONFLICT (account_id, day) DO UPDATE SET amount = account_spend.amount + excluded.amount`,
		t.AccountID, ms(*t.PeriodStart)/msPerDay, int64(t.Amount))
	return t, err
}

// AccountSpendMismatches counts the (account, UTC day) pairs where account_spend is
// not the sum of the ledger's charges and refunds of that day: 0 when the two agree.
// For checks of the ledger (testenv.AssertLedger, bench/metering), on either store.
const AccountSpendMismatches = `SELECT COUNT(*) FROM (
	SELECT account_id, day, SUM(amount) AS amount FROM (
		SELECT account_id, period_start / 86400000 AS day, amount FROM transactions
		WHERE type IN ('charge', 'refund') AND period_start IS NOT NULL
		UNION ALL SELECT account_id, day, -amount FROM account_spend) AS u
	GROUP BY account_id, day HAVING SUM(amount) <> 0) AS d`

func (q queries) Spent(ctx context.Context, accountID int64, from time.Time) (hosting.Money, error) {
	var sum int64
	// account_spend holds whole UTC days: from is one's start (a month's).
	err := q.q.QueryRowContext(ctx, `SELECT COALESCE(SUM(amount), 0) FROM account_spend
		WHERE account_id = ? AND day >= ?`, accountID, ms(from)/msPerDay).Scan(&sum)
	return hosting.Money(-sum), err
}

// chargedQuery sums one resource's charges written one row each (its first hour,
// and every hour before the upgrade to derived metering): transactions_charge_once,
// led by the resource, gives it that resource's rows alone
// (TestChargedReadsOneResource).
const chargedQuery = `SELECT COALESCE(SUM(amount), 0) FROM transactions
		WHERE type = 'charge' AND resource_type = ? AND resource_id = ?`

// Charged is what a resource was charged: its rows of the ledger, and the hours of
// its meters that the metering pass charged (those before its account's charged_to).
func (q queries) Charged(ctx context.Context, resourceType string, resourceID int64) (hosting.Money, error) {
	var sum int64
	if err := q.q.QueryRowContext(ctx, chargedQuery, resourceType, resourceID).Scan(&sum); err != nil {
		return 0, err
	}
	charged := hosting.Money(-sum)
	rows, err := q.q.QueryContext(ctx, `SELECT `+meterColsOf("m")+`, a.charged_to FROM meters m JOIN accounts a ON a.id = m.account_id
		WHERE m.resource_type = ? AND m.resource_id = ?`, resourceType, resourceID)
	type meterTo struct {
		m  hosting.Meter
		to time.Time
	}
	list, err := collect(rows, err, func(sc func(...any) error) (meterTo, error) {
		var to int64
		m, err := scanMeter(func(dest ...any) error { return sc(append(dest, &to)...) })
		return meterTo{m, fromMS(to)}, err
	})
	if err != nil {
		return 0, err
	}
	for _, x := range list {
		charged += billing.Owed(x.m, x.m.BilledFrom, x.to)
	}
	return charged, nil
}

func (q queries) SetBudget(ctx context.Context, accountID int64, budget *hosting.Money) error {
	return q.execOne(ctx, `UPDATE accounts SET budget = ? WHERE id = ?`, moneyPtr(budget), accountID)
}

// ---- meters ----

const meterCols = `id, account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at, billed_from, stopped_at, month_start, month_charged`

// meterColsOf is meterCols of the table named t in a query.
func meterColsOf(t string) string {
	return t + "." + strings.ReplaceAll(meterCols, ", ", ", "+t+".")
}

// meterEnds is the SQL of when a meter's hours end (its stopped_at; an open meter's
// never), as meters_account indexes it.
const meterEnds = `COALESCE(stopped_at, 9223372036854775807)`

func scanMeter(sc func(...any) error) (hosting.Meter, error) {
	var m hosting.Meter
	var rate, started, billed, monthStart, charged int64
	var cap, stopped sql.NullInt64
	if err := sc(&m.ID, &m.AccountID, &m.ResourceType, &m.ResourceID, &m.ResourceName, &rate, &cap, &started, &billed, &stopped,
		&monthStart, &charged); err != nil {
		return m, notFound(err)
	}
	m.Rate, m.MonthlyCap, m.StartedAt, m.BilledFrom = hosting.Money(rate), nullMoney(cap), fromMS(started), fromMS(billed)
	m.StoppedAt = fromNullMS(stopped)
	m.MonthStart, m.MonthCharged = fromMS(monthStart), hosting.Money(charged)
	return m, nil
}

// latestMeterQuery reads the latest meter of a resource (meters_resource).
const latestMeterQuery = `SELECT ` + meterCols + ` FROM meters WHERE resource_type = ? AND resource_id = ? ORDER BY id DESC LIMIT 1`

// Meter is the latest meter of a resource (the open one, if it has one).
func (q queries) Meter(ctx context.Context, resourceType string, resourceID int64) (hosting.Meter, error) {
	return scanMeter(q.q.QueryRowContext(ctx, latestMeterQuery, resourceType, resourceID).Scan)
}

// Meters lists an account's meters that may still charge: open, or stopped after
// its charged_to.
func (q queries) Meters(ctx context.Context, accountID int64) ([]hosting.Meter, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+meterCols+` FROM meters
		WHERE account_id = ? AND `+meterEnds+` > (SELECT charged_to FROM accounts WHERE id = ?) ORDER BY id`, accountID, accountID)
	return collect(rows, err, scanMeter)
}

// ChargedTo is where the metering pass got for an account: every hour of its meters
// that starts before it is charged.
func (q queries) ChargedTo(ctx context.Context, accountID int64) (time.Time, error) {
	var to int64
	err := q.q.QueryRowContext(ctx, `SELECT charged_to FROM accounts WHERE id = ?`, accountID).Scan(&to)
	return fromMS(to), notFound(err)
}

// ofAccount narrows a query of a table with an account_id to one account when
// account is not 0.
func ofAccount(account int64, args ...any) (string, []any) {
	if account == 0 {
		return "", args
	}
	return ` AND account_id = ? `, append(args, account)
}

// EarliestDue is the earliest hour due to be charged at upto: the least next_due of
// the accounts (of account alone when not 0).
func (q queries) EarliestDue(ctx context.Context, upto time.Time, account int64) (*time.Time, error) {
	var next sql.NullInt64
	and, args := "", []any{ms(upto)}
	if account != 0 {
		and, args = ` AND id = ?`, append(args, account)
	}
	if err := q.q.QueryRowContext(ctx, `SELECT MIN(next_due) FROM accounts WHERE next_due <= ?`+and, args...).Scan(&next); err != nil {
		return nil, err
	}
	return fromNullMS(next), nil
}

// lockMetered reads an account's charged_to, locking its row on PostgreSQL so that
// no metering step moves it before this transaction ends (a step locks the row too).
func (q queries) lockMetered(ctx context.Context, account int64) (time.Time, error) {
	var to int64
	err := q.q.QueryRowContext(ctx, `SELECT charged_to FROM accounts WHERE id = ?`+q.forNoKeyUpdate(), account).Scan(&to)
	return fromMS(to), notFound(err)
}

// OpenMeter writes a meter. Its hours begin at charged_to at the earliest: those
// before are charged already, for every meter of the account.
func (q queries) OpenMeter(ctx context.Context, m hosting.Meter) (int64, error) {
	chargedTo, err := q.lockMetered(ctx, m.AccountID)
	if err != nil {
		return 0, err
	}
	if m.BilledFrom.Before(chargedTo) {
		m.BilledFrom = chargedTo
	}
	id, err := q.insert(ctx, `INSERT INTO meters (account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at,
		billed_from, stopped_at, month_start, month_charged) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, m.AccountID, m.ResourceType,
		m.ResourceID, m.ResourceName, int64(m.Rate), moneyPtr(m.MonthlyCap), ms(m.StartedAt), ms(m.BilledFrom), msPtr(m.StoppedAt),
		ms(m.MonthStart), int64(m.MonthCharged))
	if err != nil {
		return id, err
	}
	burn := int64(0)
	if m.Active() {
		burn = int64(m.Rate)
	}
	if m.StoppedAt != nil && !m.StoppedAt.After(m.BilledFrom) {
		return id, q.addBurn(ctx, m.AccountID, burn) // no hour to charge
	}
	// The account's next hour due is this meter's first, if that is earlier.
	return id, q.execOne(ctx, `UPDATE accounts SET burn = burn + ?,
		next_due = CASE WHEN next_due IS NOT NULL AND next_due <= ? THEN next_due ELSE ? END WHERE id = ?`,
		burn, ms(m.BilledFrom), ms(m.BilledFrom), m.AccountID)
}

// addBurn moves an account's hourly burn (accounts.burn: the sum of its active
// meters' rates) by delta.
func (q queries) addBurn(ctx context.Context, account, delta int64) error {
	if delta == 0 {
		return nil
	}
	return q.execOne(ctx, `UPDATE accounts SET burn = burn + ? WHERE id = ?`, delta, account)
}

// latestMeter is the latest meter of a resource with its account's charged_to, the
// account's row locked first (lockMetered), then the meter's: ErrNotFound when the
// resource has none.
func (q queries) latestMeter(ctx context.Context, resourceType string, resourceID int64) (hosting.Meter, time.Time, error) {
	var account int64
	err := q.q.QueryRowContext(ctx, `SELECT account_id FROM meters WHERE resource_type = ? AND resource_id = ? ORDER BY id DESC LIMIT 1`,
		resourceType, resourceID).Scan(&account)
	if err != nil {
		return hosting.Meter{}, time.Time{}, notFound(err)
	}
	chargedTo, err := q.lockMetered(ctx, account)
	if err != nil {
		return hosting.Meter{}, time.Time{}, err
	}
	m, err := scanMeter(q.q.QueryRowContext(ctx, latestMeterQuery+q.forUpdate(), resourceType, resourceID).Scan)
	return m, chargedTo, err
}

// stopAt stops the open meter m at at (its hours that start before at are charged
// still), never before chargedTo: the hours charged stay the meter's.
func (q queries) stopAt(ctx context.Context, m hosting.Meter, at, chargedTo time.Time) error {
	if at.Before(chargedTo) {
		at = chargedTo
	}
	if err := q.execOne(ctx, `UPDATE meters SET stopped_at = ? WHERE id = ? AND stopped_at IS NULL`, ms(at), m.ID); err != nil {
		return err
	}
	return q.addBurn(ctx, m.AccountID, -int64(m.Rate))
}

// follow opens the meter that follows m from from (stopped there too when stop),
// at rate and cap, carrying what m and those before it charged in from's month.
func (q queries) follow(ctx context.Context, m hosting.Meter, from time.Time, started time.Time, rate hosting.Money, cap *hosting.Money, stop bool) error {
	n := hosting.Meter{AccountID: m.AccountID, ResourceType: m.ResourceType, ResourceID: m.ResourceID, ResourceName: m.ResourceName,
		Rate: rate, MonthlyCap: cap, StartedAt: started, BilledFrom: from,
		MonthStart: billing.MonthStart(from), MonthCharged: billing.MonthCarried(m, from)}
	if stop {
		n.StoppedAt = &from
	}
	_, err := q.OpenMeter(ctx, n)
	return err
}

// RestartMeter charges a resource again from at (at its account's charged_to at the
// earliest), at the rate of its latest meter: a meter that follows it (the open one
// stopped there first).
func (q queries) RestartMeter(ctx context.Context, resourceType string, resourceID int64, at time.Time) error {
	m, chargedTo, err := q.latestMeter(ctx, resourceType, resourceID)
	if err != nil {
		return err
	}
	from := at
	if from.Before(chargedTo) {
		from = chargedTo
	}
	if m.StoppedAt != nil && from.Before(*m.StoppedAt) {
		from = *m.StoppedAt // never an hour of two meters
	}
	if m.Active() {
		if err := q.stopAt(ctx, m, from, chargedTo); err != nil {
			return err
		}
		stopped := from
		m.StoppedAt = &stopped
	}
	return q.follow(ctx, m, from, at, m.Rate, m.MonthlyCap, false)
}

// StopMeter stops a resource's open meter at at (at its account's charged_to at the
// earliest); a resource with none has nothing to stop.
func (q queries) StopMeter(ctx context.Context, resourceType string, resourceID int64, at time.Time) error {
	m, chargedTo, err := q.latestMeter(ctx, resourceType, resourceID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !m.Active()) {
		return nil
	}
	if err != nil {
		return err
	}
	return q.stopAt(ctx, m, at, chargedTo)
}

// SetMeterRate prices a resource's hours from its next one not charged yet: its meter
// stops there and another follows at the new price. A stopped resource keeps the
// price for a restart, in a meter that charges nothing.
func (q queries) SetMeterRate(ctx context.Context, resourceType string, resourceID int64, rate hosting.Money, cap *hosting.Money) error {
	m, chargedTo, err := q.latestMeter(ctx, resourceType, resourceID)
	if err != nil {
		return err
	}
	if m.Rate == rate && ((m.MonthlyCap == nil && cap == nil) || (m.MonthlyCap != nil && cap != nil && *m.MonthlyCap == *cap)) {
		return nil
	}
	if !m.Active() {
		from := *m.StoppedAt
		if from.Before(chargedTo) {
			from = chargedTo
		}
		return q.follow(ctx, m, from, m.StartedAt, rate, cap, true)
	}
	next := billing.NextHour(m, chargedTo)
	if err := q.stopAt(ctx, m, next, chargedTo); err != nil {
		return err
	}
	m.StoppedAt = &next
	return q.follow(ctx, m, next, m.StartedAt, rate, cap, false)
}

// NamedStatement is one SQL statement of a store method, named for a benchmark's
// table: Query has ? placeholders (DB.Rebind makes them PostgreSQL's).
type NamedStatement struct {
	Name, Query string
	Args        []any
}

// chargeSQL is the statements a license step (ChargeLicenses) runs after its stage,
// in order.
type chargeSQL struct {
	totals, lock, ledger, spend, credit, total, accounts, clear, clearTotals NamedStatement
}

// crossedAccounts is the statement that lists the accounts of a charge batch that
// are overdrawn, or that the batch took below CreditLowDays or CreditMailDays of
// their burn (the rates of their active meters, as billing.Summarize counts it,
// kept in accounts.burn) from at or above it: each with a flag for each (chargeStaged
// sorts them out). Crossing either line means credit below the higher one
// (CreditLowDays) and credit plus the batch's charges at or above the lower.
func crossedAccounts() NamedStatement {
	low, mail := hosting.CreditLowDays*24, hosting.CreditMailDays*24
	return NamedStatement{"accounts: SELECT overdrawn, credit low, credit mail", `SELECT a.id,
			CASE WHEN a.credit < 0 THEN 1 ELSE 0 END,
			CASE WHEN a.burn > 0 AND a.credit < a.burn * ? AND a.credit + t.charged >= a.burn * ? THEN 1 ELSE 0 END,
			CASE WHEN a.burn > 0 AND a.credit < a.burn * ? AND a.credit + t.charged >= a.burn * ? THEN 1 ELSE 0 END
		FROM accounts a JOIN charge_totals t ON t.account_id = a.id
		WHERE a.credit < 0 OR (a.burn > 0 AND a.credit < a.burn * ? AND a.credit + t.charged >= a.burn * ?)
		ORDER BY a.id`, []any{low, low, mail, mail, max(low, mail), min(low, mail)}}
}

// ledByBatch is the condition that keeps SQLite's plan of an UPDATE ... FROM
// charge_batch led by the batch (the rows named in col among its meter_ids), rather
// than by a scan of the table updated with the batch looked up per row. PostgreSQL
// leads by the batch without it, and paid for it with a second join of the batch
// (8 % of the meters statement, bench/metering.sh): there it is empty.
func (q queries) ledByBatch(col string) string {
	if q.d == dialectPostgres {
		return ""
	}
	return " AND " + col + " IN (SELECT meter_id FROM charge_batch)"
}

// orFail is the conflict clause of a license step's statements that write many rows
// (OR FAIL on SQLite; PostgreSQL has none). SQLite gives a statement that writes
// several rows and may end halfway with ABORT, its default for a UNIQUE or NOT NULL
// constraint (or that checks an immediate foreign key), a statement journal: a copy
// of every page the statement is the first to change, made so that it can undo
// itself. A step's ledger INSERT changes a page of transactions_charge_once for
// nearly every charge it writes; when metering wrote a row per hour, those copies
// were a third of a pass (bench/metering). FAIL ends
// the statement without undoing it, so SQLite keeps no copy; the step's error then
// ends its transaction (InTx rolls it back, a joined one rolls back to its
// savepoint), as ABORT's did, and nothing of the step is kept. The ledger's foreign
// key is checked at commit (SQLite migration 00032) for the same reason.
// TestChargeStepsKeepNoStatementJournal holds the statements to it.
func (q queries) orFail() string {
	if q.d == dialectPostgres {
		return ""
	}
	return " OR FAIL"
}

// chargeStatements are the statements of a license step written at now.
func (q queries) chargeStatements(now time.Time) chargeSQL {
	// Each row takes a block of LinesPerRow ids (nextTxID): SQLite's given here, in
	// the order of the rows, PostgreSQL's by its identity.
	idCol, idVal := "", ""
	if q.d != dialectPostgres {
		idCol, idVal = "id, ", `(SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'transactions')
				+ 1024 * ROW_NUMBER() OVER (ORDER BY b.account_id, b.day, b.meter_id), `
	}
	return chargeSQL{
		// What the batch charges each account, once, for the statements after it.
		totals: NamedStatement{"totals: INSERT INTO charge_totals", `INSERT` + q.orFail() + ` INTO charge_totals (account_id, charged, lines)
			SELECT account_id, SUM(amount), COUNT(*) FROM charge_batch WHERE amount > 0 GROUP BY account_id`, nil},
		// Each charge's balance_after is read from its account's credit before the
		// credit moves: no other transaction may move it in between (a top-up, an
		// order). SQLite runs one write transaction at a time; PostgreSQL locks the
		// rows, in id order so that two lockers never wait on each other.
		lock: NamedStatement{"lock: SELECT accounts FOR UPDATE", `SELECT id FROM accounts
			WHERE id IN (SELECT account_id FROM charge_totals) ORDER BY id FOR UPDATE`, nil},
		// Each charge shows the balance after it: the account's credit less the
		// charges before it in this batch (in id order, as they are written), and
		// follows the account's entries so far.
		ledger: NamedStatement{"ledger: INSERT INTO transactions", `INSERT` + q.orFail() + ` INTO transactions (` + idCol + `account_id, type, amount, balance_after, description, resource_type, resource_id, resource_name, period_start, created_at, lines_before)
			SELECT ` + idVal + `b.account_id, 'charge', -b.amount,
				a.credit - SUM(b.amount) OVER (PARTITION BY b.account_id ORDER BY b.day, b.meter_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
				'', b.resource_type, b.resource_id, b.resource_name, b.period_start, ?,
				a.ledger_lines - 1 + ROW_NUMBER() OVER (PARTITION BY b.account_id ORDER BY b.day, b.meter_id)
			FROM charge_batch b JOIN accounts a ON a.id = b.account_id
			WHERE b.amount > 0
			ORDER BY b.account_id, b.day, b.meter_id`, []any{ms(now)}},
		// The batch's charges by account and UTC day, in account_spend (Spent).
		spend: NamedStatement{"spend: INSERT INTO account_spend", `INSERT INTO account_spend (account_id, day, amount)
			SELECT account_id, day, -SUM(amount) FROM charge_batch
			WHERE amount > 0 GROUP BY account_id, day ORDER BY account_id, day
			ON CONFLICT (account_id, day) DO UPDATE SET amount = account_spend.amount + excluded.amount`, nil},
		credit: NamedStatement{"credit: UPDATE accounts FROM", `UPDATE` + q.orFail() + ` accounts SET credit = credit - t.charged,
				ledger_lines = ledger_lines + t.lines
			FROM charge_totals AS t WHERE accounts.id = t.account_id`, nil},
		total:       NamedStatement{"total: SELECT SUM(charged)", `SELECT COALESCE(SUM(charged), 0) FROM charge_totals`, nil},
		accounts:    crossedAccounts(),
		clear:       NamedStatement{"clear: DELETE FROM charge_batch", `DELETE FROM charge_batch`, nil},
		clearTotals: NamedStatement{"clear: DELETE FROM charge_totals", `DELETE FROM charge_totals`, nil},
	}
}

// stepWrites are the writes of a charge step after its stage, in the order
// chargeStaged runs them: the totals, on PostgreSQL the accounts' row locks, the
// ledger, the spend and the credit, then the step's own (own).
func (q queries) stepWrites(c chargeSQL, own ...NamedStatement) []NamedStatement {
	w := []NamedStatement{c.totals}
	if q.d == dialectPostgres {
		w = append(w, c.lock)
	}
	return append(append(w, c.ledger, c.spend, c.credit), own...)
}

// stepList is list followed by a step's statements up to its own writes, as
// ChargeLicenses runs them: on SQLite the staging tables made, then
// stage, then stepWrites.
func (q queries) stepList(list []NamedStatement, stage NamedStatement, c chargeSQL, own ...NamedStatement) []NamedStatement {
	if q.d != dialectPostgres {
		list = append(list, stageSQLite)
	}
	return append(append(list, stage), q.stepWrites(c, own...)...)
}

// LicenseStepStatements are the statements of a license step (ChargeLicenses), in
// the order it runs them (on PostgreSQL with its row locks), after the statement of
// EarliestLicenseDue that finds the step's month: for a benchmark, as
// ChargeStepStatements.
func (db *DB) LicenseStepStatements(st store.LicenseStep) []NamedStatement {
	q := on(db.d, db.write)
	stage, advance, usage := q.licenseChargeSQL(st)
	c := q.chargeStatements(st.Now)
	and, args := ofAccount(st.Account, ms(st.Now))
	list := []NamedStatement{{"EarliestLicenseDue: SELECT MIN(paid_through)", `SELECT MIN(paid_through) FROM server_licenses
		WHERE status IN ('pending', 'active') AND paid_through <= ?` + and, args}}
	return append(q.stepList(list, stage, c, advance, usage), c.total, c.accounts, c.clear, c.clearTotals)
}

// stageSQLite makes the staging tables of a metering step on SQLite (charge_batch, the
// charges; charge_totals, their sum by account): TEMP tables of
// the write connection (made by the step that first needs it, so that migrations
// never see it), so the rows a step stages and deletes never reach the WAL, the
// checkpoints or the database file. With temp_store(2) it lives in the connection's
// memory; a step stages at most its Limit of rows (ops.DefaultLicenseBatch). On
// PostgreSQL both are tables of the schema.
var stageSQLite = NamedStatement{"staging: CREATE TEMP TABLE charge_batch", `CREATE TEMP TABLE IF NOT EXISTS charge_batch (
    meter_id      INTEGER PRIMARY KEY,
    account_id    INTEGER NOT NULL,
    resource_type TEXT    NOT NULL,
    resource_id   INTEGER NOT NULL,
    resource_name TEXT    NOT NULL,
    period_start  INTEGER NOT NULL,
    day           INTEGER NOT NULL, -- period_start / 86,400,000: account_spend's day
    amount        INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS temp.charge_batch_account ON charge_batch(account_id, day);
CREATE TEMP TABLE IF NOT EXISTS charge_totals (
    account_id INTEGER PRIMARY KEY,
    charged    INTEGER NOT NULL,
    lines      INTEGER NOT NULL
)`, nil}

// stageTable makes sure a step's staging table is there (stageSQLite).
func (q queries) stageTable(ctx context.Context) error {
	if q.d == dialectPostgres {
		return nil
	}
	_, err := q.q.ExecContext(ctx, stageSQLite.Query)
	return err
}

// chargeStaged ends a charge step whose charges stage put in charge_batch: the
// ledger and the accounts written by c's statements, then the step's own writes
// (the meters moved on, or the licenses), the result read and the batch cleared.
func (q queries) chargeStaged(ctx context.Context, c chargeSQL, stage sql.Result, own ...NamedStatement) (store.ChargeResult, error) {
	var res store.ChargeResult
	n, err := stage.RowsAffected()
	if err != nil || n == 0 {
		return res, err
	}
	res.Hours = int(n)
	for _, s := range q.stepWrites(c, own...) {
		if _, err := q.q.ExecContext(ctx, s.Query, s.Args...); err != nil {
			return res, conflict(err)
		}
	}
	var total int64
	if err := q.q.QueryRowContext(ctx, c.total.Query).Scan(&total); err != nil {
		return res, err
	}
	res.Total = hosting.Money(total)
	rows, err := q.q.QueryContext(ctx, c.accounts.Query, c.accounts.Args...)
	if err != nil {
		return res, err
	}
	for rows.Next() {
		var id int64
		var overdrawn, low, mail bool
		if err := rows.Scan(&id, &overdrawn, &low, &mail); err != nil {
			rows.Close()
			return res, err
		}
		if overdrawn {
			res.Overdrawn = append(res.Overdrawn, id)
		}
		if low {
			res.CreditLow = append(res.CreditLow, id)
		}
		if mail {
			res.CreditMail = append(res.CreditMail, id)
		}
	}
	if err := rows.Close(); err != nil {
		return res, err
	}
	if err := rows.Err(); err != nil {
		return res, err
	}
	if _, err := q.q.ExecContext(ctx, c.clear.Query); err != nil {
		return res, err
	}
	_, err = q.q.ExecContext(ctx, c.clearTotals.Query)
	return res, err
}

// ---- suspension for credit ----

func (q queries) SuspendForCredit(ctx context.Context, accountID int64) ([]int64, error) {
	return column[int64](ctx, q.q, `UPDATE servers SET suspended = suspended | 2
		WHERE account_id = ? AND deleted_at IS NULL AND (suspended & 2) = 0 RETURNING id`, accountID)
}

func (q queries) LiftCreditSuspension(ctx context.Context, accountID int64) (int, error) {
	res, err := q.q.ExecContext(ctx, `UPDATE servers SET suspended = suspended & 1
		WHERE account_id = ? AND deleted_at IS NULL AND (suspended & 2) <> 0`, accountID)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
