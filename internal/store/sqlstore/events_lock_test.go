package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
	"github.com/berthhq/berth/internal/testpg"
)

// TestEventsBesideALockedAccount: on PostgreSQL a transaction that writes an event
// while another holds the account locked (LockAccount: an order, a new project) and
// then writes one too waits for it, and both commit; neither deadlocks (which the
// event's foreign key on the account, taken inside the events' turn, made it do).
func TestEventsBesideALockedAccount(t *testing.T) {
	t.Parallel()
	testpg.Require(t)
	st := sqlstoretest.Postgres(t)
	ctx := context.Background()
	now := time.Now()
	var acct int64
	if err := st.InTx(ctx, func(tx store.Tx) error {
		var err error
		acct, err = tx.CreateAccount(ctx, hosting.Account{Email: "lock@example.com", Language: "en", Currency: "EUR", CreatedAt: now})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	event := func(name string) []hosting.Event {
		return []hosting.Event{{AccountID: acct, Type: hosting.EventProjectUpdated, Resource: hosting.EventResource{Type: "project", ID: 1},
			Data: []byte(`{"name":"` + name + `"}`), CreatedAt: now}}
	}
	locked, writing := make(chan struct{}), make(chan struct{})
	lockerDone := make(chan error, 1)
	go func() {
		lockerDone <- st.InTx(ctx, func(tx store.Tx) error {
			if _, err := tx.LockAccount(ctx, acct); err != nil {
				return err
			}
			close(locked)
			<-writing
			time.Sleep(500 * time.Millisecond) // the other transaction is waiting by now
			_, err := tx.AddEvents(ctx, event("locker"))
			return err
		})
	}()
	<-locked
	close(writing)
	if err := st.InTx(ctx, func(tx store.Tx) error {
		_, err := tx.AddEvents(ctx, event("writer"))
		return err
	}); err != nil {
		t.Errorf("the event beside the locked account: %v", err)
	}
	if err := <-lockerDone; err != nil {
		t.Errorf("the event of the transaction that locked the account: %v", err)
	}
}
