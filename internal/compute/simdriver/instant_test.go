package simdriver_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/simdriver"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

// TestPlaceAndRemoveAtOnce: a machine placed in a transaction is there in its state
// once the transaction commits, with addresses as a created one has, and works as
// any machine; a machine removed in one is gone at once with its snapshots; a rolled
// back transaction leaves nothing.
func TestPlaceAndRemoveAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir(), simdriver.Storage())
	// A scale at which every transition takes a minute: nothing here waits for one.
	d := simdriver.New(db.WriteDB(), 2, db.Rebind)
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
	spec := func(name string) compute.Spec {
		return compute.Spec{Name: name, VCPUs: 2, MemoryMB: 2048, DiskGB: 40, Image: "image-1"}
	}
	var up, down compute.Machine
	if err := in(func(tx *sql.Tx) error {
		var err error
		if up, err = d.PlaceTx(ctx, tx, spec("server-place1"), compute.StateRunning); err != nil {
			return err
		}
		down, err = d.PlaceTx(ctx, tx, spec("server-place2"), compute.StateStopped)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []compute.Machine{up, down} {
		got, err := d.Machine(ctx, want.Name)
		if err != nil || got != want || got.IPv4 == "" || got.IPv6 == "" || got.VCPUs != 2 || got.DiskGB != 40 {
			t.Errorf("Machine(%s) = %+v, %v; want %+v as placed, with its addresses", want.Name, got, err, want)
		}
	}
	if up.State != compute.StateRunning || down.State != compute.StateStopped || up.IPv4 == down.IPv4 {
		t.Errorf("placed %+v and %+v", up, down)
	}
	// Created through the driver, a machine gets the next addresses.
	fast := simdriver.New(db.WriteDB(), 0.0001, db.Rebind)
	if m, err := fast.Create(ctx, "k", spec("server-place3")); err != nil || m.IPv4 == up.IPv4 || m.IPv4 == down.IPv4 {
		t.Errorf("created after placed ones: %+v %v", m, err)
	}
	if err := fast.Stop(ctx, "stop", up.Name); err != nil {
		t.Errorf("Stop of a placed running machine: %v", err)
	}
	if err := fast.Start(ctx, "start", down.Name); err != nil {
		t.Errorf("Start of a placed stopped machine: %v", err)
	}
	if _, err := fast.Snapshot(ctx, "snap", down.Name, "s1", false); err != nil {
		t.Fatal(err)
	}
	if err := in(func(tx *sql.Tx) error { _, err := d.PlaceTx(ctx, tx, spec(up.Name), compute.StateRunning); return err }); err == nil {
		t.Error("placing a name that has a machine succeeded")
	}
	if err := in(func(tx *sql.Tx) error {
		_, err := d.PlaceTx(ctx, tx, spec("server-place4"), compute.StateAbsent)
		return err
	}); err == nil {
		t.Error("placing an absent machine succeeded")
	}

	errRollback := errors.New("rollback")
	if err := in(func(tx *sql.Tx) error {
		if _, err := d.PlaceTx(ctx, tx, spec("server-place5"), compute.StateRunning); err != nil {
			return err
		}
		if err := d.RemoveTx(ctx, tx, []string{up.Name}); err != nil {
			return err
		}
		return errRollback
	}); !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
	if _, err := d.Machine(ctx, "server-place5"); !errors.Is(err, compute.ErrNotFound) {
		t.Errorf("machine placed in a rolled back transaction: %v", err)
	}
	if _, err := d.Machine(ctx, up.Name); err != nil {
		t.Errorf("machine removed in a rolled back transaction: %v", err)
	}

	if err := in(func(tx *sql.Tx) error { return d.RemoveTx(ctx, tx, []string{up.Name, down.Name, "server-nothing"}) }); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{up.Name, down.Name} {
		if _, err := d.Machine(ctx, name); !errors.Is(err, compute.ErrNotFound) {
			t.Errorf("removed machine %s: %v, want ErrNotFound at once", name, err)
		}
	}
	var snaps int
	if err := db.WriteDB().QueryRowContext(ctx, `SELECT COUNT(*) FROM sim_snapshots WHERE machine = ?`, down.Name).Scan(&snaps); err != nil || snaps != 0 {
		t.Errorf("snapshots of a removed machine: %d %v", snaps, err)
	}
	// Removing again, or a destroyed machine, is nothing.
	if err := in(func(tx *sql.Tx) error { return d.RemoveTx(ctx, tx, []string{up.Name}) }); err != nil {
		t.Error(err)
	}
	if err := fast.Destroy(ctx, "destroy", up.Name); err != nil {
		t.Errorf("Destroy of a removed machine: %v", err)
	}
}
