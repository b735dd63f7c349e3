package app

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/riverqueue/river"
)

// A wake inserts a wake job in each queue that was asked to wake, once, and in no
// other: a transaction that enqueued only an operation wakes the default queue, not
// the mail and DNS queues as well (each wake job is a write, a fetch and a completion
// in the one writer's queue on SQLite).
func TestWakeOnlyTheQueuesAsked(t *testing.T) {
	t.Parallel()
	q := newJobQueue(slog.New(slog.DiscardHandler))
	// The goroutine inserting wake jobs is held on the first insertion, so the wakes
	// asked meanwhile fold into the next.
	inserted := make(chan []string)
	release := make(chan struct{})
	stop := q.start(func(ctx context.Context, jobs []river.InsertManyParams) error {
		var queues []string
		for _, j := range jobs {
			if _, ok := j.Args.(wakeArgs); !ok || j.InsertOpts == nil {
				t.Errorf("insertion of %#v, want wake jobs with their queue", j)
				continue
			}
			queues = append(queues, j.InsertOpts.Queue)
		}
		// The stop at the test's end cancels ctx, also when the test failed with
		// this insertion held.
		select {
		case inserted <- queues:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	})
	defer stop()
	next := func() []string {
		t.Helper()
		select {
		case queues := <-inserted:
			return queues
		case <-time.After(30 * time.Second):
			t.Fatal("no wake jobs inserted 30 s after a wake")
			return nil
		}
	}

	q.Wake("mail")
	if got := next(); !slices.Equal(got, []string{"mail"}) {
		t.Fatalf("wake of the mail queue inserted wake jobs in %v", got)
	}
	// While that insertion is held: a wake of each of two queues, one of them twice.
	q.Wake(river.QueueDefault)
	q.Wake("dns")
	q.Wake(river.QueueDefault)
	release <- struct{}{}
	if got := next(); !slices.Equal(got, []string{river.QueueDefault, "dns"}) {
		t.Fatalf("three wakes of two queues inserted wake jobs in %v, want one in each", got)
	}
	release <- struct{}{}
	select {
	case queues := <-inserted:
		t.Fatalf("wake jobs in %v inserted with no wake asked", queues)
	case <-time.After(200 * time.Millisecond):
	}
}
