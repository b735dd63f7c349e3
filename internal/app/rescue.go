package app

import (
	"context"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"
)

// Every accepted operation must end without an operator, whatever the database did
// meanwhile (issue 12). Two things can strand one:
//
//   - Its job is left "running" although no worker runs it: the worker returned, but
//     the job queue could not record how it ended (the disk was full; River's
//     completer gives up after a few tries). River's rescuer would retry it, but only
//     once it has run longer than any attempt may (RescueStuckJobsAfter, minutes).
//     This process knows better: it holds the data directory's lock, so it is the only
//     one working jobs, and it knows which it is working. A job "running" in the
//     table that it is not working, and did not just finish, is rescued at once.
//   - Its job is gone (discarded when even its failure could not be recorded):
//     ops.Service.ResumeOrphanedOperations gives it a new one.
//
// And every accepted snapshot deletion must end: one scheduled for the end of an
// operation that has ended without running it is run (ops.Service.RunStrandedDeletions).
//
// The sweep does all of it every few seconds. It runs beside the job queue, not as one of
// its jobs, so that it works even when the queue cannot record anything.

// workingJobs is a River middleware that keeps which jobs this process is working,
// and when it finished those it worked last.
type workingJobs struct {
	river.MiddlewareDefaults
	mu       sync.Mutex
	running  map[int64]int
	finished map[int64]time.Time
}

func newWorkingJobs() *workingJobs {
	return &workingJobs{running: map[int64]int{}, finished: map[int64]time.Time{}}
}

// Work implements rivertype.WorkerMiddleware.
func (w *workingJobs) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	w.mu.Lock()
	w.running[job.ID]++
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		if w.running[job.ID]--; w.running[job.ID] <= 0 {
			delete(w.running, job.ID)
		}
		w.finished[job.ID] = time.Now()
		w.mu.Unlock()
	}()
	return doInner(ctx)
}

// stranded reports whether a job the table shows running is not being worked here:
// not running now, and not finished lately (River records a job's end a moment after
// its worker returns, and retries that for up to ~40 s). It forgets old finishes.
func (w *workingJobs) stranded(id int64, now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for jid, at := range w.finished {
		if now.Sub(at) > time.Hour {
			delete(w.finished, jid)
		}
	}
	if w.running[id] > 0 {
		return false
	}
	at, ok := w.finished[id]
	return !ok || now.Sub(at) > strandedAfterFinish
}

const (
	// strandedAfterFinish: River's completer retries recording a job's end for up to
	// ~37 s (3 tries of 10 s with 1, 2 and 4 s between them).
	strandedAfterFinish = 45 * time.Second
	// strandedAfterFetch: a job is marked running when it is fetched, a moment before
	// its worker starts.
	strandedAfterFetch = 30 * time.Second
	// sweepEvery is how often the sweep runs.
	sweepEvery = 5 * time.Second
)

// startSweep runs the sweep until Close.
func (a *App) startSweep() {
	d := a.cfg.SweepEvery
	if d <= 0 {
		d = sweepEvery
	}
	a.stopSweep = every(d, a.sweep)
}

// sweep rescues stranded jobs and resumes operations without one. Failures are
// logged: the next round tries again.
func (a *App) sweep(ctx context.Context) {
	if !a.DB.Postgres() {
		// On PostgreSQL other processes work jobs too: which are stranded only
		// River's rescuer can tell (by their age).
		if n, err := a.rescueStranded(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("sweep: stranded jobs not rescued; next round tries again", "err", err)
		} else if n > 0 {
			a.log.Warn("sweep: rescued jobs whose end could not be recorded", "jobs", n)
		}
	}
	if !a.lead.Leads(ctx) {
		return
	}
	if a.DB.Postgres() {
		if n, err := a.rescueDead(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("sweep: jobs of dead processes not rescued; next round tries again", "err", err)
		} else if n > 0 {
			a.log.Warn("sweep: took over the jobs of a process that died", "jobs", n)
		}
	}
	if _, err := a.Service.ResumeOrphanedOperations(ctx); err != nil && ctx.Err() == nil {
		a.log.Warn("sweep: operations without a job not resumed; next round tries again", "err", err)
	}
	if _, err := a.Service.RunStrandedDeletions(ctx); err != nil && ctx.Err() == nil {
		a.log.Warn("sweep: scheduled snapshot deletions without an operation not run; next round tries again", "err", err)
	}
}

// rescueStranded makes the jobs the table shows running, and this process does not
// work, available again. It is right only because this process holds the data
// directory's lock: no other process works jobs.
func (a *App) rescueStranded(ctx context.Context) (int, error) {
	exec := riversqlite.New(a.DB.WriteDB()).GetExecutor()
	now := time.Now()
	stuck, err := exec.JobGetStuck(ctx, &riverdriver.JobGetStuckParams{Max: 1000, StuckHorizon: now.Add(-strandedAfterFetch)})
	if err != nil || len(stuck) == 0 {
		return 0, err
	}
	var stranded []*rivertype.JobRow
	for _, j := range stuck {
		if a.working.stranded(j.ID, now) {
			stranded = append(stranded, j)
		}
	}
	if len(stranded) == 0 {
		return 0, nil
	}
	return len(stranded), rescueJobs(ctx, exec, stranded,
		"the end of this attempt could not be recorded (was the database writable?); rescued by berthd's sweep")
}
