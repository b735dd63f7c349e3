package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// consoleTickets: a server console ticket is spent once, never after it expired,
// and of many transactions presenting it at once exactly one spends it.
func consoleTickets(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s := open(t)
	var acct, srv int64
	if err := s.InTx(ctx, func(tx store.Tx) error {
		if err := tx.ApplyCatalog(ctx, catalog()); err != nil {
			return err
		}
		var err error
		if acct, err = tx.CreateAccount(ctx, hosting.Account{Email: "c@example.com", Name: "n", PasswordHash: "h", Language: "en",
			Currency: "EUR", CreatedAt: now}); err != nil {
			return err
		}
		srv, err = tx.CreateServer(ctx, hosting.Server{AccountID: acct, Name: "server-con001", DisplayName: "d",
			Status: hosting.StatusRunning, LocationID: 1, PlanID: 1, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, CreatedAt: now})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	create := func(t *testing.T, hash string, expires time.Time) {
		t.Helper()
		if err := s.InTx(ctx, func(tx store.Tx) error {
			_, err := tx.CreateConsoleTicket(ctx, hosting.ConsoleTicket{AccountID: acct, ServerID: srv, Hash: []byte(hash),
				CreatedAt: now, ExpiresAt: expires})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	spend := func(t *testing.T, hash string, at time.Time) (hosting.ConsoleTicket, bool, error) {
		t.Helper()
		var tk hosting.ConsoleTicket
		var spent bool
		err := s.InTx(ctx, func(tx store.Tx) error {
			var err error
			tk, spent, err = tx.SpendConsoleTicket(ctx, []byte(hash), at)
			return err
		})
		return tk, spent, err
	}

	create(t, "ticket-1", now.Add(time.Minute))
	tk, spent, err := spend(t, "ticket-1", now.Add(time.Second))
	if err != nil || !spent || tk.AccountID != acct || tk.ServerID != srv || tk.UsedAt == nil || !tk.UsedAt.Equal(now.Add(time.Second)) ||
		!tk.ExpiresAt.Equal(now.Add(time.Minute)) || !tk.CreatedAt.Equal(now) {
		t.Fatalf("first spend = %+v, %v, %v; want it spent at +1s", tk, spent, err)
	}
	if tk, spent, err := spend(t, "ticket-1", now.Add(2*time.Second)); err != nil || spent || tk.UsedAt == nil || !tk.UsedAt.Equal(now.Add(time.Second)) {
		t.Fatalf("second spend = %+v, %v, %v; want it refused, used at the first", tk, spent, err)
	}
	if _, _, err := spend(t, "no-such-ticket", now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown ticket: %v, want ErrNotFound", err)
	}

	// Expiry: good until just before ExpiresAt, not at it.
	create(t, "ticket-2", now.Add(time.Minute))
	if tk, spent, err := spend(t, "ticket-2", now.Add(time.Minute)); err != nil || spent || tk.UsedAt != nil {
		t.Fatalf("spend at expiry = %+v, %v, %v; want it refused and left unused", tk, spent, err)
	}
	create(t, "ticket-3", now.Add(time.Minute))
	if _, spent, err := spend(t, "ticket-3", now.Add(time.Minute-time.Millisecond)); err != nil || !spent {
		t.Fatalf("spend a millisecond before expiry = %v, %v; want it spent", spent, err)
	}

	// Many at once: one spends it.
	create(t, "ticket-4", now.Add(time.Minute))
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, errs := 0, []error{}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var spent bool
			err := s.InTx(ctx, func(tx store.Tx) error {
				var err error
				_, spent, err = tx.SpendConsoleTicket(ctx, []byte("ticket-4"), now.Add(time.Second))
				return err
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else if spent {
				wins++
			}
		}()
	}
	wg.Wait()
	if wins != 1 || len(errs) > 0 {
		t.Fatalf("8 concurrent spends: %d spent it, errors %v; want exactly one", wins, errs)
	}

	// Cleaning up removes the tickets expired before the time given, spent or not.
	create(t, "ticket-5", now.Add(time.Hour))
	if err := s.InTx(ctx, func(tx store.Tx) error { return tx.DeleteConsoleTickets(ctx, now.Add(2*time.Minute)) }); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		_, _, err := spend(t, fmt.Sprintf("ticket-%d", i), now.Add(3*time.Minute))
		if gone := errors.Is(err, store.ErrNotFound); gone != (i < 5) {
			t.Errorf("ticket-%d after cleaning up: %v", i, err)
		}
	}
}

// consoleSessions: open console sessions count per server and per account while their
// lease runs; a renewal moves the lease on, a deletion (by id, by holder, or once
// long expired) removes them.
func consoleSessions(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s := open(t)
	var accts [2]int64
	var srvs [3]int64 // two of the first account, one of the second
	in(t, s, func(tx store.Tx) error {
		if err := tx.ApplyCatalog(ctx, catalog()); err != nil {
			return err
		}
		for i := range accts {
			var err error
			if accts[i], err = tx.CreateAccount(ctx, hosting.Account{Email: fmt.Sprintf("s%d@example.com", i), Name: "n", PasswordHash: "h",
				Language: "en", Currency: "EUR", CreatedAt: now}); err != nil {
				return err
			}
		}
		for i := range srvs {
			var err error
			if srvs[i], err = tx.CreateServer(ctx, hosting.Server{AccountID: accts[i/2], Name: fmt.Sprintf("server-ses%03d", i), DisplayName: "d",
				Status: hosting.StatusRunning, LocationID: 1, PlanID: 1, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, CreatedAt: now}); err != nil {
				return err
			}
		}
		return nil
	})
	create := func(t *testing.T, srv int, holder string, expires time.Time) int64 {
		t.Helper()
		var id int64
		in(t, s, func(tx store.Tx) error {
			var err error
			id, err = tx.CreateConsoleSession(ctx, hosting.ConsoleSession{AccountID: accts[srv/2], ServerID: srvs[srv], Holder: holder,
				StartedAt: now, ExpiresAt: expires})
			return err
		})
		return id
	}
	count := func(t *testing.T, srv int, at time.Time) [2]int {
		t.Helper()
		onServer, onAccount, err := s.CountConsoleSessions(ctx, accts[srv/2], srvs[srv], at)
		if err != nil {
			t.Fatal(err)
		}
		return [2]int{onServer, onAccount}
	}

	lease := now.Add(30 * time.Second)
	a1 := create(t, 0, "one", lease)
	a2 := create(t, 0, "one", lease)
	b1 := create(t, 1, "two", lease)
	create(t, 2, "two", lease) // the other account's
	if got, want := count(t, 0, now), [2]int{2, 3}; got != want {
		t.Fatalf("server 0 at start: %v, want %v (server, account)", got, want)
	}
	if got, want := count(t, 1, now), [2]int{1, 3}; got != want {
		t.Fatalf("server 1: %v, want %v", got, want)
	}
	if got, want := count(t, 2, now), [2]int{1, 1}; got != want {
		t.Fatalf("the other account's server: %v, want %v", got, want)
	}
	// A lease counts until just before it runs out, not at it.
	if got, want := count(t, 0, lease.Add(-time.Millisecond)), [2]int{2, 3}; got != want {
		t.Fatalf("a millisecond before the lease runs out: %v, want %v", got, want)
	}
	if got, want := count(t, 0, lease), [2]int{0, 0}; got != want {
		t.Fatalf("when the lease runs out: %v, want %v", got, want)
	}

	// Renewed sessions count on; the others do not.
	later := lease.Add(30 * time.Second)
	in(t, s, func(tx store.Tx) error { return tx.RenewConsoleSessions(ctx, []int64{a1, b1, 1 << 40}, later) })
	if got, want := count(t, 0, lease), [2]int{1, 2}; got != want {
		t.Fatalf("after renewing one session of each server: %v, want %v", got, want)
	}
	// Ended ones stop counting at once.
	in(t, s, func(tx store.Tx) error { return tx.DeleteConsoleSessions(ctx, []int64{a1, a2}) })
	if got, want := count(t, 0, now), [2]int{0, 1}; got != want {
		t.Fatalf("after deleting server 0's: %v, want %v", got, want)
	}
	// A holder's are deleted together, whatever their server or account.
	in(t, s, func(tx store.Tx) error { return tx.DeleteConsoleSessionsOf(ctx, "two") })
	if got, want := count(t, 1, now), [2]int{0, 0}; got != want {
		t.Fatalf("after deleting holder two's: %v, want %v", got, want)
	}
	if got, want := count(t, 2, now), [2]int{0, 0}; got != want {
		t.Fatalf("after deleting holder two's, the other account: %v, want %v", got, want)
	}

	// Many ids at once (more than one statement takes).
	var ids []int64
	for range 1200 {
		ids = append(ids, create(t, 0, "many", lease))
	}
	in(t, s, func(tx store.Tx) error { return tx.RenewConsoleSessions(ctx, ids, later) })
	if got, want := count(t, 0, lease), [2]int{1200, 1200}; got != want {
		t.Fatalf("1200 renewed: %v, want %v", got, want)
	}
	in(t, s, func(tx store.Tx) error { return tx.DeleteConsoleSessions(ctx, ids[:1100]) })
	if got, want := count(t, 0, now), [2]int{100, 100}; got != want {
		t.Fatalf("1100 of 1200 deleted: %v, want %v", got, want)
	}

	// Cleaning up removes those whose lease ran out before the time given.
	create(t, 0, "old", now.Add(time.Second))
	in(t, s, func(tx store.Tx) error { return tx.DeleteExpiredConsoleSessions(ctx, later) })
	if got, want := count(t, 0, now), [2]int{100, 100}; got != want {
		t.Fatalf("after cleaning up before their lease: %v, want %v", got, want)
	}
	in(t, s, func(tx store.Tx) error { return tx.DeleteExpiredConsoleSessions(ctx, later.Add(time.Millisecond)) })
	if got, want := count(t, 0, now), [2]int{0, 0}; got != want {
		t.Fatalf("after cleaning up past their lease: %v, want %v", got, want)
	}
}
