package app

import (
	"context"
	"database/sql"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// On PostgreSQL River notifies inserted jobs (LISTEN/NOTIFY), but at most so often
// per queue, so the same wake serves there too (see StartWorkers).
//
// River on SQLite has no notifications: a job inserted in a transaction (every
// operation's job is inserted with the state change it carries out) is found by the
// workers' next poll of the queue, FetchPoll later (100 ms), 50 ms on average, a sixth
// of a real guest's whole creation. A job inserted outside a transaction, though,
// makes River fetch at once in the process that inserted it, in the job's queue. So
// once a transaction that enqueued work has committed, the queue inserts a wake job in
// each queue the transaction enqueued in: a no-op whose insertion gets the committed
// jobs fetched with it. It costs one small write and one job row (removed with the
// other completed jobs a day later), and the fetch and completion it brings, in that
// queue only. River's public API has no other way to do this.
//
// The wake jobs are inserted by a goroutine of its own, off the path of the request
// that committed (its write would otherwise delay the answer), and wakes that come
// while some are being inserted are folded into one more insertion, of one wake job
// per queue they name.

// wakeArgs is the wake job. Its kind string is stable: renaming it strands queued jobs.
type wakeArgs struct{}

// Kind implements river.JobArgs.
func (wakeArgs) Kind() string { return "berth.wake" }

// InsertOpts implements river.JobArgsWithInsertOpts: a wake is never retried.
func (wakeArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 1} }

// wakeJobs are the wake jobs of queues, one each.
func wakeJobs(queues []string) []river.InsertManyParams {
	p := make([]river.InsertManyParams, len(queues))
	for i, q := range queues {
		p[i] = river.InsertManyParams{Args: wakeArgs{}, InsertOpts: &river.InsertOpts{Queue: q}}
	}
	return p
}

// wakeWorker works wake jobs: there is nothing to do.
type wakeWorker struct {
	river.WorkerDefaults[wakeArgs]
}

func (wakeWorker) Work(context.Context, *river.Job[wakeArgs]) error { return nil }

// jobQueue is what the core enqueues with (ops.Enqueuer and ops.Waker). It is made
// before the clients it goes through, as the core is made before the workers that need
// it: Open gives it the client that inserts in the store's transactions (use), and
// StartWorkers, which may replace that client, the way to wake this process's workers
// (start). Before then a Wake does nothing: the jobs wait for the poll of whichever
// process works them.
type jobQueue struct {
	client atomic.Pointer[river.Client[*sql.Tx]]
	log    *slog.Logger
	wake   chan struct{}
	waking atomic.Bool // start ran

	mu      sync.Mutex
	pending []string // the queues asked to wake and not yet woken, each once
}

func newJobQueue(log *slog.Logger) *jobQueue {
	return &jobQueue{log: log, wake: make(chan struct{}, 1)}
}

// use makes c the client that inserts the jobs.
func (q *jobQueue) use(c *river.Client[*sql.Tx]) { q.client.Store(c) }

// InsertTx implements ops.Enqueuer.
func (q *jobQueue) InsertTx(ctx context.Context, tx *sql.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	return q.client.Load().InsertTx(ctx, tx, args, opts)
}

// Wake asks for a wake job in queue; it never blocks.
func (q *jobQueue) Wake(queue string) {
	if !q.waking.Load() {
		return
	}
	q.mu.Lock()
	if !slices.Contains(q.pending, queue) {
		q.pending = append(q.pending, queue)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default: // one is asked for already and not yet inserted: it fetches these jobs too
	}
}

// start runs the goroutine that inserts wake jobs with insertWake (through the
// client that works this process's jobs: on PostgreSQL another client than the one
// inserting in transactions); stop ends it.
func (q *jobQueue) start(insertWake func(ctx context.Context, jobs []river.InsertManyParams) error) (stop func()) {
	q.waking.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-q.wake:
			}
			q.mu.Lock()
			queues := q.pending
			q.pending = nil
			q.mu.Unlock()
			if len(queues) == 0 {
				continue // taken by the insertion before, whose signal this is
			}
			ictx, icancel := context.WithTimeout(ctx, 10*time.Second)
			// When this fails the jobs are still fetched, by the poll.
			if err := insertWake(ictx, wakeJobs(queues)); err != nil && ctx.Err() == nil {
				q.log.Warn("job queue not woken; the jobs wait for its next poll", "err", err)
			}
			icancel()
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
