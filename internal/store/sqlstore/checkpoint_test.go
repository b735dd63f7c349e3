package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

// The checkpointer beside the writer copies the WAL into berth.db: after one commit
// of 1.2 MB (under the 1,000 pages at which the writer checkpoints in its commit),
// berth.db grows by them while the store is open, not only at its close. Under
// commits back to back the WAL stays bounded: it is started over.
// A metering step stages its charges in the write connection's own TEMP table, not
// in one of the file's.
func TestCheckpointerCopiesTheWAL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := sqlstoretest.SQLite(t, dir)
	defer db.Close()
	ctx := context.Background()
	file := filepath.Join(dir, sqlstore.DBFile)
	size := func() int64 {
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	// Let the checkpoint of the migrations land first.
	time.Sleep(2 * time.Second)
	before := size()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	err := db.InTx(ctx, func(tx store.Tx) error {
		acct, err := tx.CreateAccount(ctx, hosting.Account{Email: "ckpt@example.com", Language: "en", Currency: "EUR", CreatedAt: now})
		if err != nil {
			return err
		}
		for i := range 600 { // about 1.2 MB with the index on name: 300 pages
			if _, err := tx.CreateProject(ctx, hosting.Project{AccountID: acct, Name: fmt.Sprintf("p-%d-%0900d", i, 0), CreatedAt: now}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	counters := db.CacheCounters()
	deadline := time.Now().Add(30 * time.Second)
	for size() < before+1<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("berth.db is %d bytes 30 s after a commit of 1.2 MB (%d before it): the WAL was not checkpointed", size(), before)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A checkpoint is no commit: the watcher, which empties the read cache when another
	// connection commits, must not take the checkpointer's for one.
	time.Sleep(2500 * time.Millisecond) // the watcher looks every second
	if after := db.CacheCounters(); !slices.Equal(after, counters) {
		t.Errorf("change counters %v after a checkpoint, were %v", after, counters)
	}
	if err := db.InTx(ctx, func(tx store.Tx) error {
		_, err := tx.ChargeLicenses(ctx, store.LicenseStep{Month: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Now: now, Limit: 10})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// 60 transactions of about 1 MB back to back: the WAL file ends far smaller than
	// their sum (with the writer's own checkpoint off it grew to their sum).
	for i := range 60 {
		if err := db.InTx(ctx, func(tx store.Tx) error {
			for j := range 1000 {
				if _, err := tx.CreateProject(ctx, hosting.Project{AccountID: 1, Name: fmt.Sprintf("q-%d-%d-%0900d", i, j, 0), CreatedAt: now}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(file + "-wal"); err != nil || fi.Size() > 24<<20 {
		t.Errorf("WAL after 60 MB written in 60 transactions: %v, %v; want at most 24 MB", fi.Size(), err)
	}
	var main int
	if err := db.WriteDB().QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'charge_batch'`).Scan(&main); err != nil || main != 0 {
		t.Errorf("charge_batch in the database file: %d, %v; want only the write connection's TEMP table", main, err)
	}
	var temp int
	if err := db.WriteDB().QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_temp_master WHERE name = 'charge_batch'`).Scan(&temp); err != nil || temp != 1 {
		t.Errorf("charge_batch among the write connection's TEMP tables: %d, %v; want 1", temp, err)
	}
}
