package ops

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The account locks: one holder per account at a time, accounts apart, and an entry
// only while someone holds or waits for the account's lock, so the map does not grow
// with the accounts that ever advanced.

// TestAccountLocksApart: another account's lock is free while account 1's is held.
func TestAccountLocksApart(t *testing.T) {
	t.Parallel()
	var l accountLocks
	ctx := context.Background()
	unlock1, err := l.lock(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock1()
	got2 := make(chan struct{})
	go func() {
		unlock2, err := l.lock(ctx, 2)
		if err == nil {
			unlock2()
		}
		close(got2)
	}()
	select {
	case <-got2:
	case <-time.After(time.Minute):
		t.Fatal("account 2's lock waited for account 1's holder")
	}
}

// TestAccountLocksWait: a second caller of an account waits for the holder; one that
// gives up leaves, and no entry is left once nobody holds or waits.
func TestAccountLocksWait(t *testing.T) {
	t.Parallel()
	var l accountLocks
	ctx := context.Background()
	unlock1, err := l.lock(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctxWait, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error)
	go func() {
		_, err := l.lock(ctxWait, 1)
		gaveUp <- err
	}()
	waited := make(chan struct{})
	go func() {
		unlock, err := l.lock(ctx, 1)
		if err == nil {
			unlock()
		}
		close(waited)
	}()
	for l.users(1) != 3 {
		time.Sleep(time.Millisecond)
	}
	select {
	case <-waited:
		t.Fatal("a second caller of account 1 took the lock while it was held")
	case err := <-gaveUp:
		t.Fatalf("a caller gave up before its context ended: %v", err)
	default:
	}
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("a caller whose context ended: %v", err)
	}
	if n := l.users(1); n != 2 {
		t.Fatalf("account 1 has %d users after one gave up, want 2", n)
	}
	unlock1()
	<-waited
	if n := l.entries(); n != 0 {
		t.Fatalf("%d entries once nobody holds or waits, want 0", n)
	}
}

// TestAccountLocksMany: many callers over many accounts: never two holders of one
// account, and no entry left after.
func TestAccountLocksMany(t *testing.T) {
	t.Parallel()
	var l accountLocks
	ctx := context.Background()
	var holders [8]atomic.Int32
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Go(func() {
			id := int64(i % len(holders))
			unlock, err := l.lock(ctx, id)
			if err != nil {
				t.Error(err)
				return
			}
			if n := holders[id].Add(1); n != 1 {
				t.Errorf("account %d has %d holders", id, n)
			}
			time.Sleep(10 * time.Microsecond)
			holders[id].Add(-1)
			unlock()
		})
	}
	wg.Wait()
	if n := l.entries(); n != 0 {
		t.Fatalf("%d entries after 400 callers over 8 accounts, want 0", n)
	}
}

// entries is how many accounts' locks are held or waited for.
func (l *accountLocks) entries() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held)
}

// users is how many callers hold or wait for account's lock.
func (l *accountLocks) users(account int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.held[account]; e != nil {
		return e.users
	}
	return 0
}
