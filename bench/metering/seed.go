package main

import (
	"context"
	"fmt"
	"time"

	"github.com/berthhq/berth/internal/billing"
)

// The seeding SQL is written once for both databases, with numbered placeholders
// (?1, ?2: SQLite's own, and the store's Rebind makes them PostgreSQL's $1, $2) and
// integer parameters cast where a select list would leave PostgreSQL no type to
// infer. What differs is asked of the dialect: the row numbers 1..n, and formatting.

// series is the rows i = 1..n, n the parameter param: a recursive CTE on SQLite
// (with goes before the INSERT, from after its SELECT's FROM), generate_series on
// PostgreSQL.
func (b *bench) series(param string) (with, from string) {
	if b.db.Postgres() {
		return "", `generate_series(1, CAST(` + param + ` AS BIGINT)) AS n(i)`
	}
	return `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ` + param + `) `, `n`
}

// padded is the integer expression e as text, zero-padded to 7 digits.
func (b *bench) padded(e string) string {
	if b.db.Postgres() {
		return `lpad(CAST(` + e + ` AS TEXT), greatest(7, length(CAST(` + e + ` AS TEXT))), '0')`
	}
	return `printf('%07d', ` + e + `)`
}

// hex is the integer expression e in lower-case hexadecimal.
func (b *bench) hex(e string) string {
	if b.db.Postgres() {
		return `to_hex(` + e + `)`
	}
	return `printf('%x', ` + e + `)`
}

// seedStep is one set-based statement of the seeding, run in a transaction of its own.
type seedStep struct {
	what  string
	query string
	args  []any
}

// seed writes the accounts, servers, volumes, meters and ledger in a few set-based
// statements, one transaction each, then readies the database as a long-running one
// would be (see settle), and prints the time each took.
func (b *bench) seed(ctx context.Context) error {
	start := time.Now()
	w := b.db.WriteDB()
	for _, s := range b.seedSteps() {
		t := time.Now()
		tx, err := w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, b.db.Rebind(s.query), s.args...)
		if err != nil {
			tx.Rollback()
			return fmt.Errorf("seed %s: %w", s.what, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("seed %s: %w", s.what, err)
		}
		n, _ := res.RowsAffected()
		fmt.Fprintf(b.out, "  seed %-19s %8d rows %9s\n", s.what+":", n, seconds(time.Since(t)))
	}
	if err := b.settle(ctx); err != nil {
		return err
	}
	fmt.Fprintf(b.out, "seeded %d accounts, %d running servers and %d volumes with meters and first-hour charges (plans 1-%d, location %d), "+
		"%d held licenses charged their month, in %s\n",
		b.cfg.accounts, b.cfg.servers, b.cfg.volumes, plans, locationID, b.cfg.licenses, seconds(time.Since(start)))
	return b.dbSize(ctx)
}

// settle ends the seeding. On SQLite it checkpoints the WAL into the database file,
// and runs no ANALYZE: berthd never runs it, so the planner sees what it sees in
// production. On PostgreSQL it runs VACUUM (ANALYZE): in production autovacuum has
// long since done so for tables that grew over months (statistics, hint bits, the
// visibility map), where a table just filled in one statement has none, and left to
// autovacuum it would happen at some point of a pass.
func (b *bench) settle(ctx context.Context) error {
	what, query := "checkpoint:", `PRAGMA wal_checkpoint(TRUNCATE)`
	if b.db.Postgres() {
		what, query = "vacuum analyze:", `VACUUM (ANALYZE)`
	}
	t := time.Now()
	if _, err := b.db.WriteDB().ExecContext(ctx, query); err != nil {
		return fmt.Errorf("seed %s %w", what, err)
	}
	fmt.Fprintf(b.out, "  seed %-19s %13s %9s\n", what, "", seconds(time.Since(t)))
	return nil
}

// seedSteps are the seeding's statements. Ids are those of a fresh database: account
// i, server i and volume i are the i-th inserted. The ledger's rows take the ids the
// database gives (on SQLite one apart, where the store leaves a block of
// sqlstore.LinesPerRow after each row): each of them shows one entry, its own id,
// and the passes' rows come after them all.
func (b *bench) seedSteps() []seedStep {
	month := billing.MonthStart(t0)
	withN, fromN := b.series("?1")
	return append([]seedStep{
		// Each account's ledger shows one entry, its top-up (the next step).
		{"accounts", withN + `INSERT INTO accounts (email, name, password_hash, credit, server_quota, created_at, ledger_lines)
			SELECT 'bench-' || i || '@berth.local', 'Bench ' || i, '', CAST(?2 AS BIGINT), 1000000, CAST(?3 AS BIGINT), 1 FROM ` + fromN,
			[]any{b.cfg.accounts, topUp, ms(t0) - 3600_000}},
		{"top-ups", `INSERT INTO transactions (account_id, type, amount, balance_after, description, created_at, lines_before)
			SELECT id, 'topup', credit, credit, 'bench credit', created_at, 0 FROM accounts ORDER BY id`, nil},
		// Server i belongs to account 1 + (i-1) % ACCOUNTS, has plan 1 + (i-1) % 5 and
		// image 1 + (i-1) % 4.
		{"servers", withN + `INSERT INTO servers (account_id, name, display_name, status, location_id, plan_id, image_id, vcpus, memory_mb,
				disk_gb, ipv4, ipv6, created_at)
			SELECT 1 + (i - 1) % ?2, 'bench-' || ` + b.padded("i") + `, 'bench-' || ` + b.padded("i") + `, 'running', CAST(?3 AS BIGINT), p.id,
				1 + (i - 1) % ?4, p.vcpus, p.memory_mb, p.disk_gb,
				'100.' || (64 + i / 65536) || '.' || ((i / 256) % 256) || '.' || (i % 256), '2001:db8:' || ` + b.hex("i") + ` || '::1',
				CAST(?5 AS BIGINT)
			FROM ` + fromN + ` JOIN plans p ON p.id = 1 + (i - 1) % ?6
			ORDER BY i`,
			[]any{b.cfg.servers, b.cfg.accounts, locationID, images, ms(t0), plans}},
		// As ops' openServerMeter: first hour charged at order (a row of the ledger),
		// the pass's from T0+1h; the month carries that first hour.
		{"meters", `INSERT INTO meters (account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at, billed_from,
				month_start, month_charged)
			SELECT s.account_id, 'server', s.id, s.name, p.price_hourly, p.price_monthly, CAST(?1 AS BIGINT), CAST(?2 AS BIGINT),
				CAST(?3 AS BIGINT), p.price_hourly
			FROM servers s JOIN plans p ON p.id = s.plan_id ORDER BY s.id`,
			[]any{ms(t0), ms(t0.Add(time.Hour)), ms(month)}},
		b.volumeStep(),
		{"volume meters", `INSERT INTO meters (account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at, billed_from,
				month_start, month_charged)
			SELECT v.account_id, 'volume', v.id, v.name, v.size_gb * l.volume_price_gb_hour, v.size_gb * l.volume_price_gb_month,
				CAST(?1 AS BIGINT), CAST(?2 AS BIGINT), CAST(?3 AS BIGINT), v.size_gb * l.volume_price_gb_hour
			FROM volumes v JOIN locations l ON l.id = v.location_id ORDER BY v.id`,
			[]any{ms(t0), ms(t0.Add(time.Hour)), ms(month)}},
		// The first hours, as AddCoveredTransaction writes them: in meter order per
		// account, each showing the balance after it and following the entries before.
		{"first-hour charges", `INSERT INTO transactions (account_id, type, amount, balance_after, description, resource_type, resource_id,
				resource_name, period_start, created_at, lines_before)
			SELECT m.account_id, 'charge', -m.rate,
				a.credit - SUM(m.rate) OVER (PARTITION BY m.account_id ORDER BY m.id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
				'', m.resource_type, m.resource_id, m.resource_name, m.started_at, m.started_at,
				a.ledger_lines - 1 + ROW_NUMBER() OVER (PARTITION BY m.account_id ORDER BY m.id)
			FROM meters m JOIN accounts a ON a.id = m.account_id
			ORDER BY m.id`, nil},
		// The first hours' charges, each account's burn (every meter is active) and its
		// next hour due (its meters' first: the pass finds the account by it), as
		// opening the meters does. charged_to is that hour too, as the migration to
		// derived metering leaves an account charged so far; OpenMeter leaves a new
		// account's at 0, which charges the same hours (none has a meter before it).
		{"credit", `UPDATE accounts SET credit = credit - t.total, burn = t.total, ledger_lines = ledger_lines + t.n,
				next_due = t.due, charged_to = t.due
			FROM (SELECT account_id, SUM(rate) AS total, COUNT(*) AS n, MIN(billed_from) AS due FROM meters GROUP BY account_id) AS t
			WHERE accounts.id = t.account_id`, nil},
	}, append(b.licenseSteps(),
		// What each account spent a day, as writing the ledger keeps it (Spent).
		seedStep{"account spend", `INSERT INTO account_spend (account_id, day, amount)
			SELECT account_id, period_start / 86400000, SUM(amount) FROM transactions
			WHERE type IN ('charge', 'refund') AND period_start IS NOT NULL
			GROUP BY account_id, period_start / 86400000`, nil})...)
}

// licensePrice is what a month of license l costs on server s (hosting.License's
// MonthlyPrice), as the metering step stages it.
const licensePrice = `CASE WHEN l.per = 'vcpu' THEN l.price_monthly * s.vcpus ELSE l.price_monthly END`

// licenseSteps seed the held licenses as accepting them writes them (ops'
// holdLicense): license i is held by server 1 + (i-1) % SERVERS (so at most two a
// server), product 1 (per vCPU) or 3 (per server) in turn, accepted at T0 and paid
// through the next month's start; its month's use recorded, its month charged, after
// the first hours in the ledger.
func (b *bench) licenseSteps() []seedStep {
	month, next := billing.MonthStart(t0), billing.MonthEnd(t0)
	withN, fromN := b.series("?1")
	return []seedStep{
		{"licenses", withN + `INSERT INTO server_licenses (account_id, server_id, license_id, name, status, started_at, paid_through,
				charged_vcpus)
			SELECT s.account_id, s.id, l.id, l.name, 'active', CAST(?3 AS BIGINT), CAST(?4 AS BIGINT), s.vcpus
			FROM ` + fromN + ` JOIN servers s ON s.id = 1 + (i - 1) % CAST(?2 AS BIGINT)
				JOIN licenses l ON l.id = CASE WHEN ((i - 1) % CAST(?2 AS BIGINT) + (i - 1) / CAST(?2 AS BIGINT)) % 2 = 0 THEN 1 ELSE 3 END
			WHERE CAST(?5 AS BIGINT) > 0 ORDER BY i`,
			[]any{max(b.cfg.licenses, 1), b.cfg.servers, ms(t0), ms(next), b.cfg.licenses}},
		{"license usage", `INSERT INTO license_usage (server_license_id, month, max_vcpus)
			SELECT id, CAST(?1 AS BIGINT), charged_vcpus FROM server_licenses ORDER BY id`, []any{ms(month)}},
		{"license charges", `INSERT INTO transactions (account_id, type, amount, balance_after, description, resource_type, resource_id,
				resource_name, period_start, created_at, lines_before)
			SELECT sl.account_id, 'charge', -` + licensePrice + `,
				a.credit - SUM(` + licensePrice + `) OVER (PARTITION BY sl.account_id ORDER BY sl.id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
				'', 'license', sl.id, sl.name, CAST(?1 AS BIGINT), CAST(?2 AS BIGINT),
				a.ledger_lines - 1 + ROW_NUMBER() OVER (PARTITION BY sl.account_id ORDER BY sl.id)
			FROM server_licenses sl JOIN licenses l ON l.id = sl.license_id JOIN servers s ON s.id = sl.server_id
				JOIN accounts a ON a.id = sl.account_id
			ORDER BY sl.id`, []any{ms(month), ms(t0)}},
		{"license credit", `UPDATE accounts SET credit = credit - t.total, ledger_lines = ledger_lines + t.n
			FROM (SELECT sl.account_id, SUM(` + licensePrice + `) AS total, COUNT(*) AS n
				FROM server_licenses sl JOIN licenses l ON l.id = sl.license_id JOIN servers s ON s.id = sl.server_id
				GROUP BY sl.account_id) AS t
			WHERE accounts.id = t.account_id`, nil},
	}
}

// volumeStep seeds the volumes: volume i belongs to account 1 + (i-1) % ACCOUNTS, is
// 10 to 100 GB in location 1, every other one attached to server i (when there is
// one); "volume meters" then bills each as ops' openVolumeMeter does (size × the
// location's prices).
func (b *bench) volumeStep() seedStep {
	withN, fromN := b.series("?1")
	return seedStep{"volumes", withN + `INSERT INTO volumes (account_id, name, size_gb, location_id, server_id, format, status, created_at)
			SELECT 1 + (i - 1) % ?2, 'vol-' || ` + b.padded("i") + `, 10 * (1 + i % 10), CAST(?3 AS BIGINT),
				CASE WHEN i % 2 = 0 AND i <= ?4 THEN i END, 'ext4', 'available', CAST(?5 AS BIGINT)
			FROM ` + fromN + ` WHERE CAST(?6 AS BIGINT) > 0 ORDER BY i`,
		[]any{max(b.cfg.volumes, 1), b.cfg.accounts, locationID, b.cfg.servers, ms(t0), b.cfg.volumes}}
}
