package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testpg"
)

// TestUsageCountsMigrateAndFollowEveryWrite: the migration that moves the counts of
// servers, volumes and snapshots into accounts (SQLite 00031, PostgreSQL 00026)
// counts what an installation holds already; after it, writes Berth does not make
// itself (a script's, several rows and accounts in one statement, hard deletes) keep
// the counts equal to the rows, on both stores.
func TestUsageCountsMigrateAndFollowEveryWrite(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		db, err := OpenSQLite(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		usageCountsAcrossMigration(t, db, 30)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		db, err := OpenPostgres(context.Background(), testpg.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		usageCountsAcrossMigration(t, db, 25)
	})
}

func usageCountsAcrossMigration(t *testing.T, db *DB, before int64) {
	ctx := context.Background()
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	migrateStoreUpTo(t, db, before)
	// What an installation holds before the migration, made by the store as it was.
	var accts [2]int64
	var srvs []int64
	err := db.InTx(ctx, func(tx store.Tx) error {
		if err := tx.ApplyCatalog(ctx, hosting.Catalog{
			Plans:  []hosting.Plan{{ID: 1, Name: "small", VCPUs: 1, MemoryMB: 1024, DiskGB: 20, PriceHourly: 70, PriceMonthly: 45100}},
			Images: []hosting.Image{{ID: 1, Name: "debian-12", OS: "debian", Version: "12"}},
			Locations: []hosting.CatalogLocation{{
				Location: hosting.Location{ID: 1, Name: "fsn1", City: "Falkenstein", Country: "DE", SnapshotPriceGBHour: 1},
				Offers:   []hosting.PlanOffer{{PlanID: 1}},
				ImageIDs: []int64{1},
			}},
		}); err != nil {
			return err
		}
		for i := range accts {
			a, err := tx.CreateAccount(ctx, hosting.Account{Email: []string{"u1@example.com", "u2@example.com"}[i], Name: "u",
				PasswordHash: "h", Language: "en", Currency: "EUR", CreatedAt: now, Quotas: hosting.Quotas{Servers: 10}})
			if err != nil {
				return err
			}
			accts[i] = a
			for j := range 3 {
				name := []string{"server-aaa", "server-bbb", "server-ccc"}[j] + []string{"1", "2"}[i]
				id, err := tx.CreateServer(ctx, hosting.Server{AccountID: a, Name: name, DisplayName: name, Status: hosting.StatusRunning,
					LocationID: 1, PlanID: 1, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, CreatedAt: now})
				if err != nil {
					return err
				}
				srvs = append(srvs, id)
			}
			if _, err := tx.CreateVolume(ctx, hosting.Volume{AccountID: a, Name: "data", SizeGB: 10 * (i + 1), LocationID: 1,
				Format: "ext4", Status: hosting.VolumeAvailable, CreatedAt: now}); err != nil {
				return err
			}
		}
		if _, err := tx.CreateSnapshot(ctx, hosting.Snapshot{AccountID: accts[0], ServerID: srvs[0], Name: "s", Status: hosting.SnapshotAvailable,
			CreatedAt: now}); err != nil {
			return err
		}
		return tx.DeleteServer(ctx, srvs[1], now)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		for _, a := range accts {
			u, err := db.Usage(ctx, a, now)
			if err != nil {
				t.Fatal(err)
			}
			var want hosting.Quotas
			err = on(db.d, db.write).q.QueryRowContext(ctx, `SELECT
				(SELECT COUNT(*) FROM servers WHERE account_id = ?1 AND deleted_at IS NULL),
				(SELECT COUNT(*) FROM volumes WHERE account_id = ?1 AND deleted_at IS NULL),
				(SELECT COALESCE(SUM(size_gb), 0) FROM volumes WHERE account_id = ?1 AND deleted_at IS NULL),
				(SELECT COUNT(*) FROM snapshots WHERE account_id = ?1 AND deleted_at IS NULL)`, a).
				Scan(&want.Servers, &want.Volumes, &want.VolumeGB, &want.Snapshots)
			if err != nil {
				t.Fatal(err)
			}
			got := hosting.Quotas{Servers: u.Servers, Volumes: u.Volumes, VolumeGB: u.VolumeGB, Snapshots: u.Snapshots}
			if got != want {
				t.Errorf("%s: account %d: usage %+v, its rows %+v", step, a, got, want)
			}
		}
	}
	check("after the migration")
	u, err := db.Usage(ctx, accts[0], now)
	if err != nil || u.Servers != 2 || u.Volumes != 1 || u.VolumeGB != 10 || u.Snapshots != 1 {
		t.Fatalf("account 1 after the migration: %+v, %v; want 2 servers, a volume of 10 GB and a snapshot", u, err)
	}

	for _, w := range []struct{ step, sql string }{
		{"servers of both accounts copied in one statement", `INSERT INTO servers (account_id, name, display_name, status, location_id, plan_id, image_id,
			vcpus, memory_mb, disk_gb, root_pass_hash, ssh_key_ids, created_at)
			SELECT account_id, name || 'x', display_name, status, location_id, plan_id, image_id, vcpus, memory_mb, disk_gb, root_pass_hash, ssh_key_ids, created_at
			FROM servers`},
		{"every server of both deleted in one statement", `UPDATE servers SET deleted_at = 1 WHERE deleted_at IS NULL AND name LIKE '%x'`},
		{"a deleted server live again", `UPDATE servers SET deleted_at = NULL WHERE name = 'server-bbb1'`},
		{"servers moved to the other account", `UPDATE servers SET account_id = (SELECT MAX(id) FROM accounts) WHERE name IN ('server-aaa1', 'server-bbb1x')`},
		{"volumes grown and one deleted", `UPDATE volumes SET size_gb = size_gb + 5, deleted_at = CASE WHEN size_gb = 20 THEN 1 ELSE deleted_at END`},
		{"rows removed", `DELETE FROM snapshots`},
		{"servers removed", `DELETE FROM servers WHERE deleted_at IS NULL AND name LIKE 'server-c%'`},
	} {
		if _, err := db.write.ExecContext(ctx, w.sql); err != nil {
			t.Fatalf("%s: %v", w.step, err)
		}
		check(w.step)
	}
}
