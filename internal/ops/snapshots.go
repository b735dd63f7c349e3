package ops

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// Snapshots lists a server's snapshots, newest first.
func (s *Service) Snapshots(ctx context.Context, p hosting.Principal, ref hosting.ServerRef) ([]hosting.Snapshot, error) {
	srv, err := s.server(ctx, s.store, p, ref)
	if err != nil {
		return nil, err
	}
	out, err := s.store.Snapshots(ctx, srv.ID)
	return out, internal("snapshots", err)
}

// snapshot finds a live snapshot of a server, or CodeNotFound.
func (s *Service) snapshot(ctx context.Context, r store.Reader, srv hosting.Server, id int64) (hosting.Snapshot, error) {
	snap, err := r.Snapshot(ctx, srv.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return snap, hosting.ErrNotFound()
	}
	return snap, internal("snapshot", err)
}

// WritableSnapshot finds a server and one of its snapshots that the principal may
// change: CodeNotFound for either, then CodeServerSuspended. Handlers call it before
// decoding a body, so that 404 and 403 come before 422 (docs/api.md, Errors).
func (s *Service) WritableSnapshot(ctx context.Context, p hosting.Principal, ref hosting.ServerRef, snapshotID int64) (hosting.Server, hosting.Snapshot, error) {
	return s.writableSnapshot(ctx, s.store, p, ref, snapshotID)
}

// writableSnapshot is WritableSnapshot reading from r (a transaction).
func (s *Service) writableSnapshot(ctx context.Context, r store.Reader, p hosting.Principal, ref hosting.ServerRef, snapshotID int64) (hosting.Server, hosting.Snapshot, error) {
	srv, err := s.server(ctx, r, p, ref)
	if err != nil {
		return srv, hosting.Snapshot{}, err
	}
	snap, err := s.snapshot(ctx, r, srv, snapshotID)
	if err != nil {
		return srv, snap, err
	}
	return srv, snap, refuseSuspended(srv)
}

// CreateSnapshot starts a snapshot of a server, with its memory when includeMemory
// (the server must then be running). The server is busy until the snapshot is
// available.
func (s *Service) CreateSnapshot(ctx context.Context, p hosting.Principal, id int64, name *string, includeMemory bool) (hosting.Snapshot, error) {
	var snap hosting.Snapshot
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		srv, err := s.writable(ctx, tx, p, id)
		if err != nil {
			return err
		}
		var v hosting.Validation
		if err := checkSnapshotName(ctx, tx, &v, srv, name); err != nil {
			return err
		}
		if err := s.checkQuota(ctx, tx, srv.AccountID, hosting.QuotaSnapshots, &v); err != nil {
			return err
		}
		if err := v.Err("name", "include_memory"); err != nil {
			return err
		}
		if srv.Operation != nil {
			return busy(srv.Operation)
		}
		if err := checkSnapshotState(ctx, tx, srv, includeMemory); err != nil {
			return err
		}
		snap = hosting.Snapshot{AccountID: srv.AccountID, ServerID: srv.ID, Name: *name, IncludeMemory: includeMemory,
			Status: hosting.SnapshotCreating, CreatedAt: s.NowFor(srv.AccountID)}
		if snap.ID, err = tx.CreateSnapshot(ctx, snap); errors.Is(err, store.ErrConflict) {
			return hosting.Invalid("name", "validation.snapshot_name_taken")
		} else if err != nil {
			return internal("create snapshot", err)
		}
		if _, err = s.startOp(ctx, tx, srv, hosting.Operation{Type: hosting.OpSnapshot, SnapshotID: &snap.ID}); err != nil {
			return err
		}
		// The volumes again, now that the snapshot holds the server: no attachment
		// starts or ends from here until this transaction does (an attachment holds
		// the server while it runs). The check above was made after checkQuota locked
		// the account's row, which an attachment's end waits for on PostgreSQL today
		// (its second write of the volume's row checks the volume's account): nothing
		// can end between that check and startOp's write. This read does not depend
		// on that.
		if err := checkSnapshotState(ctx, tx, srv, includeMemory); err != nil {
			return err
		}
		return s.emitSnapshot(ctx, tx, hosting.EventSnapshotCreated, snap, hosting.SnapshotCreating)
	})
	return snap, err
}

// checkSnapshotName adds to v (name) what is wrong with a new snapshot of srv named
// name: missing, against the rules, or taken by a live one.
func checkSnapshotName(ctx context.Context, r store.Reader, v *hosting.Validation, srv hosting.Server, name *string) error {
	if name == nil {
		v.Add("name", "validation.required")
		return nil
	}
	hosting.CheckSnapshotName(v, "name", *name)
	if v.Has("name") {
		return nil
	}
	live, err := r.Snapshots(ctx, srv.ID)
	if err != nil {
		return internal("snapshots", err)
	}
	for _, o := range live {
		if strings.EqualFold(o.Name, *name) {
			v.Add("name", "validation.snapshot_name_taken")
		}
	}
	return nil
}

// checkSnapshotState is what srv's state allows of a snapshot (docs/api.md,
// Snapshots): one with memory needs it running (422 on include_memory), a disk-only
// one running or stopped (422 on server); and while it runs with volumes attached,
// neither (422 on include_memory, or server). A driver snapshots a running machine
// with all its disks, and a volume is none of the server's: libvirt cannot take it
// (docs/volumes.md, Snapshots). A stopped server's snapshot leaves its volumes out.
func checkSnapshotState(ctx context.Context, r store.Reader, srv hosting.Server, includeMemory bool) error {
	if includeMemory && srv.Status != hosting.StatusRunning {
		return hosting.Invalid("include_memory", "validation.memory_needs_running", "status", string(srv.Status))
	}
	if srv.Status != hosting.StatusRunning && srv.Status != hosting.StatusStopped {
		return hosting.Invalid("server", "validation.server_state", "status", string(srv.Status))
	}
	if srv.Status != hosting.StatusRunning {
		return nil
	}
	vols, err := r.ServerVolumes(ctx, srv.ID)
	switch {
	case err != nil:
		return internal("server volumes", err)
	case len(vols) == 0:
		return nil
	case includeMemory:
		return hosting.Invalid("include_memory", "validation.memory_snapshot_volumes")
	default:
		return hosting.Invalid("server", "validation.snapshot_running_volumes")
	}
}

// RestoreSnapshot rebuilds a server from one of its snapshots. The server answers in
// status restoring; from a memory snapshot it ends running, from a disk-only one in
// the power state it had when the restore was asked for (docs/api.md, Snapshots).
func (s *Service) RestoreSnapshot(ctx context.Context, p hosting.Principal, id, snapshotID int64) (hosting.Server, error) {
	var srv hosting.Server
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var snap hosting.Snapshot
		var err error
		if srv, snap, err = s.writableSnapshot(ctx, tx, p, hosting.ServerRef{ID: id}, snapshotID); err != nil {
			return err
		}
		if srv.Operation != nil {
			return busy(srv.Operation)
		}
		if snap.Status != hosting.SnapshotAvailable {
			return hosting.Invalid("snapshot", "validation.snapshot_unavailable", "status", string(snap.Status))
		}
		after := hosting.StatusStopped
		switch srv.Status {
		case hosting.StatusRunning:
			after = hosting.StatusRunning
		case hosting.StatusStopped, hosting.StatusError:
		default:
			return hosting.Invalid("server", "validation.server_state", "status", string(srv.Status))
		}
		op, err := s.startOp(ctx, tx, srv, hosting.Operation{Type: hosting.OpRestore, SnapshotID: &snap.ID, AfterStatus: after})
		if err != nil {
			return err
		}
		srv.Operation, srv.Status = &op, hosting.StatusRestoring
		return internal("set status", s.setStatus(ctx, tx, srv.ID, srv.Status))
	})
	return srv, err
}

// DeleteSnapshot deletes a snapshot at once (true), or, while its server is busy,
// schedules the deletion for when the current operation ends (false).
func (s *Service) DeleteSnapshot(ctx context.Context, p hosting.Principal, id, snapshotID int64) (deleted bool, err error) {
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		// Whether the deletion waits depends on the server's operation, which may be
		// ending right now: hold its end until this decision is written.
		if err := holdOperationEnd(ctx, tx, id); err != nil {
			return internal("hold the operation's end", err)
		}
		srv, snap, err := s.writableSnapshot(ctx, tx, p, hosting.ServerRef{ID: id}, snapshotID)
		if err != nil {
			return err
		}
		if srv.Operation != nil || snap.Status == hosting.SnapshotCreating {
			if err := tx.ScheduleSnapshotDeletion(ctx, snap.ID); err != nil {
				return internal("schedule snapshot deletion", err)
			}
			return s.emitSnapshot(ctx, tx, hosting.EventSnapshotUpdated, snap, hosting.SnapshotDeleting)
		}
		deleted = true
		return s.deleteSnapshot(ctx, tx, snap)
	})
	return deleted, err
}

// deleteSnapshot removes a snapshot from its owner's view and enqueues the removal
// of its data from the machine, in tx.
func (s *Service) deleteSnapshot(ctx context.Context, tx store.Tx, snap hosting.Snapshot) error {
	if err := tx.DeleteSnapshot(ctx, snap.ID, s.NowFor(snap.AccountID)); err != nil {
		return internal("delete snapshot", err)
	}
	if err := tx.StopMeter(ctx, hosting.ResourceSnapshot, snap.ID, s.NowFor(snap.AccountID)); err != nil {
		return internal("stop meter", err)
	}
	if err := s.enqueue(ctx, tx, SnapshotDeleteArgs{SnapshotID: snap.ID}); err != nil {
		return internal("enqueue", err)
	}
	return s.emitSnapshot(ctx, tx, hosting.EventSnapshotDeleted, snap, "deleted")
}

// holdOperationEnd makes tx the only transaction that ends the server's operation or
// decides to wait for its end (a snapshot deletion scheduled while it runs). Without
// it, on PostgreSQL (READ COMMITTED, and the two write no row in common) a deletion
// could read the server busy, an operation's end could look for scheduled deletions
// and commit, and the deletion then be scheduled for an end that has passed: the
// snapshot would stay deleting forever. Either transaction takes it first, before any
// row, so it never closes a cycle of locks. On SQLite write transactions run one at
// a time already.
func holdOperationEnd(ctx context.Context, tx store.Tx, serverID int64) error {
	return tx.Serialize(ctx, "operation-end-"+strconv.FormatInt(serverID, 10))
}

// RunStrandedDeletions runs the scheduled snapshot deletions whose server has no
// operation left to end and run them, and reports how many snapshots it deleted. The
// way a deletion is scheduled (holdOperationEnd) leaves none; this is the sweep's
// guarantee that every accepted deletion ends, whatever left one behind.
func (s *Service) RunStrandedDeletions(ctx context.Context) (int, error) {
	servers, err := s.store.StrandedSnapshotDeletions(ctx, 100)
	if err != nil || len(servers) == 0 {
		return 0, internal("stranded snapshot deletions", err)
	}
	n := 0
	for _, id := range servers {
		err := s.store.InTx(ctx, func(tx store.Tx) error {
			if err := holdOperationEnd(ctx, tx, id); err != nil {
				return err
			}
			srv, err := tx.ServerAny(ctx, id)
			if err != nil || srv.Operation != nil {
				return err // an operation started since: its end runs them
			}
			due, err := tx.ScheduledSnapshotDeletions(ctx, id)
			if err != nil {
				return err
			}
			for _, snap := range due {
				if snap.Status == hosting.SnapshotCreating {
					continue // never without an operation; left to the one that makes it
				}
				if err := s.deleteSnapshot(ctx, tx, snap); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		if err != nil {
			return n, internal("stranded snapshot deletions", err)
		}
	}
	if n > 0 {
		s.log.Warn("scheduled snapshot deletions without an operation run", "snapshots", n)
	}
	return n, nil
}

// runScheduledDeletions deletes, in tx, the server's snapshots whose deletion waited
// for the operation that is ending.
func (s *Service) runScheduledDeletions(ctx context.Context, tx store.Tx, serverID int64) error {
	due, err := tx.ScheduledSnapshotDeletions(ctx, serverID)
	if err != nil {
		return err
	}
	for _, snap := range due {
		if err := s.deleteSnapshot(ctx, tx, snap); err != nil {
			return err
		}
	}
	return nil
}
