package ops

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// emit records, in tx, that something of account changed (docs/api.md, Events): the
// event is written as the transaction's last step (store.Tx.BeforeCommit), so that it
// exists exactly when the change does, and whoever waits on the account's events is
// woken once it has committed. data is the event's JSON object.
//
// The same last step writes the event's deliveries to the account's webhooks that
// want it, with their jobs (fanOut, webhooks.go).
func (s *Service) emit(ctx context.Context, tx store.Tx, account int64, typ hosting.EventType, res hosting.EventResource, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return internal("event data", err)
	}
	e := hosting.Event{AccountID: account, Type: typ, Resource: res, Data: raw, RequestID: hosting.RequestIDOf(ctx),
		CreatedAt: s.NowFor(account)}
	tx.BeforeCommit(func(ctx context.Context) error {
		written, err := tx.AddEvents(ctx, []hosting.Event{e})
		if err != nil {
			return internal("write event", err)
		}
		return s.fanOut(ctx, tx, written[0])
	})
	tx.AfterCommit(func() { s.eventWaits.notify(account) })
	return nil
}

func (s *Service) emitSSHKey(ctx context.Context, tx store.Tx, typ hosting.EventType, k hosting.SSHKey) error {
	return s.emit(ctx, tx, k.AccountID, typ, hosting.EventResource{Type: "ssh_key", ID: k.ID},
		hosting.SSHKeyEventData{ID: k.ID, Name: k.Name, Fingerprint: k.Fingerprint})
}

// emitNamed emits an event of a project or a recipe.
func (s *Service) emitNamed(ctx context.Context, tx store.Tx, typ hosting.EventType, kind string, account, id int64, name string) error {
	return s.emit(ctx, tx, account, typ, hosting.EventResource{Type: kind, ID: id}, hosting.NamedEventData{ID: id, Name: name})
}

// Events lists the principal's account's events that f admits, oldest first (newest
// first with f.Newest, the console's activity pages). With
// wait > 0 and none to answer yet, it holds until one comes or wait passes.
func (s *Service) Events(ctx context.Context, p hosting.Principal, f hosting.EventFilter, wait time.Duration) ([]hosting.Event, error) {
	account := p.Account.ID
	deadline := time.Now().Add(wait)
	for {
		ch := s.eventWaits.subscribe(account)
		events, err := s.store.Events(ctx, account, f)
		left := time.Until(deadline)
		if err != nil || len(events) > 0 || left <= 0 {
			s.eventWaits.unsubscribe(account, ch)
			return events, internal("events", err)
		}
		// Woken by this process's commits at once and by another process's through
		// its notification (EventsWritten); the poll is for a notification lost.
		if !s.sleepUnless(ctx, ch, min(left, eventPoll)) {
			s.eventWaits.unsubscribe(account, ch)
			return events, nil
		}
		s.eventWaits.unsubscribe(account, ch)
	}
}

// PruneEvents removes the events older than hosting.EventRetention, in batches of
// eventPruneBatch, each its own transaction (a month of a busy installation's
// events never holds the database in one), and says how many it removed.
func (s *Service) PruneEvents(ctx context.Context) (int, error) {
	before := s.Now().Add(-hosting.EventRetention)
	total := 0
	for {
		var n int
		err := s.store.InTx(ctx, func(tx store.Tx) error {
			var err error
			n, err = tx.PruneEvents(ctx, before, eventPruneBatch)
			return err
		})
		total += n
		if err != nil || n < eventPruneBatch {
			return total, err
		}
	}
}

const eventPruneBatch = 1000

// eventPoll is how often a held GET /events looks for events no notification told
// of.
const eventPoll = time.Second

// EventsWritten wakes whoever waits on account's events in this process: another
// process wrote some (PostgreSQL's LISTEN/NOTIFY).
func (s *Service) EventsWritten(account int64) { s.eventWaits.notify(account) }

// sleepUnless waits for d or a wake on ch, and reports false when ctx ends or the
// service drains first: then there is no point looking again.
func (s *Service) sleepUnless(ctx context.Context, ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
		return false
	case <-s.draining:
		return false
	}
	return true
}

// wakeups tells goroutines waiting on an id (an operation's, an account's) that it
// changed: each waiter subscribes before it reads, so no change between its read and
// its wait is missed.
type wakeups struct {
	mu      sync.Mutex
	waiters map[int64][]chan struct{}
}

func newWakeups() *wakeups { return &wakeups{waiters: map[int64][]chan struct{}{}} }

func (w *wakeups) subscribe(id int64) chan struct{} {
	ch := make(chan struct{})
	w.mu.Lock()
	w.waiters[id] = append(w.waiters[id], ch)
	w.mu.Unlock()
	return ch
}

func (w *wakeups) unsubscribe(id int64, ch chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	list := w.waiters[id]
	for i, c := range list {
		if c == ch {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(w.waiters, id)
	} else {
		w.waiters[id] = list
	}
}

// notify wakes everyone waiting on id.
func (w *wakeups) notify(id int64) {
	w.mu.Lock()
	list := w.waiters[id]
	delete(w.waiters, id)
	w.mu.Unlock()
	for _, ch := range list {
		close(ch)
	}
}
