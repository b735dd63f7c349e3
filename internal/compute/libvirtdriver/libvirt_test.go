package libvirtdriver_test

import (
	"context"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/computetest"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/compute/libvirtdriver/libvirttest"
	"github.com/berthhq/berth/internal/store/sqlstore"
)

func open(t *testing.T) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.OpenSQLite(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestConformance runs the shared driver suite against real QEMU guests (TCG): the
// same suite as the simulated driver, given time for a guest to boot before it shows
// network use or obeys ACPI (on a loaded 2-CPU machine a TCG boot takes up to a minute).
func TestConformance(t *testing.T) {
	t.Parallel() // the two guests' tests share the host, not their machines
	e := libvirttest.Require(t)
	computetest.ExerciseWith(t, computetest.Options{Settle: 3 * time.Minute, ShutdownTimeout: 3 * time.Minute}, func(t *testing.T) compute.Driver {
		db := open(t)
		d := libvirtdriver.New(db.WriteDB(), nil, db.Rebind, libvirtdriver.Options{Prefix: e.Prefix, MaxMemoryMB: 256, Poll: 100 * time.Millisecond})
		libvirttest.Setup(t, e, d, "10.77.0.100", "10.77.0.149")
		return d
	})
}
