package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

// TestReady: a migrated store is ready; one whose schema is behind this build's, one
// never migrated and a closed one are not, each with its reason.
func TestReady(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir())
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("migrated: %v", err)
	}
	// A newer build migrated further: this one stays ready.
	if _, err := db.WriteDB().Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (999999, 1)`); err != nil {
		t.Fatal(err)
	}
	if err := db.Ready(ctx); err != nil {
		t.Errorf("schema newer than this build: %v, want ready", err)
	}
	// Behind: the newest migrations are not recorded as applied.
	if _, err := db.WriteDB().Exec(`DELETE FROM goose_db_version WHERE version_id >= (SELECT MAX(version_id) FROM goose_db_version
		WHERE version_id < 999999)`); err != nil {
		t.Fatal(err)
	}
	if err := db.Ready(ctx); !errors.Is(err, store.ErrNotMigrated) {
		t.Errorf("schema behind: %v, want ErrNotMigrated", err)
	}

	fresh, err := sqlstore.OpenSQLite(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := fresh.Ready(ctx); !errors.Is(err, store.ErrNotMigrated) {
		t.Errorf("never migrated: %v, want ErrNotMigrated", err)
	}
	if _, err := fresh.WriteDB().Exec(`SELECT 1 FROM goose_db_version`); err == nil {
		t.Errorf("Ready created goose's version table")
	}

	closed, err := sqlstore.OpenSQLite(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := closed.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	closed.Close()
	if err := closed.Ready(ctx); !errors.Is(err, store.ErrUnreachable) {
		t.Errorf("closed: %v, want ErrUnreachable", err)
	}
}

type queuedArgs struct{}

func (queuedArgs) Kind() string { return "berth.test.queued" }

// TestJobQueue counts River's unfinished jobs by state and finds when the
// longest-waiting available one became available.
func TestJobQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir())
	jobs, err := river.NewClient(riversqlite.New(db.WriteDB()), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	oldest := time.Now().Add(-90 * time.Minute).UTC().Truncate(time.Millisecond)
	for _, at := range []time.Time{time.Now().Add(-time.Minute), oldest, time.Now().Add(-time.Hour), time.Now().Add(-time.Second),
		time.Now().Add(time.Hour) /* scheduled: not counted */} {
		if _, err := jobs.Insert(ctx, queuedArgs{}, &river.InsertOpts{ScheduledAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	// A job inserted for a time past is "scheduled" until River's scheduler makes it
	// available (keeping its scheduled_at); here the test plays the scheduler.
	for state, ids := range map[string]string{"available": "1, 2", "running": "3", "retryable": "4"} {
		if _, err := db.WriteDB().Exec(`UPDATE river_job SET state = '` + state + `' WHERE id IN (` + ids + `)`); err != nil {
			t.Fatal(err)
		}
	}
	q, err := db.JobQueue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if q.Available != 2 || q.Running != 1 || q.Retryable != 1 {
		t.Errorf("queue %+v: want 2 available, 1 running, 1 retryable", q)
	}
	if q.OldestAvailable == nil || !q.OldestAvailable.Equal(oldest) {
		t.Errorf("oldest available %v, want %v", q.OldestAvailable, oldest)
	}
}
