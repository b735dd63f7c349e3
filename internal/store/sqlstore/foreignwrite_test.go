package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/testpg"
)

// On PostgreSQL a write of what the read cache holds from outside Berth (psql, a
// script) is notified on ForeignWriteChannel when it commits, Berth's own writes
// are not (they are counted in the transaction), and a process told of one
// (DB.ForeignWrite, as berthd serve's listener calls it) answers the write from then
// on, not the entry it held.
func TestForeignWritesReachThePostgresCache(t *testing.T) {
	t.Parallel()
	u := testpg.NewDatabase(t)
	ctx := context.Background()
	db := openProcessesAt(t, u, 1)[0]
	f := seedCacheFixture(t, db)
	db.ForeignWrite(true) // listening, as serve's listener says once it is

	listen, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { listen.Close(context.Background()) })
	if _, err := listen.Exec(ctx, "LISTEN "+sqlstore.ForeignWriteChannel); err != nil {
		t.Fatal(err)
	}
	notified := func(wait time.Duration) bool {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		_, err := listen.WaitForNotification(wctx)
		return err == nil
	}
	psql, err := pgx.Connect(ctx, u) // a connection of no berthd
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { psql.Close(context.Background()) })

	read := func() string {
		t.Helper()
		s, err := db.Server(ctx, f.acct, hosting.ServerRef{ID: f.srv})
		if err != nil {
			t.Fatal(err)
		}
		return s.DisplayName
	}

	// Berth's own writes of each table: no notification.
	err = db.InTx(ctx, func(tx store.Tx) error {
		if err := tx.UpdateServer(ctx, hosting.Server{ID: f.srv, DisplayName: "berth", ProjectID: &f.project}); err != nil {
			return err
		}
		op, err := tx.StartOperation(ctx, hosting.Operation{AccountID: f.acct, ServerID: f.srv, Type: hosting.OpPower, Action: hosting.PowerOff, StartedAt: cacheNow})
		if err != nil {
			return err
		}
		if err := tx.FinishOperation(ctx, op, hosting.OpSuccess, "", cacheNow); err != nil {
			return err
		}
		if err := tx.RevokeToken(ctx, f.tok, cacheNow); err != nil {
			return err
		}
		_, err = tx.CreateAccount(ctx, hosting.Account{Email: "d@example.com", Language: "en", Currency: "EUR", CreatedAt: cacheNow})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if notified(time.Second) {
		t.Error("Berth's own writes were notified as foreign")
	}
	if got := read(); got != "berth" {
		t.Fatalf("read %q after Berth's write, want berth", got)
	}

	// A foreign write of each table: notified, once committed.
	for _, q := range []string{
		`UPDATE servers SET display_name = 'psql' WHERE id = $1`,
		`UPDATE operations SET error = 'x' WHERE server_id = $1`,
		`UPDATE tokens SET name = 'psql' WHERE account_id = (SELECT account_id FROM servers WHERE id = $1)`,
		`UPDATE accounts SET name = 'psql' WHERE id = (SELECT account_id FROM servers WHERE id = $1)`,
	} {
		tx, err := psql.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, q, f.srv); err != nil {
			t.Fatal(err)
		}
		if notified(200 * time.Millisecond) {
			t.Errorf("%s: notified before it committed", q)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if !notified(30 * time.Second) {
			t.Errorf("%s: not notified", q)
		}
	}
	// The entry read before stands until the process is told (what its listener does
	// on the notification); then the write shows.
	if got := read(); got != "berth" {
		t.Fatalf("read %q before the notification was handled: the cache was not in the way", got)
	}
	db.ForeignWrite(true)
	if got := read(); got != "psql" {
		t.Errorf("read %q after the foreign write was notified, want psql", got)
	}
}
