package sqlstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/compute/simdriver"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
	"github.com/berthhq/berth/internal/store/storetest"
	"github.com/berthhq/berth/internal/testpg"
)

func TestSQLite(t *testing.T) {
	t.Parallel()
	storetest.Exercise(t, func(t *testing.T) store.Store { return sqlstoretest.SQLite(t, t.TempDir()) })
}

// Migrating twice (every start does) changes nothing.
func TestMigrateTwice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for range 2 {
		db, err := sqlstore.OpenSQLite(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
}

func TestPostgres(t *testing.T) {
	t.Parallel()
	testpg.Require(t)
	storetest.Exercise(t, func(t *testing.T) store.Store { return sqlstoretest.Postgres(t) })
}

// Migrating twice (every start does) changes nothing, on PostgreSQL too.
func TestPostgresMigrateTwice(t *testing.T) {
	t.Parallel()
	u := testpg.NewDatabase(t)
	for range 2 {
		db, err := sqlstore.OpenPostgres(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
}

// A table a migration adds must be known to admin store copy, or the copy would
// leave its rows behind: the store's tables to the store, a driver's to the driver.
func TestCopyKnowsEveryTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := sqlstoretest.SQLite(t, dir, drivers()...)
	if err := db.CheckCopyCovers(context.Background()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Opened without the libvirt driver, the database still holds its tables.
	db = sqlstoretest.SQLite(t, dir, simdriver.Storage())
	if err := db.CheckCopyCovers(context.Background()); err == nil || !strings.Contains(err.Error(), "libvirt_") {
		t.Errorf("CheckCopyCovers without the libvirt driver = %v, want its tables unknown", err)
	}
}

// A data directory's name may hold the characters a file: URI gives a meaning to: the
// database is the one inside it, never a file named by a part of its path.
func TestDataDirNameWithURICharacters(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dir := filepath.Join(parent, "a#b?c%41d")
	sqlstoretest.SQLite(t, dir)
	if _, err := os.Stat(filepath.Join(dir, sqlstore.DBFile)); err != nil {
		t.Errorf("the database is not in the data directory: %v", err)
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "a#b?c%41d" {
			t.Errorf("a file beside the data directory: %s", e.Name())
		}
	}
}
