package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// ---- the ledger ----

const txCols = `id, account_id, type, amount, balance_after, description, resource_type, resource_id, resource_name, period_start, created_at`

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
	var balance int64
	err := q.q.QueryRowContext(ctx, `UPDATE accounts SET credit = credit + ? WHERE id = ? RETURNING credit`, int64(t.Amount), t.AccountID).Scan(&balance)
	if err != nil {
		return t, notFound(err)
	}
	return q.writeTransaction(ctx, t, balance)
}

func (q queries) AddCoveredTransaction(ctx context.Context, t hosting.Transaction) (hosting.Transaction, error) {
	var balance int64
	err := q.q.QueryRowContext(ctx, `UPDATE accounts SET credit = credit + ? WHERE id = ? AND credit + ? >= 0 RETURNING credit`,
		int64(t.Amount), t.AccountID, int64(t.Amount)).Scan(&balance)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := q.Account(ctx, t.AccountID); err != nil {
			return t, err
		}
		return t, store.ErrInsufficientCredit
	}
	if err != nil {
		return t, err
	}
	return q.writeTransaction(ctx, t, balance)
}

func (q queries) writeTransaction(ctx context.Context, t hosting.Transaction, balance int64) (hosting.Transaction, error) {
	t.BalanceAfter = hosting.Money(balance)
	var err error
	t.ID, err = q.insert(ctx, `INSERT INTO transactions (account_id, type, amount, balance_after, description, resource_type, resource_id,
		resource_name, period_start, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, t.AccountID, string(t.Type), int64(t.Amount), balance,
		t.Description, t.ResourceType, t.ResourceID, t.ResourceName, msPtr(t.PeriodStart), ms(t.CreatedAt))
	if err != nil || t.PeriodStart == nil || (t.Type != hosting.TxCharge && t.Type != hosting.TxRefund) {
		return t, err
	}
	_, err = q.q.ExecContext(ctx, `INSERT INTO account_spend (account_id, day, amount) VALUES (?, ?, ?)
		ON CONFLICT (account_id, day) DO UPDATE SET amount = account_spend.amount + excluded.amount`,
		t.AccountID, ms(*t.PeriodStart)/msPerDay, int64(t.Amount))
	return t, err
}

func (q queries) Transactions(ctx context.Context, accountID int64, limit, offset int) ([]hosting.Transaction, int, error) {
	var total int
	if err := q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM transactions WHERE account_id = ?`, accountID).Scan(&total); err != nil {
		return nil, 0, err
	}
	if limit <= 0 {
		limit = 1 << 62 // all: PostgreSQL takes no negative LIMIT
	}
	rows, err := q.q.QueryContext(ctx, `SELECT `+txCols+` FROM transactions WHERE account_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`,
		accountID, limit, offset)
	out, err := orEmpty(collect(rows, err, scanTransaction))
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
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

// chargedQuery sums one resource's charges: transactions_charge_once, led by the
// resource, gives it that resource's rows alone (TestChargedReadsOneResource).
const chargedQuery = `SELECT COALESCE(SUM(amount), 0) FROM transactions
		WHERE type = 'charge' AND resource_type = ? AND resource_id = ?`

func (q queries) Charged(ctx context.Context, resourceType string, resourceID int64) (hosting.Money, error) {
	var sum int64
	err := q.q.QueryRowContext(ctx, chargedQuery, resourceType, resourceID).Scan(&sum)
	return hosting.Money(-sum), err
}

func (q queries) SetBudget(ctx context.Context, accountID int64, budget *hosting.Money) error {
	return q.execOne(ctx, `UPDATE accounts SET budget = ? WHERE id = ?`, moneyPtr(budget), accountID)
}

// ---- meters ----

const meterCols = `id, account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at, next_at, stopped_at, month_start, month_charged`

func scanMeter(sc func(...any) error) (hosting.Meter, error) {
	var m hosting.Meter
	var rate, started, monthStart, charged int64
	var cap, next, stopped sql.NullInt64
	if err := sc(&m.ID, &m.AccountID, &m.ResourceType, &m.ResourceID, &m.ResourceName, &rate, &cap, &started, &next, &stopped,
		&monthStart, &charged); err != nil {
		return m, notFound(err)
	}
	m.Rate, m.MonthlyCap, m.StartedAt = hosting.Money(rate), nullMoney(cap), fromMS(started)
	m.NextAt, m.StoppedAt = fromNullMS(next), fromNullMS(stopped)
	m.MonthStart, m.MonthCharged = fromMS(monthStart), hosting.Money(charged)
	return m, nil
}

func (q queries) Meter(ctx context.Context, resourceType string, resourceID int64) (hosting.Meter, error) {
	return scanMeter(q.q.QueryRowContext(ctx, `SELECT `+meterCols+` FROM meters WHERE resource_type = ? AND resource_id = ?`,
		resourceType, resourceID).Scan)
}

func (q queries) Meters(ctx context.Context, accountID int64) ([]hosting.Meter, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+meterCols+` FROM meters WHERE account_id = ? AND next_at IS NOT NULL ORDER BY id`, accountID)
	return collect(rows, err, scanMeter)
}

// dueWhere selects the meters with an hour due at the upto parameter.
const dueWhere = ` next_at IS NOT NULL AND next_at <= ? AND (stopped_at IS NULL OR next_at < stopped_at) `

// ofAccount narrows a meters query to one account when account is not 0.
func ofAccount(account int64, args ...any) (string, []any) {
	if account == 0 {
		return "", args
	}
	return ` AND account_id = ? `, append(args, account)
}

func (q queries) EarliestDue(ctx context.Context, upto time.Time, account int64) (*time.Time, error) {
	var next sql.NullInt64
	and, args := ofAccount(account, ms(upto))
	if err := q.q.QueryRowContext(ctx, `SELECT MIN(next_at) FROM meters WHERE`+dueWhere+and, args...).Scan(&next); err != nil {
		return nil, err
	}
	return fromNullMS(next), nil
}

func (q queries) OpenMeter(ctx context.Context, m hosting.Meter) (int64, error) {
	id, err := q.insert(ctx, `INSERT INTO meters (account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at,
		next_at, stopped_at, month_start, month_charged) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, m.AccountID, m.ResourceType,
		m.ResourceID, m.ResourceName, int64(m.Rate), moneyPtr(m.MonthlyCap), ms(m.StartedAt), msPtr(m.NextAt), msPtr(m.StoppedAt),
		ms(m.MonthStart), int64(m.MonthCharged))
	if err != nil || !m.Active() {
		return id, err
	}
	return id, q.addBurn(ctx, m.AccountID, int64(m.Rate))
}

// meterBurn is what a resource's meter adds to its account's burn (its rate while it
// is active, as hosting.Meter.Active says, else 0), and the account; found is false
// when the resource has no meter. On PostgreSQL the meter's row is locked, before
// the account's, the order a metering step takes them in.
func (q queries) meterBurn(ctx context.Context, resourceType string, resourceID int64) (account, burn int64, found bool, err error) {
	err = q.q.QueryRowContext(ctx, `SELECT account_id, CASE WHEN next_at IS NOT NULL AND stopped_at IS NULL THEN rate ELSE 0 END
		FROM meters WHERE resource_type = ? AND resource_id = ?`+q.forUpdate(), resourceType, resourceID).Scan(&account, &burn)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, false, nil
	}
	return account, burn, err == nil, err
}

// reburn runs change, a write to a resource's meter, and moves its account's burn
// by what that changed of the meter's part in it.
func (q queries) reburn(ctx context.Context, resourceType string, resourceID int64, change func() error) error {
	account, before, found, err := q.meterBurn(ctx, resourceType, resourceID)
	if err != nil {
		return err
	}
	if err := change(); err != nil || !found {
		return err
	}
	_, after, _, err := q.meterBurn(ctx, resourceType, resourceID)
	if err != nil || after == before {
		return err
	}
	return q.addBurn(ctx, account, after-before)
}

// addBurn moves an account's hourly burn (accounts.burn: the sum of its active
// meters' rates) by delta.
func (q queries) addBurn(ctx context.Context, account, delta int64) error {
	return q.execOne(ctx, `UPDATE accounts SET burn = burn + ? WHERE id = ?`, delta, account)
}

func (q queries) RestartMeter(ctx context.Context, resourceType string, resourceID int64, at time.Time) error {
	return q.reburn(ctx, resourceType, resourceID, func() error {
		return q.execOne(ctx, `UPDATE meters SET started_at = ?, next_at = ?, stopped_at = NULL WHERE resource_type = ? AND resource_id = ?`,
			ms(at), ms(at), resourceType, resourceID)
	})
}

func (q queries) StopMeter(ctx context.Context, resourceType string, resourceID int64, at time.Time) error {
	return q.reburn(ctx, resourceType, resourceID, func() error {
		_, err := q.q.ExecContext(ctx, `UPDATE meters SET stopped_at = ?, next_at = CASE WHEN next_at >= ? THEN NULL ELSE next_at END
			WHERE resource_type = ? AND resource_id = ? AND stopped_at IS NULL`, ms(at), ms(at), resourceType, resourceID)
		return err
	})
}

func (q queries) SetMeterRate(ctx context.Context, resourceType string, resourceID int64, rate hosting.Money, cap *hosting.Money) error {
	return q.reburn(ctx, resourceType, resourceID, func() error {
		return q.execOne(ctx, `UPDATE meters SET rate = ?, monthly_cap = ? WHERE resource_type = ? AND resource_id = ?`,
			int64(rate), moneyPtr(cap), resourceType, resourceID)
	})
}

// capLeft is what a meter may still be charged in the month of the :ms parameter.
const capLeft = `(monthly_cap - CASE WHEN month_start = ? THEN month_charged ELSE 0 END)`

// NamedStatement is one SQL statement of a store method, named for a benchmark's
// table: Query has ? placeholders (DB.Rebind makes them PostgreSQL's).
type NamedStatement struct {
	Name, Query string
	Args        []any
}

// chargeSQL is a charge step's statements, in the order ChargeDue runs them.
type chargeSQL struct {
	stage, totals, lock, ledger, spend, credit, meters, total, accounts, clear, clearTotals NamedStatement
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

// orFail is the conflict clause of a charge step's statements that write many rows
// (OR FAIL on SQLite; PostgreSQL has none). SQLite gives a statement that writes
// several rows and may end halfway with ABORT, its default for a UNIQUE or NOT NULL
// constraint (or that checks an immediate foreign key), a statement journal: a copy
// of every page the statement is the first to change, made so that it can undo
// itself. A step's ledger INSERT changes a page of transactions_charge_once for
// nearly every hour it charges, and its meters UPDATE a page of meters for every
// few dozen; those copies were a third of a metering pass (bench/metering). FAIL ends
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

// chargeStatements are the statements of the charge step st.
func (q queries) chargeStatements(st store.ChargeStep) chargeSQL {
	month, upto, now := ms(st.MonthStart), ms(st.Upto), ms(st.Now)
	and, args := ofAccount(st.Account, month, month, month, upto, month)
	limit := ""
	if st.Limit > 0 {
		limit = " ORDER BY next_at, id LIMIT ?"
		args = append(args, st.Limit)
	}
	return chargeSQL{
		stage: NamedStatement{"stage: INSERT INTO charge_batch", `INSERT` + q.orFail() + ` INTO charge_batch (meter_id, account_id, resource_type, resource_id, resource_name, period_start, day, amount)
			SELECT id, account_id, resource_type, resource_id, resource_name, next_at, next_at / 86400000,
				CASE WHEN monthly_cap IS NULL THEN rate
					WHEN ` + capLeft + ` <= 0 THEN 0
					WHEN ` + capLeft + ` < rate THEN ` + capLeft + `
					ELSE rate END
			FROM meters WHERE` + dueWhere + `AND next_at >= ?` + and + limit + q.forUpdate(), args},
		// What the batch charges each account, once, for the statements after it.
		totals: NamedStatement{"totals: INSERT INTO charge_totals", `INSERT` + q.orFail() + ` INTO charge_totals (account_id, charged)
			SELECT account_id, SUM(amount) FROM charge_batch WHERE amount > 0 GROUP BY account_id`, nil},
		// Each charge's balance_after is read from its account's credit before the
		// credit moves: no other transaction may move it in between (a top-up, an
		// order). SQLite runs one write transaction at a time; PostgreSQL locks the
		// rows, in id order so that two lockers never wait on each other.
		lock: NamedStatement{"lock: SELECT accounts FOR UPDATE", `SELECT id FROM accounts
			WHERE id IN (SELECT account_id FROM charge_totals) ORDER BY id FOR UPDATE`, nil},
		// Each charge shows the balance after it: the account's credit less the
		// charges before it in this batch (in id order, as they are written).
		ledger: NamedStatement{"ledger: INSERT INTO transactions", `INSERT` + q.orFail() + ` INTO transactions (account_id, type, amount, balance_after, description, resource_type, resource_id, resource_name, period_start, created_at)
			SELECT b.account_id, 'charge', -b.amount,
				a.credit - SUM(b.amount) OVER (PARTITION BY b.account_id ORDER BY b.day, b.meter_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
				'', b.resource_type, b.resource_id, b.resource_name, b.period_start, ?
			FROM charge_batch b JOIN accounts a ON a.id = b.account_id
			WHERE b.amount > 0
			ORDER BY b.account_id, b.day, b.meter_id`, []any{now}},
		// The batch's charges by account and UTC day, in account_spend (Spent).
		spend: NamedStatement{"spend: INSERT INTO account_spend", `INSERT INTO account_spend (account_id, day, amount)
			SELECT account_id, day, -SUM(amount) FROM charge_batch
			WHERE amount > 0 GROUP BY account_id, day ORDER BY account_id, day
			ON CONFLICT (account_id, day) DO UPDATE SET amount = account_spend.amount + excluded.amount`, nil},
		credit: NamedStatement{"credit: UPDATE accounts FROM", `UPDATE` + q.orFail() + ` accounts SET credit = credit - t.charged
			FROM charge_totals AS t WHERE accounts.id = t.account_id`, nil},
		meters: NamedStatement{"meters: UPDATE meters FROM", `UPDATE` + q.orFail() + ` meters SET
				month_charged = CASE WHEN meters.month_start = ? THEN meters.month_charged ELSE 0 END + b.amount,
				month_start = ?,
				next_at = CASE WHEN meters.stopped_at IS NOT NULL AND meters.next_at + 3600000 >= meters.stopped_at
					THEN NULL ELSE meters.next_at + 3600000 END
			FROM charge_batch AS b WHERE b.meter_id = meters.id` + q.ledByBatch("meters.id"), []any{month, month}},
		total:       NamedStatement{"total: SELECT SUM(charged)", `SELECT COALESCE(SUM(charged), 0) FROM charge_totals`, nil},
		accounts:    crossedAccounts(),
		clear:       NamedStatement{"clear: DELETE FROM charge_batch", `DELETE FROM charge_batch`, nil},
		clearTotals: NamedStatement{"clear: DELETE FROM charge_totals", `DELETE FROM charge_totals`, nil},
	}
}

// ChargeStepStatements are the statements of a metering step, as ChargeDue runs them
// in order (on PostgreSQL with its row locks), after the statement of EarliestDue
// that finds the step's month: for a benchmark to time them one by one and show
// their plans.
func (db *DB) ChargeStepStatements(st store.ChargeStep) []NamedStatement {
	q := on(db.d, db.write)
	c := q.chargeStatements(st)
	and, args := ofAccount(st.Account, ms(st.Upto))
	list := []NamedStatement{{"EarliestDue: SELECT MIN(next_at)", `SELECT MIN(next_at) FROM meters WHERE` + dueWhere + and, args}}
	return append(q.stepList(list, c.stage, c, c.meters), c.total, c.accounts, c.clear, c.clearTotals)
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
// ChargeDue and ChargeLicenses run them: on SQLite the staging tables made, then
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
	c := q.chargeStatements(store.ChargeStep{MonthStart: st.Month, Upto: st.Now, Now: st.Now})
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
// memory; a step stages at most its Limit of rows (ops.DefaultMeterBatch). On
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
    charged    INTEGER NOT NULL
)`, nil}

// stageTable makes sure a step's staging table is there (stageSQLite).
func (q queries) stageTable(ctx context.Context) error {
	if q.d == dialectPostgres {
		return nil
	}
	_, err := q.q.ExecContext(ctx, stageSQLite.Query)
	return err
}

// ChargeDue charges one hour for every meter due in the step's month (or the
// step's Limit of them): staged in charge_batch, then written to the ledger, the
// accounts and the meters, each one statement over the whole batch. The unique
// index on (resource, hour) refuses a second charge of an hour, failing the step
// (store.ErrConflict), and with it its transaction, rather than charging twice.
func (q queries) ChargeDue(ctx context.Context, st store.ChargeStep) (store.ChargeResult, error) {
	var res store.ChargeResult
	c := q.chargeStatements(st)
	if err := q.stageTable(ctx); err != nil {
		return res, err
	}
	stage, err := q.q.ExecContext(ctx, c.stage.Query, c.stage.Args...)
	if err != nil {
		return res, err
	}
	return q.chargeStaged(ctx, c, stage, c.meters)
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
