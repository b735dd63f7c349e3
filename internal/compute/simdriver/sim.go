// Package simdriver is the simulated compute driver: machines that exist only as rows
// in Berth's own database, with realistic durations scaled by a factor. It is what a
// client developer's sandbox runs on, and what the tests run on.
package simdriver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/berthhq/berth/internal/compute"
)

// Durations at scale 1 (realistic).
var (
	CreateTime   = 30 * time.Second
	StartTime    = 5 * time.Second
	ShutdownTime = 5 * time.Second
	StopTime     = 1 * time.Second
	ResetTime    = 5 * time.Second
	DestroyTime  = 2 * time.Second
	// ReinstallTime is wiping the disk, writing the image and the first boot.
	ReinstallTime = 40 * time.Second
	ResizeTime    = 10 * time.Second
	// SnapshotTime is a disk snapshot; one with memory takes SnapshotMemoryTime more.
	SnapshotTime       = 10 * time.Second
	SnapshotMemoryTime = 5 * time.Second
	RestoreTime        = 15 * time.Second
	DeleteSnapshotTime = 2 * time.Second
)

// Driver is the simulated driver.
type Driver struct {
	db    *sql.DB
	scale float64
	now   func() time.Time
	// Rebind turns a query written with ? placeholders into the database's dialect.
	rebind func(string) string
	// CreateFault fails a step of making a machine, for tests of what a failed
	// creation leaves (nil: none). The machine's row is its disk: a fault at "disk"
	// leaves nothing, one at a later step leaves the row. Set it before the driver is
	// used.
	CreateFault compute.CreateFault
	// GuestHolds, when it answers true for a machine and a volume attached to it,
	// makes the machine's simulated guest keep the volume: a DetachVolume from the
	// running machine waits its timeout and answers compute.ErrDetachTimeout, the
	// volume still attached, as a guest with the disk busy does. For tests (nil: every
	// guest releases its volumes); production never sets it. Set it before the driver
	// is used.
	GuestHolds func(machine, volume string) bool
}

var _ compute.Driver = (*Driver)(nil)

// Open returns a driver keeping its machines in env's database (its tables, Storage).
// scale multiplies every duration: 1 is realistic, 0.01 is fast.
func Open(env compute.Env, scale float64) *Driver {
	return New(env.DB, scale, env.Rebind)
}

// New returns a driver keeping its machines in db (its tables, Storage), whose
// queries rebind turns into the database's dialect. scale multiplies every duration:
// 1 is realistic, 0.01 is fast.
func New(db *sql.DB, scale float64, rebind func(string) string) *Driver {
	if rebind == nil {
		rebind = func(q string) string { return q }
	}
	return &Driver{db: db, scale: scale, now: time.Now, rebind: rebind}
}

// scaled is a duration at the driver's scale, times the slowdown ctx asks for
// (compute.WithSlowdown: a sandbox's slow operation fault).
func (d *Driver) scaled(ctx context.Context, x time.Duration) time.Duration {
	return time.Duration(float64(x) * d.scale * compute.Slowdown(ctx))
}

// apply records the event key for machine and, only if it is new, runs change in the
// same transaction. It returns the machine's ready_at after the call.
func (d *Driver) apply(ctx context.Context, name, key, event string, change func(tx *sql.Tx, now int64) error) (int64, error) {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	now := d.now().UnixMilli()
	res, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO sim_events (machine, event, op_key, at) VALUES (?, ?, ?, ?) ON CONFLICT (machine, op_key) DO NOTHING`), name, event, key, now)
	if err != nil {
		return 0, err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		if err := change(tx, now); err != nil {
			return 0, err
		}
	}
	var readyAt int64
	err = tx.QueryRowContext(ctx, d.rebind(`SELECT ready_at FROM sim_machines WHERE name = ?`), name).Scan(&readyAt)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, compute.ErrNotFound
	}
	if err != nil {
		return 0, err
	}
	return readyAt, tx.Commit()
}

// waitUntil blocks until the machine's transition ends at readyAt (Unix ms).
func (d *Driver) waitUntil(ctx context.Context, readyAt int64) error {
	wait := time.Until(time.UnixMilli(readyAt))
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// transition moves an existing machine from one of the states in from to state to,
// taking dur. A machine already in state to (and not in from) is left alone.
func (d *Driver) transition(ctx context.Context, key, name, event string, from []compute.State, to compute.State, dur time.Duration) error {
	readyAt, err := d.apply(ctx, name, key, event, func(tx *sql.Tx, now int64) error {
		var state string
		var destroyed sql.NullInt64
		err := tx.QueryRowContext(ctx, d.rebind(`SELECT state, destroyed_at FROM sim_machines WHERE name = ?`), name).Scan(&state, &destroyed)
		if errors.Is(err, sql.ErrNoRows) || destroyed.Valid {
			return compute.ErrNotFound
		}
		if err != nil {
			return err
		}
		ok := false
		for _, f := range from {
			ok = ok || compute.State(state) == f
		}
		if !ok {
			if compute.State(state) == to {
				return nil
			}
			return fmt.Errorf("simdriver: %s: cannot %s from %s", name, event, state)
		}
		_, err = tx.ExecContext(ctx, d.rebind(`UPDATE sim_machines SET state = ?, ready_at = ? WHERE name = ?`),
			string(to), now+d.scaled(ctx, dur).Milliseconds(), name)
		return err
	})
	if err != nil {
		return err
	}
	return d.waitUntil(ctx, readyAt)
}

// Create implements compute.Driver. A destroyed machine's name is not made again
// (compute.ErrFailed), as the libvirt driver refuses it: a server's name is never
// reused, so a Create of one is a repeated step of a provisioning undone since.
func (d *Driver) Create(ctx context.Context, key string, spec compute.Spec) (compute.Machine, error) {
	if err := d.fault(spec.Name, "disk"); err != nil {
		return compute.Machine{}, err
	}
	if err := d.insert(ctx, key, spec); err != nil {
		return compute.Machine{}, err
	}
	for _, step := range compute.CreateSteps[1:] {
		if err := d.fault(spec.Name, step); err != nil {
			return compute.Machine{}, err
		}
	}
	_, readyAt, err := d.machine(ctx, spec.Name)
	if err != nil {
		return compute.Machine{}, err
	}
	if err := d.waitUntil(ctx, readyAt); err != nil {
		return compute.Machine{}, err
	}
	m, _, err := d.machine(ctx, spec.Name)
	return m, err
}

// fault is CreateFault's answer for a step of making machine name.
func (d *Driver) fault(name, step string) error {
	if d.CreateFault == nil {
		return nil
	}
	return d.CreateFault(name, step)
}

// insert writes a new machine's row, running once its creation's time has passed; a
// row there already is kept (a repeated Create), unless destroyed.
func (d *Driver) insert(ctx context.Context, key string, spec compute.Spec) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := d.now().UnixMilli()
	res, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO sim_machines (name, state, vcpus, memory_mb, disk_gb, image, ready_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`),
		spec.Name, string(compute.StateRunning), spec.VCPUs, spec.MemoryMB, spec.DiskGB, spec.Image,
		now+d.scaled(ctx, CreateTime).Milliseconds(), now)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO sim_events (machine, event, op_key, at) VALUES (?, 'create', ?, ?)`), spec.Name, key, now); err != nil {
			return err
		}
	} else {
		var destroyed sql.NullInt64
		if err := tx.QueryRowContext(ctx, d.rebind(`SELECT destroyed_at FROM sim_machines WHERE name = ?`), spec.Name).Scan(&destroyed); err != nil {
			return err
		}
		if destroyed.Valid {
			return fmt.Errorf("%w: machine %s was destroyed; names are not reused", compute.ErrFailed, spec.Name)
		}
	}
	return tx.Commit()
}

// Start implements compute.Driver.
func (d *Driver) Start(ctx context.Context, key, name string) error {
	return d.transition(ctx, key, name, "start", []compute.State{compute.StateStopped}, compute.StateRunning, StartTime)
}

// Shutdown implements compute.Driver. Simulated guests always honour ACPI.
func (d *Driver) Shutdown(ctx context.Context, key, name string, timeout time.Duration) error {
	return d.transition(ctx, key, name, "shutdown", []compute.State{compute.StateRunning}, compute.StateStopped, ShutdownTime)
}

// Stop implements compute.Driver.
func (d *Driver) Stop(ctx context.Context, key, name string) error {
	return d.transition(ctx, key, name, "stop", []compute.State{compute.StateRunning}, compute.StateStopped, StopTime)
}

// Reset implements compute.Driver.
func (d *Driver) Reset(ctx context.Context, key, name string) error {
	return d.transition(ctx, key, name, "reset", []compute.State{compute.StateRunning}, compute.StateRunning, ResetTime)
}

// Destroy implements compute.Driver.
func (d *Driver) Destroy(ctx context.Context, key, name string) error {
	readyAt, err := d.apply(ctx, name, key, "destroy", func(tx *sql.Tx, now int64) error {
		_, err := tx.ExecContext(ctx, d.rebind(`UPDATE sim_machines SET state = ?, destroyed_at = ?, ready_at = ? WHERE name = ? AND destroyed_at IS NULL`),
			string(compute.StateAbsent), now, now+d.scaled(ctx, DestroyTime).Milliseconds(), name)
		if err != nil {
			return err
		}
		// The machine's snapshots go with its disks; its volumes stay, detached.
		if _, err = tx.ExecContext(ctx, d.rebind(`DELETE FROM sim_snapshots WHERE machine = ?`), name); err != nil {
			return err
		}
		return d.detachAll(ctx, tx, name)
	})
	if errors.Is(err, compute.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return d.waitUntil(ctx, readyAt)
}

// Machine implements compute.Driver.
func (d *Driver) Machine(ctx context.Context, name string) (compute.Machine, error) {
	m, _, err := d.machine(ctx, name)
	return m, err
}

func (d *Driver) machine(ctx context.Context, name string) (compute.Machine, int64, error) {
	var m compute.Machine
	var state string
	var rowid, readyAt int64
	var destroyed sql.NullInt64
	err := d.db.QueryRowContext(ctx, d.rebind(`SELECT rowid, state, vcpus, memory_mb, disk_gb, ready_at, destroyed_at FROM sim_machines WHERE name = ?`), name).
		Scan(&rowid, &state, &m.VCPUs, &m.MemoryMB, &m.DiskGB, &readyAt, &destroyed)
	if errors.Is(err, sql.ErrNoRows) || destroyed.Valid {
		return m, 0, compute.ErrNotFound
	}
	if err != nil {
		return m, 0, err
	}
	m.Name, m.State = name, compute.State(state)
	if readyAt > d.now().UnixMilli() && m.State == compute.StateRunning {
		// Still booting or resetting: not yet up.
		m.State = compute.StateStopped
	}
	m.IPv4, m.IPv6 = addresses(rowid)
	return m, readyAt, nil
}
