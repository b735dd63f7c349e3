package ops_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testenv"
)

// attachHookStore is the store in whose transactions a new snapshot's write first
// attaches volume vol to server srv: as if an attachment had ended between the
// snapshot's check of the server's volumes and its operation's start.
type attachHookStore struct {
	store.Store
	vol, srv int64
}

func (s attachHookStore) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	return s.Store.InTx(ctx, func(tx store.Tx) error { return fn(attachHookTx{tx, s.vol, s.srv}) })
}

type attachHookTx struct {
	store.Tx
	vol, srv int64
}

func (t attachHookTx) CreateSnapshot(ctx context.Context, snap hosting.Snapshot) (int64, error) {
	srv := t.srv
	if err := t.Tx.SetVolumeServer(ctx, t.vol, &srv); err != nil {
		return 0, err
	}
	return t.Tx.CreateSnapshot(ctx, snap)
}

// TestSnapshotReadsVolumesOnceServerIsBusy: CreateSnapshot reads a running server's
// volumes again once its operation holds the server, when no attachment can start or
// end until it commits (docs/volumes.md, Snapshots), and refuses the snapshot if one
// is attached by then (422 on server). Nothing is written: no snapshot, no operation.
func TestSnapshotReadsVolumesOnceServerIsBusy(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ctx := context.Background()
	a := env.NewAccount("en", "100", "")
	srv := a.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}).Want(t, 201).Map(t)["data"].(map[string]any)
	serverID := int64(srv["id"].(float64))
	a.WaitStatus(t, fmt.Sprint(serverID), "running", time.Minute)
	vol := a.Do("POST", "/volumes", map[string]any{"name": "data", "size_gb": 10, "location_id": 1}).Want(t, 201).Map(t)["data"].(map[string]any)
	volID := int64(vol["id"].(float64))
	waitVolumeIdle(t, env, volID)

	hooked := attachHookStore{Store: env.App.DB, vol: volID, srv: serverID}
	svc := ops.New(ops.Deps{Store: hooked, Jobs: &recordingQueue{}, Driver: env.App.Driver(), Log: slog.New(slog.DiscardHandler)})
	p, err := svc.Authenticate(ctx, a.Token)
	if err != nil {
		t.Fatal(err)
	}
	name := "racing"
	snap, err := svc.CreateSnapshot(ctx, p, serverID, &name, false)
	var he *hosting.Error
	if !errors.As(err, &he) || he.Code != hosting.CodeValidationFailed || len(he.Fields["server"]) != 1 ||
		he.Fields["server"][0].ID != "validation.snapshot_running_volumes" {
		t.Fatalf("a snapshot whose server was given a volume before its operation started: %+v, %v; want 422 on server", snap, err)
	}
	if live, err := env.App.DB.Snapshots(ctx, serverID); err != nil || len(live) != 0 {
		t.Errorf("snapshots after the refusal: %v, %v", live, err)
	}
	got, err := env.App.DB.ServerAny(ctx, serverID)
	if err != nil || got.Operation != nil {
		t.Errorf("the server after the refusal: operation %v, %v", got.Operation, err)
	}
	if v, err := env.App.DB.VolumeAny(ctx, volID); err != nil || v.ServerID != nil {
		t.Errorf("the volume after the refused transaction: server %v, %v", v.ServerID, err)
	}
}

// waitVolumeIdle waits until volume id has no operation.
func waitVolumeIdle(t *testing.T, env *testenv.Env, id int64) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		v, err := env.App.DB.VolumeAny(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if v.Operation == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("volume %d still busy", id)
		}
	}
}
