package libvirtdriver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/computetest"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/compute/libvirtdriver/libvirttest"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

// TestConformance runs the shared driver suite against real QEMU guests (TCG here):
// the same suite as the simulated driver, given time for a guest to boot before it
// shows network use or obeys ACPI. That time derives from a boot measured first, in
// the same run (libvirttest.RunPace), so a loaded machine gets longer deadlines.
func TestConformance(t *testing.T) {
	t.Parallel() // the guests' tests share the host, not their machines
	e := libvirttest.Require(t)
	pace := libvirttest.RunPace()
	{
		db := sqlstoretest.SQLite(t, t.TempDir(), libvirtdriver.Storage())
		d := libvirtdriver.New(db.WriteDB(), nil, db.Rebind, libvirtdriver.Options{Prefix: e.Prefix + "pace-", MaxMemoryMB: 256, Poll: 100 * time.Millisecond})
		libvirttest.Setup(t, e, d, "10.77.0.220", "10.77.0.221")
		libvirttest.MeasureBoot(t, d, e.Prefix+"pace-", pace)
	}
	computetest.ExerciseWith(t, computetest.Options{Settle: pace.Boots(1), ShutdownTimeout: pace.Boots(1)}, func(t *testing.T) compute.Driver {
		db := sqlstoretest.SQLite(t, t.TempDir(), libvirtdriver.Storage())
		d := libvirtdriver.New(db.WriteDB(), nil, db.Rebind, libvirtdriver.Options{Prefix: e.Prefix, MaxMemoryMB: 256, Poll: 100 * time.Millisecond})
		libvirttest.Setup(t, e, d, "10.77.0.100", "10.77.0.149")
		return d
	})
}

// TestVolumeConformance runs the shared volume suite against real guests, with what
// each guest sees read through its serial console (guestView): the disk's identity
// and size, the automount by the hook of Berth's first-boot configuration (the test
// image's udev runs it as a distribution's would), the size after an online resize,
// the disk gone after a detach. Each subtest has a driver of its own, whose guests
// are destroyed as it ends; the run's volumes are deleted from the pool at the end.
func TestVolumeConformance(t *testing.T) {
	t.Parallel()
	e := libvirttest.Require(t)
	pace := libvirttest.RunPace()
	prefix := e.Prefix + "cv-"
	t.Cleanup(func() { deletePoolVolumes(t, e, prefix+"volume-") })
	{
		// Settle must cover a boot: measure one first.
		db := sqlstoretest.SQLite(t, t.TempDir(), libvirtdriver.Storage())
		d := libvirtdriver.New(db.WriteDB(), nil, db.Rebind, libvirtdriver.Options{Prefix: prefix + "pace-", MaxMemoryMB: 256, Poll: 100 * time.Millisecond})
		libvirttest.Setup(t, e, d, "10.77.0.2", "10.77.0.3")
		libvirttest.MeasureBoot(t, d, prefix+"pace-", pace)
	}
	opts := computetest.VolumeOptions{LocationID: 1, FirstID: 8001, SizeGB: 1, Settle: pace.Boots(2), GuestView: guestView(t, 30*time.Second)}
	computetest.ExerciseVolumes(t, opts, func(t *testing.T) compute.Driver {
		db := sqlstoretest.SQLite(t, t.TempDir(), libvirtdriver.Storage())
		d := libvirtdriver.New(db.WriteDB(), nil, db.Rebind, libvirtdriver.Options{Prefix: prefix, MaxMemoryMB: 256, Poll: 100 * time.Millisecond})
		libvirttest.Setup(t, e, d, "10.77.0.2", "10.77.0.9")
		if _, err := d.SetVolumePool(context.Background(), 1, e.Pool); err != nil {
			t.Fatal(err)
		}
		return d
	})
}

// deletePoolVolumes deletes the test pool's volumes whose names start with prefix.
func deletePoolVolumes(t *testing.T, e libvirttest.Env, prefix string) {
	l, err := libvirtdriver.Dial(e.URI)
	if err != nil {
		t.Errorf("cleanup: %v", err)
		return
	}
	defer l.Disconnect()
	pool, err := l.StoragePoolLookupByName(e.Pool)
	if err != nil {
		t.Errorf("cleanup: %v", err)
		return
	}
	_ = l.StoragePoolRefresh(pool, 0)
	vols, _, err := l.StoragePoolListAllVolumes(pool, 1, 0)
	if err != nil {
		t.Errorf("cleanup: %v", err)
	}
	for _, v := range vols {
		if strings.HasPrefix(v.Name, prefix) {
			if err := l.StorageVolDelete(v, 0); err != nil {
				t.Errorf("cleanup of %s: %v", v.Name, err)
			}
		}
	}
}
