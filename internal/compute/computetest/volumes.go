package computetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
)

// VolumeOptions adapt the volume suite to a driver.
type VolumeOptions struct {
	// LocationID is where the suite's machines and volumes are made.
	LocationID int64
	// FirstID is the id of the suite's first volume (default 1); the others follow.
	// Drivers whose volumes outlive the test (a real storage pool) give one no other
	// run takes.
	FirstID int64
	// SizeGB is the size of the suite's volumes (default 1); resizes add 1.
	SizeGB int
	// Settle bounds how long a change may take to show in the guest (GuestView;
	// default 10 s): a real guest boots, and sees a hot-plug after udev has run.
	Settle time.Duration
	// GuestView, when set, reads what the guest of a running machine sees of its
	// disks; the suite then checks the guest's side of each promise too: the disk's
	// SCSI identity and size, the automount, the size after an online resize, the disk
	// gone after a detach. Drivers whose guests are simulated give theirs; libvirt reads
	// its real guest's.
	GuestView func(ctx context.Context, d compute.Driver, machine string) (Guest, error)
}

// Guest is what a guest sees of its disks.
type Guest struct {
	Disks  []GuestDisk
	Mounts []GuestMount
}

// GuestDisk is one SCSI disk as a guest sees it (lsblk's NAME, VENDOR, MODEL, SERIAL,
// SIZE).
type GuestDisk struct {
	Name                  string // the kernel's name, "sdb"
	Vendor, Model, Serial string
	SizeBytes             int64
}

// GuestMount is one mounted filesystem (findmnt's SOURCE, TARGET, FSTYPE).
type GuestMount struct {
	Source, Target, FSType string
}

// volumeSuite is one run of ExerciseVolumes: its options and its counters.
type volumeSuite struct {
	opts      VolumeOptions
	newDriver func(t *testing.T) compute.Driver
	machines  int
	nextID    int64
}

// ExerciseVolumes is the volume part of the suite, for a driver with compute.Volumes
// (docs/drivers.md, Volumes): it checks every promise of the interface's comments
// (internal/compute/volumes.go), and what a detach or a lookup of an unknown name
// answers: a volume not attached to the machine named is left as it is, no error;
// an unknown volume is compute.ErrVolumeNotFound, an unknown machine to attach to
// compute.ErrNotFound. A machine destroyed with volumes attached leaves them,
// detached. A running machine with volumes is not snapshotted. Machine names and
// volume ids are unique per call, so drivers may be shared.
func ExerciseVolumes(t *testing.T, opts VolumeOptions, newDriver func(t *testing.T) compute.Driver) {
	if opts.FirstID <= 0 {
		opts.FirstID = 1
	}
	if opts.SizeGB <= 0 {
		opts.SizeGB = 1
	}
	if opts.Settle <= 0 {
		opts.Settle = 10 * time.Second
	}
	s := &volumeSuite{opts: opts, newDriver: newDriver, nextID: opts.FirstID}
	t.Run("CreateEachFormat", s.createEachFormat)
	t.Run("AttachRunning", s.attachRunning)
	t.Run("AttachStopped", s.attachStopped)
	t.Run("NotMounted", s.notMounted)
	t.Run("AttachedElsewhere", s.attachedElsewhere)
	t.Run("Resize", s.resize)
	t.Run("Delete", s.delete)
	t.Run("DestroyDetaches", s.destroyDetaches)
	t.Run("Snapshots", s.snapshots)
	t.Run("UnknownNames", s.unknownNames)
	t.Run("CancelledContext", s.cancelledContext)
}

var bg = context.Background()

// driver makes a driver and finds its Volumes.
func (s *volumeSuite) driver(t *testing.T) (compute.Driver, compute.Volumes) {
	t.Helper()
	d := s.newDriver(t)
	v, ok := compute.As[compute.Volumes](d)
	if !ok {
		t.Fatalf("driver %T has no compute.Volumes", d)
	}
	return d, v
}

// machine creates a running machine.
func (s *volumeSuite) machine(t *testing.T, d compute.Driver) string {
	t.Helper()
	s.machines++
	spec := compute.Spec{Name: fmt.Sprintf("server-cv%04d", s.machines), VCPUs: 1, MemoryMB: 256, DiskGB: 1, Image: "image-1",
		LocationID: s.opts.LocationID}
	if _, err := d.Create(bg, "create", spec); err != nil {
		t.Fatalf("Create(%s): %v", spec.Name, err)
	}
	return spec.Name
}

// volume creates a detached volume with filesystem format.
func (s *volumeSuite) volume(t *testing.T, v compute.Volumes, format string) compute.VolumeSpec {
	t.Helper()
	spec := compute.VolumeSpec{Name: compute.VolumeName(s.nextID), ID: s.nextID, LocationID: s.opts.LocationID, SizeGB: s.opts.SizeGB, Format: format}
	s.nextID++
	if err := v.CreateVolume(bg, "create-"+spec.Name, spec); err != nil {
		t.Fatalf("CreateVolume(%s, %q): %v", spec.Name, format, err)
	}
	return spec
}

// wantVolume checks what the driver reports of a volume.
func wantVolume(t *testing.T, v compute.Volumes, name string, sizeGB int, machine string) {
	t.Helper()
	want := compute.VolumeState{Name: name, SizeGB: sizeGB, Machine: machine}
	if got, err := v.Volume(bg, name); err != nil || got != want {
		t.Fatalf("Volume(%s) = %+v, %v; want %+v", name, got, err, want)
	}
}

// wantGone checks that a volume does not exist.
func wantGone(t *testing.T, v compute.Volumes, name string) {
	t.Helper()
	if got, err := v.Volume(bg, name); !errors.Is(err, compute.ErrVolumeNotFound) {
		t.Fatalf("Volume(%s) = %+v, %v; want ErrVolumeNotFound", name, got, err)
	}
}

// must fails the test on err.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func (s *volumeSuite) createEachFormat(t *testing.T) {
	_, v := s.driver(t)
	for _, format := range []string{"ext4", "xfs", ""} {
		spec := s.volume(t, v, format)
		wantVolume(t, v, spec.Name, spec.SizeGB, "")
		// A repeat with its key (a resumed job) is no error and no second volume.
		must(t, "repeated CreateVolume", v.CreateVolume(bg, "create-"+spec.Name, spec))
		wantVolume(t, v, spec.Name, spec.SizeGB, "")
	}
}

// attachRunning: a hot-plug, seen by the guest and mounted; a detach, after which the
// guest sees nothing; each key applied once.
func (s *volumeSuite) attachRunning(t *testing.T) {
	d, v := s.driver(t)
	m := s.machine(t, d)
	spec := s.volume(t, v, "ext4")
	must(t, "AttachVolume", v.AttachVolume(bg, "a1", m, spec, true))
	wantVolume(t, v, spec.Name, spec.SizeGB, m)
	s.seesMounted(t, d, m, spec)
	must(t, "repeated AttachVolume", v.AttachVolume(bg, "a1", m, spec, true))
	must(t, "AttachVolume to the machine it is attached to", v.AttachVolume(bg, "a2", m, spec, true))
	wantVolume(t, v, spec.Name, spec.SizeGB, m)

	must(t, "DetachVolume", v.DetachVolume(bg, "a3", m, spec.Name, compute.VolumeDetachTimeout))
	wantVolume(t, v, spec.Name, spec.SizeGB, "")
	s.seesNot(t, d, m, spec)
	must(t, "DetachVolume of a detached volume", v.DetachVolume(bg, "a4", m, spec.Name, compute.VolumeDetachTimeout))
	// A key applied once is not applied again: the first attach, repeated after the
	// detach, leaves the volume detached; the detach, repeated after a new attach,
	// leaves it attached.
	must(t, "repeat of the first attach", v.AttachVolume(bg, "a1", m, spec, true))
	wantVolume(t, v, spec.Name, spec.SizeGB, "")
	must(t, "attach again", v.AttachVolume(bg, "a5", m, spec, true))
	must(t, "repeat of the detach", v.DetachVolume(bg, "a3", m, spec.Name, compute.VolumeDetachTimeout))
	wantVolume(t, v, spec.Name, spec.SizeGB, m)
	s.seesMounted(t, d, m, spec)
}

// attachStopped: a stopped machine's guest sees the volume at its next boot, and
// at every boot after; a detach from a stopped machine.
func (s *volumeSuite) attachStopped(t *testing.T) {
	d, v := s.driver(t)
	m := s.machine(t, d)
	spec := s.volume(t, v, "xfs")
	must(t, "Stop", d.Stop(bg, "s1", m))
	must(t, "AttachVolume", v.AttachVolume(bg, "s2", m, spec, true))
	wantVolume(t, v, spec.Name, spec.SizeGB, m)
	must(t, "Start", d.Start(bg, "s3", m))
	wantVolume(t, v, spec.Name, spec.SizeGB, m)
	s.seesMounted(t, d, m, spec)
	must(t, "Reset", d.Reset(bg, "s4", m))
	wantVolume(t, v, spec.Name, spec.SizeGB, m)
	s.seesMounted(t, d, m, spec)

	must(t, "Stop", d.Stop(bg, "s5", m))
	must(t, "DetachVolume", v.DetachVolume(bg, "s6", m, spec.Name, compute.VolumeDetachTimeout))
	wantVolume(t, v, spec.Name, spec.SizeGB, "")
	must(t, "Start", d.Start(bg, "s7", m))
	s.seesNot(t, d, m, spec)
}

// notMounted: a volume attached without automount, and one without a filesystem, are
// disks the guest sees and does not mount; two volumes on one machine are two disks.
func (s *volumeSuite) notMounted(t *testing.T) {
	d, v := s.driver(t)
	m := s.machine(t, d)
	plain := s.volume(t, v, "ext4")
	bare := s.volume(t, v, "")
	must(t, "AttachVolume without automount", v.AttachVolume(bg, "n1", m, plain, false))
	must(t, "AttachVolume of a volume without a filesystem", v.AttachVolume(bg, "n2", m, bare, true))
	wantVolume(t, v, plain.Name, plain.SizeGB, m)
	wantVolume(t, v, bare.Name, bare.SizeGB, m)
	s.sees(t, d, m, func(g Guest) error {
		a, b := diskOf(g, plain), diskOf(g, bare)
		switch {
		case a == nil || b == nil:
			return fmt.Errorf("two volumes attached, disks %+v", g.Disks)
		case a.Name == b.Name:
			return fmt.Errorf("two volumes share the disk %s", a.Name)
		case mountOf(g, plain) != nil || mountOf(g, bare) != nil:
			return fmt.Errorf("mounted what automount did not ask, or nothing to mount: %+v", g.Mounts)
		}
		return nil
	})
}

// snapshots: a snapshot holds no volume (docs/volumes.md, Snapshots). A running
// machine with a volume attached is not snapshotted, with or without its memory
// (ErrFailed); stopped, it is, the volume left attached; restored from it, the
// machine keeps the volume, mounted in the guest once it runs.
func (s *volumeSuite) snapshots(t *testing.T) {
	d, v := s.driver(t)
	m := s.machine(t, d)
	spec := s.volume(t, v, "ext4")
	must(t, "AttachVolume", v.AttachVolume(bg, "p1", m, spec, true))
	for _, memory := range []bool{false, true} {
		if _, err := d.Snapshot(bg, fmt.Sprintf("p2-%v", memory), m, fmt.Sprintf("running-%v", memory), memory); !errors.Is(err, compute.ErrFailed) {
			t.Errorf("Snapshot (memory %v) of a running machine with a volume: %v, want ErrFailed", memory, err)
		}
	}
	must(t, "Stop", d.Stop(bg, "p3", m))
	if _, err := d.Snapshot(bg, "p4", m, "stopped", false); err != nil {
		t.Fatalf("Snapshot of a stopped machine with a volume: %v", err)
	}
	wantVolume(t, v, spec.Name, spec.SizeGB, m)
	must(t, "Restore", d.Restore(bg, "p5", m, "stopped", compute.StateRunning))
	wantVolume(t, v, spec.Name, spec.SizeGB, m)
	s.seesMounted(t, d, m, spec)
}

// attachedElsewhere: a volume attached to a machine is not attached to another, and
// a detach naming the other leaves it.
func (s *volumeSuite) attachedElsewhere(t *testing.T) {
	d, v := s.driver(t)
	a, b := s.machine(t, d), s.machine(t, d)
	spec := s.volume(t, v, "ext4")
	must(t, "AttachVolume", v.AttachVolume(bg, "e1", a, spec, false))
	if err := v.AttachVolume(bg, "e2", b, spec, false); !errors.Is(err, compute.ErrFailed) {
		t.Fatalf("AttachVolume of a volume attached to another machine: %v, want ErrFailed", err)
	}
	wantVolume(t, v, spec.Name, spec.SizeGB, a)
	must(t, "DetachVolume from a machine it is not attached to", v.DetachVolume(bg, "e3", b, spec.Name, compute.VolumeDetachTimeout))
	wantVolume(t, v, spec.Name, spec.SizeGB, a)
}

// resize grows a volume detached, attached to a running machine (whose guest sees
// the new size at once) and attached to a stopped one; a smaller size leaves it.
func (s *volumeSuite) resize(t *testing.T) {
	d, v := s.driver(t)
	size := s.opts.SizeGB
	spec := s.volume(t, v, "ext4")
	must(t, "ResizeVolume detached", v.ResizeVolume(bg, "r1", spec.Name, size+1))
	wantVolume(t, v, spec.Name, size+1, "")
	must(t, "ResizeVolume smaller", v.ResizeVolume(bg, "r2", spec.Name, size))
	wantVolume(t, v, spec.Name, size+1, "")
	must(t, "ResizeVolume to its size", v.ResizeVolume(bg, "r3", spec.Name, size+1))
	wantVolume(t, v, spec.Name, size+1, "")

	m := s.machine(t, d)
	must(t, "AttachVolume", v.AttachVolume(bg, "r4", m, spec, true))
	spec.SizeGB = size + 1
	s.seesMounted(t, d, m, spec)
	must(t, "ResizeVolume attached to a running machine", v.ResizeVolume(bg, "r5", spec.Name, size+2))
	wantVolume(t, v, spec.Name, size+2, m)
	spec.SizeGB = size + 2
	s.seesMounted(t, d, m, spec)

	must(t, "Stop", d.Stop(bg, "r6", m))
	must(t, "ResizeVolume attached to a stopped machine", v.ResizeVolume(bg, "r7", spec.Name, size+3))
	wantVolume(t, v, spec.Name, size+3, m)
	must(t, "Start", d.Start(bg, "r8", m))
	spec.SizeGB = size + 3
	s.seesMounted(t, d, m, spec)
}

// delete: not while attached; a detached volume goes, and an absent one is no error.
func (s *volumeSuite) delete(t *testing.T) {
	d, v := s.driver(t)
	m := s.machine(t, d)
	spec := s.volume(t, v, "ext4")
	must(t, "AttachVolume", v.AttachVolume(bg, "d1", m, spec, false))
	if err := v.DeleteVolume(bg, "d2", spec.Name); !errors.Is(err, compute.ErrFailed) {
		t.Fatalf("DeleteVolume of an attached volume: %v, want ErrFailed", err)
	}
	wantVolume(t, v, spec.Name, spec.SizeGB, m)
	must(t, "DetachVolume", v.DetachVolume(bg, "d3", m, spec.Name, compute.VolumeDetachTimeout))
	must(t, "DeleteVolume", v.DeleteVolume(bg, "d4", spec.Name))
	wantGone(t, v, spec.Name)
	must(t, "repeated DeleteVolume", v.DeleteVolume(bg, "d4", spec.Name))
	must(t, "DeleteVolume of a deleted volume", v.DeleteVolume(bg, "d5", spec.Name))
	must(t, "DeleteVolume of a volume that never existed", v.DeleteVolume(bg, "d6", compute.VolumeName(s.nextID+1000)))
	// The creation's key, repeated, does not make the volume again.
	must(t, "repeat of the creation", v.CreateVolume(bg, "create-"+spec.Name, spec))
	wantGone(t, v, spec.Name)
}

// destroyDetaches: volumes outlive machines. A machine destroyed leaves its volumes,
// detached, for another machine.
func (s *volumeSuite) destroyDetaches(t *testing.T) {
	d, v := s.driver(t)
	m := s.machine(t, d)
	spec := s.volume(t, v, "ext4")
	must(t, "AttachVolume", v.AttachVolume(bg, "x1", m, spec, true))
	must(t, "Destroy", d.Destroy(bg, "x2", m))
	wantVolume(t, v, spec.Name, spec.SizeGB, "")
	must(t, "DetachVolume from the destroyed machine", v.DetachVolume(bg, "x3", m, spec.Name, compute.VolumeDetachTimeout))
	other := s.machine(t, d)
	must(t, "AttachVolume to another machine", v.AttachVolume(bg, "x4", other, spec, true))
	wantVolume(t, v, spec.Name, spec.SizeGB, other)
	s.seesMounted(t, d, other, spec)
	must(t, "DetachVolume", v.DetachVolume(bg, "x5", other, spec.Name, compute.VolumeDetachTimeout))
	must(t, "DeleteVolume", v.DeleteVolume(bg, "x6", spec.Name))
	wantGone(t, v, spec.Name)
}

func (s *volumeSuite) unknownNames(t *testing.T) {
	d, v := s.driver(t)
	m := s.machine(t, d)
	spec := s.volume(t, v, "ext4")
	absent := compute.VolumeSpec{Name: compute.VolumeName(s.nextID + 1000), ID: s.nextID + 1000, LocationID: s.opts.LocationID, SizeGB: 1}
	for _, c := range []struct {
		what string
		err  error
		want error
	}{
		{"Volume", func() error { _, err := v.Volume(bg, absent.Name); return err }(), compute.ErrVolumeNotFound},
		{"AttachVolume of an absent volume", v.AttachVolume(bg, "u1", m, absent, false), compute.ErrVolumeNotFound},
		{"DetachVolume of an absent volume", v.DetachVolume(bg, "u2", m, absent.Name, time.Second), compute.ErrVolumeNotFound},
		{"ResizeVolume of an absent volume", v.ResizeVolume(bg, "u3", absent.Name, 2), compute.ErrVolumeNotFound},
		{"AttachVolume to an absent machine", v.AttachVolume(bg, "u4", "server-absent", spec, false), compute.ErrNotFound},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.what, c.err, c.want)
		}
	}
	wantVolume(t, v, spec.Name, spec.SizeGB, "")
}

func (s *volumeSuite) cancelledContext(t *testing.T) {
	_, v := s.driver(t)
	ctx, cancel := context.WithCancel(bg)
	cancel()
	spec := compute.VolumeSpec{Name: compute.VolumeName(s.nextID), ID: s.nextID, LocationID: s.opts.LocationID, SizeGB: 1, Format: "ext4"}
	s.nextID++
	if err := v.CreateVolume(ctx, "c", spec); err == nil {
		t.Fatal("CreateVolume with a cancelled context succeeded")
	}
}

// seesMounted checks, when the suite has a GuestView, that the guest of m sees spec's
// volume as its disk, of spec's size, mounted at its mount point as its filesystem.
func (s *volumeSuite) seesMounted(t *testing.T, d compute.Driver, m string, spec compute.VolumeSpec) {
	t.Helper()
	s.sees(t, d, m, func(g Guest) error {
		disk := diskOf(g, spec)
		if disk == nil {
			return fmt.Errorf("no disk of serial %d: %+v", spec.ID, g.Disks)
		}
		if disk.Vendor != "BERTH" || disk.Model != "Volume" || disk.SizeBytes != int64(spec.SizeGB)<<30 {
			return fmt.Errorf("disk %+v; want vendor BERTH, model Volume, %d GiB", *disk, spec.SizeGB)
		}
		mount := mountOf(g, spec)
		if mount == nil {
			return fmt.Errorf("nothing mounted at %s: %+v", compute.VolumeMountPoint(spec.ID), g.Mounts)
		}
		if mount.FSType != spec.Format || (mount.Source != compute.VolumeDevice(spec.ID) && mount.Source != "/dev/"+disk.Name) {
			return fmt.Errorf("mount %+v; want %s of %s (%s)", *mount, spec.Format, compute.VolumeDevice(spec.ID), disk.Name)
		}
		return nil
	})
}

// seesNot checks, when the suite has a GuestView, that the guest of m sees neither
// the disk of spec's volume nor its mount.
func (s *volumeSuite) seesNot(t *testing.T, d compute.Driver, m string, spec compute.VolumeSpec) {
	t.Helper()
	s.sees(t, d, m, func(g Guest) error {
		if disk, mount := diskOf(g, spec), mountOf(g, spec); disk != nil || mount != nil {
			return fmt.Errorf("the guest still has volume %d: disk %+v, mount %+v", spec.ID, disk, mount)
		}
		return nil
	})
}

// sees waits, when the suite has a GuestView, until what the guest of m sees passes
// check, for up to Settle.
func (s *volumeSuite) sees(t *testing.T, d compute.Driver, m string, check func(Guest) error) {
	t.Helper()
	if s.opts.GuestView == nil {
		return
	}
	deadline := time.Now().Add(s.opts.Settle)
	for {
		g, err := s.opts.GuestView(bg, d, m)
		if err == nil {
			err = check(g)
		}
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("guest of %s after %v: %v", m, s.opts.Settle, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// diskOf is the guest's disk of spec's volume (its serial), nil when none.
func diskOf(g Guest, spec compute.VolumeSpec) *GuestDisk {
	for i, disk := range g.Disks {
		if disk.Serial == strconv.FormatInt(spec.ID, 10) {
			return &g.Disks[i]
		}
	}
	return nil
}

// mountOf is what the guest mounted at spec's volume's mount point, nil when nothing.
func mountOf(g Guest, spec compute.VolumeSpec) *GuestMount {
	for i, mount := range g.Mounts {
		if mount.Target == compute.VolumeMountPoint(spec.ID) {
			return &g.Mounts[i]
		}
	}
	return nil
}
