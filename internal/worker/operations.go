package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
)

// run carries out the operation's steps: one method per operation type.
func (w *Worker) run(ctx context.Context, a attempt) error {
	switch a.op.Type {
	case hosting.OpProvision:
		return w.provision(ctx, a)
	case hosting.OpDelete:
		return w.destroy(ctx, a)
	case hosting.OpPower:
		return w.power(ctx, a)
	case hosting.OpReinstall:
		return w.reinstall(ctx, a)
	case hosting.OpRescale:
		return w.rescale(ctx, a)
	case hosting.OpSnapshot:
		return w.snapshot(ctx, a)
	case hosting.OpRestore:
		return w.restore(ctx, a)
	case hosting.OpCreateVolume:
		return w.createVolume(ctx, a)
	case hosting.OpAttachVolume:
		return w.attachVolume(ctx, a)
	case hosting.OpDetachVolume:
		return w.detachVolume(ctx, a)
	case hosting.OpResizeVolume:
		return w.resizeVolume(ctx, a)
	}
	return fmt.Errorf("%w: unknown operation type %q", errPermanent, a.op.Type)
}

// provision makes the server's machine, then records its addresses and that it runs.
func (w *Worker) provision(ctx context.Context, a attempt) error {
	spec, err := w.spec(ctx, a.srv)
	if err != nil {
		return err
	}
	m, err := w.driver.Create(ctx, a.key("create"), spec)
	if err != nil {
		return err
	}
	vols, err := w.attachOrdered(ctx, a)
	if err != nil {
		return err
	}
	return w.succeed(ctx, a, ops.Changes(w.svc.Provisioned(a.srv.ID, m), w.svc.VolumesAttached(a.srv.ID, vols)))
}

// destroy removes the machine of a deleted server.
func (w *Worker) destroy(ctx context.Context, a attempt) error {
	if err := w.driver.Destroy(ctx, a.key("destroy"), a.srv.Name); err != nil {
		return err
	}
	return w.succeed(ctx, a, w.svc.ServerDestroyed(a.srv.ID))
}

// reinstall writes the operation's image afresh on the machine with the server's
// first-boot settings, then records the image and that the server runs.
func (w *Worker) reinstall(ctx context.Context, a attempt) error {
	if a.op.ImageID == nil {
		return fmt.Errorf("%w: reinstall without an image", errPermanent)
	}
	srv := a.srv
	srv.ImageID = *a.op.ImageID
	spec, err := w.spec(ctx, srv)
	if err != nil {
		return err
	}
	if err := w.driver.Reinstall(ctx, a.key("reinstall"), spec); err != nil {
		return err
	}
	return w.succeed(ctx, a, w.svc.Reinstalled(srv, srv.ImageID))
}

// rescale gives the stopped machine the operation's plan's size (its disk grown only
// when asked for), then records the plan and its price; the server stays stopped.
func (w *Worker) rescale(ctx context.Context, a attempt) error {
	if a.op.PlanID == nil {
		return fmt.Errorf("%w: rescale without a plan", errPermanent)
	}
	plan, err := w.store.Plan(ctx, *a.op.PlanID)
	if err != nil {
		return err
	}
	disk := a.srv.DiskGB
	if a.op.UpgradeDisk {
		disk = max(disk, plan.DiskGB)
	}
	size := compute.Size{VCPUs: plan.VCPUs, MemoryMB: plan.MemoryMB, DiskGB: disk, Limits: ops.PlanLimits(plan)}
	if err := w.driver.Resize(ctx, a.key("resize"), a.srv.Name, size); err != nil {
		return err
	}
	return w.succeed(ctx, a, w.svc.Rescaled(a.srv.ID, plan, disk))
}

// snapshot saves the machine's disk (and memory, when asked for) as the operation's
// snapshot, then records it available and billed.
func (w *Worker) snapshot(ctx context.Context, a attempt) error {
	snap, err := w.operationSnapshot(ctx, a)
	if err != nil {
		return err
	}
	size, err := w.driver.Snapshot(ctx, a.key("snapshot"), a.srv.Name, snap.DriverName(), snap.IncludeMemory)
	if err != nil {
		return err
	}
	return w.succeed(ctx, a, w.svc.SnapshotTaken(snap, size))
}

// restore reverts the machine to the operation's snapshot. From a memory snapshot
// the server ends running; from a disk-only one in the status the operation says.
func (w *Worker) restore(ctx context.Context, a attempt) error {
	snap, err := w.operationSnapshot(ctx, a)
	if err != nil {
		return err
	}
	after := a.op.AfterStatus
	if snap.IncludeMemory {
		after = hosting.StatusRunning
	}
	state := compute.StateStopped
	if after == hosting.StatusRunning {
		state = compute.StateRunning
	}
	if err := w.driver.Restore(ctx, a.key("restore"), a.srv.Name, snap.DriverName(), state); err != nil {
		return err
	}
	return w.succeed(ctx, a, w.svc.ServerStatus(a.srv.ID, after))
}

// operationSnapshot reads the snapshot a snapshot or restore operation is about.
func (w *Worker) operationSnapshot(ctx context.Context, a attempt) (hosting.Snapshot, error) {
	if a.op.SnapshotID == nil {
		return hosting.Snapshot{}, fmt.Errorf("%w: %s without a snapshot", errPermanent, a.op.Type)
	}
	return w.store.SnapshotAny(ctx, *a.op.SnapshotID)
}

// power carries out a power action: one method per action.
func (w *Worker) power(ctx context.Context, a attempt) error {
	switch a.op.Action {
	case hosting.PowerOn:
		return w.powerOn(ctx, a)
	case hosting.PowerOff:
		return w.powerOff(ctx, a)
	case hosting.PowerShutdown:
		return w.shutdown(ctx, a)
	case hosting.PowerReboot:
		return w.reboot(ctx, a)
	case hosting.PowerReset:
		return w.reset(ctx, a)
	}
	return fmt.Errorf("%w: unknown power action %q", errPermanent, a.op.Action)
}

// powerOn boots the stopped machine.
func (w *Worker) powerOn(ctx context.Context, a attempt) error {
	if err := w.driver.Start(ctx, a.key("start"), a.srv.Name); err != nil {
		return err
	}
	return w.succeed(ctx, a, w.svc.ServerStatus(a.srv.ID, hosting.StatusRunning))
}

// powerOff pulls the machine's plug.
func (w *Worker) powerOff(ctx context.Context, a attempt) error {
	if err := w.driver.Stop(ctx, a.key("stop"), a.srv.Name); err != nil {
		return err
	}
	return w.succeed(ctx, a, w.svc.ServerStatus(a.srv.ID, hosting.StatusStopped))
}

// shutdown asks the guest to power off (gracefulShutdown).
func (w *Worker) shutdown(ctx context.Context, a attempt) error {
	if off, err := w.gracefulShutdown(ctx, a); !off {
		return err
	}
	return w.succeed(ctx, a, w.svc.ServerStatus(a.srv.ID, hosting.StatusStopped))
}

// reboot shuts the guest down (gracefulShutdown), shows the server starting, and
// boots the machine again.
func (w *Worker) reboot(ctx context.Context, a attempt) error {
	if off, err := w.gracefulShutdown(ctx, a); !off {
		return err
	}
	if err := w.svc.SetServerStatus(ctx, a.srv.ID, hosting.StatusStarting); err != nil {
		return err
	}
	if err := w.driver.Start(ctx, a.key("start"), a.srv.Name); err != nil {
		return err
	}
	return w.succeed(ctx, a, w.svc.ServerStatus(a.srv.ID, hosting.StatusRunning))
}

// reset restarts the running machine at once.
func (w *Worker) reset(ctx context.Context, a attempt) error {
	if err := w.driver.Reset(ctx, a.key("reset"), a.srv.Name); err != nil {
		return err
	}
	return w.succeed(ctx, a, w.svc.ServerStatus(a.srv.ID, hosting.StatusRunning))
}

// gracefulShutdown asks the guest to power off (ACPI) and reports whether it is off.
// A guest that ignores it until ShutdownTimeout keeps running: the operation then
// ends in error, the server running (docs/api.md, Servers), and off is false with the
// error of recording that (nil once recorded).
func (w *Worker) gracefulShutdown(ctx context.Context, a attempt) (off bool, err error) {
	err = w.driver.Shutdown(ctx, a.key("shutdown"), a.srv.Name, w.shutdownTimeout)
	if errors.Is(err, compute.ErrShutdownTimeout) {
		msg := fmt.Sprintf("the guest did not shut down within %s; the server is still running", w.shutdownTimeout)
		return false, w.end(ctx, a, hosting.OpError, msg, w.svc.ServerStatus(a.srv.ID, hosting.StatusRunning))
	}
	return err == nil, err
}

// spec builds what the driver needs to create or reinstall a server's machine:
// ops.MachineSpec, the limits of its plan, and its first-boot settings.
func (w *Worker) spec(ctx context.Context, srv hosting.Server) (compute.Spec, error) {
	spec := ops.MachineSpec(srv)
	// The plan's limits; a plan retired since the order still has them.
	plan, err := w.store.PlanAny(ctx, srv.PlanID)
	if err != nil {
		return spec, err
	}
	spec.Limits = ops.PlanLimits(plan)
	keys, err := w.store.ServerKeys(ctx, srv.ID)
	if err != nil {
		return spec, err
	}
	for _, k := range keys {
		spec.SSHKeys = append(spec.SSHKeys, k.PublicKey)
	}
	scripts, err := w.userScripts(ctx, srv)
	spec.UserScripts = scripts
	return spec, err
}

// userScripts are what runs at a server's first boot: its app's installer, then its
// recipe. An app or recipe that no longer exists is left out, as it always was; a
// store that cannot be read fails the attempt, which is tried again, rather than
// making the machine without them.
func (w *Worker) userScripts(ctx context.Context, srv hosting.Server) ([]string, error) {
	var scripts []string
	if srv.AppID != nil {
		app, err := w.store.App(ctx, *srv.AppID)
		switch {
		case err == nil && app.Script != "":
			scripts = append(scripts, app.Script)
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return nil, fmt.Errorf("app %d: %w", *srv.AppID, err)
		}
	}
	if srv.RecipeID != nil {
		r, err := w.store.Recipe(ctx, srv.AccountID, *srv.RecipeID)
		switch {
		case err == nil:
			scripts = append(scripts, r.Script)
		case !errors.Is(err, store.ErrNotFound):
			return nil, fmt.Errorf("recipe %d: %w", *srv.RecipeID, err)
		}
	}
	return scripts, nil
}
