package libvirtdriver_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/computetest"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/compute/libvirtdriver/libvirttest"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

// guestDisk is a SCSI disk as a guest's sysfs shows it.
type guestDisk struct {
	Dev, Vendor, Model, Serial string
	Sectors                    int64 // of 512 bytes
}

// disksCommand prints each SCSI disk of a guest that reports a serial (VPD page
// 0x80), and each mounted filesystem.
const disksCommand = `for b in /sys/block/sd*; do [ -e $b/device/vpd_pg80 ] && echo "disk|${b##*/}|$(cat $b/device/vendor)|$(cat $b/device/model)|$(tail -c +5 $b/device/vpd_pg80)|$(cat $b/size)"; done; sed 's/^/mount|/' /proc/mounts`

// parseDisks reads disksCommand's output: the disks by serial, and the mounts.
func parseDisks(out string) (map[string]guestDisk, []computetest.GuestMount) {
	disks := map[string]guestDisk{}
	var mounts []computetest.GuestMount
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), "|")
		switch {
		case len(f) == 6 && f[0] == "disk":
			n, _ := strconv.ParseInt(f[5], 10, 64)
			disks[f[4]] = guestDisk{Dev: f[1], Vendor: strings.TrimSpace(f[2]), Model: strings.TrimSpace(f[3]), Serial: f[4], Sectors: n}
		case len(f) == 2 && f[0] == "mount":
			if m := strings.Fields(f[1]); len(m) >= 3 {
				mounts = append(mounts, computetest.GuestMount{Source: m[0], Target: m[1], FSType: m[2]})
			}
		}
	}
	return disks, mounts
}

// guestDisks lists the guest's SCSI disks that report a serial, by serial.
func guestDisks(s *shell) map[string]guestDisk {
	s.t.Helper()
	disks, _ := parseDisks(s.run(disksCommand))
	return disks
}

// guestView is computetest's GuestView for real guests: what the guest's sysfs and
// /proc/mounts show, read through its serial console (a guest still booting answers
// nothing within timeout: an error, and the suite asks again).
func guestView(t *testing.T, timeout time.Duration) func(ctx context.Context, d compute.Driver, name string) (computetest.Guest, error) {
	return func(ctx context.Context, d compute.Driver, name string) (computetest.Guest, error) {
		con, err := d.Console(ctx, name)
		if err != nil {
			return computetest.Guest{}, err
		}
		defer con.Close()
		s := &shell{t: t, name: name, con: con, out: computetest.Follow(con), timeout: timeout}
		out, err := s.try(disksCommand)
		if err != nil {
			return computetest.Guest{}, err
		}
		disks, mounts := parseDisks(out)
		g := computetest.Guest{Mounts: mounts}
		for _, k := range disks {
			g.Disks = append(g.Disks, computetest.GuestDisk{Name: k.Dev, Vendor: k.Vendor, Model: k.Model, Serial: k.Serial, SizeBytes: k.Sectors * 512})
		}
		return g, nil
	}
}

// awaitDisk waits until the guest sees the disk of a volume (present) or no longer
// does, and returns it.
func awaitDisk(t *testing.T, s *shell, id int64, present bool, timeout time.Duration) guestDisk {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		disks := guestDisks(s)
		k, ok := disks[strconv.FormatInt(id, 10)]
		if ok == present {
			return k
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: volume %d present=%v after %s; its disks: %+v", s.name, id, ok, timeout, disks)
		}
		time.Sleep(time.Second)
	}
}

// inDomain reports whether a domain has a volume's disk, running (live) or in its
// definition.
func inDomain(t *testing.T, l *libvirt.Libvirt, dom string, v compute.VolumeSpec, live bool) bool {
	t.Helper()
	dd, err := l.DomainLookupByName(dom)
	if err != nil {
		t.Fatal(err)
	}
	flags := libvirt.DomainXMLInactive
	if live {
		flags = 0
	}
	x, err := l.DomainGetXMLDesc(dd, flags)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(x, "<alias name='ua-"+v.Name+"-disk'/>") && strings.Contains(x, "<serial>"+strconv.FormatInt(v.ID, 10)+"</serial>")
}

// TestVolumesOnRealGuests drives the libvirt driver's volumes with real guests (issue
// 29), two of them sharing the checks: volumes made in the location's pool (sparse,
// with their filesystem), one attached to a running guest appears there as a SCSI
// disk of vendor BERTH, product Volume, serial its id, at
// /dev/disk/by-id/scsi-0BERTH_Volume_<id>, mounted at /mnt/volume-<id> by the hook of
// Berth's first-boot configuration; data written in one guest survives a detach and
// reads back the same in the other; a resize is seen by the running guest at once; a
// guest that does not release a volume keeps it, mounted (the detach answers
// ErrDetachTimeout) until it lets go; a volume attached while its machine is stopped
// is there at its next boot, mounted; one attached without automount is not mounted;
// a snapshot leaves volumes out (one of a running machine with volumes is refused),
// and a restore keeps those attached; destroying a machine detaches its volumes and
// deleting one leaves nothing in the pool. Every call is repeated with its key (and again with a new one) to show it
// safe to repeat.
func TestVolumesOnRealGuests(t *testing.T) {
	t.Parallel()
	e := libvirttest.Require(t)
	prefix := e.Prefix + "vol-"
	db := sqlstoretest.SQLite(t, t.TempDir(), libvirtdriver.Storage())
	d := libvirtdriver.New(db.WriteDB(), nil, db.Rebind, libvirtdriver.Options{Prefix: prefix, MaxMemoryMB: 256, Poll: 100 * time.Millisecond})
	libvirttest.Setup(t, e, d, "10.77.0.244", "10.77.0.249")
	l, err := libvirtdriver.Dial(e.URI)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Disconnect()
	g := &volumeGuests{t: t, ctx: context.Background(), e: e, d: d, l: l, prefix: prefix, pace: libvirttest.RunPace()}
	spec := func(id int64, sizeGB int, format string) compute.VolumeSpec {
		return compute.VolumeSpec{Name: compute.VolumeName(id), ID: id, LocationID: 1, SizeGB: sizeGB, Format: format}
	}
	data, logs, bare := spec(7001, 10, "ext4"), spec(7002, 10, "xfs"), spec(7003, 10, "")
	g.start(data, logs, bare)
	sum := g.moveData(data)
	g.resizeOnline(data)
	g.refuse(data, sum)
	g.stoppedAttach(logs, bare)
	g.snapshots(logs, bare)
	g.destroyAndDelete(data, logs, bare)
}

// volumeGuests is TestVolumesOnRealGuests's two guests, server-vola and server-volb,
// with the shells on their consoles, and its steps.
type volumeGuests struct {
	t      *testing.T
	ctx    context.Context
	e      libvirttest.Env
	d      *libvirtdriver.Driver
	l      *libvirt.Libvirt
	prefix string
	pace   *libvirttest.Pace
	slack  time.Duration // a step in a guest: as long as a few boots
	a, b   *shell
}

// start: a location without a pool says how to name one; with one, the volumes are
// made (sparse, their filesystem on them) while the two guests boot.
func (g *volumeGuests) start(vols ...compute.VolumeSpec) {
	t, d := g.t, g.d
	err := d.CreateVolume(g.ctx, "create-early", vols[0])
	if !errors.Is(err, compute.ErrFailed) || !strings.Contains(err.Error(), "berthd admin volume-pool set --location 1 --pool") {
		t.Fatalf("CreateVolume without a pool: %v; want ErrFailed naming the command", err)
	}
	if p, err := d.SetVolumePool(g.ctx, 1, g.e.Pool); err != nil || p.Pool != g.e.Pool || p.Type != "dir" {
		t.Fatalf("SetVolumePool: %+v, %v", p, err)
	}
	start := time.Now()
	for _, name := range []string{"server-vola", "server-volb"} {
		if _, err := d.Create(g.ctx, "create-"+name, compute.Spec{Name: name, VCPUs: 1, MemoryMB: 256, DiskGB: 1, Image: "image-1"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range vols {
		made := time.Now()
		for _, key := range []string{"create-" + v.Name, "create-" + v.Name, "create-again-" + v.Name} {
			if err := d.CreateVolume(g.ctx, key, v); err != nil {
				t.Fatalf("CreateVolume %s (%s): %v", v.Name, key, err)
			}
		}
		t.Logf("volume %s (%s) made in %s", v.Name, v.Format, time.Since(made).Round(time.Millisecond))
		checkPoolVolume(t, g.l, g.e.Pool, g.prefix+v.Name, v.SizeGB)
	}
	for _, name := range []string{"server-vola", "server-volb"} {
		libvirttest.NewConsole(t, g.prefix+name).WaitBoot(g.pace, start, 1)
	}
	g.slack = g.pace.Boots(1)
	g.a, g.b = openShell(t, d, "server-vola", g.slack), openShell(t, d, "server-volb", g.slack)
	// A line left unfinished in the shell (a quote open) does not swallow the next.
	g.a.leaveOpen()
	if got := g.a.run("echo fresh"); got != "fresh" {
		t.Fatalf("after a line left open the shell printed %q, want fresh", got)
	}
}

// inDomains checks that a volume's disk is (or is not) in a running machine's domain
// and its definition.
func (g *volumeGuests) inDomains(name string, v compute.VolumeSpec, live, config bool) {
	g.t.Helper()
	if l, c := inDomain(g.t, g.l, g.prefix+name, v, true), inDomain(g.t, g.l, g.prefix+name, v, false); l != live || c != config {
		g.t.Errorf("volume %s in %s: running domain %v, definition %v; want %v, %v", v.Name, name, l, c, live, config)
	}
}

// inDefinition checks that a volume's disk is in a stopped machine's definition.
func (g *volumeGuests) inDefinition(name string, v compute.VolumeSpec) {
	g.t.Helper()
	if !inDomain(g.t, g.l, g.prefix+name, v, false) {
		g.t.Errorf("volume %s is not in %s's definition", v.Name, name)
	}
}

// moveData: attached to a running guest, a volume is a SCSI disk of vendor BERTH,
// product Volume, serial its id, at once, that udev names by its id; asked to, the
// guest mounts its filesystem. Data written there reads back the same in the other
// guest after a detach. It returns the data's checksum.
func (g *volumeGuests) moveData(data compute.VolumeSpec) string {
	t, d, a, b := g.t, g.d, g.a, g.b
	attach(t, d, "server-vola", data, true)
	k := awaitDisk(t, a, data.ID, true, g.slack)
	if k.Vendor != "BERTH" || k.Model != "Volume" || k.Sectors != 10<<21 {
		t.Errorf("the guest sees volume %d as %+v; want vendor BERTH, model Volume, 10 GiB", data.ID, k)
	}
	// udev makes the link once it has read the disk: a moment after the kernel has it.
	a.await("readlink -f "+compute.VolumeDevice(data.ID), "/dev/"+k.Dev, g.slack)
	mounted(t, a, data, g.slack)
	g.inDomains("server-vola", data, true, true)
	wantVolume(t, d, data.Name, 10, "server-vola")

	mnt := compute.VolumeMountPoint(data.ID)
	sum := a.run(fmt.Sprintf(`dd if=/dev/urandom of=%s/blob bs=64k count=64 2>/dev/null && sync && sha256sum %s/blob | cut -c1-64`, mnt, mnt))
	if len(sum) != 64 {
		t.Fatalf("writing in the guest: %q", sum)
	}
	detach(t, d, "server-vola", data, 2*g.slack)
	awaitDisk(t, a, data.ID, false, g.slack)
	g.inDomains("server-vola", data, false, false)
	wantVolume(t, d, data.Name, 10, "")
	attach(t, d, "server-volb", data, true)
	awaitDisk(t, b, data.ID, true, g.slack)
	mounted(t, b, data, g.slack)
	if got := b.run(fmt.Sprintf("sha256sum %s/blob | cut -c1-64", mnt)); got != sum {
		t.Errorf("the blob reads %q in server-volb, written as %q in server-vola", got, sum)
	}
	return sum
}

// resizeOnline: the running guest sees a resize at once; a smaller size leaves it.
func (g *volumeGuests) resizeOnline(data compute.VolumeSpec) {
	t, d := g.t, g.d
	k := awaitDisk(t, g.b, data.ID, true, g.slack)
	for _, key := range []string{"resize-data", "resize-data", "resize-data-again"} {
		if err := d.ResizeVolume(g.ctx, key, data.Name, 12); err != nil {
			t.Fatalf("ResizeVolume (%s): %v", key, err)
		}
	}
	g.b.await(fmt.Sprintf("cat /sys/block/%s/size", k.Dev), strconv.Itoa(12<<21), g.slack)
	wantVolume(t, d, data.Name, 12, "server-volb")
	if err := d.ResizeVolume(g.ctx, "resize-data-smaller", data.Name, 11); err != nil {
		t.Fatalf("ResizeVolume to a smaller size: %v; want it left as it is", err)
	}
	wantVolume(t, d, data.Name, 12, "server-volb")
}

// refuse: a guest that does not release the volume (here: it ignores the hot-plug
// interrupt, ACPI GPE 1 on this machine type) keeps it, mounted and readable, and
// the detach answers ErrDetachTimeout. Once it lets go (the request was pending),
// the next detach finishes.
func (g *volumeGuests) refuse(data compute.VolumeSpec, sum string) {
	t, d, b := g.t, g.d, g.b
	mnt := compute.VolumeMountPoint(data.ID)
	b.run("echo mask > /sys/firmware/acpi/interrupts/gpe01")
	err := d.DetachVolume(g.ctx, "detach-refused", "server-volb", data.Name, 10*time.Second)
	if !errors.Is(err, compute.ErrDetachTimeout) {
		t.Fatalf("DetachVolume from a guest that keeps it: %v; want ErrDetachTimeout", err)
	}
	g.inDomains("server-volb", data, true, true)
	wantVolume(t, d, data.Name, 12, "server-volb")
	if got := b.run(fmt.Sprintf("sha256sum %s/blob | cut -c1-64", mnt)); got != sum {
		t.Errorf("after the refused detach the blob reads %q, want %q", got, sum)
	}
	b.run("umount " + mnt + "; echo unmask > /sys/firmware/acpi/interrupts/gpe01")
	awaitDisk(t, b, data.ID, false, g.slack)
	detach(t, d, "server-volb", data, g.slack)
	g.inDomains("server-volb", data, false, false)
}

// stoppedAttach: attached while its machine is stopped, a volume is there at its next
// boot, mounted; a resize of the machine keeps it; a snapshot of it leaves the
// volume out (libvirt's internal snapshots take every disk, and a raw volume holds
// none), and attached. Without automount, a volume is a disk the guest leaves alone.
func (g *volumeGuests) stoppedAttach(logs, bare compute.VolumeSpec) {
	t, d := g.t, g.d
	if err := d.Stop(g.ctx, "stop-b", "server-volb"); err != nil {
		t.Fatal(err)
	}
	attach(t, d, "server-volb", logs, true)
	if err := d.Resize(g.ctx, "resize-b", "server-volb", compute.Size{VCPUs: 1, MemoryMB: 256, DiskGB: 2}); err != nil {
		t.Fatal(err)
	}
	g.inDefinition("server-volb", logs)
	if _, err := d.Snapshot(g.ctx, "snap-b", "server-volb", "snap-b", false); err != nil {
		t.Fatalf("Snapshot of a stopped machine with a volume: %v", err)
	}
	g.inDefinition("server-volb", logs)
	booted := time.Now()
	if err := d.Start(g.ctx, "start-b", "server-volb"); err != nil {
		t.Fatal(err)
	}
	libvirttest.NewConsole(t, g.prefix+"server-volb").WaitBoot(g.pace, booted, 2)
	g.b = openShell(t, d, "server-volb", g.slack)
	mounted(t, g.b, logs, g.slack)
	attach(t, d, "server-volb", bare, false)
	awaitDisk(t, g.b, bare.ID, true, g.slack)
	if got := g.b.run("grep -c " + compute.VolumeMountPoint(bare.ID) + " /proc/mounts"); got != "0" {
		t.Errorf("volume %s attached without automount is mounted: %q", bare.Name, got)
	}
}

// snapshots: running with volumes, a machine cannot be snapshotted; restored, it has
// the volumes attached now, not those of the snapshot's time.
func (g *volumeGuests) snapshots(logs, bare compute.VolumeSpec) {
	t, d := g.t, g.d
	if _, err := d.Snapshot(g.ctx, "snap-b-running", "server-volb", "snap-b2", false); !errors.Is(err, compute.ErrFailed) {
		t.Errorf("Snapshot of a running machine with volumes: %v, want ErrFailed", err)
	}
	detach(t, d, "server-volb", bare, g.slack)
	booted := time.Now()
	if err := d.Restore(g.ctx, "restore-b", "server-volb", "snap-b", compute.StateRunning); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	libvirttest.NewConsole(t, g.prefix+"server-volb").WaitBoot(g.pace, booted, 3)
	g.b = openShell(t, d, "server-volb", g.slack)
	mounted(t, g.b, logs, g.slack)
}

// destroyAndDelete: a detached volume grows in its pool; an attached one cannot be
// deleted; destroying a machine detaches its volumes and keeps them; deleting leaves
// nothing in the pool (virsh vol-list), and is safe to repeat.
func (g *volumeGuests) destroyAndDelete(vols ...compute.VolumeSpec) {
	t, d, logs, bare := g.t, g.d, vols[1], vols[2]
	if err := d.ResizeVolume(g.ctx, "resize-bare", bare.Name, 20); err != nil {
		t.Fatal(err)
	}
	checkPoolVolume(t, g.l, g.e.Pool, g.prefix+bare.Name, 20)
	if err := d.DeleteVolume(g.ctx, "delete-logs", logs.Name); !errors.Is(err, compute.ErrFailed) {
		t.Errorf("DeleteVolume of an attached volume: %v, want ErrFailed", err)
	}
	if err := d.Destroy(g.ctx, "destroy-b", "server-volb"); err != nil {
		t.Fatal(err)
	}
	wantVolume(t, d, logs.Name, 10, "")
	checkPoolVolume(t, g.l, g.e.Pool, g.prefix+logs.Name, 10)
	for _, v := range vols {
		for _, key := range []string{"delete-" + v.Name, "delete-" + v.Name, "delete-again-" + v.Name} {
			if err := d.DeleteVolume(g.ctx, key, v.Name); err != nil {
				t.Fatalf("DeleteVolume %s (%s): %v", v.Name, key, err)
			}
		}
		if _, err := d.Volume(g.ctx, v.Name); !errors.Is(err, compute.ErrVolumeNotFound) {
			t.Errorf("Volume %s after its deletion: %v, want ErrVolumeNotFound", v.Name, err)
		}
	}
	if left := virshNames(t, g.e.URI, g.prefix+"volume-", "vol-list", g.e.Pool); len(left) > 0 {
		t.Errorf("virsh vol-list %s after the deletions: %q", g.e.Pool, left)
	}
}

// mounted waits until the guest has a volume's filesystem mounted at its mount point,
// from its udev name.
func mounted(t *testing.T, s *shell, v compute.VolumeSpec, timeout time.Duration) {
	t.Helper()
	s.await("grep ' "+compute.VolumeMountPoint(v.ID)+" ' /proc/mounts; true",
		compute.VolumeDevice(v.ID)+" "+compute.VolumeMountPoint(v.ID)+" "+v.Format+" ", timeout)
}

// attach attaches a volume, twice with its key and once with another: each must
// succeed.
func attach(t *testing.T, d *libvirtdriver.Driver, name string, v compute.VolumeSpec, automount bool) {
	t.Helper()
	for _, key := range []string{"attach-" + v.Name + name, "attach-" + v.Name + name, "attach-again-" + v.Name + name} {
		if err := d.AttachVolume(context.Background(), key, name, v, automount); err != nil {
			t.Fatalf("AttachVolume %s to %s (%s): %v", v.Name, name, key, err)
		}
	}
}

// detach detaches a volume, twice with its key and once with another.
func detach(t *testing.T, d *libvirtdriver.Driver, name string, v compute.VolumeSpec, timeout time.Duration) {
	t.Helper()
	for _, key := range []string{"detach-" + v.Name + name, "detach-" + v.Name + name, "detach-again-" + v.Name + name} {
		if err := d.DetachVolume(context.Background(), key, name, v.Name, timeout); err != nil {
			t.Fatalf("DetachVolume %s from %s (%s): %v", v.Name, name, key, err)
		}
	}
}

// wantVolume checks what the driver reports of a volume.
func wantVolume(t *testing.T, d *libvirtdriver.Driver, name string, sizeGB int, machine string) {
	t.Helper()
	got, err := d.Volume(context.Background(), name)
	if want := (compute.VolumeState{Name: name, SizeGB: sizeGB, Machine: machine}); err != nil || got != want {
		t.Errorf("Volume %s = %+v, %v; want %+v", name, got, err, want)
	}
}

// checkPoolVolume checks that the pool holds a raw volume of that size, sparse (what
// a fresh filesystem writes takes little).
func checkPoolVolume(t *testing.T, l *libvirt.Libvirt, poolName, name string, sizeGB int) {
	t.Helper()
	pool, err := l.StoragePoolLookupByName(poolName)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.StoragePoolRefresh(pool, 0); err != nil {
		t.Logf("refresh %s: %v", poolName, err)
	}
	vol, err := l.StorageVolLookupByName(pool, name)
	if err != nil {
		t.Fatalf("volume %s in pool %s: %v", name, poolName, err)
	}
	_, capacity, alloc, err := l.StorageVolGetInfo(vol)
	if err != nil {
		t.Fatal(err)
	}
	if capacity != uint64(sizeGB)<<30 || alloc > 64<<20 {
		t.Errorf("volume %s: capacity %d, allocation %d; want %d GiB, sparse (under 64 MiB)", name, capacity, alloc, sizeGB)
	}
}

// TestVolumeRecordsOnBothStores: what the driver keeps of volumes (the location's
// pool, each volume, its machine, its keys) on SQLite and on PostgreSQL, with a real
// host and machines that are stopped (no guest to wait for): a pool is set and
// listed; a volume made, attached to a stopped machine (its definition has it),
// refused to a second one, grown, detached, attached again and left detached by its
// machine's destruction, then deleted, each call repeated with its key.
func TestVolumeRecordsOnBothStores(t *testing.T) {
	t.Parallel()
	e := libvirttest.Require(t)
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			prefix := e.Prefix + "vr" + store[:2] + "-"
			opt := libvirtdriver.Options{Prefix: prefix, MaxMemoryMB: 256, Poll: 100 * time.Millisecond}
			var d *libvirtdriver.Driver
			if store == "postgres" {
				db := sqlstoretest.Postgres(t, libvirtdriver.Storage())
				opt.ForUpdate = " FOR UPDATE"
				d = libvirtdriver.New(db.WriteDB(), nil, db.Rebind, opt)
			} else {
				db := sqlstoretest.SQLite(t, t.TempDir(), libvirtdriver.Storage())
				d = libvirtdriver.New(db.WriteDB(), nil, db.Rebind, opt)
			}
			addrs := map[string][2]string{"sqlite": {"10.77.0.10", "10.77.0.11"}, "postgres": {"10.77.0.12", "10.77.0.13"}}[store]
			libvirttest.Setup(t, e, d, addrs[0], addrs[1])
			l, err := libvirtdriver.Dial(e.URI)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Disconnect()
			volumeRecords(t, ctx, d, l, e, prefix)
		})
	}
}

func volumeRecords(t *testing.T, ctx context.Context, d *libvirtdriver.Driver, l *libvirt.Libvirt, e libvirttest.Env, prefix string) {
	if _, err := d.SetVolumePool(ctx, 1, e.Pool); err != nil {
		t.Fatal(err)
	}
	v := compute.VolumeSpec{Name: compute.VolumeName(9001), ID: 9001, LocationID: 1, SizeGB: 1, Format: "ext4"}
	for _, key := range []string{"c", "c"} {
		if err := d.CreateVolume(ctx, key, v); err != nil {
			t.Fatal(err)
		}
	}
	if ps, err := d.VolumePools(ctx, 0); err != nil || len(ps) != 1 || ps[0].Pool != e.Pool || ps[0].Volumes != 1 {
		t.Fatalf("VolumePools = %+v, %v; want %s with one volume", ps, err, e.Pool)
	}
	for _, name := range []string{"server-vr1", "server-vr2"} {
		if _, err := d.Create(ctx, "create", compute.Spec{Name: name, VCPUs: 1, MemoryMB: 256, DiskGB: 1, Image: "image-1"}); err != nil {
			t.Fatal(err)
		}
		if err := d.Stop(ctx, "stop", name); err != nil {
			t.Fatal(err)
		}
	}
	attach(t, d, "server-vr1", v, true)
	wantVolume(t, d, v.Name, 1, "server-vr1")
	if !inDomain(t, l, prefix+"server-vr1", v, false) {
		t.Errorf("volume %s is not in server-vr1's definition", v.Name)
	}
	if err := d.AttachVolume(ctx, "a2", "server-vr2", v, false); !errors.Is(err, compute.ErrFailed) {
		t.Errorf("AttachVolume of a volume attached elsewhere: %v, want ErrFailed", err)
	}
	for _, key := range []string{"r", "r"} {
		if err := d.ResizeVolume(ctx, key, v.Name, 3); err != nil {
			t.Fatal(err)
		}
	}
	wantVolume(t, d, v.Name, 3, "server-vr1")
	checkPoolVolume(t, l, e.Pool, prefix+v.Name, 3)
	detach(t, d, "server-vr1", v, time.Minute)
	wantVolume(t, d, v.Name, 3, "")
	attach(t, d, "server-vr2", v, false)
	if err := d.Destroy(ctx, "destroy", "server-vr2"); err != nil {
		t.Fatal(err)
	}
	wantVolume(t, d, v.Name, 3, "")
	for _, key := range []string{"d", "d"} {
		if err := d.DeleteVolume(ctx, key, v.Name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Volume(ctx, v.Name); !errors.Is(err, compute.ErrVolumeNotFound) {
		t.Errorf("Volume after the deletion: %v", err)
	}
	if err := d.CreateVolume(ctx, "c-again", v); !errors.Is(err, compute.ErrFailed) {
		t.Errorf("CreateVolume of a deleted volume's name: %v, want ErrFailed", err)
	}
}
