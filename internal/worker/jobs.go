package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
)

// SnapshotDeleteWorker removes a deleted snapshot's data from its machine
// (ops.SnapshotDeleteArgs).
type SnapshotDeleteWorker struct {
	river.WorkerDefaults[ops.SnapshotDeleteArgs]
	w *Worker
}

// Work implements river.Worker. The driver call is keyed by the snapshot, so a
// repeated job removes the data once.
func (sw *SnapshotDeleteWorker) Work(ctx context.Context, job *river.Job[ops.SnapshotDeleteArgs]) error {
	snap, err := sw.w.store.SnapshotAny(ctx, job.Args.SnapshotID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	srv, err := sw.w.store.ServerAny(ctx, snap.ServerID)
	if err != nil {
		return err
	}
	err = sw.w.driver.DeleteSnapshot(ctx, "snapshot-delete-"+snap.DriverName(), srv.Name, snap.DriverName())
	if err == nil {
		sw.w.log.Info("snapshot deleted", "snapshot", snap.ID, "server", srv.Name)
	}
	return err
}

// MeterWorker runs metering passes (ops.MeterArgs, ops.Service.Meter).
type MeterWorker struct {
	river.WorkerDefaults[ops.MeterArgs]
	svc *ops.Service
	log *slog.Logger
}

// Work implements river.Worker.
func (w *MeterWorker) Work(ctx context.Context, _ *river.Job[ops.MeterArgs]) error {
	start := time.Now()
	res, err := w.svc.Meter(ctx)
	if err != nil {
		w.log.Error("metering pass failed", "err", err)
		return err
	}
	if res.Hours > 0 {
		w.log.Info("metering pass", "hours", res.Hours, "charged", res.Total.String(), "overdrawn", res.Overdrawn,
			"took", time.Since(start).String())
	}
	return nil
}

// HousekeepingWorker forgets expired idempotency keys, the events older than their
// retention and the attachments no message named within a day (ops.HousekeepingArgs).
type HousekeepingWorker struct {
	river.WorkerDefaults[ops.HousekeepingArgs]
	svc *ops.Service
	log *slog.Logger
}

// Work implements river.Worker.
func (w *HousekeepingWorker) Work(ctx context.Context, _ *river.Job[ops.HousekeepingArgs]) error {
	n, err := w.svc.PruneIdempotencyKeys(ctx)
	if err != nil && !errors.Is(err, context.Canceled) {
		w.log.Error("housekeeping failed", "err", err)
		return err
	}
	if n > 0 {
		w.log.Info("expired idempotency keys removed", "keys", n)
	}
	n, err = w.svc.PruneEvents(ctx)
	if err != nil && !errors.Is(err, context.Canceled) {
		w.log.Error("housekeeping failed: events", "err", err)
		return err
	}
	if n > 0 {
		w.log.Info("events past their retention removed", "events", n)
	}
	n, err = w.svc.PruneAttachments(ctx)
	if err != nil && !errors.Is(err, context.Canceled) {
		w.log.Error("housekeeping failed: attachments", "err", err)
		return err
	}
	if n > 0 {
		w.log.Info("attachments no message named removed", "attachments", n)
	}
	return nil
}
