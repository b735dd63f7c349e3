package simdriver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/computetest"
	"github.com/berthhq/berth/internal/compute/simdriver"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	computetest.Exercise(t, func(t *testing.T) compute.Driver {
		db := sqlstoretest.SQLite(t, t.TempDir(), simdriver.Storage())
		return simdriver.New(db.WriteDB(), 0.0001, db.Rebind)
	})
}

// Machines outlive the driver: a new driver on the same database sees them, and a
// boot that was under way when the old one stopped still takes its time.
func TestMachinesPersist(t *testing.T) {
	t.Parallel()
	db := sqlstoretest.SQLite(t, t.TempDir(), simdriver.Storage())
	ctx := context.Background()
	// Create takes 3 s at this scale. A resumed Create must wait only for what is left
	// of the boot: with 2 s of it gone, well under the 3 s of a whole one, however
	// loaded the machine is.
	slow := simdriver.New(db.WriteDB(), 0.1, db.Rebind)
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := slow.Create(cctx, "k", compute.Spec{Name: "server-persist", VCPUs: 2, MemoryMB: 2048, DiskGB: 40}); err == nil {
		t.Fatal("Create returned before its boot time")
	}
	again := simdriver.New(db.WriteDB(), 0.1, db.Rebind)
	if m, err := again.Machine(ctx, "server-persist"); err != nil || m.State != compute.StateStopped {
		t.Fatalf("booting machine = %+v, %v; want it known and not yet running", m, err)
	}
	time.Sleep(2 * time.Second)
	start := time.Now()
	m, err := again.Create(ctx, "k", compute.Spec{Name: "server-persist"})
	if err != nil || m.State != compute.StateRunning || m.VCPUs != 2 {
		t.Fatalf("resumed Create = %+v, %v", m, err)
	}
	if waited := time.Since(start); waited > 2500*time.Millisecond {
		t.Fatalf("resumed Create waited %v: it must wait only for what is left of the boot", waited)
	}
}

// TestCreateSteps: a creation failing at a step (CreateFault) leaves what the steps
// before made: nothing at the disk, the machine's row after it, which Destroy
// removes. A destroyed machine's name is not made again (compute.ErrFailed), as the
// libvirt driver refuses it: a repeated Create of a provisioning undone since must not
// bring its machine back.
func TestCreateSteps(t *testing.T) {
	t.Parallel()
	db := sqlstoretest.SQLite(t, t.TempDir(), simdriver.Storage())
	ctx := context.Background()
	d := simdriver.New(db.WriteDB(), 0.0001, db.Rebind)
	broken := errors.New("hypervisor broke")
	for _, step := range compute.CreateSteps {
		name := "server-" + step
		d.CreateFault = func(n, s string) error {
			if n == name && s == step {
				return broken
			}
			return nil
		}
		_, err := d.Create(ctx, "create", compute.Spec{Name: name, VCPUs: 1, MemoryMB: 512, DiskGB: 10})
		_, found := d.Machine(ctx, name)
		if want := step != "disk"; !errors.Is(err, broken) || (found == nil) != want {
			t.Errorf("Create failing at %s: %v; machine left: %v, want %v", step, err, found == nil, want)
		}
		if err := d.Destroy(ctx, "destroy", name); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Machine(ctx, name); !errors.Is(err, compute.ErrNotFound) {
			t.Errorf("after Destroy: %v, want not found", err)
		}
	}
	d.CreateFault = nil
	if _, err := d.Create(ctx, "create-again", compute.Spec{Name: "server-seed", VCPUs: 1, MemoryMB: 512, DiskGB: 10}); !errors.Is(err, compute.ErrFailed) {
		t.Errorf("Create of a destroyed name: %v, want compute.ErrFailed", err)
	}
	if _, err := d.Machine(ctx, "server-seed"); !errors.Is(err, compute.ErrNotFound) {
		t.Errorf("after a Create of a destroyed name: %v, want still not found", err)
	}
}
