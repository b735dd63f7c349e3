package httpapi_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testenv"
)

// heldAdvance holds clock advances in their metrics step (the last, after the
// metering pass): those of the accounts hold names report on entered and wait for
// release. It records the times each advance filled, and fails the test when two
// advances of one account are in the step at once.
type heldAdvance struct {
	mu      sync.Mutex
	hold    map[int64]bool
	entered chan int64
	release chan struct{}
	inside  map[int64]int // advances of each account in the metrics step now
	spans   map[int64][][2]time.Time
}

// heldClockEnv is clockEnv with its advances' metrics step (the backfill --sandbox
// does) wrapped by a heldAdvance; hold names the accounts whose advances it holds.
func heldClockEnv(t *testing.T) (*testenv.Env, *heldAdvance) {
	h := &heldAdvance{hold: map[int64]bool{}, entered: make(chan int64, 16), release: make(chan struct{}),
		inside: map[int64]int{}, spans: map[int64][][2]time.Time{}}
	wrap := func(fill ops.BackfillFunc) ops.BackfillFunc {
		if fill == nil {
			t.Fatal("no metrics backfill under --sandbox")
		}
		return func(ctx context.Context, accountID int64, from, to time.Time) error {
			h.mu.Lock()
			h.inside[accountID]++
			if n := h.inside[accountID]; n > 1 {
				t.Errorf("%d advances of account %d at once", n, accountID)
			}
			h.spans[accountID] = append(h.spans[accountID], [2]time.Time{from, to})
			held := h.hold[accountID]
			h.mu.Unlock()
			if held {
				h.entered <- accountID
				select {
				case <-h.release:
				case <-time.After(2 * time.Minute):
					t.Errorf("account %d's advance held for 2 minutes", accountID)
				}
			}
			err := fill(ctx, accountID, from, to)
			h.mu.Lock()
			h.inside[accountID]--
			h.mu.Unlock()
			return err
		}
	}
	e := testenv.New(t, testenv.Options{Sandbox: true, Clock: testenv.NewFakeClock(clockStart).Now, WrapBackfill: wrap})
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
	})
	return e, h
}

// holdAccounts makes h hold the advances of the accounts ids.
func (h *heldAdvance) holdAccounts(ids ...int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		h.hold[id] = true
	}
}

// advanceAsync starts an advance; its answer comes on the channel.
func advanceAsync(a *testenv.Account, by string) <-chan *testenv.Response {
	out := make(chan *testenv.Response, 1)
	go func() { out <- a.Sandbox("POST", "/clock", map[string]any{"advance": by}) }()
	return out
}

// TestClockAdvancesOfAccountsRunApart: another account never feels an advance
// (docs/api.md, The sandbox). Account b's advance of a month with a server running (720
// hours to charge) is held in the middle, after its metering; account a's hour
// advances, charges and answers meanwhile. (One lock over all accounts had a's hour
// take 3.4 s behind b's year.) Proved by order, not by a timing: b is held until a
// has answered, and the test fails if a cannot answer while b is held. (A month,
// not the year: a year's 8,760 metering steps take 15 s, and past the test
// client's 90 s under -race on a busy machine.)
func TestClockAdvancesOfAccountsRunApart(t *testing.T) {
	e, h := heldClockEnv(t)
	a, b := e.NewAccount("en", "100", ""), e.NewAccount("en", "100", "")
	for _, acct := range []*testenv.Account{a, b} {
		srv := order(t, acct, baseOrder())
		waitOp(t, acct, opID(t, srv))
	}
	h.holdAccounts(b.ID)
	bDone := advanceAsync(b, "720h")
	select {
	case <-h.entered:
	case r := <-bDone:
		t.Fatalf("b's advance answered without reaching its metrics: %d %s", r.Status, r.Body)
	case <-time.After(5 * time.Minute):
		t.Fatal("b's advance never reached its metrics")
	}
	// b's clock and its year of charges are in; b is still in its advance.
	bCharged, _ := charges(t, e, b.ID)
	if now := clockNow(t, b); !now.Equal(clockStart.Add(720*time.Hour)) || bCharged["server"] == 0 {
		t.Fatalf("b held at %s with %s charged, want a month on and its charges", now, bCharged["server"])
	}
	aDone := advanceAsync(a, "1h")
	select {
	case r := <-aDone:
		r.Want(t, http.StatusOK)
	case <-time.After(time.Minute):
		t.Fatal("account a's advance of an hour waited for account b's of a month")
	}
	select {
	case r := <-bDone:
		t.Fatalf("b's advance answered while held: %d %s", r.Status, r.Body)
	default:
	}
	if _, hours := charges(t, e, a.ID); hours["server"] != 2 {
		t.Errorf("a has %d server hours charged after its hour, want 2", hours["server"])
	}
	close(h.release)
	(<-bDone).Want(t, http.StatusOK)
	if got, want := clockNow(t, a), clockStart.Add(time.Hour); !got.Equal(want) {
		t.Errorf("a's clock %s, want %s", got, want)
	}
	if got, want := clockNow(t, b), clockStart.Add(720*time.Hour); !got.Equal(want) {
		t.Errorf("b's clock %s, want %s", got, want)
	}
	if got, _ := charges(t, e, b.ID); got["server"] != bCharged["server"] {
		t.Errorf("b charged %s in all, %s when held: its metering was not done before", got["server"], bCharged["server"])
	}
	e.AssertLedger(t)
}

// TestClockAdvancesOfOneAccountRunInTurn: two advances of one account run one after
// the other, each charging its own time: while the first is held in its metrics step,
// the second has not moved the clock, and it answers only after the first.
func TestClockAdvancesOfOneAccountRunInTurn(t *testing.T) {
	e, h := heldClockEnv(t)
	a := e.NewAccount("en", "100", "")
	srv := order(t, a, baseOrder())
	waitOp(t, a, opID(t, srv))
	h.holdAccounts(a.ID)
	first := advanceAsync(a, "24h")
	<-h.entered
	second := advanceAsync(a, "1h")
	// Nothing shows the second advance waiting; half a second lets a lock that does
	// not hold show itself (an advance of an hour answers well within it), and the
	// clock still reads the first one's time.
	select {
	case r := <-second:
		t.Fatalf("the second advance answered while the first was in progress: %d %s", r.Status, r.Body)
	case <-h.entered:
		t.Fatal("the second advance reached its metrics while the first was in progress")
	case <-time.After(500 * time.Millisecond):
	}
	if got, want := clockNow(t, a), clockStart.Add(24*time.Hour); !got.Equal(want) {
		t.Errorf("clock %s while the first advance is held, want %s (the second waits)", got, want)
	}
	h.mu.Lock()
	h.hold[a.ID] = false
	h.mu.Unlock()
	close(h.release)
	(<-first).Want(t, http.StatusOK)
	(<-second).Want(t, http.StatusOK)
	if got, want := clockNow(t, a), clockStart.Add(25*time.Hour); !got.Equal(want) {
		t.Errorf("clock %s after both, want %s", got, want)
	}
	h.mu.Lock()
	spans := h.spans[a.ID]
	h.mu.Unlock()
	if len(spans) != 2 || !spans[0][1].Equal(spans[1][0]) || !spans[1][1].Equal(clockStart.Add(25*time.Hour)) {
		t.Errorf("metrics filled over %v, want 24 h then the hour after", spans)
	}
	if _, hours := charges(t, e, a.ID); hours["server"] != 26 {
		t.Errorf("%d server hours charged, want 26", hours["server"])
	}
	e.AssertLedger(t)
}
