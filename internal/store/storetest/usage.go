package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// usageCounts: the servers, volumes (and their GB) and snapshots Usage reports follow
// every change of their rows, as the store keeps them (triggers, not a count at each
// read): a creation, a deletion (deleted_at), a resize, a rollback, a sandbox
// reset; and never another account's.
func usageCounts(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	s, a, b := twoAccounts(t, open, "usage", now)
	inTx(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, catalog()) })
	check := func(step string, acct int64, want hosting.Quotas) {
		t.Helper()
		u, err := s.Usage(ctx, acct, now)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		got := hosting.Quotas{Servers: u.Servers, Volumes: u.Volumes, VolumeGB: u.VolumeGB, Snapshots: u.Snapshots}
		if got != want {
			t.Errorf("%s: account %d holds %+v, want %+v", step, acct, got, want)
		}
	}
	server := func(tx store.Tx, acct int64, name string) (int64, error) {
		return tx.CreateServer(ctx, hosting.Server{AccountID: acct, Name: name, DisplayName: name, Status: hosting.StatusRunning,
			LocationID: 1, PlanID: 1, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, CreatedAt: now})
	}
	volume := func(tx store.Tx, acct int64, name string, gb int) (int64, error) {
		return tx.CreateVolume(ctx, hosting.Volume{AccountID: acct, Name: name, SizeGB: gb, LocationID: 1, Format: "ext4",
			Status: hosting.VolumeAvailable, CreatedAt: now})
	}
	check("a new account", a, hosting.Quotas{})

	var srv [3]int64
	var vol [2]int64
	var snap int64
	inTx(t, s, func(tx store.Tx) error {
		var err error
		for i, name := range []string{"server-use01", "server-use02", "server-use03"} {
			if srv[i], err = server(tx, a, name); err != nil {
				return err
			}
		}
		if _, err = server(tx, b, "server-use04"); err != nil {
			return err
		}
		if vol[0], err = volume(tx, a, "data", 10); err != nil {
			return err
		}
		if vol[1], err = volume(tx, a, "logs", 25); err != nil {
			return err
		}
		snap, err = tx.CreateSnapshot(ctx, hosting.Snapshot{AccountID: a, ServerID: srv[0], Name: "before", Status: hosting.SnapshotCreating, CreatedAt: now})
		return err
	})
	check("created", a, hosting.Quotas{Servers: 3, Volumes: 2, VolumeGB: 35, Snapshots: 1})
	check("the other account", b, hosting.Quotas{Servers: 1})

	// A rolled back transaction counts nothing.
	undo := errors.New("undo")
	if err := s.InTx(ctx, func(tx store.Tx) error {
		if _, err := server(tx, a, "server-use05"); err != nil {
			return err
		}
		if err := tx.SetVolumeSize(ctx, vol[0], 100); err != nil {
			return err
		}
		if err := tx.DeleteServer(ctx, srv[1], now); err != nil {
			return err
		}
		return undo
	}); !errors.Is(err, undo) {
		t.Fatalf("rolled back transaction: %v", err)
	}
	check("after a rollback", a, hosting.Quotas{Servers: 3, Volumes: 2, VolumeGB: 35, Snapshots: 1})

	inTx(t, s, func(tx store.Tx) error {
		if err := tx.SetVolumeSize(ctx, vol[0], 40); err != nil {
			return err
		}
		if err := tx.DeleteServer(ctx, srv[1], now); err != nil {
			return err
		}
		return tx.DeleteSnapshot(ctx, snap, now)
	})
	check("a resize and two deletions", a, hosting.Quotas{Servers: 2, Volumes: 2, VolumeGB: 65, Snapshots: 0})
	// A second deletion of the same row changes nothing: the row is gone already.
	if err := s.InTx(ctx, func(tx store.Tx) error { return tx.DeleteServer(ctx, srv[1], now) }); err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleting a deleted server: %v", err)
	}
	inTx(t, s, func(tx store.Tx) error {
		if err := tx.SetVolumeSize(ctx, vol[1], 30); err != nil {
			return err
		}
		return tx.DeleteVolume(ctx, vol[1], now)
	})
	check("a volume resized and deleted", a, hosting.Quotas{Servers: 2, Volumes: 1, VolumeGB: 40})
	// A deleted volume's row may still change (its size, as in the volumes test):
	// it is not counted again.
	inTx(t, s, func(tx store.Tx) error { return tx.SetVolumeSize(ctx, vol[1], 50) })
	check("a deleted volume's row changed", a, hosting.Quotas{Servers: 2, Volumes: 1, VolumeGB: 40})

	inTx(t, s, func(tx store.Tx) error { _, err := tx.ResetAccount(ctx, a, now); return err })
	check("after a sandbox reset", a, hosting.Quotas{})
	check("the other account after the reset", b, hosting.Quotas{Servers: 1})
	inTx(t, s, func(tx store.Tx) error {
		_, err := server(tx, a, "server-use06")
		return err
	})
	check("a server after the reset", a, hosting.Quotas{Servers: 1})
	if u, err := s.Usage(ctx, 1<<40, now); err != nil || u != (hosting.Quotas{}) {
		t.Errorf("usage of no account: %+v, %v; want nothing held", u, err)
	}
}
