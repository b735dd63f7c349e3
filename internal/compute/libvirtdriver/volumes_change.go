package libvirtdriver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute"
)

// DetachVolume implements compute.Volumes. From a running domain the guest is asked
// to release the volume's controller (a PCI hot-unplug: docs/drivers.md, "libvirt:
// volumes"), and the call waits up to timeout for libvirt's device-removed event; a
// guest that has not released it by then keeps it, live and in the definition
// (compute.ErrDetachTimeout), and its request stays pending: a guest that releases
// it later loses the devices, and the next detach finds them gone. Then the
// definition loses the devices, and the record its machine.
func (d *Driver) DetachVolume(ctx context.Context, key, name, volumeName string, timeout time.Duration) error {
	return d.volumeStep(ctx, key, volumeName, "detach_volume:"+name, func() error {
		v, err := d.volume(ctx, volumeName)
		if err == nil && v.Deleted {
			err = compute.ErrVolumeNotFound
		}
		if err != nil || v.Machine != name {
			return err // absent, or not attached to that machine (any more)
		}
		m, h, l, err := d.live(ctx, name)
		if err != nil && !errors.Is(err, compute.ErrNotFound) {
			return err
		}
		if err == nil {
			dom, defined, err := d.domain(l, h, m)
			if err != nil {
				return err
			}
			if defined {
				if err := d.unplug(ctx, l, h, dom, v, timeout); err != nil {
					return err
				}
			}
		}
		_, err = d.db.ExecContext(ctx, d.rebind(`UPDATE libvirt_volumes SET machine = '', automount = 0 WHERE name = ? AND machine = ?`), v.Name, name)
		return err
	})
}

// unplug takes the volume's devices from a domain: from the running guest first
// (which must release them), then from its definition.
func (d *Driver) unplug(ctx context.Context, l *libvirt.Libvirt, h host, dom libvirt.Domain, v volume, timeout time.Duration) error {
	on, err := d.active(l, h, dom)
	if err != nil {
		return err
	}
	if on {
		if err := d.unplugLive(ctx, l, h, dom, v, timeout); err != nil {
			return err
		}
	}
	x, err := l.DomainGetXMLDesc(dom, libvirt.DomainXMLInactive)
	if err != nil {
		return d.lv(h, "domain definition", err)
	}
	ds, err := parseDevices(x)
	if err != nil {
		return err
	}
	if _, ok := ds.disk(v.diskAlias()); ok {
		if err := l.DomainDetachDeviceAlias(dom, v.diskAlias(), uint32(libvirt.DomainDeviceModifyConfig)); err != nil {
			return d.lv(h, "detach "+v.Name+" from the definition", err)
		}
	}
	if _, ok := ds.controller(v.controllerAlias()); ok {
		if err := l.DomainDetachDeviceAlias(dom, v.controllerAlias(), uint32(libvirt.DomainDeviceModifyConfig)); err != nil {
			return d.lv(h, "detach controller of "+v.Name+" from the definition", err)
		}
	}
	return nil
}

// unplugLive asks the running guest to release the volume's controller and waits
// for it. libvirt's own detach refuses a controller that still has a disk ("device
// is busy"), and detaching the disk alone would take it from the guest without
// asking (QEMU removes a SCSI disk at once); so the request goes to QEMU as libvirt
// would send it (device_del), and libvirt, which follows QEMU's events, drops both
// devices from the running domain once the guest has let go.
func (d *Driver) unplugLive(ctx context.Context, l *libvirt.Libvirt, h host, dom libvirt.Domain, v volume, timeout time.Duration) error {
	present := func() (bool, error) {
		x, err := l.DomainGetXMLDesc(dom, 0)
		if err != nil {
			return false, d.lv(h, "domain", err)
		}
		ds, err := parseDevices(x)
		_, ok := ds.controller(v.controllerAlias())
		_, disk := ds.disk(v.diskAlias())
		return ok || disk, err
	}
	if ok, err := present(); err != nil || !ok {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	removed, err := l.SubscribeEvents(wctx, libvirt.DomainEventIDDeviceRemoved, libvirt.OptDomain{})
	if err != nil {
		cancel()
		return d.lv(h, "subscribe to device events", err)
	}
	defer func() {
		cancel()
		// go-libvirt hands each event on before it sees the cancel: take what comes
		// until the subscription has ended.
		go func() {
			for range removed {
			}
		}()
	}()
	ask := func() error { return d.askRelease(l, h, dom, v) }
	if err := ask(); err != nil {
		return err
	}
	gone, err := d.waitRemoved(ctx, removed, dom, v, timeout, present, ask)
	if err == nil && !gone {
		err = fmt.Errorf("%w: %s kept %s for %s", compute.ErrDetachTimeout, dom.Name, v.Name, timeout)
	}
	return err
}

// askRelease sends QEMU the unplug request of the volume's controller; one of a
// volume without a controller of its own (never made by Berth) has libvirt detach
// its disk.
func (d *Driver) askRelease(l *libvirt.Libvirt, h host, dom libvirt.Domain, v volume) error {
	x, err := l.DomainGetXMLDesc(dom, 0)
	if err != nil {
		return d.lv(h, "domain", err)
	}
	ds, err := parseDevices(x)
	if err != nil {
		return err
	}
	if _, ok := ds.controller(v.controllerAlias()); !ok {
		// Asked again while libvirt drops the devices the guest let go, the
		// controller is gone and the disk may go before this call reaches it.
		err := l.DomainDetachDeviceAlias(dom, v.diskAlias(), uint32(libvirt.DomainDeviceModifyLive))
		if deviceMissing(err) {
			return nil // gone meanwhile
		}
		return d.lv(h, "detach "+v.Name, err)
	}
	cmd := `{"execute":"device_del","arguments":{"id":` + strconv.Quote(v.controllerAlias()) + `}}`
	_, err = l.QEMUDomainMonitorCommand(dom, cmd, 0)
	if err != nil && strings.Contains(err.Error(), "not found") {
		return nil // gone meanwhile
	}
	return d.lv(h, "unplug "+v.Name, err)
}

// deviceMissing reports whether err is libvirt's answer to a detach of a device the
// domain does not have (any more): "no device found with alias …", an internal
// error as libvirt 9 reports it.
func deviceMissing(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no device found with alias")
}

// waitRemoved waits until libvirt reports the volume's controller removed from dom
// (or present, asked every few polls in case an event was missed, says so), up to
// timeout. The request is sent again every ten of those polls (ask): a guest that
// was still booting when it came (no ACPI yet) never saw it, as an ACPI shutdown
// sent then is lost.
func (d *Driver) waitRemoved(ctx context.Context, events <-chan any, dom libvirt.Domain, v volume, timeout time.Duration,
	present func() (bool, error), ask func() error) (bool, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * d.opt.Poll)
	defer tick.Stop()
	for polls := 1; ; {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil // the subscription ended (connection lost): polls decide
				continue
			}
			if m, ok := ev.(*libvirt.DomainEventCallbackDeviceRemovedMsg); ok &&
				m.Msg.Dom.Name == dom.Name && m.Msg.DevAlias == v.controllerAlias() {
				return true, nil
			}
		case <-tick.C:
			if ok, err := present(); err != nil || !ok {
				return !ok, err
			}
			if polls++; polls%10 == 0 {
				if err := ask(); err != nil {
					return false, err
				}
			}
		case <-deadline.C:
			ok, err := present()
			return !ok && err == nil, err
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// ResizeVolume implements compute.Volumes. A volume attached to a running guest
// grows through QEMU (libvirt's block resize), so that the guest is told of its new
// size at once; any other grows in its pool.
func (d *Driver) ResizeVolume(ctx context.Context, key, volumeName string, sizeGB int) error {
	return d.volumeStep(ctx, key, volumeName, "resize_volume:"+strconv.Itoa(sizeGB), func() error {
		v, err := d.volume(ctx, volumeName)
		if err == nil && v.Deleted {
			err = compute.ErrVolumeNotFound
		}
		if err != nil || sizeGB <= v.SizeGB {
			return err
		}
		grown, err := d.growAttached(ctx, v, uint64(sizeGB)*gib)
		if err == nil && !grown {
			err = d.growInPool(ctx, v, uint64(sizeGB)*gib)
		}
		if err != nil {
			return err
		}
		_, err = d.db.ExecContext(ctx, d.rebind(`UPDATE libvirt_volumes SET size_gb = ? WHERE name = ?`), sizeGB, v.Name)
		return err
	})
}

// growAttached grows a volume in the running guest it is attached to; grown is false
// when it is not in one.
func (d *Driver) growAttached(ctx context.Context, v volume, size uint64) (grown bool, err error) {
	if v.Machine == "" {
		return false, nil
	}
	m, h, l, dom, err := d.existing(ctx, v.Machine)
	if err != nil {
		return false, err
	}
	if on, err := d.active(l, h, dom); err != nil || !on {
		return false, err
	}
	x, err := l.DomainGetXMLDesc(dom, 0)
	if err != nil {
		return false, d.lv(h, "domain", err)
	}
	ds, err := parseDevices(x)
	if err != nil {
		return false, err
	}
	dev, ok := ds.disk(v.diskAlias())
	if !ok {
		return false, nil
	}
	_, capacity, _, err := l.DomainGetBlockInfo(dom, dev, 0)
	if err != nil {
		return false, d.lv(h, "block info of "+v.Name+" in "+m.Name, err)
	}
	if capacity >= size {
		return true, nil
	}
	return true, d.lv(h, "block resize of "+v.Name, l.DomainBlockResize(dom, dev, size, libvirt.DomainBlockResizeBytes))
}

// growInPool grows a volume no running guest has open, in its pool.
func (d *Driver) growInPool(ctx context.Context, v volume, size uint64) error {
	h, l, err := d.poolHost(ctx, v.LocationID)
	if err != nil {
		return err
	}
	vol, err := d.poolVolume(l, h, v)
	if err != nil {
		return err
	}
	_, capacity, _, err := l.StorageVolGetInfo(vol)
	if err != nil {
		return d.lv(h, "volume info of "+v.Name, err)
	}
	if capacity >= size {
		return nil
	}
	return d.lv(h, "resize "+v.Name, l.StorageVolResize(vol, size, 0))
}

// poolVolume looks a volume up in its pool.
func (d *Driver) poolVolume(l *libvirt.Libvirt, h host, v volume) (libvirt.StorageVol, error) {
	pool, err := l.StoragePoolLookupByName(v.Pool)
	if err != nil {
		return libvirt.StorageVol{}, d.lv(h, "storage pool "+v.Pool, err)
	}
	vol, err := l.StorageVolLookupByName(pool, v.PoolVolume)
	if isCode(err, libvirt.ErrNoStorageVol) {
		// Another host may have made it since this one last read the pool.
		if err := refreshPool(l, pool); err != nil {
			return vol, d.lv(h, "refresh pool "+v.Pool, err)
		}
		vol, err = l.StorageVolLookupByName(pool, v.PoolVolume)
	}
	if err != nil {
		return vol, d.lv(h, "volume "+v.PoolVolume, err)
	}
	return vol, nil
}

// DeleteVolume implements compute.Volumes: the pool's volume is deleted, and the
// record kept as deleted (a name is never made again).
func (d *Driver) DeleteVolume(ctx context.Context, key, volumeName string) error {
	return d.volumeStep(ctx, key, volumeName, "delete_volume", func() error {
		v, err := d.volume(ctx, volumeName)
		if errors.Is(err, compute.ErrVolumeNotFound) || (err == nil && v.Deleted) {
			return nil
		}
		if err != nil {
			return err
		}
		if v.Machine != "" {
			return fmt.Errorf("%w: volume %s is attached to %s; detach it first", compute.ErrFailed, v.Name, v.Machine)
		}
		h, l, err := d.poolHost(ctx, v.LocationID)
		if err != nil {
			return err
		}
		vol, err := d.poolVolume(l, h, v)
		if err == nil {
			err = l.StorageVolDelete(vol, 0)
		}
		if err != nil && !isCode(err, libvirt.ErrNoStorageVol) {
			return d.lv(h, "delete volume "+v.PoolVolume, err)
		}
		_, err = d.db.ExecContext(ctx, d.rebind(`UPDATE libvirt_volumes SET deleted_at = ? WHERE name = ? AND deleted_at IS NULL`), d.now().UnixMilli(), v.Name)
		return err
	})
}
