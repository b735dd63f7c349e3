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
// process at once; one rolled back never does.
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
	ended := make(chan int64, 10)
	stop := listenOperationsEnded(pool, func(id int64) { ended <- id }, slog.Default())
	defer stop()

	now := time.Now().UTC().Truncate(time.Millisecond)
	var ops [2]int64
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
		acct, err := tx.CreateAccount(ctx, hosting.Account{Email: "l@example.com", Language: "en", Currency: "EUR", Quotas: hosting.Quotas{Servers: 5}, CreatedAt: now})
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
	for {
		select {
		case id := <-ended:
			if id == 0 {
				continue // a late answer to the probe
			}
			if id != ops[1] {
				t.Fatalf("notified of operation %d, want only %d (the other was rolled back)", id, ops[1])
			}
			return
		case <-deadline:
			t.Fatal("the committed end of an operation was never notified")
		}
	}
}
