package ops

import (
	"context"
	"sync"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// Test clocks (docs/api.md, The sandbox, serve --sandbox): each account may have a clock of
// its own, ahead of the system clock by an offset that only grows. Everything the
// account's records say about time — created_at, the ledger, operations, metrics —
// is read from it, and the real metering code charges the account's meters up to
// its own now. Without test clocks (production) every account is on s.Now.

// MaxClockAdvance is the most one advance may move a test clock.
const MaxClockAdvance = 8760 * time.Hour

// ClockAdvanceField is the field an invalid advance is reported on.
const ClockAdvanceField = "advance"

// testClocks holds the offsets of the accounts whose clocks run ahead. The offsets
// are kept in the store too (a restart keeps them; a clock never goes back); this
// copy answers NowFor without a query. The sandbox is one process (serve refuses
// --sandbox with a PostgreSQL database), so the copy is always the store's.
type testClocks struct {
	mu    sync.RWMutex
	ahead map[int64]time.Duration
	// advancing serializes the advances (and resets) of each account: each charges
	// what its time did before the next moves the clock again. Another account's
	// advance never waits for them (docs/testing-your-client.md, "The test clock").
	advancing accountLocks
}

// accountLocks is a lock per account, held by at most one caller at a time; an
// account's entry lives only while someone holds or waits for it, so the map holds
// no more entries than there are callers.
type accountLocks struct {
	mu   sync.Mutex
	held map[int64]*accountLock
}

type accountLock struct {
	ch    chan struct{} // holds a value while the lock is held
	users int           // holders and waiters, under accountLocks.mu
}

// lock takes account's lock, waiting for its holder (or ctx): it returns the unlock
// function, or ctx's error without holding the lock.
func (l *accountLocks) lock(ctx context.Context, account int64) (unlock func(), err error) {
	l.mu.Lock()
	if l.held == nil {
		l.held = map[int64]*accountLock{}
	}
	e := l.held[account]
	if e == nil {
		e = &accountLock{ch: make(chan struct{}, 1)}
		l.held[account] = e
	}
	e.users++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		if e.users--; e.users == 0 {
			delete(l.held, account)
		}
		l.mu.Unlock()
	}
	select {
	case e.ch <- struct{}{}:
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
	return func() {
		<-e.ch
		release()
	}, nil
}

// lockClock takes the lock of an account's test clock (a no-op without test clocks).
func (s *Service) lockClock(ctx context.Context, accountID int64) (unlock func(), err error) {
	if s.clocks == nil {
		return func() {}, nil
	}
	unlock, err = s.clocks.advancing.lock(ctx, accountID)
	return unlock, internal("wait for the account's clock", err)
}

// EnableTestClocks gives every account a test clock (the sandbox), with the offsets
// the store holds.
func (s *Service) EnableTestClocks(ctx context.Context) error {
	ahead, err := s.store.ClockOffsets(ctx)
	if err != nil {
		return internal("clock offsets", err)
	}
	s.clocks = &testClocks{ahead: ahead}
	return nil
}

// TestClocks reports whether accounts have test clocks.
func (s *Service) TestClocks() bool { return s.clocks != nil }

// NowFor is the time on an account's clock: s.Now, plus its offset under test clocks.
func (s *Service) NowFor(accountID int64) time.Time { return s.Now().Add(s.ClockAhead(accountID)) }

// ClockAhead is how far an account's clock runs ahead of s.Now (0 without test clocks).
func (s *Service) ClockAhead(accountID int64) time.Duration {
	c := s.clocks
	if c == nil {
		return 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ahead[accountID]
}

// aheadAccounts lists the accounts whose clocks run ahead, with their offsets.
func (c *testClocks) aheadAccounts() map[int64]time.Duration {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(map[int64]time.Duration, len(c.ahead))
	for id, d := range c.ahead {
		out[id] = d
	}
	return out
}

// AdvanceClock moves the principal's account's clock forward by by (0 < by ≤
// MaxClockAdvance, and at most hosting.MaxClockAhead ahead of s.Now in all) and,
// before it returns, does what that time does to the account: every hour started is
// charged (monthly caps and snapshot GB-hours included) and the account's servers are
// suspended when its credit runs out, by the metering pass itself; its running servers
// get the metrics samples of the time (Backfill). It returns the account's new now.
// An advance that would pass the limit is a validation error on advance saying how
// much is left, and changes nothing. The advances of one account run one after the
// other; those of different accounts at once.
func (s *Service) AdvanceClock(ctx context.Context, p hosting.Principal, by time.Duration) (time.Time, error) {
	c := s.clocks
	if c == nil {
		return time.Time{}, hosting.Errorf(hosting.CodeNotFound, "error.not_found")
	}
	if by < time.Millisecond || by > MaxClockAdvance {
		return time.Time{}, hosting.Invalid(ClockAdvanceField, "validation.clock_advance", "max", "8760h")
	}
	id := p.Account.ID
	unlock, err := s.lockClock(ctx, id)
	if err != nil {
		return time.Time{}, err
	}
	defer unlock()
	from := s.NowFor(id)
	var ahead time.Duration
	var moved bool
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		ahead, moved, err = tx.AdvanceClock(ctx, id, by.Truncate(time.Millisecond))
		return err
	})
	if err != nil {
		return time.Time{}, internal("advance clock", err)
	}
	if !moved {
		return time.Time{}, hosting.Invalid(ClockAdvanceField, "validation.clock_ahead_max", "years", hosting.MaxClockAheadYears,
			"max", hosting.FormatClockDuration(hosting.MaxClockAhead), "left", hosting.FormatClockDuration(hosting.ClockAdvanceLeft(ahead)))
	}
	c.mu.Lock()
	c.ahead[id] = ahead
	c.mu.Unlock()
	now := s.NowFor(id)
	if _, err := s.meterPass(ctx, id, now); err != nil {
		return now, internal("charge the advanced time", err)
	}
	if s.backfill != nil {
		if err := s.backfill(ctx, id, from, now); err != nil {
			return now, internal("metrics of the advanced time", err)
		}
	}
	s.log.Info("test clock advanced", "account", id, "by", by.String(), "now", now.Format(time.RFC3339))
	return now, nil
}

// resetClock puts an account back on the system clock (a sandbox reset), in tx; the
// copy in memory follows once tx has committed.
func (s *Service) resetClock(ctx context.Context, tx store.Tx, accountID int64) error {
	c := s.clocks
	if c == nil {
		return nil
	}
	if err := tx.ResetClock(ctx, accountID); err != nil {
		return internal("reset clock", err)
	}
	tx.AfterCommit(func() {
		c.mu.Lock()
		delete(c.ahead, accountID)
		c.mu.Unlock()
	})
	return nil
}
