package libvirtdriver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute"
)

// Volumes (compute.Volumes; docs/drivers.md, "libvirt: volumes"). A location's
// volumes live in the storage pool the operator named for it (SetVolumePool), which
// every host of the location reaches: a volume is made, grown and deleted through
// any host of the location that answers, and attached through the host of its
// machine. Berth's database records each volume (libvirt_volumes): its pool, size,
// and the machine it is attached to, which every definition of that machine's
// domain then holds (domainXML).

var _ compute.Volumes = (*Driver)(nil)

// volume is a row of libvirt_volumes.
type volume struct {
	Name       string
	ID         int64
	LocationID int64
	Pool       string
	PoolVolume string
	SizeGB     int
	Format     string
	Ready      bool
	Machine    string
	Automount  bool
	Deleted    bool
}

const volumeColumns = `name, volume_id, location_id, pool, pool_volume, size_gb, format, ready, machine, automount, deleted_at`

func scanVolume(sc interface{ Scan(...any) error }) (volume, error) {
	var v volume
	var ready, automount int
	var deleted sql.NullInt64
	err := sc.Scan(&v.Name, &v.ID, &v.LocationID, &v.Pool, &v.PoolVolume, &v.SizeGB, &v.Format, &ready, &v.Machine, &automount, &deleted)
	v.Ready, v.Automount, v.Deleted = ready == 1, automount == 1, deleted.Valid
	return v, err
}

// volume reads a volume's row; compute.ErrVolumeNotFound when there is none.
func (d *Driver) volume(ctx context.Context, name string) (volume, error) {
	v, err := scanVolume(d.db.QueryRowContext(ctx, d.rebind(`SELECT `+volumeColumns+` FROM libvirt_volumes WHERE name = ?`), name))
	if errors.Is(err, sql.ErrNoRows) {
		return v, compute.ErrVolumeNotFound
	}
	return v, err
}

// attached lists the volumes attached to a machine, by id.
func (d *Driver) attached(ctx context.Context, machine string) ([]volume, error) {
	rows, err := d.db.QueryContext(ctx, d.rebind(`SELECT `+volumeColumns+` FROM libvirt_volumes
		WHERE machine = ? AND deleted_at IS NULL ORDER BY volume_id`), machine)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []volume
	for rows.Next() {
		v, err := scanVolume(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// withVolumes sets m.Volumes to what is attached to it, before its definition is
// written.
func (d *Driver) withVolumes(ctx context.Context, m *machine) error {
	vs, err := d.attached(ctx, m.Name)
	m.Volumes = vs
	return err
}

// controllerAlias and diskAlias name a volume's two devices in a domain (libvirt's
// user aliases start with "ua-").
func (v volume) controllerAlias() string { return "ua-" + v.Name }
func (v volume) diskAlias() string       { return "ua-" + v.Name + "-disk" }

// device is how the volume appears in a domain with its controller at index and its
// disk named dev.
func (v volume) device(index int, dev string) volumeDevice {
	target := 0
	if v.Automount {
		target = 1
	}
	return volumeDevice{Controller: v.controllerAlias(), Disk: v.diskAlias(), Index: index, Dev: dev,
		Pool: v.Pool, PoolVolume: v.PoolVolume, ID: v.ID, Target: target}
}

// Volume implements compute.Volumes from Berth's records.
func (d *Driver) Volume(ctx context.Context, name string) (compute.VolumeState, error) {
	v, err := d.volume(ctx, name)
	if err == nil && v.Deleted {
		err = compute.ErrVolumeNotFound
	}
	if err != nil {
		return compute.VolumeState{}, err
	}
	return compute.VolumeState{Name: v.Name, SizeGB: v.SizeGB, Machine: v.Machine}, nil
}

// volumeStep runs a mutating step of a volume once per key, as step does a
// machine's: a key already applied answers at once. Its keys are kept under the
// volume's name.
func (d *Driver) volumeStep(ctx context.Context, key, name, event string, do func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, ok, err := d.applied(ctx, name, key); err != nil || ok {
		return err
	}
	if err := do(); err != nil {
		return err
	}
	return d.record(ctx, name, key, event, "")
}

// CreateVolume implements compute.Volumes: a raw volume of spec.SizeGB GiB in the
// location's pool (sparse where the pool can be), with the filesystem spec.Format
// made on it. A location without a pool is compute.ErrFailed naming the command that
// sets one.
func (d *Driver) CreateVolume(ctx context.Context, key string, spec compute.VolumeSpec) error {
	return d.volumeStep(ctx, key, spec.Name, "create_volume", func() error {
		v, err := d.volumeRecord(ctx, spec)
		if err != nil || v.Ready {
			return err
		}
		h, l, err := d.poolHost(ctx, v.LocationID)
		if err != nil {
			return err
		}
		if err := d.makeVolume(ctx, l, h, v); err != nil {
			return err
		}
		_, err = d.db.ExecContext(ctx, d.rebind(`UPDATE libvirt_volumes SET ready = 1 WHERE name = ?`), v.Name)
		return err
	})
}

// volumeRecord returns a volume's row, recording it first when it is new.
func (d *Driver) volumeRecord(ctx context.Context, spec compute.VolumeSpec) (volume, error) {
	v, err := d.volume(ctx, spec.Name)
	if err == nil && v.Deleted {
		err = fmt.Errorf("%w: volume %s was deleted; names are not reused", compute.ErrFailed, v.Name)
	}
	if !errors.Is(err, compute.ErrVolumeNotFound) {
		return v, err
	}
	if _, ok := mkfsArgs[spec.Format]; !ok && spec.Format != "" {
		return v, fmt.Errorf("%w: filesystem %q: ext4, xfs or none", compute.ErrFailed, spec.Format)
	}
	if spec.SizeGB <= 0 || spec.Name == "" || strings.ContainsAny(spec.Name, `'"<>&/`) {
		return v, fmt.Errorf("%w: volume %q of %d GB cannot be made", compute.ErrFailed, spec.Name, spec.SizeGB)
	}
	pool, err := d.volumePool(ctx, spec.LocationID)
	if err != nil {
		return v, err
	}
	_, err = d.db.ExecContext(ctx, d.rebind(`INSERT INTO libvirt_volumes (name, volume_id, location_id, pool, pool_volume, size_gb, format, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`),
		spec.Name, spec.ID, spec.LocationID, pool, d.opt.Prefix+spec.Name, spec.SizeGB, spec.Format, d.now().UnixMilli())
	if err != nil {
		return v, err
	}
	return d.volume(ctx, spec.Name)
}

// makeVolume writes a volume into its pool: a volume of that name left by an
// interrupted creation (its filesystem perhaps half uploaded) is made again.
func (d *Driver) makeVolume(ctx context.Context, l *libvirt.Libvirt, h host, v volume) error {
	pool, err := l.StoragePoolLookupByName(v.Pool)
	if err != nil {
		return d.lv(h, "storage pool "+v.Pool, err)
	}
	if old, err := l.StorageVolLookupByName(pool, v.PoolVolume); err == nil {
		if err := l.StorageVolDelete(old, 0); err != nil && !isCode(err, libvirt.ErrNoStorageVol) {
			return d.lv(h, "delete volume "+v.PoolVolume, err)
		}
	} else if !isCode(err, libvirt.ErrNoStorageVol) {
		return d.lv(h, "volume "+v.PoolVolume, err)
	}
	size := uint64(v.SizeGB) * gib
	vol, err := l.StorageVolCreateXML(pool, sparseVolumeXML(v.PoolVolume, size), 0)
	if err != nil {
		return d.lv(h, "create volume "+v.PoolVolume, err)
	}
	if v.Format == "" {
		return nil
	}
	t := newTiming()
	n, err := d.formatVolume(ctx, l, h, vol, v.Format, size)
	if err != nil {
		return err
	}
	t.step("format")
	d.opt.Log.Info("libvirt: volume formatted", t.log("volume", v.Name, "format", v.Format, "size_gb", v.SizeGB, "uploads", n)...)
	return nil
}

// AttachVolume implements compute.Volumes. The volume's record names the machine
// before libvirt is asked (so that no other attach can take it meanwhile); a
// definition libvirt refuses gives it back. A running domain gets the devices live
// and in its definition, a stopped one in its definition.
func (d *Driver) AttachVolume(ctx context.Context, key, name string, spec compute.VolumeSpec, automount bool) error {
	return d.volumeStep(ctx, key, spec.Name, "attach_volume:"+name, func() error {
		v, err := d.volume(ctx, spec.Name)
		if err == nil && (v.Deleted || !v.Ready) {
			err = fmt.Errorf("%w: volume %s is not there to attach", compute.ErrFailed, spec.Name)
		}
		if err != nil {
			return err
		}
		if v.Machine != "" && v.Machine != name {
			return fmt.Errorf("%w: volume %s is attached to %s", compute.ErrFailed, v.Name, v.Machine)
		}
		m, h, l, dom, err := d.existing(ctx, name)
		if err != nil {
			return err
		}
		if m.LocationID != v.LocationID {
			return fmt.Errorf("%w: volume %s is in location %d, machine %s in %d", compute.ErrFailed, v.Name, v.LocationID, name, m.LocationID)
		}
		if err := d.claim(ctx, &v, name, automount); err != nil {
			return err
		}
		err = d.plug(l, h, dom, v)
		var le libvirt.Error
		if errors.As(err, &le) {
			// libvirt refused it: nothing of it was attached that a retry would finish.
			_, _ = d.db.ExecContext(ctx, d.rebind(`UPDATE libvirt_volumes SET machine = '', automount = 0 WHERE name = ? AND machine = ?`), v.Name, name)
			return fmt.Errorf("%w: %v", compute.ErrFailed, err)
		}
		return err
	})
}

// claim records that v is attached to machine (with automount), unless another
// machine took it.
func (d *Driver) claim(ctx context.Context, v *volume, machine string, automount bool) error {
	auto := 0
	if automount {
		auto = 1
	}
	res, err := d.db.ExecContext(ctx, d.rebind(`UPDATE libvirt_volumes SET machine = ?, automount = ?
		WHERE name = ? AND (machine = '' OR machine = ?)`), machine, auto, v.Name, machine)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: volume %s is attached to another machine", compute.ErrFailed, v.Name)
	}
	v.Machine, v.Automount = machine, automount
	return nil
}

// plug gives a domain the volume's controller and disk where it lacks them: in the
// running domain (when it runs) and in its definition.
func (d *Driver) plug(l *libvirt.Libvirt, h host, dom libvirt.Domain, v volume) error {
	on, err := d.active(l, h, dom)
	if err != nil {
		return err
	}
	for _, live := range []bool{true, false} {
		if live && !on {
			continue
		}
		err := d.plugInto(l, h, dom, v, live)
		if live && isCode(err, libvirt.ErrOperationInvalid) {
			continue // the guest powered itself off meanwhile: its definition has it
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// plugInto adds the volume's devices to the running domain (live) or to its
// definition, at a controller index and disk name free there.
func (d *Driver) plugInto(l *libvirt.Libvirt, h host, dom libvirt.Domain, v volume, live bool) error {
	flags, xflags := libvirt.DomainDeviceModifyConfig, libvirt.DomainXMLInactive
	if live {
		flags, xflags = libvirt.DomainDeviceModifyLive, 0
	}
	x, err := l.DomainGetXMLDesc(dom, xflags)
	if err != nil {
		return d.lv(h, "domain definition", err)
	}
	ds, err := parseDevices(x)
	if err != nil {
		return err
	}
	if _, ok := ds.disk(v.diskAlias()); ok {
		return nil
	}
	index, ok := ds.controller(v.controllerAlias())
	if !ok {
		index = ds.freeIndex()
	}
	ctl, disk, err := v.device(index, ds.freeDev()).xml()
	if err != nil {
		return err
	}
	if !ok {
		if err := l.DomainAttachDeviceFlags(dom, ctl, uint32(flags)); err != nil {
			return d.lv(h, "attach controller of "+v.Name, err)
		}
	}
	if err := l.DomainAttachDeviceFlags(dom, disk, uint32(flags)); err != nil {
		return d.lv(h, "attach "+v.Name, err)
	}
	return nil
}
