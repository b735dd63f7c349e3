package simdriver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/berthhq/berth/internal/compute"
)

// live reads a machine's row inside tx; a destroyed machine is compute.ErrNotFound.
func (d *Driver) live(ctx context.Context, tx *sql.Tx, name string) (state string, vcpus, memoryMB, diskGB int, image string, err error) {
	var destroyed sql.NullInt64
	err = tx.QueryRowContext(ctx, d.rebind(`SELECT state, vcpus, memory_mb, disk_gb, image, destroyed_at FROM sim_machines WHERE name = ?`), name).
		Scan(&state, &vcpus, &memoryMB, &diskGB, &image, &destroyed)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && destroyed.Valid) {
		err = compute.ErrNotFound
	}
	return
}

// Reinstall implements compute.Driver.
func (d *Driver) Reinstall(ctx context.Context, key string, spec compute.Spec) error {
	readyAt, err := d.apply(ctx, spec.Name, key, "reinstall", func(tx *sql.Tx, now int64) error {
		if _, _, _, _, _, err := d.live(ctx, tx, spec.Name); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, d.rebind(`UPDATE sim_machines SET state = ?, image = ?, ready_at = ? WHERE name = ?`),
			string(compute.StateRunning), spec.Image, now+d.scaled(ctx, ReinstallTime).Milliseconds(), spec.Name)
		return err
	})
	if err != nil {
		return err
	}
	return d.waitUntil(ctx, readyAt)
}

// Resize implements compute.Driver. Simulated machines have no throughput to limit:
// size.Limits is not kept.
func (d *Driver) Resize(ctx context.Context, key, name string, size compute.Size) error {
	vcpus, memoryMB, diskGB := size.VCPUs, size.MemoryMB, size.DiskGB
	readyAt, err := d.apply(ctx, name, key, "resize", func(tx *sql.Tx, now int64) error {
		state, _, _, disk, _, err := d.live(ctx, tx, name)
		if err != nil {
			return err
		}
		if compute.State(state) != compute.StateStopped {
			return fmt.Errorf("simdriver: %s: cannot resize while %s", name, state)
		}
		_, err = tx.ExecContext(ctx, d.rebind(`UPDATE sim_machines SET vcpus = ?, memory_mb = ?, disk_gb = ?, ready_at = ? WHERE name = ?`),
			vcpus, memoryMB, max(disk, diskGB), now+d.scaled(ctx, ResizeTime).Milliseconds(), name)
		return err
	})
	if err != nil {
		return err
	}
	return d.waitUntil(ctx, readyAt)
}

// snapshotSize is what a simulated snapshot takes: the used part of the disk (a third,
// at least 1 GB) plus the memory image when it has one.
func snapshotSize(diskGB, memoryMB int, withMemory bool) int {
	size := max(1, (diskGB+2)/3)
	if withMemory {
		size += (memoryMB + 1023) / 1024
	}
	return size
}

// Snapshot implements compute.Driver. The machine keeps its state while the snapshot
// is taken; the call returns when the snapshot is ready.
func (d *Driver) Snapshot(ctx context.Context, key, name, snap string, withMemory bool) (int, error) {
	_, err := d.apply(ctx, name, key, "snapshot:"+snap, func(tx *sql.Tx, now int64) error {
		state, vcpus, mem, disk, image, err := d.live(ctx, tx, name)
		if err != nil {
			return err
		}
		if withMemory && compute.State(state) != compute.StateRunning {
			return fmt.Errorf("simdriver: %s: a memory snapshot needs a running machine, not %s", name, state)
		}
		if err := d.refuseRunningWithVolumes(ctx, tx, name, compute.State(state)); err != nil {
			return err
		}
		dur := SnapshotTime
		if withMemory {
			dur += SnapshotMemoryTime
		}
		_, err = tx.ExecContext(ctx, d.rebind(`INSERT INTO sim_snapshots (machine, name, memory, size_gb, vcpus, memory_mb, disk_gb, image, ready_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), name, snap, withMemory, snapshotSize(disk, mem, withMemory), vcpus, mem, disk, image,
			now+d.scaled(ctx, dur).Milliseconds(), now)
		return err
	})
	if err != nil {
		return 0, err
	}
	var size int
	var readyAt int64
	err = d.db.QueryRowContext(ctx, d.rebind(`SELECT size_gb, ready_at FROM sim_snapshots WHERE machine = ? AND name = ?`), name, snap).Scan(&size, &readyAt)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("simdriver: %s: snapshot %s is gone", name, snap)
	}
	if err != nil {
		return 0, err
	}
	return size, d.waitUntil(ctx, readyAt)
}

// refuseRunningWithVolumes is the libvirt driver's rule, kept so that the sandbox
// answers as a real host would: a running machine is snapshotted with all its disks,
// and a volume's cannot be taken (docs/drivers.md, "libvirt: volumes").
func (d *Driver) refuseRunningWithVolumes(ctx context.Context, tx *sql.Tx, name string, state compute.State) error {
	if state != compute.StateRunning {
		return nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, d.rebind(`SELECT COUNT(*) FROM sim_volumes WHERE machine = ?`), name).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("%w: simdriver: %s runs with volumes attached, and a running machine is snapshotted only with all its disks; stop it or detach its volumes",
			compute.ErrFailed, name)
	}
	return nil
}

// Restore implements compute.Driver.
func (d *Driver) Restore(ctx context.Context, key, name, snap string, after compute.State) error {
	readyAt, err := d.apply(ctx, name, key, "restore:"+snap, func(tx *sql.Tx, now int64) error {
		if _, _, _, _, _, err := d.live(ctx, tx, name); err != nil {
			return err
		}
		var memory bool
		var image string
		err := tx.QueryRowContext(ctx, d.rebind(`SELECT memory, image FROM sim_snapshots WHERE machine = ? AND name = ?`), name, snap).Scan(&memory, &image)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("simdriver: %s: no snapshot %s", name, snap)
		}
		if err != nil {
			return err
		}
		state := after
		if memory {
			state = compute.StateRunning
		}
		// The disk goes back to the snapshot's; the machine keeps its current size.
		_, err = tx.ExecContext(ctx, d.rebind(`UPDATE sim_machines SET state = ?, image = ?, ready_at = ? WHERE name = ?`),
			string(state), image, now+d.scaled(ctx, RestoreTime).Milliseconds(), name)
		return err
	})
	if err != nil {
		return err
	}
	return d.waitUntil(ctx, readyAt)
}

// DeleteSnapshot implements compute.Driver.
func (d *Driver) DeleteSnapshot(ctx context.Context, key, name, snap string) error {
	_, err := d.apply(ctx, name, key, "delete-snapshot:"+snap, func(tx *sql.Tx, now int64) error {
		_, err := tx.ExecContext(ctx, d.rebind(`DELETE FROM sim_snapshots WHERE machine = ? AND name = ?`), name, snap)
		return err
	})
	if err != nil && !errors.Is(err, compute.ErrNotFound) {
		return err
	}
	return d.waitUntil(ctx, d.now().Add(d.scaled(ctx, DeleteSnapshotTime)).UnixMilli())
}
