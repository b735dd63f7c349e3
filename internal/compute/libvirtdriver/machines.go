package libvirtdriver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute"
)

const gib = 1 << 30

// Create implements compute.Driver: it places the machine on a host of
// spec.LocationID with room (any host when 0) and the image, takes an address from the
// location's pool, writes the disk overlay and the seed, defines the domain and starts
// it. It returns once the domain runs (the guest boots on its own from there).
func (d *Driver) Create(ctx context.Context, key string, spec compute.Spec) (compute.Machine, error) {
	if err := ctx.Err(); err != nil {
		return compute.Machine{}, err
	}
	t := newTiming()
	m, err := d.machine(ctx, spec.Name)
	if errors.Is(err, compute.ErrNotFound) {
		m, err = d.place(ctx, spec)
	}
	if err != nil {
		return compute.Machine{}, err
	}
	if m.Destroyed {
		return compute.Machine{}, fmt.Errorf("%w: machine %s was destroyed; names are not reused", compute.ErrFailed, m.Name)
	}
	if _, ok, err := d.applied(ctx, m.Name, key); err != nil || ok {
		if err != nil {
			return compute.Machine{}, err
		}
		return d.Machine(ctx, m.Name)
	}
	h, err := d.host(ctx, m.HostID)
	if err != nil {
		return compute.Machine{}, err
	}
	l, err := d.conn(ctx, h)
	if err != nil {
		return compute.Machine{}, err
	}
	t.step("place")
	dom, err := d.install(ctx, l, h, m, spec, libvirt.UUID{}, t)
	if err != nil {
		return compute.Machine{}, err
	}
	if err := d.fault(m, "start"); err != nil {
		return compute.Machine{}, err
	}
	if err := d.ensureRunning(l, h, dom); err != nil {
		return compute.Machine{}, err
	}
	t.step("start")
	if err := d.record(ctx, m.Name, key, "create", ""); err != nil {
		return compute.Machine{}, err
	}
	t.step("record")
	d.opt.Log.Info("libvirt: machine created", t.log("machine", m.Name, "host", h.ID)...)
	// The domain was just started: no need to ask libvirt and the database again.
	return m.shown(compute.StateRunning), nil
}

// install writes generation m.Gen of a machine: its disk (a qcow2 overlay on the
// image's base volume), its seed, and the domain definition pointing at both. Steps
// already done are kept, so it can be repeated. It returns the (stopped) domain.
func (d *Driver) install(ctx context.Context, l *libvirt.Libvirt, h host, m machine, spec compute.Spec, uuid libvirt.UUID, t *timing) (libvirt.Domain, error) {
	pool, err := l.StoragePoolLookupByName(h.Pool)
	if err != nil {
		return libvirt.Domain{}, d.lv(h, "storage pool "+h.Pool, err)
	}
	dom, defined, err := d.domain(l, h, m)
	if err != nil {
		return dom, err
	}
	current := false
	if defined {
		x, err := l.DomainGetXMLDesc(dom, libvirt.DomainXMLInactive)
		if err != nil {
			return dom, d.lv(h, "domain definition", err)
		}
		p, err := parseDomain(x)
		if err != nil {
			return dom, err
		}
		for _, v := range p.Volumes {
			current = current || v == m.diskVolume()
		}
		uuid = dom.UUID
	}
	if current {
		return dom, nil // this generation is installed already
	}
	base, err := d.baseImage(ctx, h, m.Image)
	if err != nil {
		return dom, err
	}
	t.step("lookup")
	if err := d.fault(m, "disk"); err != nil {
		return dom, err
	}
	if _, err := l.StorageVolLookupByName(pool, m.diskVolume()); isCode(err, libvirt.ErrNoStorageVol) {
		capacity := max(uint64(m.DiskGB)*gib, base.size)
		if _, err := l.StorageVolCreateXML(pool, volumeXML(m.diskVolume(), capacity, "qcow2", base.path), 0); err != nil {
			return dom, d.lv(h, "create disk "+m.diskVolume(), err)
		}
	} else if err != nil {
		return dom, d.lv(h, "disk volume", err)
	}
	t.step("disk")
	// The seed is written afresh: one left by an interrupted upload may be partial.
	if err := d.fault(m, "seed"); err != nil {
		return dom, err
	}
	seed, err := d.seed(ctx, m, spec)
	if err != nil {
		return dom, err
	}
	t.step("seed_build")
	if err := d.upload(l, h, pool, m.seedVolume(), "raw", seed, true); err != nil {
		return dom, err
	}
	t.step("seed_upload")
	if err := d.withVolumes(ctx, &m); err != nil {
		return dom, err
	}
	x, err := d.domainXML(m, h, uuid)
	if err != nil {
		return dom, err
	}
	if err := d.fault(m, "define"); err != nil {
		return dom, err
	}
	dom, err = l.DomainDefineXML(x)
	if err != nil {
		return dom, d.kvmRefused(h, "define", libvirt.Domain{Name: m.Domain}, err)
	}
	t.step("define")
	return dom, nil
}

// fault is Options.CreateFault's answer for a step of making m.
func (d *Driver) fault(m machine, step string) error {
	if d.opt.CreateFault == nil {
		return nil
	}
	return d.opt.CreateFault(m.Name, step)
}

// seed builds a machine's NoCloud seed.
func (d *Driver) seed(ctx context.Context, m machine, spec compute.Spec) ([]byte, error) {
	net, err := d.network(ctx, m)
	if err != nil {
		return nil, err
	}
	s := Seed{InstanceID: fmt.Sprintf("%s-%d", m.Domain, m.Gen), Hostname: m.Name, SSHKeys: spec.SSHKeys,
		RootPassHash: spec.RootPassHash, Scripts: spec.UserScripts, MAC: m.MAC,
		IPv4: net.ipv4, Gateway: net.gateway, IPv6: net.ipv6, DNS: net.dns}
	return s.ISO()
}

// upload writes data into a volume of the pool, creating it (replacing one there
// when replace).
func (d *Driver) upload(l *libvirt.Libvirt, h host, pool libvirt.StoragePool, name, format string, data []byte, replace bool) error {
	vol, err := l.StorageVolLookupByName(pool, name)
	switch {
	case err == nil && replace:
		if err := l.StorageVolDelete(vol, 0); err != nil {
			return d.lv(h, "delete volume "+name, err)
		}
	case err == nil:
		return nil
	case !isCode(err, libvirt.ErrNoStorageVol):
		return d.lv(h, "volume "+name, err)
	}
	vol, err = l.StorageVolCreateXML(pool, volumeXML(name, uint64(len(data)), format, ""), 0)
	if err != nil {
		return d.lv(h, "create volume "+name, err)
	}
	if err := l.StorageVolUpload(vol, strings.NewReader(string(data)), 0, uint64(len(data)), 0); err != nil {
		return d.lv(h, "upload "+name, err)
	}
	return nil
}

func (d *Driver) ensureRunning(l *libvirt.Libvirt, h host, dom libvirt.Domain) error {
	on, err := d.active(l, h, dom)
	if err != nil || on {
		return err
	}
	if err := l.DomainCreate(dom); err != nil && !isCode(err, libvirt.ErrOperationInvalid) {
		return d.kvmRefused(h, "start", dom, err)
	}
	return nil
}

// existing returns a machine whose domain is defined, with its host and connection.
func (d *Driver) existing(ctx context.Context, name string) (machine, host, *libvirt.Libvirt, libvirt.Domain, error) {
	m, h, l, err := d.live(ctx, name)
	if err != nil {
		return m, h, l, libvirt.Domain{}, err
	}
	dom, ok, err := d.domain(l, h, m)
	if err == nil && !ok {
		err = fmt.Errorf("%w: machine %s has no domain on host %d (its creation did not finish)", compute.ErrFailed, name, h.ID)
	}
	return m, h, l, dom, err
}

// step runs a mutating step once per key: a key already applied answers nil at once.
func (d *Driver) step(ctx context.Context, key, name, event string, do func(m machine, h host, l *libvirt.Libvirt, dom libvirt.Domain) (string, error)) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	m, err := d.machine(ctx, name)
	if err == nil && m.Destroyed {
		err = compute.ErrNotFound
	}
	if err != nil {
		return "", err
	}
	if res, ok, err := d.applied(ctx, name, key); err != nil || ok {
		return res, err
	}
	m, h, l, dom, err := d.existing(ctx, name)
	if err != nil {
		return "", err
	}
	res, err := do(m, h, l, dom)
	if err != nil {
		return "", err
	}
	return res, d.record(ctx, name, key, event, res)
}

// Start implements compute.Driver.
func (d *Driver) Start(ctx context.Context, key, name string) error {
	_, err := d.step(ctx, key, name, "start", func(m machine, h host, l *libvirt.Libvirt, dom libvirt.Domain) (string, error) {
		return "", d.ensureRunning(l, h, dom)
	})
	return err
}

// Stop implements compute.Driver: the domain is destroyed (the plug pulled).
func (d *Driver) Stop(ctx context.Context, key, name string) error {
	_, err := d.step(ctx, key, name, "stop", func(m machine, h host, l *libvirt.Libvirt, dom libvirt.Domain) (string, error) {
		return "", d.ensureStopped(ctx, m, h, l, dom)
	})
	return err
}

func (d *Driver) ensureStopped(ctx context.Context, m machine, h host, l *libvirt.Libvirt, dom libvirt.Domain) error {
	on, err := d.active(l, h, dom)
	if err != nil || !on {
		return err
	}
	d.keepCounters(ctx, m, h, l, dom)
	if err := l.DomainDestroyFlags(dom, libvirt.DomainDestroyDefault); err != nil && !isCode(err, libvirt.ErrOperationInvalid) {
		return d.lv(h, "destroy domain", err)
	}
	return nil
}

// Shutdown implements compute.Driver: ACPI power button, re-sent until the guest is
// off (a press while the guest still boots is lost) or timeout passes.
func (d *Driver) Shutdown(ctx context.Context, key, name string, timeout time.Duration) error {
	_, err := d.step(ctx, key, name, "shutdown", func(m machine, h host, l *libvirt.Libvirt, dom libvirt.Domain) (string, error) {
		off, err := d.wait(ctx, timeout, func(i int) (bool, error) {
			on, err := d.active(l, h, dom)
			if err != nil || !on {
				return !on, err
			}
			if i%10 == 0 {
				d.keepCounters(ctx, m, h, l, dom)
				if err := l.DomainShutdownFlags(dom, libvirt.DomainShutdownAcpiPowerBtn); err != nil && !isCode(err, libvirt.ErrOperationInvalid) {
					return false, d.lv(h, "shutdown domain", err)
				}
			}
			return false, nil
		})
		if err == nil && !off {
			err = compute.ErrShutdownTimeout
		}
		return "", err
	})
	return err
}

// Reset implements compute.Driver: a hard reset of a running domain; a stopped one is
// started.
func (d *Driver) Reset(ctx context.Context, key, name string) error {
	_, err := d.step(ctx, key, name, "reset", func(m machine, h host, l *libvirt.Libvirt, dom libvirt.Domain) (string, error) {
		on, err := d.active(l, h, dom)
		if err != nil || !on {
			if err == nil {
				err = d.ensureRunning(l, h, dom)
			}
			return "", err
		}
		return "", d.lv(h, "reset domain", l.DomainReset(dom, 0))
	})
	return err
}

// Destroy implements compute.Driver: the domain is stopped and undefined with its
// snapshots, the machine's disks and seeds are deleted and its addresses released;
// the volumes attached to it are detached, never deleted.
func (d *Driver) Destroy(ctx context.Context, key, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m, err := d.machine(ctx, name)
	if errors.Is(err, compute.ErrNotFound) || (err == nil && m.Destroyed) {
		return nil
	}
	if err != nil {
		return err
	}
	h, err := d.host(ctx, m.HostID)
	if err != nil {
		return err
	}
	l, err := d.conn(ctx, h)
	if err != nil {
		return err
	}
	dom, ok, err := d.domain(l, h, m)
	if err != nil {
		return err
	}
	if ok {
		if err := d.ensureStopped(ctx, m, h, l, dom); err != nil {
			return err
		}
		err := l.DomainUndefineFlags(dom, libvirt.DomainUndefineSnapshotsMetadata|libvirt.DomainUndefineNvram|libvirt.DomainUndefineCheckpointsMetadata)
		if err != nil && !libvirt.IsNotFound(err) {
			return d.lv(h, "undefine domain", err)
		}
	}
	if err := d.deleteVolumes(l, h, m, nil); err != nil {
		return err
	}
	return d.forget(ctx, m, key)
}

// deleteVolumes deletes the machine's volumes except those in keep.
func (d *Driver) deleteVolumes(l *libvirt.Libvirt, h host, m machine, keep map[string]bool) error {
	pool, err := l.StoragePoolLookupByName(h.Pool)
	if err != nil {
		return d.lv(h, "storage pool "+h.Pool, err)
	}
	if err := refreshPool(l, pool); err != nil {
		return d.lv(h, "refresh pool", err)
	}
	vols, _, err := l.StoragePoolListAllVolumes(pool, 1, 0)
	if err != nil {
		return d.lv(h, "list volumes", err)
	}
	for _, v := range vols {
		if !strings.HasPrefix(v.Name, m.Domain+"-disk-") && !strings.HasPrefix(v.Name, m.Domain+"-seed-") || keep[v.Name] {
			continue
		}
		if err := l.StorageVolDelete(v, 0); err != nil && !isCode(err, libvirt.ErrNoStorageVol) {
			return d.lv(h, "delete volume "+v.Name, err)
		}
	}
	return nil
}

// collect deletes the volumes of earlier installs that neither the domain nor any of
// its snapshots uses any more.
func (d *Driver) collect(l *libvirt.Libvirt, h host, m machine, dom libvirt.Domain) error {
	keep := map[string]bool{m.diskVolume(): true, m.seedVolume(): true}
	x, err := l.DomainGetXMLDesc(dom, libvirt.DomainXMLInactive)
	if err != nil {
		return d.lv(h, "domain definition", err)
	}
	p, err := parseDomain(x)
	if err != nil {
		return err
	}
	for _, v := range p.Volumes {
		keep[v] = true
	}
	snaps, _, err := l.DomainListAllSnapshots(dom, 1, 0)
	if err != nil {
		return d.lv(h, "list snapshots", err)
	}
	for _, s := range snaps {
		sx, err := l.DomainSnapshotGetXMLDesc(s, 0)
		if err != nil {
			return d.lv(h, "snapshot definition", err)
		}
		ps, err := parseSnapshot(sx)
		if err != nil {
			return err
		}
		for _, v := range ps.Domain.Volumes {
			keep[v] = true
		}
	}
	return d.deleteVolumes(l, h, m, keep)
}

// Machine implements compute.Driver. A machine whose creation has not defined its
// domain yet is stopped.
func (d *Driver) Machine(ctx context.Context, name string) (compute.Machine, error) {
	m, h, l, err := d.live(ctx, name)
	if err != nil {
		return compute.Machine{}, err
	}
	out := m.shown(compute.StateStopped)
	dom, ok, err := d.domain(l, h, m)
	if err != nil || !ok {
		return out, err
	}
	on, err := d.active(l, h, dom)
	if err != nil {
		return out, err
	}
	if on {
		out.State = compute.StateRunning
	}
	return out, nil
}

// shown is the machine as the driver's callers see it, in state st.
func (m machine) shown(st compute.State) compute.Machine {
	return compute.Machine{Name: m.Name, State: st, VCPUs: m.VCPUs, MemoryMB: m.MemoryMB, DiskGB: m.DiskGB,
		IPv4: addrOnly(m.IPv4), IPv6: addrOnly(m.IPv6)}
}

func addrOnly(cidr string) string {
	if i := strings.IndexByte(cidr, '/'); i >= 0 {
		return cidr[:i]
	}
	return cidr
}
