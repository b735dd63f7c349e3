package sqlstore

import (
	"context"
	"testing"

	"github.com/pressly/goose/v3"
)

// TestVolumesMigrationKeepsOperations: on SQLite, 00019 makes the operations table
// anew (server_id may be NULL now). Every row comes across as it was, and ids go on
// from the old table's sequence, not from its highest row left: an id a sandbox reset
// deleted is never given again.
func TestVolumesMigrationKeepsOperations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := OpenSQLite(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	migrateStoreUpTo(t, db, 18)
	for _, q := range []string{
		`PRAGMA foreign_keys = OFF`, // no plans or images: the rows only need to be there
		`INSERT INTO accounts (id, email, name, password_hash, language, currency, credit, blocked, server_quota, created_at) VALUES (1, 'a@example.com', 'a', '', 'en', 'EUR', 0, 0, 5, 0)`,
		`INSERT INTO locations (id, name, city, country, snapshot_price_gb_hour) VALUES (1, 'fsn1', 'F', 'DE', 1)`,
		`INSERT INTO servers (id, account_id, name, display_name, status, location_id, plan_id, image_id, vcpus, memory_mb, disk_gb, root_pass_hash, ssh_key_ids, created_at)
			VALUES (1, 1, 'server-aaaaaa', 'a', 'running', 1, 1, 1, 1, 1024, 20, '', '', 0)`,
		`INSERT INTO operations (account_id, server_id, type, action, status, error, started_at, finished_at, snapshot_id, plan_id, upgrade_disk, after_status)
			VALUES (1, 1, 'power', 'off', 'success', '', 10, 20, NULL, 3, 1, 'stopped')`,
		`INSERT INTO operations (account_id, server_id, type, status, started_at) VALUES (1, 1, 'reboot', 'error', 30)`,
		`INSERT INTO operations (account_id, server_id, type, status, started_at) VALUES (1, 1, 'power', 'running', 40)`,
		`DELETE FROM operations WHERE id = 3`,
		`PRAGMA foreign_keys = ON`,
	} {
		if _, err := db.write.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	op, err := db.OperationAny(ctx, 1)
	if err != nil || op.ServerID != 1 || op.Action != "off" || op.FinishedAt == nil || op.PlanID == nil || *op.PlanID != 3 ||
		!op.UpgradeDisk || op.AfterStatus != "stopped" || op.VolumeID != nil {
		t.Errorf("operation 1 after the migration: %+v, %v", op, err)
	}
	var id int64
	if err := db.write.QueryRowContext(ctx, `INSERT INTO operations (account_id, type, status, started_at) VALUES (1, 'create_volume', 'running', 50) RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if id != 4 {
		t.Errorf("the first operation after the migration has id %d, want 4 (3 was given before)", id)
	}
}

// migrateStoreUpTo migrates db's store line (not the drivers') up to version v, for
// a test of what a later migration does to the rows it finds.
func migrateStoreUpTo(t *testing.T, db *DB, v int64) {
	t.Helper()
	if _, err := storeLine(t, db).UpTo(context.Background(), v); err != nil {
		t.Fatal(err)
	}
}

// storeLine is goose's view of db's store line (not the drivers'), on the writer.
func storeLine(t *testing.T, db *DB) *goose.Provider {
	t.Helper()
	lines, err := db.lines()
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.provider(lines[0], db.write)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
