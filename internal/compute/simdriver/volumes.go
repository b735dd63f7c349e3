package simdriver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/berthhq/berth/internal/compute"
)

// The volumes' durations at scale 1 (realistic). Each call takes a duration within
// its span, the same for the same volume and key (Span.Of): a repeated call of a job
// resumed after a crash waits only for what is left of the first one.
var (
	VolumeCreateTime = Span{2 * time.Second, 5 * time.Second}
	VolumeAttachTime = Span{1 * time.Second, 3 * time.Second}
	// VolumeDetachTime is a detach from a running machine, whose guest releases the
	// disk; from a stopped one it takes the span's Min (the hypervisor's change alone).
	VolumeDetachTime = Span{1 * time.Second, 3 * time.Second}
	VolumeResizeTime = Span{1 * time.Second, 2 * time.Second}
	VolumeDeleteTime = Span{1 * time.Second, 2 * time.Second}
)

// Span is a range of durations.
type Span struct{ Min, Max time.Duration }

// Of is a duration within the span, the same for the same seeds.
func (s Span) Of(seeds ...string) time.Duration {
	if s.Max <= s.Min {
		return s.Min
	}
	h := fnv.New64a()
	for _, seed := range seeds {
		h.Write([]byte(seed))
		h.Write([]byte{0})
	}
	return s.Min + time.Duration(h.Sum64()%uint64(s.Max-s.Min+1))
}

var _ compute.Volumes = (*Driver)(nil)

// querier is a transaction or the database.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// volumeRow is what sim_volumes holds of a volume.
type volumeRow struct {
	serial    int64
	sizeGB    int
	format    string
	machine   string // "" when detached
	lun       int
	automount bool
}

// volume reads a volume's row; compute.ErrVolumeNotFound when there is none.
func (d *Driver) volume(ctx context.Context, q querier, name string) (volumeRow, error) {
	var v volumeRow
	var machine sql.NullString
	var lun sql.NullInt64
	var automount int
	err := q.QueryRowContext(ctx, d.rebind(`SELECT serial, size_gb, format, machine, lun, automount FROM sim_volumes WHERE name = ?`), name).
		Scan(&v.serial, &v.sizeGB, &v.format, &machine, &lun, &automount)
	if errors.Is(err, sql.ErrNoRows) {
		return v, compute.ErrVolumeNotFound
	}
	v.machine, v.lun, v.automount = machine.String, int(lun.Int64), automount != 0
	return v, err
}

// applyVolume records the key for volume and, only if it is new, runs change in the
// same transaction, as apply does for machines. It returns the volume's ready_at
// after the call, compute.ErrVolumeNotFound when the volume is not there then.
func (d *Driver) applyVolume(ctx context.Context, volume, key, event string, change func(tx *sql.Tx, now int64) error) (int64, error) {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	now := d.now().UnixMilli()
	res, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO sim_volume_events (volume, event, op_key, at) VALUES (?, ?, ?, ?) ON CONFLICT (volume, op_key) DO NOTHING`),
		volume, event, key, now)
	if err != nil {
		return 0, err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		if err := change(tx, now); err != nil {
			return 0, err
		}
	}
	var readyAt int64
	err = tx.QueryRowContext(ctx, d.rebind(`SELECT ready_at FROM sim_volumes WHERE name = ?`), volume).Scan(&readyAt)
	if errors.Is(err, sql.ErrNoRows) {
		// Committed all the same: a delete's key is applied.
		err = compute.ErrVolumeNotFound
	}
	if cerr := tx.Commit(); err == nil {
		err = cerr
	}
	return readyAt, err
}

// CreateVolume implements compute.Volumes. A volume of the name there already is
// kept as it is; a repeat of the key of a volume deleted since does not make it again.
func (d *Driver) CreateVolume(ctx context.Context, key string, spec compute.VolumeSpec) error {
	if spec.SizeGB < 1 {
		return fmt.Errorf("%w: volume %s of %d GiB", compute.ErrFailed, spec.Name, spec.SizeGB)
	}
	if spec.Format != "" && spec.Format != "ext4" && spec.Format != "xfs" {
		return fmt.Errorf("%w: volume %s: no filesystem %q", compute.ErrFailed, spec.Name, spec.Format)
	}
	readyAt, err := d.applyVolume(ctx, spec.Name, key, "create", func(tx *sql.Tx, now int64) error {
		_, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO sim_volumes (name, serial, location_id, size_gb, format, ready_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`),
			spec.Name, spec.ID, spec.LocationID, spec.SizeGB, spec.Format,
			now+d.scaled(ctx, VolumeCreateTime.Of(spec.Name, key)).Milliseconds(), now)
		return err
	})
	if errors.Is(err, compute.ErrVolumeNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return d.waitUntil(ctx, readyAt)
}

// AttachVolume implements compute.Volumes. The volume takes the machine's lowest free
// LUN, which names the disk its guest sees (sda for LUN 0).
func (d *Driver) AttachVolume(ctx context.Context, key, machine string, spec compute.VolumeSpec, automount bool) error {
	readyAt, err := d.applyVolume(ctx, spec.Name, key, "attach:"+machine, func(tx *sql.Tx, now int64) error {
		v, err := d.volume(ctx, tx, spec.Name)
		if err != nil {
			return err
		}
		if _, _, _, _, _, err := d.live(ctx, tx, machine); err != nil {
			return err
		}
		switch v.machine {
		case machine:
			return nil
		case "":
		default:
			return fmt.Errorf("%w: volume %s is attached to %s", compute.ErrFailed, spec.Name, v.machine)
		}
		lun, err := d.freeLUN(ctx, tx, machine)
		if err != nil {
			return err
		}
		at := now + d.scaled(ctx, VolumeAttachTime.Of(spec.Name, key)).Milliseconds()
		mount := 0
		if automount {
			mount = 1
		}
		_, err = tx.ExecContext(ctx, d.rebind(`UPDATE sim_volumes SET machine = ?, lun = ?, automount = ?, attached_at = ?, ready_at = ? WHERE name = ?`),
			machine, lun, mount, at, at, spec.Name)
		return err
	})
	if err != nil {
		return err
	}
	return d.waitUntil(ctx, readyAt)
}

// freeLUN is the lowest LUN no volume attached to machine takes.
func (d *Driver) freeLUN(ctx context.Context, tx *sql.Tx, machine string) (int, error) {
	rows, err := tx.QueryContext(ctx, d.rebind(`SELECT lun FROM sim_volumes WHERE machine = ? ORDER BY lun`), machine)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	free := 0
	for rows.Next() {
		var lun int
		if err := rows.Scan(&lun); err != nil {
			return 0, err
		}
		if lun == free {
			free++
		}
	}
	return free, rows.Err()
}

// DetachVolume implements compute.Volumes. A volume not attached to machine (detached,
// or attached to another) is left as it is, and is no error. A guest that holds the
// volume (GuestHolds) keeps it: the call waits timeout, at the driver's scale.
func (d *Driver) DetachVolume(ctx context.Context, key, machine, volume string, timeout time.Duration) error {
	if held, err := d.held(ctx, machine, volume); err != nil || held {
		if err != nil {
			return err
		}
		if err := d.waitUntil(ctx, d.now().Add(d.scaled(ctx, timeout)).UnixMilli()); err != nil {
			return err
		}
		return fmt.Errorf("%w: %s keeps %s", compute.ErrDetachTimeout, machine, volume)
	}
	readyAt, err := d.applyVolume(ctx, volume, key, "detach:"+machine, func(tx *sql.Tx, now int64) error {
		v, err := d.volume(ctx, tx, volume)
		if err != nil || v.machine != machine {
			return err
		}
		dur := VolumeDetachTime.Min
		if state, _, _, _, _, err := d.live(ctx, tx, machine); err == nil && compute.State(state) == compute.StateRunning {
			dur = VolumeDetachTime.Of(volume, key)
		}
		_, err = tx.ExecContext(ctx, d.rebind(`UPDATE sim_volumes SET machine = NULL, lun = NULL, automount = 0, attached_at = NULL, ready_at = ? WHERE name = ?`),
			now+d.scaled(ctx, dur).Milliseconds(), volume)
		return err
	})
	if err != nil {
		return err
	}
	return d.waitUntil(ctx, readyAt)
}

// held tells whether machine's guest keeps volume from a detach: GuestHolds says so,
// and the volume is attached to the machine, which runs.
func (d *Driver) held(ctx context.Context, machine, volume string) (bool, error) {
	if d.GuestHolds == nil || !d.GuestHolds(machine, volume) {
		return false, nil
	}
	v, err := d.volume(ctx, d.db, volume)
	if err != nil || v.machine != machine {
		return false, err
	}
	m, _, err := d.machine(ctx, machine)
	return err == nil && m.State == compute.StateRunning, nil
}

// ResizeVolume implements compute.Volumes.
func (d *Driver) ResizeVolume(ctx context.Context, key, volume string, sizeGB int) error {
	readyAt, err := d.applyVolume(ctx, volume, key, "resize", func(tx *sql.Tx, now int64) error {
		v, err := d.volume(ctx, tx, volume)
		if err != nil || sizeGB <= v.sizeGB {
			return err
		}
		_, err = tx.ExecContext(ctx, d.rebind(`UPDATE sim_volumes SET size_gb = ?, ready_at = ? WHERE name = ?`),
			sizeGB, now+d.scaled(ctx, VolumeResizeTime.Of(volume, key)).Milliseconds(), volume)
		return err
	})
	if err != nil {
		return err
	}
	return d.waitUntil(ctx, readyAt)
}

// DeleteVolume implements compute.Volumes. The volume's row goes at once; the call
// takes the deletion's time when it deleted one.
func (d *Driver) DeleteVolume(ctx context.Context, key, volume string) error {
	var took time.Duration
	_, err := d.applyVolume(ctx, volume, key, "delete", func(tx *sql.Tx, now int64) error {
		v, err := d.volume(ctx, tx, volume)
		if errors.Is(err, compute.ErrVolumeNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if v.machine != "" {
			return fmt.Errorf("%w: volume %s is attached to %s", compute.ErrFailed, volume, v.machine)
		}
		took = d.scaled(ctx, VolumeDeleteTime.Of(volume, key))
		_, err = tx.ExecContext(ctx, d.rebind(`DELETE FROM sim_volumes WHERE name = ?`), volume)
		return err
	})
	if err != nil && !errors.Is(err, compute.ErrVolumeNotFound) {
		return err
	}
	return d.waitUntil(ctx, d.now().Add(took).UnixMilli())
}

// Volume implements compute.Volumes.
func (d *Driver) Volume(ctx context.Context, volume string) (compute.VolumeState, error) {
	v, err := d.volume(ctx, d.db, volume)
	if err != nil {
		return compute.VolumeState{}, err
	}
	return compute.VolumeState{Name: volume, SizeGB: v.sizeGB, Machine: v.machine}, nil
}

// detachAll detaches every volume of machine, in tx: a machine destroyed leaves its
// volumes, detached (volumes outlive machines; docs/drivers.md, Volumes).
func (d *Driver) detachAll(ctx context.Context, tx *sql.Tx, machine string) error {
	_, err := tx.ExecContext(ctx, d.rebind(`UPDATE sim_volumes SET machine = NULL, lun = NULL, automount = 0, attached_at = NULL WHERE machine = ?`), machine)
	return err
}
