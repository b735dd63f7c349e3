package ops

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// What the workers (internal/worker) record of an operation they carry out: the
// state each step leaves, and the operation's end, written in one transaction with
// the state change it makes and its job's completion (docs/states.md).

// ErrOperationGone: the operation was removed while it ran (a sandbox reset empties
// its account at once, operations and servers included).
var ErrOperationGone = errors.New("the operation no longer exists")

// Change is a state change an operation's end makes, in the transaction that records
// the end.
type Change func(ctx context.Context, tx store.Tx) error

// EndOperation ends op with result (errText says why it failed) in one transaction:
// change (nil: none), the operation's end, the snapshot deletions that waited for it,
// what a suspension asks for next, and complete (its job's completion). An operation
// that had ended already (its job repeated after a crash) only has its job completed.
// ErrOperationGone when the operation was removed.
func (s *Service) EndOperation(ctx context.Context, op hosting.Operation, result hosting.OpStatus, errText string, change Change,
	complete func(tx *sql.Tx) error) error {
	var ended *time.Time // when this call ended the operation (not one before a crash)
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		ended = nil
		if err := holdOperationEnd(ctx, tx, op.ServerID); err != nil {
			return err
		}
		cur, err := tx.OperationAny(ctx, op.ID)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("operation %d: %w", op.ID, ErrOperationGone)
		}
		if err != nil {
			return err
		}
		if cur.Status == hosting.OpRunning {
			if ended, err = s.endRunning(ctx, tx, op, result, errText, change); err != nil {
				return err
			}
		}
		return complete(tx.SQL())
	})
	if err != nil {
		return err
	}
	s.notify(op.ID)
	s.log.Info("operation finished", "op", op.Label(), "result", result, "error", errText)
	if ended != nil && s.telemetry != nil {
		s.telemetry.OperationFinished(op.Type, result, ended.Sub(op.StartedAt))
	}
	return nil
}

// endRunning ends a running operation in tx, and returns when.
func (s *Service) endRunning(ctx context.Context, tx store.Tx, op hosting.Operation, result hosting.OpStatus, errText string,
	change Change) (*time.Time, error) {
	if change != nil {
		if err := change(ctx, tx); err != nil {
			return nil, err
		}
	}
	at := s.NowFor(op.AccountID)
	if err := tx.FinishOperation(ctx, op.ID, result, errText, at); err != nil {
		return nil, err
	}
	typ := hosting.EventOperationSucceeded
	if result == hosting.OpError {
		typ = hosting.EventOperationFailed
	}
	if err := s.emitOperation(ctx, tx, typ, op, result, errText); err != nil {
		return nil, err
	}
	if op.ServerID == 0 { // a volume's operation that held no server
		return &at, nil
	}
	if err := s.runScheduledDeletions(ctx, tx, op.ServerID); err != nil {
		return nil, err
	}
	return &at, s.followSuspension(ctx, tx, op.ServerID)
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
	return s.setStatus(ctx, tx, srv.ID, hosting.StatusStopping)
}

// SetServerStatus writes a server's status between two steps of its operation (a
// reboot's server shows starting once its guest is off).
func (s *Service) SetServerStatus(ctx context.Context, serverID int64, st hosting.Status) error {
	return s.store.InTx(ctx, func(tx store.Tx) error { return s.ServerStatus(serverID, st)(ctx, tx) })
}

// ---- the changes operations end with ----

// ServerStatus sets the server's status.
func (s *Service) ServerStatus(serverID int64, st hosting.Status) Change {
	return func(ctx context.Context, tx store.Tx) error { return s.setStatus(ctx, tx, serverID, st) }
}

// Provisioned: the server's machine m has been made; the server has its addresses
// and runs.
func (s *Service) Provisioned(serverID int64, m compute.Machine) Change {
	return func(ctx context.Context, tx store.Tx) error {
		if err := s.setServerAddresses(ctx, tx, serverID, m.IPv4, m.IPv6); err != nil {
			return err
		}
		return s.setStatus(ctx, tx, serverID, hosting.StatusRunning)
	}
}

// Reinstalled: the server runs image afresh, holds the licenses image requires (not
// those only its old image did), and is billed again if a failed provisioning had
// stopped its meter.
func (s *Service) Reinstalled(srv hosting.Server, image int64) Change {
	return func(ctx context.Context, tx store.Tx) error {
		was, err := tx.ServerAny(ctx, srv.ID)
		if err != nil {
			return err
		}
		if err := tx.SetServerImage(ctx, srv.ID, image); err != nil {
			return err
		}
		// Its licenses follow the image (docs/api.md, Licenses).
		if err := s.relicense(ctx, tx, was, was.ImageID, image); err != nil {
			return err
		}
		if err := s.resumeServerMeter(ctx, tx, srv); err != nil {
			return err
		}
		return s.setStatus(ctx, tx, srv.ID, hosting.StatusRunning)
	}
}

// Rescaled: the server has plan's size (its disk diskGB), is billed at plan's price
// from its next hour, and is stopped.
func (s *Service) Rescaled(serverID int64, plan hosting.Plan, diskGB int) Change {
	return func(ctx context.Context, tx store.Tx) error {
		if err := tx.SetServerPlan(ctx, serverID, plan.ID, plan.VCPUs, plan.MemoryMB, diskGB); err != nil {
			return err
		}
		if err := s.repriceServer(ctx, tx, serverID, plan); err != nil {
			return err
		}
		srv, err := tx.ServerAny(ctx, serverID)
		if err != nil {
			return err
		}
		if err := s.rescaleLicenses(ctx, tx, srv, plan.VCPUs); err != nil {
			return err
		}
		return s.setStatus(ctx, tx, serverID, hosting.StatusStopped)
	}
}

// ServerDestroyed: a deleted server's machine is gone; the volumes its deletion held
// are detached and free (docs/api.md, Volumes: they stay, and stay billed).
func (s *Service) ServerDestroyed(serverID int64) Change {
	return func(ctx context.Context, tx store.Tx) error {
		vols, err := tx.ServerVolumes(ctx, serverID)
		if err != nil {
			return err
		}
		for _, vol := range vols {
			if err := s.detached(ctx, tx, vol); err != nil {
				return err
			}
		}
		return nil
	}
}

// SnapshotTaken: the snapshot is available, sizeGB large, and billed from now.
func (s *Service) SnapshotTaken(snap hosting.Snapshot, sizeGB int) Change {
	return func(ctx context.Context, tx store.Tx) error {
		if err := tx.SnapshotReady(ctx, snap.ID, sizeGB); err != nil {
			return err
		}
		if err := s.emitSnapshot(ctx, tx, hosting.EventSnapshotUpdated, snap, hosting.SnapshotAvailable); err != nil {
			return err
		}
		return s.openSnapshotMeter(ctx, tx, snap, sizeGB)
	}
}

// Failed is what an operation that cannot succeed leaves (docs/states.md): a
// provisioning leaves its server in error with its charge refunded; a snapshot that
// could not be taken is removed, what the driver may have written of it too; a
// deletion leaves the server gone for its owner (the operator sees the error); every
// other operation leaves the server in after, the status that matches its machine.
func (s *Service) Failed(op hosting.Operation, srv hosting.Server, after hosting.Status) Change {
	return func(ctx context.Context, tx store.Tx) error {
		if IsVolumeOp(op.Type) {
			return s.volumeFailed(ctx, tx, op) // the server it held is as it was
		}
		switch op.Type {
		case hosting.OpDelete:
			return nil
		case hosting.OpProvision:
			if err := s.refundProvisioning(ctx, tx, srv); err != nil {
				return err
			}
			return s.setStatus(ctx, tx, srv.ID, hosting.StatusError)
		case hosting.OpSnapshot:
			if err := s.removeFailedSnapshot(ctx, tx, op); err != nil {
				return err
			}
		}
		return s.setStatus(ctx, tx, srv.ID, after)
	}
}

// removeFailedSnapshot deletes the snapshot an operation could not take.
func (s *Service) removeFailedSnapshot(ctx context.Context, tx store.Tx, op hosting.Operation) error {
	if op.SnapshotID == nil {
		return nil
	}
	snap, err := tx.SnapshotAny(ctx, *op.SnapshotID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && snap.DeletedAt != nil) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.deleteSnapshot(ctx, tx, snap)
}

// ---- what the workers ask of the core ----

// OperationFault is the sandbox's fault for an attempt at op (Deps.Faults; none
// outside a sandbox): fail, it fails at once; slow above 0, its driver's durations
// are multiplied by slow. first: the operation's first attempt, which takes the
// fault; later ones meet the same.
func (s *Service) OperationFault(op hosting.Operation, first bool) (fail bool, slow float64) {
	if s.faults == nil {
		return false, 0
	}
	return s.faults.OperationFault(op.AccountID, op.ID, op.Type, first)
}

// MachineSpec is the machine a server has: its name, size, image and place.
func MachineSpec(srv hosting.Server) compute.Spec {
	return compute.Spec{Name: srv.Name, VCPUs: srv.VCPUs, MemoryMB: srv.MemoryMB, DiskGB: srv.DiskGB,
		Image: fmt.Sprintf("image-%d", srv.ImageID), RootPassHash: srv.RootPassHash, LocationID: srv.LocationID}
}

// PlanLimits are what a plan caps of its servers' throughput.
func PlanLimits(p hosting.Plan) compute.Limits {
	return compute.Limits{NetworkMbps: p.NetworkMbps, DiskIOPS: p.DiskIOPS, DiskMBps: p.DiskMBps}
}
