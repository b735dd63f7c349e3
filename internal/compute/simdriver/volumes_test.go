package simdriver_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/computetest"
	"github.com/berthhq/berth/internal/compute/simdriver"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

// stores open a migrated store with the simulated driver's tables, on SQLite and on
// PostgreSQL (skipped without a test server).
var stores = []struct {
	name string
	open func(t *testing.T) *sqlstore.DB
}{
	{"sqlite", func(t *testing.T) *sqlstore.DB { return sqlstoretest.SQLite(t, t.TempDir(), simdriver.Storage()) }},
	{"postgres", func(t *testing.T) *sqlstore.DB { return sqlstoretest.Postgres(t, simdriver.Storage()) }},
}

// guestView is the suite's view of a simulated guest (simdriver.GuestDisks).
func guestView(ctx context.Context, d compute.Driver, machine string) (computetest.Guest, error) {
	disks, err := d.(*simdriver.Driver).GuestDisks(ctx, machine)
	var g computetest.Guest
	for _, disk := range disks {
		g.Disks = append(g.Disks, computetest.GuestDisk{Name: disk.Name, Vendor: disk.Vendor, Model: disk.Model, Serial: disk.Serial, SizeBytes: disk.SizeBytes})
		if disk.MountPoint != "" {
			g.Mounts = append(g.Mounts, computetest.GuestMount{Source: "/dev/" + disk.Name, Target: disk.MountPoint, FSType: disk.FSType})
		}
	}
	return g, err
}

func TestVolumeConformance(t *testing.T) {
	t.Parallel()
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			computetest.ExerciseVolumes(t, computetest.VolumeOptions{LocationID: 1, SizeGB: 10, GuestView: guestView}, func(t *testing.T) compute.Driver {
				db := s.open(t)
				return simdriver.New(db.WriteDB(), 0.0001, db.Rebind)
			})
		})
	}
}

// A volume call's duration lies in its span, the same for the same volume and key,
// and not the same for all: a repeat of a job's step waits for the same end.
func TestVolumeSpans(t *testing.T) {
	t.Parallel()
	for _, span := range []simdriver.Span{simdriver.VolumeCreateTime, simdriver.VolumeAttachTime, simdriver.VolumeDetachTime, simdriver.VolumeResizeTime} {
		seen := map[time.Duration]bool{}
		for _, name := range []string{"volume-1", "volume-2", "volume-3", "volume-4", "volume-5"} {
			got := span.Of(name, "key")
			if got < span.Min || got > span.Max || got != span.Of(name, "key") {
				t.Errorf("%+v.Of(%s) = %v, then %v", span, name, got, span.Of(name, "key"))
			}
			seen[got] = true
		}
		if len(seen) < 2 {
			t.Errorf("%+v: five volumes take the same %v", span, seen)
		}
	}
	if simdriver.VolumeCreateTime.Min != 2*time.Second || simdriver.VolumeCreateTime.Max != 5*time.Second ||
		simdriver.VolumeAttachTime.Max != 3*time.Second || simdriver.VolumeResizeTime.Max != 2*time.Second {
		t.Errorf("spans at scale 1 are not those of docs/drivers.md")
	}
}

// At scale 0.1 a creation takes 0.2–0.5 s; its repeat with the key, on a new driver
// as after a restart, returns at once; the volume is there for the new driver.
func TestVolumesTakeTheirTimeOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir(), simdriver.Storage())
	d := simdriver.New(db.WriteDB(), 0.1, db.Rebind)
	spec := compute.VolumeSpec{Name: "volume-7", ID: 7, LocationID: 1, SizeGB: 10, Format: "ext4"}
	start := time.Now()
	if err := d.CreateVolume(ctx, "create", spec); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Errorf("CreateVolume took %v at scale 0.1, want at least 0.2 s", took)
	}
	again := simdriver.New(db.WriteDB(), 0.1, db.Rebind)
	start = time.Now()
	if err := again.CreateVolume(ctx, "create", spec); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= 200*time.Millisecond {
		t.Errorf("a repeated CreateVolume took %v: it waits only for what is left", took)
	}
	if v, err := again.Volume(ctx, "volume-7"); err != nil || v.SizeGB != 10 {
		t.Errorf("Volume on a new driver = %+v, %v", v, err)
	}
}

// A guest that holds its volume (GuestHolds) keeps it: the detach waits its timeout
// at the driver's scale and answers ErrDetachTimeout, the volume still attached; it
// repeats so with the same key. Stopped, the machine lets it go; so does a guest that
// no longer holds it.
func TestGuestHoldsAVolume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir(), simdriver.Storage())
	d := simdriver.New(db.WriteDB(), 0.001, db.Rebind)
	var holds atomic.Bool
	holds.Store(true)
	d.GuestHolds = func(machine, volume string) bool { return holds.Load() && volume == "volume-1" }
	for _, name := range []string{"server-h1", "server-h2"} {
		if _, err := d.Create(ctx, "create", compute.Spec{Name: name, VCPUs: 1, MemoryMB: 512, DiskGB: 10}); err != nil {
			t.Fatal(err)
		}
	}
	for i, m := range []string{"server-h1", "server-h2"} {
		spec := compute.VolumeSpec{Name: compute.VolumeName(int64(i + 1)), ID: int64(i + 1), LocationID: 1, SizeGB: 10, Format: "ext4"}
		if err := d.CreateVolume(ctx, "create", spec); err != nil {
			t.Fatal(err)
		}
		if err := d.AttachVolume(ctx, "attach", m, spec, true); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		start := time.Now()
		err := d.DetachVolume(ctx, "detach", "server-h1", "volume-1", 30*time.Second)
		// The driver's clock keeps whole milliseconds: its deadline may fall up to
		// one before start + 30 ms.
		if !errors.Is(err, compute.ErrDetachTimeout) || time.Since(start) < 29*time.Millisecond {
			t.Fatalf("detach of a held volume: %v after %v; want ErrDetachTimeout after 30 s at scale 0.001", err, time.Since(start))
		}
		if v, err := d.Volume(ctx, "volume-1"); err != nil || v.Machine != "server-h1" {
			t.Fatalf("held volume after the timeout: %+v, %v; want it attached", v, err)
		}
	}
	if err := d.DetachVolume(ctx, "detach", "server-h2", "volume-2", 30*time.Second); err != nil {
		t.Errorf("detach of a volume the guest does not hold: %v", err)
	}
	if err := d.Stop(ctx, "stop", "server-h1"); err != nil {
		t.Fatal(err)
	}
	if err := d.DetachVolume(ctx, "detach-stopped", "server-h1", "volume-1", 30*time.Second); err != nil {
		t.Errorf("detach from a stopped machine: %v", err)
	}
	if err := d.AttachVolume(ctx, "attach-again", "server-h2", compute.VolumeSpec{Name: "volume-1", ID: 1}, true); err != nil {
		t.Fatal(err)
	}
	holds.Store(false)
	if err := d.DetachVolume(ctx, "detach-released", "server-h2", "volume-1", 30*time.Second); err != nil {
		t.Errorf("detach once the guest releases: %v", err)
	}
}

// The console shows the volumes as a kernel shows SCSI disks: at the boot, when one
// is hot-plugged (and mounted), resized and removed.
func TestVolumeConsole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir(), simdriver.Storage())
	d := simdriver.New(db.WriteDB(), 0.0001, db.Rebind)
	if _, err := d.Create(ctx, "create", compute.Spec{Name: "server-vc1", VCPUs: 1, MemoryMB: 512, DiskGB: 10, Image: "debian-12"}); err != nil {
		t.Fatal(err)
	}
	first := compute.VolumeSpec{Name: "volume-41", ID: 41, LocationID: 1, SizeGB: 10, Format: "ext4"}
	second := compute.VolumeSpec{Name: "volume-42", ID: 42, LocationID: 1, SizeGB: 20, Format: "xfs"}
	for _, spec := range []compute.VolumeSpec{first, second} {
		if err := d.CreateVolume(ctx, "create", spec); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.AttachVolume(ctx, "attach", "server-vc1", first, false); err != nil {
		t.Fatal(err)
	}
	con, err := d.Console(ctx, "server-vc1")
	if err != nil {
		t.Fatal(err)
	}
	defer con.Close()
	out := computetest.Follow(con)
	at := out.Wait(t, 0, "sd 0:0:0:0: [sda] Attached SCSI disk", 5*time.Second)
	at = out.Wait(t, at, "login: ", 5*time.Second)
	if boot := out.Text()[:at]; strings.Contains(boot, "mounted /dev/disk") {
		t.Errorf("boot mounted a volume attached without automount:\n%s", boot)
	}
	if err := d.AttachVolume(ctx, "attach", "server-vc1", second, true); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"scsi 0:0:0:1: Direct-Access     BERTH    Volume           2.5+ PQ: 0 ANSI: 5",
		"sd 0:0:0:1: [sdb] 41943040 512-byte logical blocks: (21.5 GB/20.0 GiB)",
		"sd 0:0:0:1: [sdb] Attached SCSI disk",
		"mounted /dev/disk/by-id/scsi-0BERTH_Volume_42 on /mnt/volume-42 type xfs",
	} {
		at = out.Wait(t, at, line, 5*time.Second)
	}
	if err := d.ResizeVolume(ctx, "resize", "volume-42", 30); err != nil {
		t.Fatal(err)
	}
	at = out.Wait(t, at, "sdb: detected capacity change from 41943040 to 62914560", 5*time.Second)
	if err := d.DetachVolume(ctx, "detach", "server-vc1", "volume-42", time.Minute); err != nil {
		t.Fatal(err)
	}
	at = out.Wait(t, at, "unmounted /mnt/volume-42", 5*time.Second)
	out.Wait(t, at, "sd 0:0:0:1: [sdb] Synchronizing SCSI cache", 5*time.Second)
}

// A machine removed at once (a sandbox's reset) leaves its volumes, detached.
func TestRemoveTxDetaches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir(), simdriver.Storage())
	d := simdriver.New(db.WriteDB(), 0.0001, db.Rebind)
	if _, err := d.Create(ctx, "create", compute.Spec{Name: "server-rm1", VCPUs: 1, MemoryMB: 512, DiskGB: 10}); err != nil {
		t.Fatal(err)
	}
	spec := compute.VolumeSpec{Name: "volume-9", ID: 9, LocationID: 1, SizeGB: 10}
	if err := d.CreateVolume(ctx, "create", spec); err != nil {
		t.Fatal(err)
	}
	if err := d.AttachVolume(ctx, "attach", "server-rm1", spec, false); err != nil {
		t.Fatal(err)
	}
	tx, err := db.WriteDB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.RemoveTx(ctx, tx, []string{"server-rm1"}); err != nil {
		_ = tx.Rollback()
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if v, err := d.Volume(ctx, "volume-9"); err != nil || v != (compute.VolumeState{Name: "volume-9", SizeGB: 10}) {
		t.Errorf("volume of a removed machine: %+v, %v; want it detached", v, err)
	}
}

// A volume placed in a transaction is there at once, attached as asked and seen by
// the guest, and works as any volume; volumes removed in one are gone at once,
// attached or not; a rolled back transaction leaves nothing.
func TestPlaceAndRemoveVolumesAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir(), simdriver.Storage())
	// A scale at which every change takes minutes: nothing here waits for one.
	d := simdriver.New(db.WriteDB(), 60, db.Rebind)
	in := func(fn func(tx *sql.Tx) error) error {
		tx, err := db.WriteDB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := fn(tx); err != nil {
			_ = tx.Rollback()
			return err
		}
		return tx.Commit()
	}
	attached := compute.VolumeSpec{Name: "volume-1", ID: 1, LocationID: 1, SizeGB: 10, Format: "ext4"}
	loose := compute.VolumeSpec{Name: "volume-2", ID: 2, LocationID: 1, SizeGB: 20}
	if err := in(func(tx *sql.Tx) error {
		if _, err := d.PlaceTx(ctx, tx, compute.Spec{Name: "server-pv1", VCPUs: 1, MemoryMB: 512, DiskGB: 10}, compute.StateRunning); err != nil {
			return err
		}
		if err := d.PlaceVolumeTx(ctx, tx, attached, "server-pv1", true); err != nil {
			return err
		}
		return d.PlaceVolumeTx(ctx, tx, loose, "", false)
	}); err != nil {
		t.Fatal(err)
	}
	if v, err := d.Volume(ctx, "volume-1"); err != nil || v != (compute.VolumeState{Name: "volume-1", SizeGB: 10, Machine: "server-pv1"}) {
		t.Errorf("placed attached volume = %+v, %v", v, err)
	}
	if v, err := d.Volume(ctx, "volume-2"); err != nil || v != (compute.VolumeState{Name: "volume-2", SizeGB: 20}) {
		t.Errorf("placed detached volume = %+v, %v", v, err)
	}
	disks, err := d.GuestDisks(ctx, "server-pv1")
	if err != nil || len(disks) != 1 || disks[0].Serial != "1" || disks[0].MountPoint != "/mnt/volume-1" {
		t.Errorf("guest of the placed machine sees %+v, %v; want volume 1 mounted", disks, err)
	}
	for _, bad := range []struct {
		spec    compute.VolumeSpec
		machine string
	}{{attached, ""}, {compute.VolumeSpec{Name: "volume-3", ID: 3, SizeGB: 10}, "server-none"}} {
		if err := in(func(tx *sql.Tx) error { return d.PlaceVolumeTx(ctx, tx, bad.spec, bad.machine, false) }); err == nil {
			t.Errorf("placed %s on %q", bad.spec.Name, bad.machine)
		}
	}
	errRollback := errors.New("rollback")
	if err := in(func(tx *sql.Tx) error {
		if err := d.RemoveVolumesTx(ctx, tx, []string{"volume-1"}); err != nil {
			return err
		}
		return errRollback
	}); !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
	if _, err := d.Volume(ctx, "volume-1"); err != nil {
		t.Errorf("volume removed in a rolled back transaction: %v", err)
	}
	if err := in(func(tx *sql.Tx) error {
		return d.RemoveVolumesTx(ctx, tx, []string{"volume-1", "volume-2", "volume-none"})
	}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"volume-1", "volume-2"} {
		if _, err := d.Volume(ctx, name); !errors.Is(err, compute.ErrVolumeNotFound) {
			t.Errorf("removed %s: %v, want ErrVolumeNotFound at once", name, err)
		}
	}
}
