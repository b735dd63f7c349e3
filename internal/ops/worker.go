package ops

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// CompleteTx marks a job completed inside a transaction (river.JobCompleteTx bound
// to the store's driver), so that an operation's end and its job's end commit together.
type CompleteTx func(ctx context.Context, tx *sql.Tx, job *river.Job[OperationArgs]) error

// Worker carries out operations against a compute driver. Each step passes the
// driver a key unique to the operation and step, so a job resumed after a crash
// repeats steps without repeating their effect.
type Worker struct {
	river.WorkerDefaults[OperationArgs]
	svc      *Service
	driver   compute.Driver
	complete CompleteTx
	// ShutdownTimeout is how long a graceful shutdown may take before it is given up
	// (API-DECISIONS §5: the server stays running; it is never forced silently).
	ShutdownTimeout time.Duration
	// Tries is how many times a failing step is tried before the operation fails.
	Tries int
	// StepAllowance is what an attempt may take beside its graceful shutdowns: the
	// other steps on a slow hypervisor (default 3 min).
	StepAllowance time.Duration
}

// NewWorker returns the operation worker.
func NewWorker(svc *Service, driver compute.Driver, complete CompleteTx) *Worker {
	return &Worker{svc: svc, driver: driver, complete: complete, ShutdownTimeout: 120 * time.Second, Tries: 5,
		StepAllowance: 3 * time.Minute}
}

// Timeout implements river.Worker: AttemptTimeout.
func (w *Worker) Timeout(*river.Job[OperationArgs]) time.Duration { return w.AttemptTimeout() }

// AttemptTimeout bounds one attempt at an operation. Every step is bounded by the
// driver's own timeouts; the longest attempt is a reboot of a guest that ignores ACPI
// (a graceful shutdown given up after ShutdownTimeout, twice at worst when the
// attempt follows one that was cut off), plus a few minutes for the other steps of a
// slow hypervisor. An attempt still running past it is stuck: its context is
// cancelled and the job retried. The job queue rescues a job only after this, so an
// operation never runs twice at once.
func (w *Worker) AttemptTimeout() time.Duration { return 2*w.ShutdownTimeout + w.StepAllowance }

func stepKey(op hosting.Operation, step string) string { return fmt.Sprintf("op-%d:%s", op.ID, step) }

// Work implements river.Worker.
func (w *Worker) Work(ctx context.Context, job *river.Job[OperationArgs]) error {
	st := w.svc.store
	op, err := st.OperationAny(ctx, job.Args.OperationID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(fmt.Errorf("operation %d does not exist", job.Args.OperationID))
	}
	if err != nil {
		return err
	}
	if op.Status != hosting.OpRunning {
		return w.finish(ctx, job, op, nil) // done before a crash; just complete the job
	}
	srv, err := st.ServerAny(ctx, op.ServerID)
	if err != nil {
		return err
	}
	attrs := []any{"op", describe(op), "server", srv.Name, "attempt", job.Attempt}
	if job.AttemptedAt != nil {
		// How long the job waited for a worker (both times are the database's).
		attrs = append(attrs, "queued_ms", job.AttemptedAt.Sub(job.CreatedAt).Milliseconds())
	}
	w.svc.log.Info("operation started", attrs...)
	ctx, failed, err := w.sandboxFault(ctx, job, op, srv)
	if failed {
		return err
	}
	err = w.run(ctx, job, op, srv)
	if err == nil {
		return nil
	}
	if errors.Is(err, errOperationGone) {
		return w.gone(ctx, op, srv, err)
	}
	permanent := errors.Is(err, errPermanent) || errors.Is(err, compute.ErrFailed)
	// A hypervisor that cannot be reached is waited for (with the queue's backoff)
	// for as long as the job may live, not just Tries times: nothing is lost when
	// it answers again.
	retry := job.Attempt < w.Tries || (errors.Is(err, compute.ErrUnavailable) && job.Attempt < job.MaxAttempts)
	if ctx.Err() != nil || (retry && !permanent) {
		w.svc.log.Warn("operation step failed; will retry", "op", describe(op), "server", srv.Name, "err", err)
		return err
	}
	w.svc.log.Error("operation failed", "op", describe(op), "server", srv.Name, "err", err)
	return w.fail(ctx, job, op, srv, err)
}

var errPermanent = errors.New("permanent")

// errOperationGone: the operation was removed while it ran (a sandbox reset empties
// its account at once, operations and servers included).
var errOperationGone = errors.New("the operation no longer exists")

// gone ends the job of an operation removed while it ran: what the driver did for it
// meanwhile (a machine its provisioning created after the reset removed the
// account's machines) is undone, since its server is gone too.
func (w *Worker) gone(ctx context.Context, op hosting.Operation, srv hosting.Server, cause error) error {
	if cur, err := w.svc.store.ServerAny(ctx, srv.ID); err == nil && cur.DeletedAt != nil {
		if err := w.driver.Destroy(ctx, stepKey(op, "gone"), srv.Name); err != nil && !errors.Is(err, compute.ErrNotFound) {
			return err // retried: the job finds the operation gone again and tries once more
		}
	}
	w.svc.log.Info("operation removed while it ran", "op", describe(op), "server", srv.Name)
	return river.JobCancel(cause)
}

func (w *Worker) run(ctx context.Context, job *river.Job[OperationArgs], op hosting.Operation, srv hosting.Server) error {
	d := w.driver
	switch op.Type {
	case hosting.OpProvision:
		spec, err := w.spec(ctx, srv)
		if err != nil {
			return err
		}
		m, err := d.Create(ctx, stepKey(op, "create"), spec)
		if err != nil {
			return err
		}
		return w.finish(ctx, job, op, func(tx store.Tx) error {
			if err := tx.SetServerAddresses(ctx, srv.ID, m.IPv4, m.IPv6); err != nil {
				return err
			}
			return tx.SetServerStatus(ctx, srv.ID, hosting.StatusRunning)
		})
	case hosting.OpDelete:
		if err := d.Destroy(ctx, stepKey(op, "destroy"), srv.Name); err != nil {
			return err
		}
		return w.finish(ctx, job, op, nil)
	case hosting.OpPower:
		return w.power(ctx, job, op, srv)
	case hosting.OpReinstall:
		if op.ImageID == nil {
			return fmt.Errorf("%w: reinstall without an image", errPermanent)
		}
		srv.ImageID = *op.ImageID
		spec, err := w.spec(ctx, srv)
		if err != nil {
			return err
		}
		if err := d.Reinstall(ctx, stepKey(op, "reinstall"), spec); err != nil {
			return err
		}
		return w.finish(ctx, job, op, func(tx store.Tx) error {
			if err := tx.SetServerImage(ctx, srv.ID, srv.ImageID); err != nil {
				return err
			}
			if err := w.svc.resumeServerMeter(ctx, tx, srv); err != nil {
				return err
			}
			return tx.SetServerStatus(ctx, srv.ID, hosting.StatusRunning)
		})
	case hosting.OpRescale:
		if op.PlanID == nil {
			return fmt.Errorf("%w: rescale without a plan", errPermanent)
		}
		plan, err := w.svc.store.Plan(ctx, *op.PlanID)
		if err != nil {
			return err
		}
		disk := srv.DiskGB
		if op.UpgradeDisk {
			disk = max(disk, plan.DiskGB)
		}
		size := compute.Size{VCPUs: plan.VCPUs, MemoryMB: plan.MemoryMB, DiskGB: disk, Limits: limits(plan)}
		if err := d.Resize(ctx, stepKey(op, "resize"), srv.Name, size); err != nil {
			return err
		}
		return w.finish(ctx, job, op, func(tx store.Tx) error {
			if err := tx.SetServerPlan(ctx, srv.ID, plan.ID, plan.VCPUs, plan.MemoryMB, disk); err != nil {
				return err
			}
			if err := w.svc.repriceServer(ctx, tx, srv.ID, plan); err != nil {
				return err
			}
			return tx.SetServerStatus(ctx, srv.ID, hosting.StatusStopped)
		})
	case hosting.OpSnapshot, hosting.OpRestore:
		if op.SnapshotID == nil {
			return fmt.Errorf("%w: %s without a snapshot", errPermanent, op.Type)
		}
		snap, err := w.svc.store.SnapshotAny(ctx, *op.SnapshotID)
		if err != nil {
			return err
		}
		if op.Type == hosting.OpSnapshot {
			size, err := d.Snapshot(ctx, stepKey(op, "snapshot"), srv.Name, snap.DriverName(), snap.IncludeMemory)
			if err != nil {
				return err
			}
			return w.finish(ctx, job, op, func(tx store.Tx) error {
				if err := tx.SnapshotReady(ctx, snap.ID, size); err != nil {
					return err
				}
				return w.svc.openSnapshotMeter(ctx, tx, snap, size)
			})
		}
		after := op.AfterStatus
		if snap.IncludeMemory {
			after = hosting.StatusRunning
		}
		state := compute.StateStopped
		if after == hosting.StatusRunning {
			state = compute.StateRunning
		}
		if err := d.Restore(ctx, stepKey(op, "restore"), srv.Name, snap.DriverName(), state); err != nil {
			return err
		}
		return w.finish(ctx, job, op, func(tx store.Tx) error { return tx.SetServerStatus(ctx, srv.ID, after) })
	}
	return fmt.Errorf("%w: unknown operation type %q", errPermanent, op.Type)
}

func (w *Worker) power(ctx context.Context, job *river.Job[OperationArgs], op hosting.Operation, srv hosting.Server) error {
	d := w.driver
	status := func(s hosting.Status) func(tx store.Tx) error {
		return func(tx store.Tx) error { return tx.SetServerStatus(ctx, srv.ID, s) }
	}
	// shutdown handles a guest that ignores ACPI: the server stays running and the
	// operation records the failure.
	shutdown := func() (bool, error) {
		err := d.Shutdown(ctx, stepKey(op, "shutdown"), srv.Name, w.ShutdownTimeout)
		if errors.Is(err, compute.ErrShutdownTimeout) {
			msg := fmt.Sprintf("the guest did not shut down within %s; the server is still running", w.ShutdownTimeout)
			return false, w.finishWith(ctx, job, op, hosting.OpError, msg, status(hosting.StatusRunning))
		}
		return err == nil, err
	}
	switch op.Action {
	case hosting.PowerOn:
		if err := d.Start(ctx, stepKey(op, "start"), srv.Name); err != nil {
			return err
		}
		return w.finish(ctx, job, op, status(hosting.StatusRunning))
	case hosting.PowerOff:
		if err := d.Stop(ctx, stepKey(op, "stop"), srv.Name); err != nil {
			return err
		}
		return w.finish(ctx, job, op, status(hosting.StatusStopped))
	case hosting.PowerShutdown:
		if ok, err := shutdown(); !ok {
			return err
		}
		return w.finish(ctx, job, op, status(hosting.StatusStopped))
	case hosting.PowerReboot:
		if ok, err := shutdown(); !ok {
			return err
		}
		if err := w.svc.store.InTx(ctx, status(hosting.StatusStarting)); err != nil {
			return err
		}
		if err := d.Start(ctx, stepKey(op, "start"), srv.Name); err != nil {
			return err
		}
		return w.finish(ctx, job, op, status(hosting.StatusRunning))
	case hosting.PowerReset:
		if err := d.Reset(ctx, stepKey(op, "reset"), srv.Name); err != nil {
			return err
		}
		return w.finish(ctx, job, op, status(hosting.StatusRunning))
	}
	return fmt.Errorf("%w: unknown power action %q", errPermanent, op.Action)
}

// machineSpec is the machine a server has: its name, size, image and place.
func machineSpec(srv hosting.Server) compute.Spec {
	return compute.Spec{Name: srv.Name, VCPUs: srv.VCPUs, MemoryMB: srv.MemoryMB, DiskGB: srv.DiskGB,
		Image: fmt.Sprintf("image-%d", srv.ImageID), RootPassHash: srv.RootPassHash, LocationID: srv.LocationID}
}

// spec builds what the driver needs to create a server's machine: machineSpec, and
// its first-boot settings.
func (w *Worker) spec(ctx context.Context, srv hosting.Server) (compute.Spec, error) {
	st := w.svc.store
	spec := machineSpec(srv)
	// The plan's limits; a plan retired since the order still has them.
	plan, err := st.PlanAny(ctx, srv.PlanID)
	if err != nil {
		return spec, err
	}
	spec.Limits = limits(plan)
	keys, err := st.ServerKeys(ctx, srv.ID)
	if err != nil {
		return spec, err
	}
	for _, k := range keys {
		spec.SSHKeys = append(spec.SSHKeys, k.PublicKey)
	}
	if srv.AppID != nil {
		if app, err := st.App(ctx, *srv.AppID); err == nil && app.Script != "" {
			spec.UserScripts = append(spec.UserScripts, app.Script)
		}
	}
	if srv.RecipeID != nil {
		if r, err := st.Recipe(ctx, srv.AccountID, *srv.RecipeID); err == nil {
			spec.UserScripts = append(spec.UserScripts, r.Script)
		}
	}
	return spec, nil
}

// limits are what a plan caps of its servers' throughput.
func limits(p hosting.Plan) compute.Limits {
	return compute.Limits{NetworkMbps: p.NetworkMbps, DiskIOPS: p.DiskIOPS, DiskMBps: p.DiskMBps}
}

// fail ends an operation that cannot succeed, leaving the server in the status that
// matches its machine.
func (w *Worker) fail(ctx context.Context, job *river.Job[OperationArgs], op hosting.Operation, srv hosting.Server, cause error) error {
	// Ask the driver first: a transaction holds the store's only writer connection.
	after := hosting.StatusError
	if m, err := w.driver.Machine(ctx, srv.Name); err == nil {
		after = hosting.StatusStopped
		if m.State == compute.StateRunning {
			after = hosting.StatusRunning
		}
	}
	return w.finishWith(ctx, job, op, hosting.OpError, cause.Error(), func(tx store.Tx) error {
		switch op.Type {
		case hosting.OpDelete:
			return nil // the server is gone for its owner; the operator sees the error
		case hosting.OpProvision:
			if err := w.svc.refundProvisioning(ctx, tx, srv); err != nil {
				return err
			}
			return tx.SetServerStatus(ctx, srv.ID, hosting.StatusError)
		case hosting.OpSnapshot:
			// A snapshot that could not be made is gone; what the driver may have
			// written of it is removed.
			if op.SnapshotID != nil {
				if snap, err := tx.SnapshotAny(ctx, *op.SnapshotID); err == nil && snap.DeletedAt == nil {
					if err := w.svc.deleteSnapshot(ctx, tx, snap); err != nil {
						return err
					}
				}
			}
		}
		return tx.SetServerStatus(ctx, srv.ID, after)
	})
}

func (w *Worker) finish(ctx context.Context, job *river.Job[OperationArgs], op hosting.Operation, change func(tx store.Tx) error) error {
	return w.finishWith(ctx, job, op, hosting.OpSuccess, "", change)
}

// finishWith ends an operation in one transaction: the state change, the operation's
// end, what a suspension asks for next, and the job's completion.
func (w *Worker) finishWith(ctx context.Context, job *river.Job[OperationArgs], op hosting.Operation, result hosting.OpStatus, errText string, change func(tx store.Tx) error) error {
	s := w.svc
	var ended *time.Time // when this call ended the operation (not one before a crash)
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		ended = nil
		if err := holdOperationEnd(ctx, tx, op.ServerID); err != nil {
			return err
		}
		cur, err := tx.OperationAny(ctx, op.ID)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("operation %d: %w", op.ID, errOperationGone)
		}
		if err != nil {
			return err
		}
		if cur.Status == hosting.OpRunning {
			if change != nil {
				if err := change(tx); err != nil {
					return err
				}
			}
			at := s.NowFor(op.AccountID)
			if err := tx.FinishOperation(ctx, op.ID, result, errText, at); err != nil {
				return err
			}
			ended = &at
			if err := s.runScheduledDeletions(ctx, tx, op.ServerID); err != nil {
				return err
			}
			if err := s.followSuspension(ctx, tx, op.ServerID); err != nil {
				return err
			}
		}
		return w.complete(ctx, tx.SQL(), job)
	})
	if err != nil {
		return err
	}
	s.notify(op.ID)
	s.log.Info("operation finished", "op", describe(op), "result", result, "error", errText)
	if ended != nil && s.telemetry != nil {
		s.telemetry.OperationFinished(op.Type, result, ended.Sub(op.StartedAt))
	}
	return nil
}

// followSuspension powers off a suspended server that is idle and still running.
func (s *Service) followSuspension(ctx context.Context, tx store.Tx, serverID int64) error {
	srv, err := tx.ServerAny(ctx, serverID)
	if err != nil || srv.DeletedAt != nil || !srv.Suspended || srv.Operation != nil || srv.Status != hosting.StatusRunning {
		return err
	}
	if _, err := s.startOperation(ctx, tx, srv, hosting.OpPower, hosting.PowerOff); err != nil {
		return err
	}
	return tx.SetServerStatus(ctx, srv.ID, hosting.StatusStopping)
}
