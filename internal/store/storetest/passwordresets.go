package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// passwordResets: a password reset is spent once, never at or after its expiry,
// spending it spends the account's other open resets (not another account's), of
// many transactions presenting it at once exactly one spends it, and cleaning up
// removes the expired ones.
func passwordResets(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s := open(t)
	var accts [2]int64
	if err := s.InTx(ctx, func(tx store.Tx) error {
		for i, email := range []string{"r1@example.com", "r2@example.com"} {
			var err error
			if accts[i], err = tx.CreateAccount(ctx, hosting.Account{Email: email, Name: "n", PasswordHash: "h", Language: "en",
				Currency: "EUR", CreatedAt: now}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	create := func(t *testing.T, acct int64, hash string, expires time.Time) {
		t.Helper()
		if err := s.InTx(ctx, func(tx store.Tx) error {
			_, err := tx.CreatePasswordReset(ctx, hosting.PasswordReset{AccountID: acct, Hash: []byte(hash), CreatedAt: now, ExpiresAt: expires})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	spend := func(t *testing.T, hash string, at time.Time) (hosting.PasswordReset, bool, error) {
		t.Helper()
		var r hosting.PasswordReset
		var spent bool
		err := s.InTx(ctx, func(tx store.Tx) error {
			var err error
			r, spent, err = tx.SpendPasswordReset(ctx, []byte(hash), at)
			return err
		})
		return r, spent, err
	}

	create(t, accts[0], "reset-1", now.Add(time.Hour))
	if r, err := s.PasswordReset(ctx, []byte("reset-1")); err != nil || r.AccountID != accts[0] || r.UsedAt != nil ||
		!r.CreatedAt.Equal(now) || !r.ExpiresAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("read = %+v, %v", r, err)
	}
	r, spent, err := spend(t, "reset-1", now.Add(time.Second))
	if err != nil || !spent || r.AccountID != accts[0] || r.UsedAt == nil || !r.UsedAt.Equal(now.Add(time.Second)) {
		t.Fatalf("first spend = %+v, %v, %v; want it spent at +1s", r, spent, err)
	}
	if r, spent, err := spend(t, "reset-1", now.Add(2*time.Second)); err != nil || spent || r.UsedAt == nil || !r.UsedAt.Equal(now.Add(time.Second)) {
		t.Fatalf("second spend = %+v, %v, %v; want it refused, used at the first", r, spent, err)
	}
	if _, _, err := spend(t, "no-such-reset", now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown reset: %v, want ErrNotFound", err)
	}
	if _, err := s.PasswordReset(ctx, []byte("no-such-reset")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown reset read: %v, want ErrNotFound", err)
	}

	// Expiry: good until just before ExpiresAt, not at it.
	create(t, accts[0], "reset-2", now.Add(time.Hour))
	if r, spent, err := spend(t, "reset-2", now.Add(time.Hour)); err != nil || spent || r.UsedAt != nil {
		t.Fatalf("spend at expiry = %+v, %v, %v; want it refused and left unused", r, spent, err)
	}

	// Spending one spends the account's other open ones, not another account's.
	create(t, accts[0], "reset-3", now.Add(time.Hour))
	create(t, accts[0], "reset-4", now.Add(time.Hour))
	create(t, accts[1], "reset-5", now.Add(time.Hour))
	if _, spent, err := spend(t, "reset-3", now.Add(time.Minute)); err != nil || !spent {
		t.Fatalf("spend reset-3: %v, %v", spent, err)
	}
	if r, spent, err := spend(t, "reset-4", now.Add(2*time.Minute)); err != nil || spent || r.UsedAt == nil {
		t.Fatalf("reset-4 after reset-3 = %+v, %v, %v; want it spent with reset-3", r, spent, err)
	}
	if _, spent, err := spend(t, "reset-5", now.Add(2*time.Minute)); err != nil || !spent {
		t.Fatalf("another account's reset-5: %v, %v; want it still good", spent, err)
	}

	// Many at once: one spends it.
	create(t, accts[1], "reset-6", now.Add(time.Hour))
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, errs := 0, []error{}
	for range 8 {
		wg.Go(func() {
			_, spent, err := spend(t, "reset-6", now.Add(3*time.Minute))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else if spent {
				wins++
			}
		})
	}
	wg.Wait()
	if wins != 1 || len(errs) > 0 {
		t.Fatalf("8 concurrent spends: %d spent it, errors %v; want exactly one", wins, errs)
	}

	// Cleaning up removes the resets expired before the time given, spent or not.
	create(t, accts[1], "reset-7", now.Add(3*time.Hour))
	if err := s.InTx(ctx, func(tx store.Tx) error { return tx.DeletePasswordResets(ctx, now.Add(2*time.Hour)) }); err != nil {
		t.Fatal(err)
	}
	for i, hash := range []string{"reset-1", "reset-2", "reset-6", "reset-7"} {
		_, err := s.PasswordReset(ctx, []byte(hash))
		if gone := errors.Is(err, store.ErrNotFound); gone != (i < 3) {
			t.Errorf("%s after cleaning up: %v", hash, err)
		}
	}
}
