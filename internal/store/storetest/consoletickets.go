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
