package libvirtdriver

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute"
)

// Reinstall implements compute.Driver: a new generation of the machine — a fresh
// overlay on spec.Image and a new seed (a new instance-id, so cloud-init runs again) —
// replaces the old in the domain, which then boots. The old disk is deleted unless a
// snapshot still holds it (a restore brings it back).
func (d *Driver) Reinstall(ctx context.Context, key string, spec compute.Spec) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m, err := d.machine(ctx, spec.Name)
	if err == nil && m.Destroyed {
		err = compute.ErrNotFound
	}
	if err != nil {
		return err
	}
	res, ok, err := d.applied(ctx, m.Name, key)
	if err != nil || res == "done" {
		return err
	}
	m, h, l, dom, err := d.existing(ctx, spec.Name)
	if err != nil {
		return err
	}
	// The generation this reinstall writes is chosen once and kept with its key.
	gen := m.Gen + 1
	if ok {
		gen, _ = strconv.Atoi(strings.TrimPrefix(res, "gen:"))
	} else if err := d.record(ctx, m.Name, key, "reinstall", fmt.Sprintf("gen:%d", gen)); err != nil {
		return err
	}
	if err := d.ensureStopped(ctx, m, h, l, dom); err != nil {
		return err
	}
	m.Gen, m.Image = gen, spec.Image
	if _, err := d.baseImage(ctx, h, m.Image); err != nil {
		return err
	}
	if dom, err = d.install(ctx, l, h, m, spec, dom.UUID, nil); err != nil {
		return err
	}
	if _, err := d.db.ExecContext(ctx, d.rebind(`UPDATE libvirt_machines SET generation = ?, image = ? WHERE name = ?`), m.Gen, m.Image, m.Name); err != nil {
		return err
	}
	if err := d.ensureRunning(l, h, dom); err != nil {
		return err
	}
	if err := d.collect(l, h, m, dom); err != nil {
		d.opt.Log.Warn("libvirt: old volumes not collected", "machine", m.Name, "err", err)
	}
	return d.record(ctx, m.Name, key, "reinstall", "done")
}

// Resize implements compute.Driver: vCPUs, memory and the throughput limits in the
// domain's definition; the disk volume grows to size.DiskGB (it never shrinks). The
// machine must be stopped.
func (d *Driver) Resize(ctx context.Context, key, name string, size compute.Size) error {
	_, err := d.step(ctx, key, name, "resize", func(m machine, h host, l *libvirt.Libvirt, dom libvirt.Domain) (string, error) {
		on, err := d.active(l, h, dom)
		if err != nil {
			return "", err
		}
		if on {
			return "", fmt.Errorf("%w: machine %s runs; it must be stopped to be resized", compute.ErrFailed, name)
		}
		m.VCPUs, m.MemoryMB, m.DiskGB, m.Limits = size.VCPUs, size.MemoryMB, max(m.DiskGB, size.DiskGB), size.Limits
		return "", d.applySize(ctx, m, h, l, dom, false)
	})
	return err
}

// applySize makes the domain's definition and disk match m's size and limits (the
// disk only grows; live grows a running domain's disk in place) and records them.
func (d *Driver) applySize(ctx context.Context, m machine, h host, l *libvirt.Libvirt, dom libvirt.Domain, live bool) error {
	if err := d.withVolumes(ctx, &m); err != nil {
		return err
	}
	x, err := d.domainXML(m, h, dom.UUID)
	if err != nil {
		return err
	}
	if _, err := l.DomainDefineXML(x); err != nil {
		return d.lv(h, "define domain", err)
	}
	pool, err := l.StoragePoolLookupByName(h.Pool)
	if err != nil {
		return d.lv(h, "storage pool", err)
	}
	vol, err := l.StorageVolLookupByName(pool, m.diskVolume())
	if err != nil {
		return d.lv(h, "disk volume", err)
	}
	_, capacity, _, err := l.StorageVolGetInfo(vol)
	if err != nil {
		return d.lv(h, "disk volume info", err)
	}
	if want := uint64(m.DiskGB) * gib; capacity < want {
		if live {
			err = l.DomainBlockResize(dom, "vda", want, libvirt.DomainBlockResizeBytes)
		} else {
			err = l.StorageVolResize(vol, want, 0)
		}
		if err != nil {
			return d.lv(h, "grow disk", err)
		}
	}
	_, err = d.db.ExecContext(ctx, d.rebind(`UPDATE libvirt_machines SET vcpus = ?, memory_mb = ?, disk_gb = ?, generation = ?,
		network_mbps = ?, disk_iops = ?, disk_mbps = ? WHERE name = ?`),
		m.VCPUs, m.MemoryMB, m.DiskGB, m.Gen, m.Limits.NetworkMbps, m.Limits.DiskIOPS, m.Limits.DiskMBps, m.Name)
	return err
}

// Snapshot implements compute.Driver with a libvirt internal snapshot: disk and memory
// of a running machine, disk only of a stopped one. The size is what the disk holds
// with the snapshot (its memory image included), in whole GB.
func (d *Driver) Snapshot(ctx context.Context, key, name, snap string, withMemory bool) (int, error) {
	res, err := d.step(ctx, key, name, "snapshot:"+snap, func(m machine, h host, l *libvirt.Libvirt, dom libvirt.Domain) (string, error) {
		if err := d.createSnapshot(ctx, m, h, l, dom, snap, withMemory); err != nil {
			return "", err
		}
		pool, err := l.StoragePoolLookupByName(h.Pool)
		if err != nil {
			return "", d.lv(h, "storage pool", err)
		}
		if err := refreshPool(l, pool); err != nil {
			return "", d.lv(h, "refresh pool", err)
		}
		vol, err := l.StorageVolLookupByName(pool, m.diskVolume())
		if err != nil {
			return "", d.lv(h, "disk volume", err)
		}
		_, _, alloc, err := l.StorageVolGetInfo(vol)
		if err != nil {
			return "", d.lv(h, "disk volume info", err)
		}
		return strconv.FormatUint(max(1, (alloc+gib-1)/gib), 10), nil
	})
	if err != nil {
		return 0, err
	}
	size, _ := strconv.Atoi(res)
	return max(size, 1), nil
}

// createSnapshot takes the snapshot unless it exists. libvirt's internal snapshots
// take every disk of a domain, and a volume's raw disk can hold none: a stopped
// machine with volumes is snapshotted with a definition without them (which the
// snapshot keeps: its restore brings back no attachment of the past), given back
// after; a running one cannot be (compute.ErrFailed; docs/drivers.md, "libvirt:
// volumes").
func (d *Driver) createSnapshot(ctx context.Context, m machine, h host, l *libvirt.Libvirt, dom libvirt.Domain, snap string, withMemory bool) error {
	if err := d.withVolumes(ctx, &m); err != nil {
		return err
	}
	_, err := l.DomainSnapshotLookupByName(dom, snap, 0)
	if err != nil && !isCode(err, libvirt.ErrNoDomainSnapshot) {
		return d.lv(h, "lookup snapshot", err)
	}
	if err == nil && len(m.Volumes) == 0 {
		return nil
	}
	if err == nil {
		return d.define(m, h, l, dom) // taken before: the volumes may wait to be given back
	}
	on, err := d.active(l, h, dom)
	if err != nil {
		return err
	}
	if withMemory && !on {
		return fmt.Errorf("%w: a memory snapshot needs a running machine; %s is stopped", compute.ErrFailed, m.Name)
	}
	if on && len(m.Volumes) > 0 {
		return fmt.Errorf("%w: %s runs with volumes attached, and libvirt snapshots a running machine only with all its disks; stop it or detach its volumes",
			compute.ErrFailed, m.Name)
	}
	if len(m.Volumes) > 0 {
		bare := m
		bare.Volumes = nil
		if err := d.define(bare, h, l, dom); err != nil {
			return err
		}
	}
	desc := descDisk
	if withMemory {
		desc = descMemory
	}
	if _, err := l.DomainSnapshotCreateXML(dom, snapshotXML(snap, desc), uint32(libvirt.DomainSnapshotCreateAtomic)); err != nil {
		return d.lv(h, "create snapshot", err)
	}
	if len(m.Volumes) == 0 {
		return nil
	}
	return d.define(m, h, l, dom)
}

// define writes m's definition (with m.Volumes) over the domain's.
func (d *Driver) define(m machine, h host, l *libvirt.Libvirt, dom libvirt.Domain) error {
	x, err := d.domainXML(m, h, dom.UUID)
	if err != nil {
		return err
	}
	_, err = l.DomainDefineXML(x)
	return d.lv(h, "define domain", err)
}

var diskGen = regexp.MustCompile(`-disk-(\d+)\.qcow2$`)

// Restore implements compute.Driver. A memory snapshot resumes the guest where it
// was; a disk-only one ends in state after (one taken of a running machine holds its
// memory too, which is discarded: the guest boots again). The machine keeps its
// current vCPUs, memory and disk size, as a resize left them, and its volumes.
func (d *Driver) Restore(ctx context.Context, key, name, snap string, after compute.State) error {
	_, err := d.step(ctx, key, name, "restore:"+snap, func(m machine, h host, l *libvirt.Libvirt, dom libvirt.Domain) (string, error) {
		s, err := l.DomainSnapshotLookupByName(dom, snap, 0)
		if isCode(err, libvirt.ErrNoDomainSnapshot) {
			return "", fmt.Errorf("%w: machine %s has no snapshot %s", compute.ErrFailed, name, snap)
		}
		if err != nil {
			return "", d.lv(h, "lookup snapshot", err)
		}
		sx, err := l.DomainSnapshotGetXMLDesc(s, 0)
		if err != nil {
			return "", d.lv(h, "snapshot definition", err)
		}
		ps, err := parseSnapshot(sx)
		if err != nil {
			return "", err
		}
		withMemory := ps.State == "running" || ps.State == "paused"
		// A memory snapshot resumes the guest; any other restores the disk alone, and
		// the machine starts afterwards (when asked) from its current definition.
		resume := withMemory && ps.Description != descDisk
		flags := libvirt.DomainSnapshotRevertForce
		if resume {
			flags |= libvirt.DomainSnapshotRevertRunning
		} else if withMemory {
			flags |= libvirt.DomainSnapshotRevertPaused
		}
		d.keepCounters(ctx, m, h, l, dom)
		if err := l.DomainRevertToSnapshot(s, uint32(flags)); err != nil {
			return "", d.lv(h, "revert to snapshot", err)
		}
		if withMemory && !resume {
			if err := l.DomainDestroyFlags(dom, libvirt.DomainDestroyDefault); err != nil {
				return "", d.lv(h, "destroy domain", err)
			}
		}
		// The snapshot may hold an earlier install: the machine follows its disk.
		for _, v := range ps.Domain.Volumes {
			if g := diskGen.FindStringSubmatch(v); g != nil && strings.HasPrefix(v, m.Domain+"-disk-") {
				m.Gen, _ = strconv.Atoi(g[1])
			}
		}
		return "", d.afterRevert(ctx, m, h, l, dom, resume, after == compute.StateRunning)
	})
	return err
}

// afterRevert gives a reverted domain the machine's current definition: its size and
// the volumes attached now (a snapshot holds none: createSnapshot), hot-plugged into
// a guest that resumed from its memory; then starts it when start.
func (d *Driver) afterRevert(ctx context.Context, m machine, h host, l *libvirt.Libvirt, dom libvirt.Domain, resumed, start bool) error {
	if err := d.applySize(ctx, m, h, l, dom, resumed); err != nil {
		return err
	}
	if resumed {
		vols, err := d.attached(ctx, m.Name)
		if err != nil {
			return err
		}
		for _, v := range vols {
			if err := d.plug(l, h, dom, v); err != nil {
				return err
			}
		}
		return nil
	}
	if start {
		return d.ensureRunning(l, h, dom)
	}
	return nil
}

// DeleteSnapshot implements compute.Driver.
func (d *Driver) DeleteSnapshot(ctx context.Context, key, name, snap string) error {
	m, err := d.machine(ctx, name)
	if err != nil || m.Destroyed {
		if err == compute.ErrNotFound || m.Destroyed {
			return nil
		}
		return err
	}
	_, err = d.step(ctx, key, name, "delete-snapshot:"+snap, func(m machine, h host, l *libvirt.Libvirt, dom libvirt.Domain) (string, error) {
		s, err := l.DomainSnapshotLookupByName(dom, snap, 0)
		if isCode(err, libvirt.ErrNoDomainSnapshot) {
			return "", nil
		}
		if err != nil {
			return "", d.lv(h, "lookup snapshot", err)
		}
		if err := l.DomainSnapshotDelete(s, 0); err != nil && !isCode(err, libvirt.ErrNoDomainSnapshot) {
			return "", d.lv(h, "delete snapshot", err)
		}
		if err := d.collect(l, h, m, dom); err != nil {
			d.opt.Log.Warn("libvirt: old volumes not collected", "machine", m.Name, "err", err)
		}
		return "", nil
	})
	return err
}

// refreshPool has libvirt read the pool's volumes again. libvirt refuses a refresh
// while the pool has jobs of its own under way (another machine's volume being
// uploaded or built: "pool has asynchronous jobs running"); such a refresh is tried
// again for up to poolBusyWait, as those jobs take seconds.
func refreshPool(l *libvirt.Libvirt, pool libvirt.StoragePool) error {
	deadline := time.Now().Add(poolBusyWait)
	for {
		err := l.StoragePoolRefresh(pool, 0)
		if err == nil || !strings.Contains(err.Error(), "asynchronous jobs running") || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// poolBusyWait bounds how long a refresh waits for a pool's own jobs.
const poolBusyWait = 60 * time.Second
