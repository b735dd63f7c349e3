package libvirtdriver_test

import (
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
