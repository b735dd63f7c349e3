package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// storeTables lists the store's tables in the order a copy writes them (a row's foreign
// keys point at tables earlier in the list). The drivers' tables follow, as each
// driver lists them (compute.Storage). The job queue's tables are River's and copied
// through River (internal/app); goose's version tables are each database's own.
var storeTables = []string{
	"accounts", "account_clocks", "tokens", "locations", "plans", "images", "apps", "location_plans", "location_images",
	"licenses", "license_images", "ssh_keys", "projects", "recipes", "servers", "server_keys", "server_licenses", "license_keys", "license_usage", "volumes", "operations", "transactions", "account_spend",
	"snapshots", "metric_samples", "meters", "idempotency_keys", "audit_log", "sessions", "password_resets", "console_tickets", "events",
	"webhooks", "webhook_deliveries", "webhook_attempts", "zones", "zone_rrsets", "server_ptrs", "zone_serials",
	"tickets", "ticket_messages", "attachments", "settings",
}

// notCopied are the tables a copy leaves behind: staging that is empty between
// transactions (PostgreSQL's charge_batch and charge_totals; SQLite's are TEMP
// tables), the leases of the processes serving the source (console_sessions: open
// serial consoles, which end with them), and what belongs to
// goose, River and SQLite. goose's version tables of the drivers' lines are left
// behind too (notCopied adds them).
var notCopied = []string{"charge_batch", "charge_totals", "console_sessions", storeTable, "sqlite_sequence"}

// copyTables lists the tables a copy of db writes, in the order it writes them: the
// store's, then each driver's.
func (db *DB) copyTables() []string {
	out := slices.Clone(storeTables)
	for _, s := range db.drivers {
		out = append(out, s.Tables...)
	}
	return out
}

// notCopied lists the tables of db a copy knowingly leaves behind.
func (db *DB) notCopied() []string {
	out := slices.Clone(notCopied)
	for _, s := range db.drivers {
		out = append(out, lineTable(s.Line))
	}
	return out
}

// Tables lists the database's tables (its own, not River's).
func (db *DB) Tables(ctx context.Context) ([]string, error) {
	query := `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
	if db.d == dialectPostgres {
		query = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name`
	}
	tables, err := column[string](ctx, db.read, query)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range tables {
		if !strings.HasPrefix(t, "river_") {
			out = append(out, t)
		}
	}
	return out, nil
}

// CheckCopyCovers reports a table of db that a copy would neither write nor knowingly
// leave behind: a migration of the store's added it and storeTables must learn of
// it, or a driver's table is in db while the driver is not among those db was opened
// with (or does not list it in its compute.Storage).
func (db *DB) CheckCopyCovers(ctx context.Context) error {
	tables, err := db.Tables(ctx)
	if err != nil {
		return err
	}
	copied, left := db.copyTables(), db.notCopied()
	for _, t := range tables {
		if !slices.Contains(copied, t) && !slices.Contains(left, t) {
			return fmt.Errorf("table %s is not known to the copy", t)
		}
	}
	return nil
}

// Empty reports the first of Berth's tables in db that holds a row ("" when none do).
func (db *DB) Empty(ctx context.Context) (string, error) {
	for _, t := range db.copyTables() {
		var any int
		err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM `+t+` LIMIT 1) AS x`).Scan(&any)
		if err != nil {
			return "", err
		}
		if any > 0 {
			return t, nil
		}
	}
	return "", nil
}

// copyBatch is how many rows one INSERT of a copy writes.
const copyBatch = 200

// copiedColumns is what a copy selects of table in the SQLite source: every column,
// and the implicit rowid when the PostgreSQL target spells it out as a column named
// rowid (a table whose rows derive something from it, as the simulated driver's
// machines their addresses).
func copiedColumns(ctx context.Context, to *sql.Tx, table string) (string, error) {
	var n int
	err := to.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 AND column_name = 'rowid'`, table).Scan(&n)
	if err != nil || n == 0 {
		return "*", err
	}
	return "*, rowid", nil
}

// CopyTo writes every row of Berth's tables in db (the store's and its drivers') into
// the PostgreSQL database to, in one transaction of to's, and returns how many rows
// each table had. to must be migrated, with the same drivers, and empty; db must not
// change meanwhile (no serve holds it). Identity sequences continue after the copied
// ids, so that ids keep growing. then, when set, runs in the same transaction before
// it commits (the job queue's copy).
func (db *DB) CopyTo(ctx context.Context, to *DB, then func(tx *sql.Tx) error) (map[string]int, error) {
	if to.d != dialectPostgres {
		return nil, fmt.Errorf("copy: the target is not PostgreSQL")
	}
	if err := db.CheckCopyCovers(ctx); err != nil {
		return nil, fmt.Errorf("copy: %w", err)
	}
	counts := map[string]int{}
	tx, err := to.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	for _, table := range db.copyTables() {
		cols, err := copiedColumns(ctx, tx, table)
		if err != nil {
			return nil, fmt.Errorf("copy %s: %w", table, err)
		}
		rows, err := db.read.QueryContext(ctx, `SELECT `+cols+` FROM `+table)
		if err != nil {
			return nil, fmt.Errorf("copy %s: %w", table, err)
		}
		names, err := rows.Columns()
		if err != nil {
			rows.Close()
			return nil, err
		}
		var batch []any
		n := 0
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			var b strings.Builder
			b.WriteString(`INSERT INTO ` + table + ` (` + strings.Join(names, ", ") + `) OVERRIDING SYSTEM VALUE VALUES `)
			for r := 0; r < len(batch)/len(names); r++ {
				if r > 0 {
					b.WriteString(", ")
				}
				b.WriteByte('(')
				for c := range names {
					if c > 0 {
						b.WriteString(", ")
					}
					fmt.Fprintf(&b, "$%d", r*len(names)+c+1)
				}
				b.WriteByte(')')
			}
			_, err := tx.ExecContext(ctx, b.String(), batch...)
			batch = batch[:0]
			return err
		}
		// Not collect: a table is streamed into batches of copyBatch rows as it is
		// read, never held whole (metric_samples alone gains a row per server every
		// metrics.Interval).
		for rows.Next() {
			vals := make([]any, len(names))
			ptrs := make([]any, len(names))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return nil, fmt.Errorf("copy %s: %w", table, err)
			}
			batch = append(batch, vals...)
			n++
			if n%copyBatch == 0 {
				if err := flush(); err != nil {
					rows.Close()
					return nil, fmt.Errorf("copy %s: %w", table, err)
				}
			}
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return nil, fmt.Errorf("copy %s: %w", table, err)
		}
		rows.Close()
		if err := flush(); err != nil {
			return nil, fmt.Errorf("copy %s: %w", table, err)
		}
		counts[table] = n
	}
	// Identity columns continue after the highest id copied.
	ids, err := tx.QueryContext(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND is_identity = 'YES'`)
	idCols, err := collect(ids, err, func(sc func(...any) error) (tc [2]string, err error) {
		err = sc(&tc[0], &tc[1])
		return tc, err
	})
	if err != nil {
		return nil, err
	}
	for _, tc := range idCols {
		// The ledger's rows take LinesPerRow ids each (its identity counts in blocks).
		step := 1
		if tc[0] == "transactions" {
			step = LinesPerRow
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`SELECT setval(pg_get_serial_sequence('%s', '%s'),
			COALESCE((SELECT MAX(%s) FROM %s), 0) + %d, false)`, tc[0], tc[1], tc[1], tc[0], step)); err != nil {
			return nil, fmt.Errorf("copy: ids of %s: %w", tc[0], err)
		}
	}
	if then != nil {
		if err := then(tx); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return counts, nil
}
