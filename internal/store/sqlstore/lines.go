package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"

	"github.com/berthhq/berth/internal/compute"
)

// The schema is migrated along several lines, each with goose's version table of its
// own: the store's (goose's default table, goose_db_version), then each compute
// driver's (goose_<line>_version), which owns its tables (docs/drivers.md). A line's
// versions say nothing of another's: a driver's migrations change without the
// store's, and a driver new to a database starts its line at 1.

// line is one migration line of the database's dialect.
type line struct {
	// name is the line's ("" for the store's).
	name string
	// table is goose's version table of the line.
	table string
	// migrations are the line's migrations for the database's dialect.
	migrations fs.FS
}

// storeTable is goose's version table of the store's line (its default name).
const storeTable = "goose_db_version"

// lineTable is goose's version table of a driver's line.
func lineTable(name string) string { return "goose_" + name + "_version" }

// lines are the database's migration lines in the order Migrate runs them: the
// store's, then the drivers' in the order the store was opened with them.
func (db *DB) lines() ([]line, error) {
	dir := compute.DialectSQLite
	own := fs.FS(sqliteMigrations)
	if db.d == dialectPostgres {
		dir, own = compute.DialectPostgres, postgresMigrations
	}
	sub, err := fs.Sub(own, "migrations/"+dir)
	if err != nil {
		return nil, err
	}
	out := []line{{table: storeTable, migrations: sub}}
	for _, s := range db.drivers {
		sub, err := fs.Sub(s.Migrations, dir)
		if err != nil {
			return nil, fmt.Errorf("migrations of %s: %w", s.Line, err)
		}
		out = append(out, line{name: s.Line, table: lineTable(s.Line), migrations: sub})
	}
	return out, nil
}

// gooseDialect is goose's name of the database's dialect.
func (db *DB) gooseDialect() database.Dialect {
	if db.d == dialectPostgres {
		return database.DialectPostgres
	}
	return database.DialectSQLite3
}

// provider is goose's view of line l on pool.
func (db *DB) provider(l line, pool *sql.DB) (*goose.Provider, error) {
	p, err := goose.NewProvider(db.gooseDialect(), pool, l.migrations, goose.WithTableName(l.table))
	if err != nil {
		return nil, fmt.Errorf("migrations%s: %w", l.of(), err)
	}
	return p, nil
}

// of names the line in an error ("" for the store's).
func (l line) of() string {
	if l.name == "" {
		return ""
	}
	return " of " + l.name
}

// migrateLines brings every line up to date, the store's first.
func (db *DB) migrateLines(ctx context.Context) error {
	lines, err := db.lines()
	if err != nil {
		return err
	}
	for _, l := range lines {
		p, err := db.provider(l, db.write)
		if err != nil {
			return err
		}
		if _, err := p.Up(ctx); err != nil {
			return fmt.Errorf("migrate%s: %w", l.of(), err)
		}
	}
	return nil
}

// want is the version this build's migrations of line l end at.
func (db *DB) want(l line) (int64, error) {
	p, err := db.provider(l, db.read)
	if err != nil {
		return 0, err
	}
	sources := p.ListSources()
	if len(sources) == 0 {
		return 0, fmt.Errorf("migrations%s: none embedded", l.of())
	}
	return sources[len(sources)-1].Version, nil
}

// have is the version the database's line l is at, read on pool without writing (an
// error when goose's version table of the line is missing or empty).
func (db *DB) have(ctx context.Context, l line, pool *sql.DB) (int64, error) {
	versions, err := database.NewStore(db.gooseDialect(), l.table)
	if err != nil {
		return 0, err
	}
	return versions.GetLatestVersion(ctx, pool)
}
