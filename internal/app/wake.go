package app

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
)

// On PostgreSQL River notifies inserted jobs (LISTEN/NOTIFY), but at most so often
// per queue, so the same wake serves there too (see StartWorkers).
//
// River on SQLite has no notifications: a job inserted in a transaction (every
// operation's job is inserted with the state change it carries out) is found by the
// workers' next poll of the queue, FetchPoll later (100 ms), 50 ms on average, a sixth
// of a real guest's whole creation. A job inserted outside a transaction, though,
// makes River fetch at once in the process that inserted it. So once a transaction
// that enqueued work has committed, the queue inserts a wake job: a no-op whose
// insertion gets the committed jobs fetched with it. It costs one small write and one
// job row (removed with the other completed jobs a day later). River's public API has
// no other way to do this.
//
// The wake job is inserted by a goroutine of its own, off the path of the request that
// committed (its write would otherwise delay the answer), and wakes that come while
// one is being inserted are folded into one more.

// wakeArgs is the wake job. Its kind string is stable: renaming it strands queued jobs.
type wakeArgs struct{}

// Kind implements river.JobArgs.
func (wakeArgs) Kind() string { return "berth.wake" }

// InsertOpts implements river.JobArgsWithInsertOpts: a wake is never retried.
func (wakeArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 1} }

// wakeWorker works wake jobs: there is nothing to do.
type wakeWorker struct {
	river.WorkerDefaults[wakeArgs]
}

func (wakeWorker) Work(context.Context, *river.Job[wakeArgs]) error { return nil }

// jobQueue is the job client of a process that works jobs; it implements ops.Waker.
type jobQueue struct {
	*river.Client[*sql.Tx]
	log  *slog.Logger
	wake chan struct{}
	// insertWake inserts a wake job through the client that works this process's
	// jobs (on PostgreSQL another client than the one inserting in transactions).
	insertWake func(ctx context.Context) error
}

func newJobQueue(c *river.Client[*sql.Tx], log *slog.Logger) *jobQueue {
	return &jobQueue{Client: c, log: log, wake: make(chan struct{}, 1), insertWake: func(ctx context.Context) error {
		_, err := c.Insert(ctx, wakeArgs{}, nil)
		return err
	}}
}

// Wake asks for a wake job; it never blocks.
func (q *jobQueue) Wake() {
	select {
	case q.wake <- struct{}{}:
	default: // one is asked for already and not yet inserted: it fetches these jobs too
	}
}

// start runs the goroutine that inserts wake jobs; stop ends it.
func (q *jobQueue) start() (stop func()) {
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
			ictx, icancel := context.WithTimeout(ctx, 10*time.Second)
			// When this fails the jobs are still fetched, by the poll.
			if err := q.insertWake(ictx); err != nil && ctx.Err() == nil {
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
