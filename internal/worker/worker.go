// Package worker carries out Berth's jobs (docs/states.md): the driver steps of an
// operation, the removal of a deleted snapshot's data, and the periodic metering and
// housekeeping. The use cases of ops enqueue them in the transaction of the state
// change they carry out; a worker drives the compute driver and asks ops to record
// what each step leaves, the operation's end in one transaction with its job's
// completion.
//
// Every driver step carries a key unique to its operation and step (op-<id>:<step>),
// so a job resumed after a crash repeats steps without repeating their effect. An
// operation type is one method of Worker that reads as its steps.
package worker

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/revert"
	"github.com/berthhq/berth/internal/store"
)

// CompleteTx marks a job completed inside a transaction (river.JobCompleteTx bound
// to the store's driver), so that an operation's end and its job's end commit together.
type CompleteTx func(ctx context.Context, tx *sql.Tx, job *river.Job[ops.OperationArgs]) error

// Deps is what the workers are built from (New). Service, Store, Driver and Complete
// are required.
type Deps struct {
	// Service records what the steps leave (ops.Service.EndOperation).
	Service *ops.Service
	// Store is what the workers read operations, servers and the catalog from.
	Store store.Reader
	// Driver runs the machines.
	Driver compute.Driver
	// Complete marks an operation's job completed in the transaction of its end.
	Complete CompleteTx
	// Log is where the workers log (default slog.Default()).
	Log *slog.Logger
	// ShutdownTimeout is how long a graceful shutdown may take before it is given up
	// (docs/api.md, Servers: the server stays running; it is never forced silently).
	// Default 120 s.
	ShutdownTimeout time.Duration
	// StepAllowance is what an attempt may take beside its graceful shutdowns: the
	// other steps on a slow hypervisor (default 3 min).
	StepAllowance time.Duration
	// Tries is how many times a failing step is tried before the operation fails
	// (default 5).
	Tries int
}

// Worker carries out operations against a compute driver.
type Worker struct {
	river.WorkerDefaults[ops.OperationArgs]
	svc      *ops.Service
	store    store.Reader
	driver   compute.Driver
	complete CompleteTx
	log      *slog.Logger

	shutdownTimeout, stepAllowance time.Duration
	tries                          int
}

// New returns the operation worker d describes.
func New(d Deps) *Worker {
	w := &Worker{svc: d.Service, store: d.Store, driver: d.Driver, complete: d.Complete, log: d.Log,
		shutdownTimeout: d.ShutdownTimeout, stepAllowance: d.StepAllowance, tries: d.Tries}
	if w.log == nil {
		w.log = slog.Default()
	}
	if w.shutdownTimeout <= 0 {
		w.shutdownTimeout = 120 * time.Second
	}
	if w.stepAllowance <= 0 {
		w.stepAllowance = 3 * time.Minute
	}
	if w.tries <= 0 {
		w.tries = 5
	}
	return w
}

// Register adds every worker of Berth's jobs to workers: operations (w), snapshot
// deletions, metering and housekeeping.
func (w *Worker) Register(workers *river.Workers) error {
	if err := river.AddWorkerSafely(workers, w); err != nil {
		return err
	}
	if err := river.AddWorkerSafely(workers, &SnapshotDeleteWorker{w: w}); err != nil {
		return err
	}
	if err := river.AddWorkerSafely(workers, &VolumeDeleteWorker{w: w}); err != nil {
		return err
	}
	if err := river.AddWorkerSafely(workers, &MeterWorker{svc: w.svc, log: w.log}); err != nil {
		return err
	}
	return river.AddWorkerSafely(workers, &HousekeepingWorker{svc: w.svc, log: w.log})
}

// Timeout implements river.Worker: AttemptTimeout.
func (w *Worker) Timeout(*river.Job[ops.OperationArgs]) time.Duration { return w.AttemptTimeout() }

// AttemptTimeout bounds one attempt at an operation. Every step is bounded by the
// driver's own timeouts; the longest attempt is a reboot of a guest that ignores ACPI
// (a graceful shutdown given up after ShutdownTimeout, twice at worst when the
// attempt follows one that was cut off), plus a few minutes for the other steps of a
// slow hypervisor. An attempt still running past it is stuck: its context is
// cancelled and the job retried. The job queue rescues a job only after this, so an
// operation never runs twice at once.
func (w *Worker) AttemptTimeout() time.Duration { return 2*w.shutdownTimeout + w.stepAllowance }

// attempt is one attempt at an operation: its job, the operation, its server as the
// attempt began, and what undoes the operation's steps should it fail for good.
type attempt struct {
	job  *river.Job[ops.OperationArgs]
	op   hosting.Operation
	srv  hosting.Server
	undo *revert.Reverter
}

// key is the driver key of one of the operation's steps.
func (a attempt) key(step string) string { return fmt.Sprintf("op-%d:%s", a.op.ID, step) }

// Work implements river.Worker: it carries out the operation's steps (run) and
// decides what a step's failure means: another attempt, or the operation's failure.
func (w *Worker) Work(ctx context.Context, job *river.Job[ops.OperationArgs]) error {
	a, done, err := w.begin(ctx, job)
	if done || err != nil {
		return err
	}
	w.undoes(ctx, a)
	ctx, failed, err := w.sandboxFault(ctx, a)
	if failed {
		return err
	}
	err = w.run(ctx, a)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ops.ErrOperationGone):
		return w.gone(ctx, a, err)
	case ctx.Err() != nil:
		// A stop cut the step short; the next start resumes the job (issue 33: no alarm).
		w.log.Info("operation interrupted by the stop; the next start resumes it", "op", a.op.Label(), "server", a.srv.Name)
		return err
	case w.retried(ctx, job, err):
		w.log.Warn("operation step failed; will retry", "op", a.op.Label(), "server", a.srv.Name, "err", err)
		return err
	}
	w.log.Error("operation failed", "op", a.op.Label(), "server", a.srv.Name, "err", err)
	return w.fail(ctx, a, err)
}

// begin reads the job's operation and its server. done: there is nothing to carry
// out (the operation is gone, or it ended before a crash and its job is completed
// now).
func (w *Worker) begin(ctx context.Context, job *river.Job[ops.OperationArgs]) (a attempt, done bool, err error) {
	a.job, a.undo = job, revert.New()
	a.op, err = w.store.OperationAny(ctx, job.Args.OperationID)
	if errors.Is(err, store.ErrNotFound) {
		return a, true, river.JobCancel(fmt.Errorf("operation %d does not exist", job.Args.OperationID))
	}
	if err != nil {
		return a, true, err
	}
	if a.op.Status != hosting.OpRunning {
		return a, true, w.succeed(ctx, a, nil) // ended before a crash: only its job is completed
	}
	if a.op.ServerID != 0 { // a volume's operation may concern no server
		if a.srv, err = w.store.ServerAny(ctx, a.op.ServerID); err != nil {
			return a, true, err
		}
	}
	attrs := []any{"op", a.op.Label(), "server", a.srv.Name, "attempt", job.Attempt}
	if job.AttemptedAt != nil {
		// How long the job waited for a worker (both times are the database's).
		attrs = append(attrs, "queued_ms", job.AttemptedAt.Sub(job.CreatedAt).Milliseconds())
	}
	w.log.Info("operation started", attrs...)
	return a, false, nil
}

// errPermanent marks a failure no later attempt can mend.
var errPermanent = errors.New("permanent")

// retried reports whether a failed attempt is tried again: a failure that is not
// permanent, while tries are left. A hypervisor that cannot be reached is waited for
// (with the queue's backoff) for as long as the job may live, not just Tries times:
// nothing is lost when it answers again. An attempt cut off (its context ended) is
// always tried again.
func (w *Worker) retried(ctx context.Context, job *river.Job[ops.OperationArgs], err error) bool {
	permanent := errors.Is(err, errPermanent) || errors.Is(err, compute.ErrFailed)
	retry := job.Attempt < w.tries || (errors.Is(err, compute.ErrUnavailable) && job.Attempt < job.MaxAttempts)
	return ctx.Err() != nil || (retry && !permanent)
}

// sandboxFault applies the sandbox's fault for the attempt: a failing one ends the
// operation through fail (failed reports that); a slow one returns ctx with the
// driver's slowdown.
func (w *Worker) sandboxFault(ctx context.Context, a attempt) (_ context.Context, failed bool, _ error) {
	fail, slow := w.svc.OperationFault(a.op, a.job.Attempt == 1)
	if fail {
		w.log.Info("operation failed by a sandbox fault", "op", a.op.Label(), "server", a.srv.Name)
		return ctx, true, w.fail(ctx, a, ops.ErrSandboxFault)
	}
	if slow > 0 {
		ctx = compute.WithSlowdown(ctx, slow)
	}
	return ctx, false, nil
}

// gone ends the job of an operation removed while it ran: what the driver did for it
// meanwhile (a machine its provisioning created after the reset removed the
// account's machines) is undone, since its server is gone too.
func (w *Worker) gone(ctx context.Context, a attempt, cause error) error {
	if cur, err := w.store.ServerAny(ctx, a.srv.ID); err == nil && cur.DeletedAt != nil {
		if err := w.driver.Destroy(ctx, a.key("gone"), a.srv.Name); err != nil && !errors.Is(err, compute.ErrNotFound) {
			return err // retried: the job finds the operation gone again and tries once more
		}
	}
	w.log.Info("operation removed while it ran", "op", a.op.Label(), "server", a.srv.Name)
	return river.JobCancel(cause)
}

// undoes registers, before the attempt's first step, how to undo what the
// operation's steps make (docs/states.md: a failed provisioning is undone). A
// provisioning's steps are the driver's Create (disk, seed, definition, start, and the
// address it takes); what any attempt made of them, one killed before a restart
// included, the driver knows by the server's name, and its Destroy removes whatever
// of it exists. So the removal is registered on every attempt, before the sandbox's
// fault and the steps.
func (w *Worker) undoes(ctx context.Context, a attempt) {
	if a.op.Type == hosting.OpProvision {
		a.undo.Add(func() error { return w.unmake(ctx, a) })
	}
}

// unmake removes what a failed provisioning made of the server's machine. The step
// has a key of its own, and removing what is gone already is no error: repeated after
// a restart, it removes once.
func (w *Worker) unmake(ctx context.Context, a attempt) error {
	if err := w.driver.Destroy(ctx, a.key("undo-create"), a.srv.Name); err != nil {
		return err
	}
	w.log.Info("provisioning undone", "op", a.op.Label(), "server", a.srv.Name)
	return nil
}

// fail ends an operation that cannot succeed (ops.Service.Failed says what it leaves),
// once what its steps made is undone. An undo that fails (the hypervisor away) fails
// the attempt instead: the job is tried again, and the operation ends only once
// everything is undone, so that its end (a provisioning's refund) commits once, after
// the undo.
func (w *Worker) fail(ctx context.Context, a attempt, cause error) error {
	if err := a.undo.Fail(); err != nil {
		w.log.Warn("undoing a failed operation's steps failed; will retry", "op", a.op.Label(), "server", a.srv.Name, "err", err)
		return fmt.Errorf("%s failed (%v) and its %w", a.op.Type, cause, err)
	}
	var after hosting.Status
	if !ops.IsVolumeOp(a.op.Type) { // a volume's leaves its server's status alone
		after = w.machineStatus(ctx, a.srv)
	}
	return w.end(ctx, a, hosting.OpError, cause.Error(), w.svc.Failed(a.op, a.srv, after))
}

// machineStatus is the status that matches the server's machine: running or
// stopped, or error when the driver has none (or cannot tell). The driver is asked
// before the failure's transaction: a transaction holds the store's only writer
// connection.
func (w *Worker) machineStatus(ctx context.Context, srv hosting.Server) hosting.Status {
	m, err := w.driver.Machine(ctx, srv.Name)
	switch {
	case err != nil:
		return hosting.StatusError
	case m.State == compute.StateRunning:
		return hosting.StatusRunning
	}
	return hosting.StatusStopped
}

// succeed ends the operation with change; what its steps made is kept.
func (w *Worker) succeed(ctx context.Context, a attempt, change ops.Change) error {
	if err := w.end(ctx, a, hosting.OpSuccess, "", change); err != nil {
		return err
	}
	a.undo.Success()
	return nil
}

// end ends the operation with result and change, its job's completion in the same
// transaction.
func (w *Worker) end(ctx context.Context, a attempt, result hosting.OpStatus, errText string, change ops.Change) error {
	return w.svc.EndOperation(ctx, a.op, result, errText, change, func(tx *sql.Tx) error { return w.complete(ctx, tx, a.job) })
}
