package sqlstore_test

import (
	"context"
	"testing"

	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/store/storetest"
)

func TestSQLite(t *testing.T) {
	t.Parallel()
	storetest.Exercise(t, func(t *testing.T) store.Store {
		db, err := sqlstore.OpenSQLite(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
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
