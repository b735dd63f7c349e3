package main

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store/sqlstore"
)

// querier is what the checks read through: the database, or a transaction (the
// tests check a ledger they spoil and roll back).
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ledgerCheck is a count that must come out as want; what says what it checks,
// with a %d for the count.
type ledgerCheck struct {
	what  string
	query string
	args  []any
	want  int64
}

// ledgerChecks are the checks of the ledger after the passes, written once for both
// databases (derived tables named, IS NULL OR <> for IS NOT, sums cast to integers).
func (b *bench) ledgerChecks() []ledgerCheck {
	metered, licenses := int64(b.cfg.servers+b.cfg.volumes), int64(b.cfg.licenses)
	return []ledgerCheck{
		{"credit == SUM(transactions.amount) for every account (%d accounts differ)", `SELECT COUNT(*) FROM accounts a
			WHERE a.credit <> (SELECT COALESCE(SUM(t.amount), 0) FROM transactions t WHERE t.account_id = a.id)`, nil, 0},
		{"balance_after == running sum of the account's ledger for every transaction (%d differ)", `SELECT COUNT(*) FROM (SELECT balance_after,
				SUM(amount) OVER (PARTITION BY account_id ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running
			FROM transactions) AS t WHERE balance_after <> running`, nil, 0},
		{"no (resource_type, resource_id, period_start) charged twice (%d are)", `SELECT COUNT(*) FROM (SELECT 1 FROM transactions
			WHERE type = 'charge' GROUP BY resource_type, resource_id, period_start HAVING COUNT(*) > 1) AS t`, nil, 0},
		// The first hour at order, one in pass 1, five in pass 3, one in pass 4; each
		// license's month at acceptance and the next in pass 4.
		{fmt.Sprintf("%%d charge transactions, want %d (8 hours × %d servers and volumes, 2 months × %d licenses)",
			8*metered+2*licenses, metered, licenses),
			`SELECT COUNT(*) FROM transactions WHERE type = 'charge'`, nil, 8*metered + 2*licenses},
		{"every server and volume charged exactly the hours T0 .. T0+7h (%d are not)", `SELECT COUNT(*) FROM (SELECT resource_id
			FROM transactions WHERE type = 'charge' AND resource_type <> 'license' GROUP BY resource_type, resource_id
			HAVING COUNT(*) <> 8 OR MIN(period_start) <> ? OR MAX(period_start) <> ?) AS t`, []any{ms(t0), ms(t0.Add(7 * time.Hour))}, 0},
		{"every server's hourly charge is its plan's price_hourly (%d are not)", `SELECT COUNT(*) FROM transactions t
			JOIN servers s ON s.id = t.resource_id JOIN plans p ON p.id = s.plan_id
			WHERE t.type = 'charge' AND t.resource_type = 'server' AND t.amount <> -p.price_hourly`, nil, 0},
		{"every volume's hourly charge is its size × its location's volume_price_gb_hour (%d are not)", `SELECT COUNT(*) FROM transactions t
			JOIN volumes v ON v.id = t.resource_id JOIN locations l ON l.id = v.location_id
			WHERE t.type = 'charge' AND t.resource_type = 'volume' AND t.amount <> -(v.size_gb * l.volume_price_gb_hour)`, nil, 0},
		// Pass 4's hour is the first of December: the meters' month starts again there.
		{"every meter's next hour is T0+8h, its month December's and its month_charged 1 × rate (%d are not)", `SELECT COUNT(*) FROM meters
			WHERE next_at IS NULL OR next_at <> ? OR month_start <> ? OR month_charged <> rate`,
			[]any{ms(t0.Add(8 * time.Hour)), ms(firstOfMonth)}, 0},
		{"every held license charged exactly once for the new month (%d are not)", `SELECT COUNT(*) FROM server_licenses sl
			WHERE (SELECT COUNT(*) FROM transactions t WHERE t.type = 'charge' AND t.resource_type = 'license' AND t.resource_id = sl.id
				AND t.period_start = ?) <> 1`, []any{ms(firstOfMonth)}, 0},
		{fmt.Sprintf("%%d license charges, want %d (each license's month at acceptance and the new one)", 2*licenses),
			`SELECT COUNT(*) FROM transactions WHERE type = 'charge' AND resource_type = 'license'`, nil, 2 * licenses},
		{"every license's charge for the new month is its month's price on its server (%d are not)", `SELECT COUNT(*) FROM transactions t
			JOIN server_licenses sl ON sl.id = t.resource_id JOIN licenses l ON l.id = sl.license_id JOIN servers s ON s.id = sl.server_id
			WHERE t.type = 'charge' AND t.resource_type = 'license' AND t.period_start = ? AND t.amount <> -` + licensePrice,
			[]any{ms(firstOfMonth)}, 0},
		{"every held license paid through the month after the new one, for its server's vCPUs (%d are not)", `SELECT COUNT(*)
			FROM server_licenses sl JOIN servers s ON s.id = sl.server_id
			WHERE sl.status <> 'active' OR sl.paid_through <> ? OR sl.charged_vcpus <> s.vcpus`, []any{ms(firstOfMonth.AddDate(0, 1, 0))}, 0},
		{fmt.Sprintf("%%d licenses' use recorded for the new month, want %d", licenses),
			`SELECT COUNT(*) FROM license_usage WHERE month = ?`, []any{ms(firstOfMonth)}, licenses},
		{"account_spend == the ledger's charges and refunds by account and day (%d pairs differ)", sqlstore.AccountSpendMismatches, nil, 0},
		{"charge_batch left empty (%d rows)", `SELECT COUNT(*) FROM charge_batch`, nil, 0},
		{"charge_totals left empty (%d rows)", `SELECT COUNT(*) FROM charge_totals`, nil, 0},
		{"every account's burn is the sum of its active meters' rates (%d are not)", `SELECT COUNT(*) FROM accounts a
			WHERE a.burn <> COALESCE((SELECT SUM(m.rate) FROM meters m WHERE m.account_id = a.id AND m.next_at IS NOT NULL AND m.stopped_at IS NULL), 0)`,
			nil, 0},
	}
}

// check prints an OK or FAIL line for each check of the passes and the ledger, read
// through q; ok is false when one failed.
func (b *bench) check(ctx context.Context, q querier, results []ops.MeterResult) (ok bool, err error) {
	ok = true
	line := func(good bool, format string, args ...any) {
		word := "OK  "
		if !good {
			word, ok = "FAIL", false
		}
		fmt.Fprintf(b.out, "%s %s\n", word, fmt.Sprintf(format, args...))
	}
	for i, p := range passes(b.cfg.servers+b.cfg.volumes, b.cfg.licenses) {
		line(results[i].Hours == p.wantHours, "%s: %d hours charged, want %d", p.name, results[i].Hours, p.wantHours)
		line(results[i].Overdrawn == 0, "%s: %d accounts overdrawn, want 0", p.name, results[i].Overdrawn)
	}
	count := func(query string, args ...any) (int64, error) {
		var n int64
		err := q.QueryRowContext(ctx, b.db.Rebind(query), args...).Scan(&n)
		if err != nil {
			err = fmt.Errorf("%s: %w", query, err)
		}
		return n, err
	}
	for _, c := range b.ledgerChecks() {
		n, err := count(c.query, c.args...)
		if err != nil {
			return false, err
		}
		line(n == c.want, c.what, n)
	}
	charged, err := count(`SELECT CAST(-SUM(amount) AS BIGINT) FROM transactions WHERE type = 'charge'`)
	if err != nil {
		return false, err
	}
	first, err := count(`SELECT CAST(SUM(rate) AS BIGINT) FROM meters`)
	if err != nil {
		return false, err
	}
	accepted, err := count(`SELECT CAST(-COALESCE(SUM(amount), 0) AS BIGINT) FROM transactions
		WHERE type = 'charge' AND resource_type = 'license' AND period_start = ?`, ms(billing.MonthStart(t0)))
	if err != nil {
		return false, err
	}
	var sum hosting.Money
	for _, r := range results {
		sum += r.Total
	}
	line(hosting.Money(charged) == hosting.Money(first+accepted)+sum,
		"ledger's charges %s == first hours %s + licenses' accepted months %s + the passes' totals %s",
		hosting.Money(charged), hosting.Money(first), hosting.Money(accepted), sum)
	return ok, nil
}
