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
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/compute/libvirtdriver/libvirttest"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

// guestDisk is a SCSI disk as a guest's sysfs shows it.
type guestDisk struct {
	Dev, Vendor, Model, Serial string
	Sectors                    int64 // of 512 bytes
}

// guestDisks lists the guest's SCSI disks that report a serial, by serial.
func guestDisks(s *shell) map[string]guestDisk {
	s.t.Helper()
	out := s.run(`for b in /sys/block/sd*; do [ -e $b/device/vpd_pg80 ] && echo "disk|${b##*/}|$(cat $b/device/vendor)|$(cat $b/device/model)|$(tail -c +5 $b/device/vpd_pg80)|$(cat $b/size)"; done; true`)
	disks := map[string]guestDisk{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 6 || f[0] != "disk" {
			continue
		}
		n, _ := strconv.ParseInt(f[5], 10, 64)
		disks[f[4]] = guestDisk{Dev: f[1], Vendor: strings.TrimSpace(f[2]), Model: strings.TrimSpace(f[3]), Serial: f[4], Sectors: n}
	}
	return disks
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
// disk of vendor BERTH, product Volume, serial its id; data written in one guest
// survives a detach and reads back the same in the other; a resize is seen by the
// running guest at once; a guest that does not release a volume keeps it (the detach
// answers ErrDetachTimeout) until it lets go; a volume attached while its machine is
// stopped is there at its next boot; destroying a machine detaches its volumes and
// deleting one leaves nothing in the pool. Every call is repeated with its key (and
// again with a new one) to show it safe to repeat.
func TestVolumesOnRealGuests(t *testing.T) {
	t.Parallel()
	e := libvirttest.Require(t)
	ctx := context.Background()
	prefix := e.Prefix + "vol-"
	db := sqlstoretest.SQLite(t, t.TempDir(), libvirtdriver.Storage())
	d := libvirtdriver.New(db.WriteDB(), nil, db.Rebind, libvirtdriver.Options{Prefix: prefix, MaxMemoryMB: 256, Poll: 100 * time.Millisecond})
	libvirttest.Setup(t, e, d, "10.77.0.244", "10.77.0.249")
	l, err := libvirtdriver.Dial(e.URI)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Disconnect()
	spec := func(id int64, sizeGB int, format string) compute.VolumeSpec {
		return compute.VolumeSpec{Name: compute.VolumeName(id), ID: id, LocationID: 1, SizeGB: sizeGB, Format: format}
	}
	data, logs, bare := spec(7001, 10, "ext4"), spec(7002, 10, "xfs"), spec(7003, 10, "")

	// A location without a pool says how to name one.
	err = d.CreateVolume(ctx, "create-early", data)
	if !errors.Is(err, compute.ErrFailed) || !strings.Contains(err.Error(), "berthd admin volume-pool set --location 1 --pool") {
		t.Fatalf("CreateVolume without a pool: %v; want ErrFailed naming the command", err)
	}
	if p, err := d.SetVolumePool(ctx, 1, e.Pool); err != nil || p.Pool != e.Pool || p.Type != "dir" {
		t.Fatalf("SetVolumePool: %+v, %v", p, err)
	}

	// Two guests boot while the volumes are made.
	pace := libvirttest.RunPace()
	start := time.Now()
	for _, name := range []string{"server-vola", "server-volb"} {
		if _, err := d.Create(ctx, "create-"+name, compute.Spec{Name: name, VCPUs: 1, MemoryMB: 256, DiskGB: 1, Image: "image-1"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []compute.VolumeSpec{data, logs, bare} {
		made := time.Now()
		for _, key := range []string{"create-" + v.Name, "create-" + v.Name, "create-again-" + v.Name} {
			if err := d.CreateVolume(ctx, key, v); err != nil {
				t.Fatalf("CreateVolume %s (%s): %v", v.Name, key, err)
			}
		}
		t.Logf("volume %s (%s) made in %s", v.Name, v.Format, time.Since(made).Round(time.Millisecond))
		checkPoolVolume(t, l, e.Pool, prefix+v.Name, v.SizeGB)
	}
	for _, name := range []string{"server-vola", "server-volb"} {
		libvirttest.NewConsole(t, prefix+name).WaitBoot(pace, start, 1)
	}
	slack := pace.Boots(1)
	a, b := openShell(t, d, "server-vola", slack), openShell(t, d, "server-volb", slack)

	// Attached to a running guest, a volume is a SCSI disk of vendor BERTH, product
	// Volume, serial its id, at once.
	attach(t, d, "server-vola", data, false)
	if k := awaitDisk(t, a, data.ID, true, slack); k.Vendor != "BERTH" || k.Model != "Volume" || k.Sectors != 10<<21 {
		t.Errorf("the guest sees volume %d as %+v; want vendor BERTH, model Volume, 10 GiB", data.ID, k)
	}
	if !inDomain(t, l, prefix+"server-vola", data, true) || !inDomain(t, l, prefix+"server-vola", data, false) {
		t.Errorf("volume %s is not in server-vola's running domain and its definition", data.Name)
	}
	wantVolume(t, d, data.Name, 10, "server-vola")

	// Data written in one guest reads back the same in the other after a detach.
	k := awaitDisk(t, a, data.ID, true, slack)
	sum := a.run(fmt.Sprintf(`mkdir -p /mnt/t && mount -t ext4 /dev/%s /mnt/t && dd if=/dev/urandom of=/mnt/t/blob bs=64k count=64 2>/dev/null && sha256sum /mnt/t/blob | cut -c1-64; umount /mnt/t`, k.Dev))
	if len(sum) != 64 {
		t.Fatalf("writing in the guest: %q", sum)
	}
	detach(t, d, "server-vola", data, 2*slack)
	awaitDisk(t, a, data.ID, false, slack)
	if inDomain(t, l, prefix+"server-vola", data, true) || inDomain(t, l, prefix+"server-vola", data, false) {
		t.Errorf("volume %s is still in server-vola's domain after the detach", data.Name)
	}
	wantVolume(t, d, data.Name, 10, "")
	attach(t, d, "server-volb", data, false)
	k = awaitDisk(t, b, data.ID, true, slack)
	if got := b.run(fmt.Sprintf(`mkdir -p /mnt/t && mount -t ext4 /dev/%s /mnt/t && sha256sum /mnt/t/blob | cut -c1-64`, k.Dev)); got != sum {
		t.Errorf("the blob reads %q in server-volb, written as %q in server-vola", got, sum)
	}

	// The running guest sees a resize at once.
	for _, key := range []string{"resize-data", "resize-data", "resize-data-again"} {
		if err := d.ResizeVolume(ctx, key, data.Name, 12); err != nil {
			t.Fatalf("ResizeVolume (%s): %v", key, err)
		}
	}
	b.await(fmt.Sprintf("cat /sys/block/%s/size", k.Dev), strconv.Itoa(12<<21), slack)
	wantVolume(t, d, data.Name, 12, "server-volb")
	if err := d.ResizeVolume(ctx, "resize-data-smaller", data.Name, 11); err != nil {
		t.Fatalf("ResizeVolume to a smaller size: %v; want it left as it is", err)
	}
	wantVolume(t, d, data.Name, 12, "server-volb")

	// A guest that does not release the volume (here: it ignores the hot-plug
	// interrupt, ACPI GPE 1 on this machine type) keeps it, mounted and readable.
	b.run("echo mask > /sys/firmware/acpi/interrupts/gpe01")
	err = d.DetachVolume(ctx, "detach-refused", "server-volb", data.Name, 10*time.Second)
	if !errors.Is(err, compute.ErrDetachTimeout) {
		t.Fatalf("DetachVolume from a guest that keeps it: %v; want ErrDetachTimeout", err)
	}
	if !inDomain(t, l, prefix+"server-volb", data, true) || !inDomain(t, l, prefix+"server-volb", data, false) {
		t.Errorf("volume %s left server-volb's domain though its guest kept it", data.Name)
	}
	wantVolume(t, d, data.Name, 12, "server-volb")
	if got := b.run("sha256sum /mnt/t/blob | cut -c1-64"); got != sum {
		t.Errorf("after the refused detach the blob reads %q, want %q", got, sum)
	}
	// Once it lets go (the request was pending), the next detach finishes.
	b.run("umount /mnt/t; echo unmask > /sys/firmware/acpi/interrupts/gpe01")
	awaitDisk(t, b, data.ID, false, slack)
	detach(t, d, "server-volb", data, slack)
	if inDomain(t, l, prefix+"server-volb", data, false) {
		t.Errorf("volume %s is still in server-volb's definition", data.Name)
	}

	// Attached while its machine is stopped, a volume is there at its next boot; a
	// resize of the machine keeps it.
	if err := d.Stop(ctx, "stop-b", "server-volb"); err != nil {
		t.Fatal(err)
	}
	attach(t, d, "server-volb", logs, false)
	if err := d.Resize(ctx, "resize-b", "server-volb", compute.Size{VCPUs: 1, MemoryMB: 256, DiskGB: 2}); err != nil {
		t.Fatal(err)
	}
	if !inDomain(t, l, prefix+"server-volb", logs, false) {
		t.Errorf("volume %s is not in stopped server-volb's definition after a resize", logs.Name)
	}
	booted := time.Now()
	if err := d.Start(ctx, "start-b", "server-volb"); err != nil {
		t.Fatal(err)
	}
	libvirttest.NewConsole(t, prefix+"server-volb").WaitBoot(pace, booted, 2)
	b = openShell(t, d, "server-volb", slack)
	k = awaitDisk(t, b, logs.ID, true, slack)
	if got := b.run(fmt.Sprintf("mkdir -p /mnt/l && mount -t xfs /dev/%s /mnt/l && grep -c ' /mnt/l xfs ' /proc/mounts", k.Dev)); got != "1" {
		t.Errorf("volume %s (xfs) does not mount in server-volb: %q", logs.Name, got)
	}

	// A detached volume grows in its pool; an attached one cannot be deleted.
	if err := d.ResizeVolume(ctx, "resize-bare", bare.Name, 20); err != nil {
		t.Fatal(err)
	}
	checkPoolVolume(t, l, e.Pool, prefix+bare.Name, 20)
	if err := d.DeleteVolume(ctx, "delete-logs", logs.Name); !errors.Is(err, compute.ErrFailed) {
		t.Errorf("DeleteVolume of an attached volume: %v, want ErrFailed", err)
	}
	// Destroying a machine detaches its volumes, and keeps them.
	if err := d.Destroy(ctx, "destroy-b", "server-volb"); err != nil {
		t.Fatal(err)
	}
	wantVolume(t, d, logs.Name, 10, "")
	checkPoolVolume(t, l, e.Pool, prefix+logs.Name, 10)

	// Deleting leaves nothing in the pool (virsh vol-list), and is safe to repeat.
	for _, v := range []compute.VolumeSpec{data, logs, bare} {
		for _, key := range []string{"delete-" + v.Name, "delete-" + v.Name, "delete-again-" + v.Name} {
			if err := d.DeleteVolume(ctx, key, v.Name); err != nil {
				t.Fatalf("DeleteVolume %s (%s): %v", v.Name, key, err)
			}
		}
		if _, err := d.Volume(ctx, v.Name); !errors.Is(err, compute.ErrVolumeNotFound) {
			t.Errorf("Volume %s after its deletion: %v, want ErrVolumeNotFound", v.Name, err)
		}
	}
	if left := virshNames(t, e.URI, prefix+"volume-", "vol-list", e.Pool); len(left) > 0 {
		t.Errorf("virsh vol-list %s after the deletions: %q", e.Pool, left)
	}
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
