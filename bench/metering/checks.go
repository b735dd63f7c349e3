package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore"
)

// querier is what the checks read SQL through: a transaction of the store's, which
// the tests spoil first.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// meteredHours is how many hours each server and volume is charged by the end of
// pass 4: its first, T0, at order, and every hour after up to T0+7h.
const meteredHours = 8

// ledgerCheck is a count that must come out as want; what says what it checks,
// with a %d for the count.
type ledgerCheck struct {
	what  string
	query string
	args  []any
	want  int64
}

// ledgerChecks are the checks of the database after the passes that SQL answers,
// written once for both databases (derived tables named, sums cast to integers).
// The ledger as the store shows it, entry by entry, is checked by showLedger.
func (b *bench) ledgerChecks() []ledgerCheck {
	licenses := int64(b.cfg.licenses)
	last := passes(0, 0)[3].at
	return []ledgerCheck{
		{"credit == SUM(transactions.amount) for every account (%d accounts differ)", `SELECT COUNT(*) FROM accounts a
			WHERE a.credit <> (SELECT COALESCE(SUM(t.amount), 0) FROM transactions t WHERE t.account_id = a.id)`, nil, 0},
		// What account_spend (by UTC day) and the ledger's rows agreeing rests on.
		{fmt.Sprintf("every row a pass wrote holds 1 to %d hours of one UTC day (%%d do not)", sqlstore.LinesPerRow), `SELECT COUNT(*)
			FROM transactions WHERE window_end IS NOT NULL AND (type <> 'charge' OR lines < 1 OR lines > ? OR window_end <= period_start
				OR (window_end - 1) / 86400000 <> period_start / 86400000)`, []any{sqlstore.LinesPerRow}, 0},
		// Meters are written when opened and stopped, never by a pass.
		{"every meter as opened: open, billed from T0+1h, its first hour carried in November (%d are not)", `SELECT COUNT(*) FROM meters
			WHERE stopped_at IS NOT NULL OR billed_from <> ? OR month_start <> ? OR month_charged <> rate`,
			[]any{ms(t0.Add(time.Hour)), ms(billing.MonthStart(t0))}, 0},
		// Pass 4 charged every hour that starts at or before its clock, and none after.
		{"every account with meters charged past T0+7h1m, to T0+8h at most, and due next at T0+8h (%d are not)", `SELECT COUNT(*)
			FROM accounts a WHERE EXISTS (SELECT 1 FROM meters m WHERE m.account_id = a.id)
				AND (a.charged_to <= ? OR a.charged_to > ? OR a.next_due IS NULL OR a.next_due <> ?)`,
			[]any{ms(last), ms(t0.Add(8 * time.Hour)), ms(t0.Add(8 * time.Hour))}, 0},
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
		{"every account's burn is the sum of its open meters' rates (%d are not)", `SELECT COUNT(*) FROM accounts a
			WHERE a.burn <> COALESCE((SELECT SUM(m.rate) FROM meters m WHERE m.account_id = a.id AND m.stopped_at IS NULL), 0)`, nil, 0},
	}
}

// errRolledBack ends a transaction of the checks' on purpose: they leave nothing.
var errRolledBack = errors.New("rolled back")

// checkAfter runs the statements spoil in a transaction of the store (for a test to
// see a check fail), checks the passes and the ledger through it and rolls it back.
func (b *bench) checkAfter(ctx context.Context, spoil []string, results []ops.MeterResult) (ok bool, err error) {
	err = b.db.InTx(ctx, func(tx store.Tx) error {
		for _, q := range spoil {
			if _, err := tx.SQL().ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		if ok, err = b.check(ctx, tx.SQL(), tx, results); err != nil {
			return err
		}
		return errRolledBack
	})
	if errors.Is(err, errRolledBack) {
		err = nil
	}
	return ok, err
}

// check prints an OK or FAIL line for each check of the passes and the ledger, read
// through q and, as the API shows it, through r; ok is false when one failed.
func (b *bench) check(ctx context.Context, q querier, r store.Reader, results []ops.MeterResult) (ok bool, err error) {
	ok = true
	line := func(good bool, format string, args ...any) {
		word := "OK  "
		if !good {
			word, ok = "FAIL", false
		}
		fmt.Fprintf(b.out, "%s %s\n", word, fmt.Sprintf(format, args...))
	}
	metered, licenses := b.cfg.servers+b.cfg.volumes, b.cfg.licenses
	for i, p := range passes(metered, licenses) {
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
	// The license step's staging tables: on SQLite TEMP tables of the write
	// connection that a license step makes, so not there (and empty) without one.
	for _, table := range []string{"charge_batch", "charge_totals"} {
		made := int64(1)
		if !b.db.Postgres() {
			if made, err = count(`SELECT COUNT(*) FROM sqlite_temp_master WHERE type = 'table' AND name = ?`, table); err != nil {
				return false, err
			}
		}
		var n int64
		if made > 0 {
			if n, err = count(`SELECT COUNT(*) FROM ` + table); err != nil {
				return false, err
			}
		}
		line(n == 0, "%s left empty (%d rows)", table, n)
	}

	prices, err := b.seededPrices(ctx, q)
	if err != nil {
		return false, err
	}
	s, err := b.showLedger(ctx, q, r, prices)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(b.out, "     (the ledger through the store's Transactions: %d accounts, %d entries, in %s)\n", s.accounts, s.entries, seconds(s.took))
	why := ""
	if s.unshown > 0 {
		why = ": " + s.firstErr
	}
	line(s.unshown == 0, "every account's ledger shows all its entries through the store, each row's hours adding up to it (%d accounts' do not%s)",
		s.unshown, why)
	line(s.offBalance == 0, "balance_after == running sum of the account's entries for every entry shown (%d differ)", s.offBalance)
	line(s.twice == 0, "no (resource_type, resource_id, hour) charged twice (%d are)", s.twice)
	wantCharges := meteredHours*metered + 2*licenses
	line(s.charges == wantCharges, "%d charges shown, want %d (%d hours × %d servers and volumes, 2 months × %d licenses)",
		s.charges, wantCharges, meteredHours, metered, licenses)
	line(s.exactHours == metered && s.stray == 0, "every server and volume charged exactly the hours T0 .. T0+7h (%d are not)",
		metered-s.exactHours+s.stray)
	line(s.badPrice[hosting.ResourceServer] == 0, "every server's hourly charge is its plan's price_hourly (%d are not)",
		s.badPrice[hosting.ResourceServer])
	line(s.badPrice[hosting.ResourceVolume] == 0, "every volume's hourly charge is its size × its location's volume_price_gb_hour (%d are not)",
		s.badPrice[hosting.ResourceVolume])

	// Every hour due charged exactly once, in money: each account's rows for its
	// servers and volumes (the first hours' and the passes') against their 8 hours
	// at the seed's prices.
	differ, err := b.accountsOwedDiffer(ctx, q, prices)
	if err != nil {
		return false, err
	}
	line(differ == 0, "every account's charges for its servers and volumes == %d hours of each at its seeded price (%d accounts differ)",
		meteredHours, differ)

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

// resource is a server or a volume.
type resource struct {
	typ string
	id  int64
}

// seeded is a resource's account and price as the seed made it, from the plans and
// the volumes' sizes (not from the meters).
type seeded struct {
	account   int64
	rate, cap hosting.Money
}

// seededPrices reads every server's and volume's account and price.
func (b *bench) seededPrices(ctx context.Context, q querier) (map[resource]seeded, error) {
	rows, err := q.QueryContext(ctx, `SELECT 'server', s.id, s.account_id, p.price_hourly, p.price_monthly
		FROM servers s JOIN plans p ON p.id = s.plan_id
		UNION ALL SELECT 'volume', v.id, v.account_id, v.size_gb * l.volume_price_gb_hour, v.size_gb * l.volume_price_gb_month
		FROM volumes v JOIN locations l ON l.id = v.location_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[resource]seeded{}
	for rows.Next() {
		var r resource
		var s seeded
		if err := rows.Scan(&r.typ, &r.id, &s.account, &s.rate, &s.cap); err != nil {
			return nil, err
		}
		out[r] = s
	}
	return out, rows.Err()
}

// owed is what a resource of s owes for its meteredHours from T0, hour by hour
// within each calendar month's cap (billing.HourCharge, the rule of one hour).
func (s seeded) owed() hosting.Money {
	var sum, month hosting.Money
	for h := range meteredHours {
		at := t0.Add(time.Duration(h) * billing.Hour)
		if h > 0 && !billing.MonthStart(at).Equal(billing.MonthStart(at.Add(-billing.Hour))) {
			month = 0
		}
		c := billing.HourCharge(s.rate, &s.cap, month)
		month += c
		sum += c
	}
	return sum
}

// accountsOwedDiffer counts the accounts whose ledger rows for servers and volumes
// (every row but the top-ups and the licenses') do not sum to what their resources
// owe by the seed's prices.
func (b *bench) accountsOwedDiffer(ctx context.Context, q querier, prices map[resource]seeded) (int, error) {
	want := map[int64]hosting.Money{}
	for _, s := range prices {
		want[s.account] += s.owed()
	}
	rows, err := q.QueryContext(ctx, `SELECT account_id, CAST(-SUM(amount) AS BIGINT) FROM transactions
		WHERE type = 'charge' AND resource_type <> 'license' GROUP BY account_id`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	differ := 0
	for rows.Next() {
		var account int64
		var got hosting.Money
		if err := rows.Scan(&account, &got); err != nil {
			return 0, err
		}
		if got != want[account] {
			differ++
		}
		delete(want, account)
	}
	for _, w := range want {
		if w != 0 {
			differ++
		}
	}
	return differ, rows.Err()
}

// shown is what showLedger found.
type shown struct {
	accounts, entries int
	// unshown counts the accounts whose ledger the store could not show whole
	// (firstErr says why, for the first).
	unshown  int
	firstErr string
	// offBalance counts the entries whose balance_after is not the running sum,
	// twice the (resource, hour) shown again, charges the charges.
	offBalance, twice, charges int
	// exactHours counts the servers and volumes shown charged their hours T0 ..
	// T0+7h, once each; stray the resources charged that the seed did not make, or
	// of another account.
	exactHours, stray int
	// badPrice counts the hours of servers and volumes charged another price than
	// their seeded rate, by resource type.
	badPrice map[string]int
	took     time.Duration
}

// showLedger reads each account's ledger as the API shows it (the store's
// Transactions: a pass's row as its hours, from the meters) and checks it. The
// resources of an account are charged in its ledger alone, so what is kept is one
// account's at a time.
func (b *bench) showLedger(ctx context.Context, q querier, r store.Reader, prices map[resource]seeded) (shown, error) {
	s := shown{badPrice: map[string]int{}}
	var ids []int64
	rows, err := q.QueryContext(ctx, `SELECT id FROM accounts ORDER BY id`)
	if err != nil {
		return s, err
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return s, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s, err
	}
	type hour struct {
		r  resource
		at int64
	}
	type span struct {
		n      int
		lo, hi int64
	}
	start := time.Now()
	for _, account := range ids {
		s.accounts++
		list, total, err := r.Transactions(ctx, account, 0, 0)
		if err == nil && len(list) != total {
			err = fmt.Errorf("%d entries shown of %d", len(list), total)
		}
		if err != nil {
			if s.unshown == 0 {
				s.firstErr = fmt.Sprintf("account %d: %v", account, err)
			}
			s.unshown++
			continue
		}
		s.entries += len(list)
		seen := map[hour]bool{}
		spans := map[resource]*span{}
		var running hosting.Money
		for i := len(list) - 1; i >= 0; i-- { // oldest first
			t := list[i]
			running += t.Amount
			if t.BalanceAfter != running {
				s.offBalance++
			}
			if t.Type != hosting.TxCharge || t.ResourceID == nil || t.PeriodStart == nil {
				continue
			}
			s.charges++
			res := resource{t.ResourceType, *t.ResourceID}
			h := hour{res, ms(*t.PeriodStart)}
			if seen[h] {
				s.twice++
			}
			seen[h] = true
			if res.typ == "license" {
				continue
			}
			p, ok := prices[res]
			if !ok || p.account != account {
				s.stray++
				continue
			}
			if t.Amount != -p.rate {
				s.badPrice[res.typ]++
			}
			sp := spans[res]
			if sp == nil {
				sp = &span{lo: h.at, hi: h.at}
				spans[res] = sp
			}
			sp.n++
			sp.lo, sp.hi = min(sp.lo, h.at), max(sp.hi, h.at)
		}
		for _, sp := range spans {
			if sp.n == meteredHours && sp.lo == ms(t0) && sp.hi == ms(t0.Add((meteredHours-1)*billing.Hour)) {
				s.exactHours++
			}
		}
	}
	s.took = time.Since(start)
	return s, nil
}
