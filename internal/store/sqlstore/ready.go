package sqlstore

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"

	"github.com/berthhq/berth/internal/store"
)

// gooseTable is goose's version table (its default name, which Migrate uses).
const gooseTable = "goose_db_version"

// schema is what the database's schema is migrated from: goose's dialect and the
// embedded migrations (the ones Migrate applies).
func (db *DB) schema() (database.Dialect, fs.FS, error) {
	if db.d == dialectPostgres {
		sub, err := fs.Sub(postgresMigrations, "migrations/postgres")
		return database.DialectPostgres, sub, err
	}
	sub, err := fs.Sub(sqliteMigrations, "migrations/sqlite")
	return database.DialectSQLite3, sub, err
}

// Ready implements store.Store. The ping goes to the write pool, the pool every change
// needs; the schema's version is read on the read pool, so that a probe never waits
// for the writer longer than the ping did, and never writes (goose's own version
// check creates its table when it is missing). A schema newer than this build's is
// ready: while processes are upgraded one at a time, the first one migrates and the
// older ones keep serving (migrations only add).
func (db *DB) Ready(ctx context.Context) error {
	if err := db.write.PingContext(ctx); err != nil {
		return fmt.Errorf("%w: %v", store.ErrUnreachable, err)
	}
	dialect, sub, err := db.schema()
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(dialect, db.read, sub)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	sources := p.ListSources()
	if len(sources) == 0 {
		return fmt.Errorf("migrations: none embedded")
	}
	want := sources[len(sources)-1].Version
	versions, err := database.NewStore(dialect, gooseTable)
	if err != nil {
		return err
	}
	have, err := versions.GetLatestVersion(ctx, db.read)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %v", store.ErrUnreachable, err)
		}
		// No version table, or no version in it: never migrated.
		return fmt.Errorf("%w: schema version unknown: %v", store.ErrNotMigrated, err)
	}
	if have < want {
		return fmt.Errorf("%w: schema at version %d, this build needs %d", store.ErrNotMigrated, have, want)
	}
	return nil
}
