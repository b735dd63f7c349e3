// Package sqlstoretest opens migrated stores for tests: SQLite in a directory, or a
// new PostgreSQL database of the test's own (internal/testpg). It imports only the
// store, compute and testpg, so that the tests of the drivers below internal/app (which
// internal/testenv imports) may use it.
package sqlstoretest

import (
	"context"
	"testing"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/testpg"
)

// SQLite opens the SQLite store in dir with the tables of drivers (their migration
// lines; docs/drivers.md) and migrates it; it is closed when t ends.
func SQLite(t testing.TB, dir string, drivers ...compute.Storage) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.OpenSQLite(context.Background(), dir, drivers...)
	return migrated(t, db, err)
}

// Postgres opens a new PostgreSQL database (testpg.NewDatabase: it skips t when no
// server is configured) with the tables of drivers and migrates it; it is closed when
// t ends, then dropped.
func Postgres(t testing.TB, drivers ...compute.Storage) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.OpenPostgres(context.Background(), testpg.NewDatabase(t), drivers...)
	return migrated(t, db, err)
}

func migrated(t testing.TB, db *sqlstore.DB, err error) *sqlstore.DB {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}
