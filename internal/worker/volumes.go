package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
)

// The steps of volumes' operations (docs/api.md, Volumes), on the driver's
// compute.Volumes.

// volumes is the driver's ability to keep volumes; a driver without it fails every
// volume's operation for good.
func (w *Worker) volumes() (compute.Volumes, error) {
	v, ok := compute.As[compute.Volumes](w.driver)
	if !ok {
		return nil, fmt.Errorf("%w: the compute driver keeps no volumes", errPermanent)
	}
	return v, nil
}

// opVolume reads the volume of a volume's operation and the driver's spec of it.
func (w *Worker) opVolume(ctx context.Context, a attempt) (hosting.Volume, compute.VolumeSpec, error) {
	if a.op.VolumeID == nil {
		return hosting.Volume{}, compute.VolumeSpec{}, fmt.Errorf("%w: %s without a volume", errPermanent, a.op.Type)
	}
	vol, err := w.store.VolumeAny(ctx, *a.op.VolumeID)
	if err != nil {
		return vol, compute.VolumeSpec{}, err
	}
	return vol, ops.VolumeSpec(vol), nil
}

// createVolume makes the volume, then, when the operation names a server, attaches
// it there.
func (w *Worker) createVolume(ctx context.Context, a attempt) error {
	vs, err := w.volumes()
	if err != nil {
		return err
	}
	_, spec, err := w.opVolume(ctx, a)
	if err != nil {
		return err
	}
	if err := vs.CreateVolume(ctx, a.key("create-volume"), spec); err != nil {
		return err
	}
	if a.op.ServerID != 0 {
		if err := vs.AttachVolume(ctx, a.key("attach-volume"), a.srv.Name, spec, a.op.Automount); err != nil {
			return err
		}
	}
	return w.succeed(ctx, a, w.svc.VolumeCreated(a.op))
}

// attachVolume attaches the volume to the operation's server.
func (w *Worker) attachVolume(ctx context.Context, a attempt) error {
	vs, err := w.volumes()
	if err != nil {
		return err
	}
	_, spec, err := w.opVolume(ctx, a)
	if err != nil {
		return err
	}
	if err := vs.AttachVolume(ctx, a.key("attach-volume"), a.srv.Name, spec, a.op.Automount); err != nil {
		return err
	}
	return w.succeed(ctx, a, w.svc.VolumeAttached(a.op))
}

// detachVolume detaches the volume from the operation's server. A guest that does
// not release it in time fails the operation at once, the volume still attached:
// another attempt would only ask it again (docs/api.md, Volumes).
func (w *Worker) detachVolume(ctx context.Context, a attempt) error {
	vs, err := w.volumes()
	if err != nil {
		return err
	}
	vol, _, err := w.opVolume(ctx, a)
	if err != nil {
		return err
	}
	err = vs.DetachVolume(ctx, a.key("detach-volume"), a.srv.Name, vol.DriverName(), compute.VolumeDetachTimeout)
	if errors.Is(err, compute.ErrDetachTimeout) {
		return fmt.Errorf("%w: %w", errPermanent, err)
	}
	if err != nil {
		return err
	}
	return w.succeed(ctx, a, w.svc.VolumeDetached(a.op))
}

// resizeVolume grows the volume to the operation's size.
func (w *Worker) resizeVolume(ctx context.Context, a attempt) error {
	vs, err := w.volumes()
	if err != nil {
		return err
	}
	vol, _, err := w.opVolume(ctx, a)
	if err != nil {
		return err
	}
	if err := vs.ResizeVolume(ctx, a.key("resize-volume"), vol.DriverName(), a.op.SizeGB); err != nil {
		return err
	}
	return w.succeed(ctx, a, w.svc.VolumeResized(a.op))
}

// attachOrdered attaches to a machine just made the volumes its order named (those
// its provisioning holds), automounted as the order asked, each step keyed by the
// volume.
func (w *Worker) attachOrdered(ctx context.Context, a attempt) ([]hosting.Volume, error) {
	vols, err := w.store.HeldVolumes(ctx, a.op.ID)
	if err != nil || len(vols) == 0 {
		return nil, err
	}
	vs, err := w.volumes()
	if err != nil {
		return nil, err
	}
	for _, vol := range vols {
		if err := vs.AttachVolume(ctx, a.key("attach-"+vol.DriverName()), a.srv.Name, ops.VolumeSpec(vol), a.op.Automount && vol.Format != ""); err != nil {
			return nil, err
		}
	}
	return vols, nil
}

// VolumeDeleteWorker removes a deleted volume's data from the driver
// (ops.VolumeDeleteArgs).
type VolumeDeleteWorker struct {
	river.WorkerDefaults[ops.VolumeDeleteArgs]
	w *Worker
}

// Work implements river.Worker. The driver call is keyed by the volume, so a
// repeated job removes the data once.
func (vw *VolumeDeleteWorker) Work(ctx context.Context, job *river.Job[ops.VolumeDeleteArgs]) error {
	vol, err := vw.w.store.VolumeAny(ctx, job.Args.VolumeID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	vs, err := vw.w.volumes()
	if err != nil {
		return river.JobCancel(err)
	}
	if err := vs.DeleteVolume(ctx, "volume-delete-"+vol.DriverName(), vol.DriverName()); err != nil {
		return err
	}
	vw.w.log.Info("volume deleted", "volume", vol.ID)
	return nil
}
