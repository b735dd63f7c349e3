package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// volumes checks an account's volumes: read back as written, by id and by name,
// hidden from other accounts, names unique among the live ones, filtered by server,
// counted against the quotas, busy with one operation at a time (a volume's
// operation without a server among them), held by a server's deletion, and gone
// from view once deleted.
func volumes(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	in := func(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
		t.Helper()
		if err := s.InTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	s, a, b := twoAccounts(t, open, "vol", now)
	in(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, catalog()) })
	var srvID, volID, op, att int64
	in(t, s, func(tx store.Tx) error {
		var err error
		if srvID, err = tx.CreateServer(ctx, hosting.Server{AccountID: a, Name: "server-vol001", DisplayName: "db", Status: hosting.StatusRunning,
			LocationID: 1, PlanID: 1, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, CreatedAt: now}); err != nil {
			return err
		}
		volID, err = tx.CreateVolume(ctx, hosting.Volume{AccountID: a, Name: "pgdata", SizeGB: 20, LocationID: 1, Format: "ext4",
			Status: hosting.VolumeCreating, CreatedAt: now})
		return err
	})
	v, err := s.Volume(ctx, a, hosting.VolumeRef{Name: "pgdata"})
	if err != nil || v.ID != volID || v.SizeGB != 20 || v.Format != "ext4" || v.Status != hosting.VolumeCreating || v.ServerID != nil ||
		!v.CreatedAt.Equal(now) || v.Operation != nil {
		t.Fatalf("by name: %+v, %v", v, err)
	}
	if _, err := s.Volume(ctx, b, hosting.VolumeRef{ID: volID}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another account's volume: %v", err)
	}
	err = s.InTx(ctx, func(tx store.Tx) error {
		_, err := tx.CreateVolume(ctx, hosting.Volume{AccountID: a, Name: "pgdata", SizeGB: 10, LocationID: 1, Status: hosting.VolumeCreating, CreatedAt: now})
		return err
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("a second pgdata: %v", err)
	}
	in(t, s, func(tx store.Tx) error {
		_, err := tx.CreateVolume(ctx, hosting.Volume{AccountID: b, Name: "pgdata", SizeGB: 10, LocationID: 1, Status: hosting.VolumeCreating, CreatedAt: now})
		return err // another account may
	})

	// A volume's operation without a server, then one holding the server too.
	in(t, s, func(tx store.Tx) error {
		var err error
		op, err = tx.StartOperation(ctx, hosting.Operation{AccountID: a, VolumeID: &volID, Type: hosting.OpCreateVolume, StartedAt: now})
		return err
	})
	// Refused, its transaction is rolled back, as the core's always is then.
	err = s.InTx(ctx, func(tx store.Tx) error {
		_, err := tx.StartOperation(ctx, hosting.Operation{AccountID: a, VolumeID: &volID, ServerID: srvID, Type: hosting.OpAttachVolume,
			StartedAt: now})
		return err
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("a second operation of a busy volume: %v", err)
	}
	got, err := s.OperationAny(ctx, op)
	if err != nil || got.ServerID != 0 || got.VolumeID == nil || *got.VolumeID != volID || got.Type != hosting.OpCreateVolume {
		t.Errorf("the volume's operation: %+v, %v", got, err)
	}
	if v, _ := s.VolumeAny(ctx, volID); v.Operation == nil || v.Operation.ID != op {
		t.Errorf("the busy volume: %+v", v)
	}
	in(t, s, func(tx store.Tx) error {
		if err := tx.FinishOperation(ctx, op, hosting.OpSuccess, "", now); err != nil {
			return err
		}
		if err := tx.SetVolumeStatus(ctx, volID, hosting.VolumeAvailable); err != nil {
			return err
		}
		var err error
		att, err = tx.StartOperation(ctx, hosting.Operation{AccountID: a, VolumeID: &volID, ServerID: srvID, Type: hosting.OpAttachVolume,
			Automount: true, StartedAt: now})
		if err != nil {
			return err
		}
		o, err := tx.OperationAny(ctx, att)
		if err != nil || !o.Automount || o.ServerID != srvID {
			t.Errorf("the attachment: %+v, %v", o, err)
		}
		if srv, err := tx.ServerAny(ctx, srvID); err != nil || srv.Operation == nil || srv.Operation.ID != att {
			t.Errorf("its server is not busy with it: %+v, %v", srv.Operation, err)
		}
		if err := tx.FinishOperation(ctx, att, hosting.OpSuccess, "", now); err != nil {
			return err
		}
		return tx.SetVolumeServer(ctx, volID, &srvID)
	})
	if list, err := s.Volumes(ctx, a, store.VolumeFilter{ServerID: &srvID}); err != nil || len(list) != 1 || list[0].ID != volID {
		t.Errorf("the server's volumes: %+v, %v", list, err)
	}
	if u, err := s.Usage(ctx, a, now); err != nil || u.Volumes != 1 || u.VolumeGB != 20 {
		t.Errorf("usage: %+v, %v", u, err)
	}

	// A server's deletion holds its volumes until it ends.
	in(t, s, func(tx store.Tx) error {
		del, err := tx.StartOperation(ctx, hosting.Operation{AccountID: a, ServerID: srvID, Type: hosting.OpDelete, StartedAt: now})
		if err != nil {
			return err
		}
		if err := tx.HoldServerVolumes(ctx, srvID, del); err != nil {
			return err
		}
		if v, err := tx.VolumeAny(ctx, volID); err != nil || v.Operation == nil || v.Operation.ID != del {
			t.Errorf("held by the deletion: %+v, %v", v.Operation, err)
		}
		if err := tx.FinishOperation(ctx, del, hosting.OpSuccess, "", now); err != nil {
			return err
		}
		if err := tx.SetVolumeServer(ctx, volID, nil); err != nil {
			return err
		}
		if err := tx.SetVolumeSize(ctx, volID, 40); err != nil {
			return err
		}
		return tx.DeleteVolume(ctx, volID, now.Add(time.Hour))
	})
	if _, err := s.Volume(ctx, a, hosting.VolumeRef{ID: volID}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted volume: %v", err)
	}
	if v, err := s.VolumeAny(ctx, volID); err != nil || v.DeletedAt == nil || v.SizeGB != 40 || v.Operation != nil {
		t.Errorf("the deleted volume's row: %+v, %v", v, err)
	}
	if u, _ := s.Usage(ctx, a, now); u.Volumes != 0 || u.VolumeGB != 0 {
		t.Errorf("usage after the deletion: %+v", u)
	}
	volumeOperations(t, s, a, b, volID, srvID, []int64{att, op})
	in(t, s, func(tx store.Tx) error { // its name is free again
		_, err := tx.CreateVolume(ctx, hosting.Volume{AccountID: a, Name: "pgdata", SizeGB: 10, LocationID: 1, Status: hosting.VolumeCreating, CreatedAt: now})
		return err
	})
}

// volumeOperations checks the operation list's volume filter: the operations of
// volume volID (want, newest first; deleted, it keeps them), alone or with its
// server's or a status, and none for account b or a volume of none.
func volumeOperations(t *testing.T, s store.Store, a, b, volID, srvID int64, want []int64) {
	t.Helper()
	ctx := context.Background()
	success, running := hosting.OpSuccess, hosting.OpRunning
	none := int64(1 << 40)
	for _, tc := range []struct {
		name    string
		account int64
		f       store.OperationFilter
		want    []int64
	}{
		{"one volume", a, store.OperationFilter{VolumeID: &volID}, want},
		{"and its server", a, store.OperationFilter{VolumeID: &volID, ServerID: &srvID}, want[:1]},
		{"and a status", a, store.OperationFilter{VolumeID: &volID, Status: &success}, want},
		{"and another status", a, store.OperationFilter{VolumeID: &volID, Status: &running}, nil},
		{"another account's volume", b, store.OperationFilter{VolumeID: &volID}, nil},
		{"no volume", a, store.OperationFilter{VolumeID: &none}, nil},
	} {
		list, total, err := s.Operations(ctx, tc.account, tc.f, 0, 0)
		got := make([]int64, len(list))
		for i, o := range list {
			got[i] = o.ID
		}
		if err != nil || !slices.Equal(got, tc.want) || total != len(tc.want) {
			t.Errorf("%s: %v of %d, %v; want %v", tc.name, got, total, err, tc.want)
		}
	}
}
