package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// events checks an account's event log: written with its transaction or not at all,
// read in commit order with a cursor and filters, pruned in batches.
func events(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	setup := func(t *testing.T) (store.Store, int64, int64) { return twoAccounts(t, open, "ev", now) }
	ev := func(account int64, typ hosting.EventType, kind string, id int64, at time.Time) hosting.Event {
		return hosting.Event{AccountID: account, Type: typ, Resource: hosting.EventResource{Type: kind, ID: id},
			Data: []byte(`{"n":1}`), RequestID: "req-1", CreatedAt: at}
	}
	add := func(t *testing.T, s store.Store, events ...hosting.Event) []hosting.Event {
		t.Helper()
		var out []hosting.Event
		err := s.InTx(ctx, func(tx store.Tx) error {
			var err error
			out, err = tx.AddEvents(ctx, events)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	list := func(t *testing.T, s store.Store, account int64, f hosting.EventFilter) []int64 {
		t.Helper()
		if f.Limit == 0 {
			f.Limit = 100
		}
		got, err := s.Events(ctx, account, f)
		if err != nil {
			t.Fatal(err)
		}
		ids := []int64{}
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		return ids
	}

	t.Run("ReadBack", func(t *testing.T) {
		s, a, b := setup(t)
		w := add(t, s, ev(a, hosting.EventServerCreated, "server", 7, now), ev(a, hosting.EventSSHKeyCreated, "ssh_key", 3, now),
			ev(b, hosting.EventServerCreated, "server", 8, now))
		if !(w[0].ID < w[1].ID) {
			t.Fatalf("ids %d, %d: not in the order written", w[0].ID, w[1].ID)
		}
		got, err := s.Events(ctx, a, hosting.EventFilter{Limit: 10})
		if err != nil || len(got) != 2 {
			t.Fatalf("account a's events: %+v, %v", got, err)
		}
		e := got[0]
		if e.ID != w[0].ID || e.AccountID != a || e.Type != hosting.EventServerCreated || e.Resource != (hosting.EventResource{Type: "server", ID: 7}) ||
			string(e.Data) != `{"n":1}` || e.RequestID != "req-1" || !e.CreatedAt.Equal(now) {
			t.Errorf("read back %+v", e)
		}
		for _, c := range []struct {
			name string
			f    hosting.EventFilter
			want []int64
		}{
			{"after the first", hosting.EventFilter{After: w[0].ID}, []int64{w[1].ID}},
			{"after the last", hosting.EventFilter{After: w[1].ID}, []int64{}},
			{"limit", hosting.EventFilter{Limit: 1}, []int64{w[0].ID}},
			{"one type", hosting.EventFilter{Types: []hosting.EventPattern{"ssh_key.created"}}, []int64{w[1].ID}},
			{"a glob", hosting.EventFilter{Types: []hosting.EventPattern{"server.*"}}, []int64{w[0].ID}},
			{"two patterns", hosting.EventFilter{Types: []hosting.EventPattern{"server.*", "ssh_key.deleted"}}, []int64{w[0].ID}},
			{"every type", hosting.EventFilter{Types: []hosting.EventPattern{"*"}}, []int64{w[0].ID, w[1].ID}},
			{"a resource", hosting.EventFilter{Resource: &hosting.EventResource{Type: "ssh_key", ID: 3}}, []int64{w[1].ID}},
			{"a resource of another id", hosting.EventFilter{Resource: &hosting.EventResource{Type: "ssh_key", ID: 7}}, []int64{}},
			{"before the last", hosting.EventFilter{Before: w[1].ID}, []int64{w[0].ID}},
			{"before the first", hosting.EventFilter{Before: w[0].ID}, []int64{}},
			{"newest first", hosting.EventFilter{Newest: true}, []int64{w[1].ID, w[0].ID}},
			{"the newest one", hosting.EventFilter{Newest: true, Limit: 1}, []int64{w[1].ID}},
			{"newest before the last", hosting.EventFilter{Newest: true, Before: w[1].ID}, []int64{w[0].ID}},
			{"newest of a glob", hosting.EventFilter{Newest: true, Types: []hosting.EventPattern{"ssh_key.*"}}, []int64{w[1].ID}},
			{"newest of a resource", hosting.EventFilter{Newest: true, Resource: &hosting.EventResource{Type: "server", ID: 7}}, []int64{w[0].ID}},
		} {
			if got := list(t, s, a, c.f); !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
		if got := list(t, s, b, hosting.EventFilter{}); !slices.Equal(got, []int64{w[2].ID}) {
			t.Errorf("account b sees %v, want only its own %d", got, w[2].ID)
		}
	})

	t.Run("AGlobIsAPrefixNotAPattern", func(t *testing.T) {
		// ssh_key.* must not match sshXkey.created (LIKE's _ would).
		s, a, _ := setup(t)
		add(t, s, ev(a, "sshXkey.created", "server", 1, now))
		if got := list(t, s, a, hosting.EventFilter{Types: []hosting.EventPattern{"ssh_key.*"}}); len(got) != 0 {
			t.Errorf("ssh_key.* admitted sshXkey.created: %v", got)
		}
	})

	t.Run("RolledBackWithItsTransaction", func(t *testing.T) {
		s, a, _ := setup(t)
		boom := errors.New("boom")
		err := s.InTx(ctx, func(tx store.Tx) error {
			tx.BeforeCommit(func(ctx context.Context) error {
				_, err := tx.AddEvents(ctx, []hosting.Event{ev(a, hosting.EventServerCreated, "server", 1, now)})
				return err
			})
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		// A BeforeCommit step that fails rolls back what came before it too.
		err = s.InTx(ctx, func(tx store.Tx) error {
			if _, err := tx.AddEvents(ctx, []hosting.Event{ev(a, hosting.EventServerCreated, "server", 2, now)}); err != nil {
				return err
			}
			tx.BeforeCommit(func(context.Context) error { return boom })
			return nil
		})
		if !errors.Is(err, boom) {
			t.Fatalf("a failing BeforeCommit: %v", err)
		}
		if got := list(t, s, a, hosting.EventFilter{}); len(got) != 0 {
			t.Errorf("events of rolled-back transactions: %v", got)
		}
	})

	t.Run("BeforeCommitRunsLastInOrder", func(t *testing.T) {
		s, a, _ := setup(t)
		var steps []string
		err := s.InTx(ctx, func(tx store.Tx) error {
			tx.BeforeCommit(func(context.Context) error { steps = append(steps, "first"); return nil })
			tx.BeforeCommit(func(ctx context.Context) error {
				steps = append(steps, "second")
				_, err := tx.AddEvents(ctx, []hosting.Event{ev(a, hosting.EventServerCreated, "server", 1, now)})
				return err
			})
			steps = append(steps, "fn")
			return nil
		})
		if err != nil || !slices.Equal(steps, []string{"fn", "first", "second"}) {
			t.Fatalf("steps %v, %v", steps, err)
		}
		if got := list(t, s, a, hosting.EventFilter{}); len(got) != 1 {
			t.Errorf("the event written before the commit: %v", got)
		}
	})

	t.Run("IdsInCommitOrder", func(t *testing.T) {
		// While a transaction that wrote an account's event has not committed, a
		// second one of the same account does not commit an event either: a reader
		// that has seen an id never finds a smaller one later.
		s, a, _ := setup(t)
		written, release := make(chan struct{}), make(chan struct{})
		first := make(chan error, 1)
		go func() {
			first <- s.InTx(ctx, func(tx store.Tx) error {
				if _, err := tx.AddEvents(ctx, []hosting.Event{ev(a, hosting.EventServerCreated, "server", 1, now)}); err != nil {
					return err
				}
				close(written)
				<-release
				return nil
			})
		}()
		<-written
		second := make(chan error, 1)
		go func() {
			second <- s.InTx(ctx, func(tx store.Tx) error {
				_, err := tx.AddEvents(ctx, []hosting.Event{ev(a, hosting.EventServerDeleted, "server", 1, now)})
				return err
			})
		}()
		time.Sleep(300 * time.Millisecond) // the second has had time to commit, were it not held
		if got := list(t, s, a, hosting.EventFilter{}); len(got) != 0 {
			t.Errorf("while the first is open a reader sees %v", got)
		}
		close(release)
		if err := errors.Join(<-first, <-second); err != nil {
			t.Fatal(err)
		}
		got, err := s.Events(ctx, a, hosting.EventFilter{Limit: 10})
		if err != nil || len(got) != 2 || got[0].Type != hosting.EventServerCreated {
			t.Fatalf("after both: %+v, %v; want the first's event first", got, err)
		}
	})

	t.Run("PruneInBatches", func(t *testing.T) {
		s, a, b := setup(t)
		old := now.Add(-31 * 24 * time.Hour)
		w := add(t, s, ev(a, hosting.EventServerCreated, "server", 1, old), ev(b, hosting.EventServerCreated, "server", 2, old),
			ev(a, hosting.EventServerCreated, "server", 3, old), ev(a, hosting.EventServerDeleted, "server", 1, now))
		prune := func(limit int) int {
			var n int
			err := s.InTx(ctx, func(tx store.Tx) error {
				var err error
				n, err = tx.PruneEvents(ctx, now.Add(-hosting.EventRetention), limit)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := prune(2); n != 2 {
			t.Errorf("first batch of 2 removed %d", n)
		}
		if n := prune(2); n != 1 {
			t.Errorf("second batch removed %d, want the 1 old event left", n)
		}
		if n := prune(2); n != 0 {
			t.Errorf("third batch removed %d", n)
		}
		if got := list(t, s, a, hosting.EventFilter{}); !slices.Equal(got, []int64{w[3].ID}) {
			t.Errorf("left %v, want the recent %d", got, w[3].ID)
		}
	})

	t.Run("ResetClearsThem", func(t *testing.T) {
		s, a, b := setup(t)
		add(t, s, ev(a, hosting.EventServerCreated, "server", 1, now), ev(b, hosting.EventServerCreated, "server", 2, now))
		err := s.InTx(ctx, func(tx store.Tx) error { _, err := tx.ResetAccount(ctx, a, now); return err })
		if err != nil {
			t.Fatal(err)
		}
		if got := list(t, s, a, hosting.EventFilter{}); len(got) != 0 {
			t.Errorf("after a reset: %v", got)
		}
		if got := list(t, s, b, hosting.EventFilter{}); len(got) != 1 {
			t.Errorf("another account's events after a reset: %v", got)
		}
	})
}

// twoAccounts opens a store holding two accounts, prefix-a@ and prefix-b@example.com.
func twoAccounts(t *testing.T, open func(t *testing.T) store.Store, prefix string, at time.Time) (store.Store, int64, int64) {
	t.Helper()
	ctx := context.Background()
	s := open(t)
	var a, b int64
	err := s.InTx(ctx, func(tx store.Tx) error {
		var err error
		if a, err = tx.CreateAccount(ctx, hosting.Account{Email: prefix + "-a@example.com", Language: "en", Currency: "EUR", CreatedAt: at}); err != nil {
			return err
		}
		b, err = tx.CreateAccount(ctx, hosting.Account{Email: prefix + "-b@example.com", Language: "en", Currency: "EUR", CreatedAt: at})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, a, b
}
