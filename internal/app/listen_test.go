package app

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/testpg"
)

// An operation's end, committed by any process, reaches the listener of every
// process at once; one rolled back never does. So does a write of the cached tables
// from outside Berth, and listening tells the cache it is watched.
func TestOperationEndedReachesOtherProcesses(t *testing.T) {
	t.Parallel()
	u := testpg.NewDatabase(t)
	ctx := context.Background()
	db, err := sqlstore.OpenPostgres(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ended, events, foreign := make(chan int64, 10), make(chan int64, 10), make(chan bool, 10)
	stop := listenOperationsEnded(pool, func(id int64) { ended <- id }, func(id int64) { events <- id }, func() {},
		func(watching bool) { foreign <- watching }, slog.Default())
	defer stop()

	now := time.Now().UTC().Truncate(time.Millisecond)
	var ops [2]int64
	var acct int64
	err = db.InTx(ctx, func(tx store.Tx) error {
		err := tx.ApplyCatalog(ctx, hosting.Catalog{
			Plans:  []hosting.Plan{{ID: 1, Name: "small", VCPUs: 1, MemoryMB: 1024, DiskGB: 20, PriceHourly: 70, PriceMonthly: 45100}},
			Images: []hosting.Image{{ID: 1, Name: "debian-12", OS: "debian", Version: "12"}},
			Locations: []hosting.CatalogLocation{{
				Location: hosting.Location{ID: 1, Name: "fsn1", City: "Falkenstein", Country: "DE", SnapshotPriceGBHour: 1},
				Offers:   []hosting.PlanOffer{{PlanID: 1}}, ImageIDs: []int64{1},
			}},
		})
		if err != nil {
			return err
		}
		acct, err = tx.CreateAccount(ctx, hosting.Account{Email: "l@example.com", Language: "en", Currency: "EUR", Quotas: hosting.Quotas{Servers: 5}, CreatedAt: now})
		if err != nil {
			return err
		}
		for i := range ops { // one a server: a server runs one operation at a time
			srv, err := tx.CreateServer(ctx, hosting.Server{AccountID: acct, Name: "server-listen" + strconv.Itoa(i), Status: hosting.StatusRunning,
				LocationID: 1, PlanID: 1, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, SSHKeyIDs: []int64{}, CreatedAt: now})
			if err != nil {
				return err
			}
			if ops[i], err = tx.StartOperation(ctx, hosting.Operation{AccountID: acct, ServerID: srv, Type: hosting.OpPower,
				Action: hosting.PowerOff, StartedAt: now}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The listener has its connection once a notification sent now arrives.
	deadline := time.After(60 * time.Second)
	for listening := false; !listening; {
		if _, err := pool.Exec(ctx, `SELECT pg_notify($1, '0')`, sqlstore.OperationEndedChannel); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ended:
			listening = true
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatal("the listener never listens")
		}
	}

	if w := <-foreign; !w {
		t.Fatal("listening told the cache it is not watched")
	}

	// Rolled back: nothing. Committed: its id.
	rolledBack := db.InTx(ctx, func(tx store.Tx) error {
		if err := tx.FinishOperation(ctx, ops[0], hosting.OpSuccess, "", now); err != nil {
			return err
		}
		return context.Canceled
	})
	if rolledBack != context.Canceled {
		t.Fatal(rolledBack)
	}
	if err := db.InTx(ctx, func(tx store.Tx) error { return tx.FinishOperation(ctx, ops[1], hosting.OpSuccess, "", now) }); err != nil {
		t.Fatal(err)
	}
	for notified := false; !notified; {
		select {
		case id := <-ended:
			if id == 0 {
				continue // a late answer to the probe
			}
			if id != ops[1] {
				t.Fatalf("notified of operation %d, want only %d (the other was rolled back)", id, ops[1])
			}
			notified = true
		case <-deadline:
			t.Fatal("the committed end of an operation was never notified")
		}
	}

	// An account's events: the same, on their own channel, with the account's id.
	write := func(commit bool) error {
		return db.InTx(ctx, func(tx store.Tx) error {
			if _, err := tx.AddEvents(ctx, []hosting.Event{{AccountID: acct, Type: hosting.EventServerDeleted,
				Resource: hosting.EventResource{Type: "server", ID: 1}, Data: []byte(`{}`), CreatedAt: now}}); err != nil {
				return err
			}
			if !commit {
				return context.Canceled
			}
			return nil
		})
	}
	if err := write(false); err != context.Canceled {
		t.Fatal(err)
	}
	if err := write(true); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-events:
		if id != acct {
			t.Fatalf("events notified for account %d, want %d", id, acct)
		}
	case <-deadline:
		t.Fatal("committed events were never notified")
	}
	select {
	case id := <-events:
		t.Fatalf("a second notification (%d): the rolled-back events were notified", id)
	case <-time.After(500 * time.Millisecond):
	}

	// Berth's own writes of servers, above, were not foreign; one through a
	// connection of no berthd (pool's) is.
	select {
	case w := <-foreign:
		t.Fatalf("Berth's own writes reached the listener as foreign (%v)", w)
	default:
	}
	if _, err := pool.Exec(ctx, `UPDATE servers SET display_name = 'psql'`); err != nil {
		t.Fatal(err)
	}
	select {
	case w := <-foreign:
		if !w {
			t.Fatal("a foreign write told the cache it is not watched")
		}
	case <-deadline:
		t.Fatal("a foreign write was never notified")
	}
}
