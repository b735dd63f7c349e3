package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// TestScheduledSnapshotDeletionAcrossRestart schedules snapshot deletions while the
// server is busy taking another snapshot, SIGKILLs berthd before that operation ends,
// restarts it, and checks that each scheduled deletion ran exactly once afterwards.
func TestScheduledSnapshotDeletionAcrossRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	runJSON(t, bin, append([]string{"migrate"}, storeFlags(t, data)...)...)
	acct := runJSON(t, bin, append([]string{"admin", "account", "create", "--email", "snap@example.com", "--password", "long-enough-pw",
		"--credit", "500"}, storeFlags(t, data)...)...)
	tok := runJSON(t, bin, append([]string{"admin", "token", "create", "--account", fmt.Sprint(acct["id"]), "--name", "snap",
		"--scopes", "servers,snapshots"}, storeFlags(t, data)...)...)
	token := tok["token"].(string)
	addr := testnet.FreeAddr(t)
	// Scale 0.4: provisioning 12 s, a disk snapshot 4 s, one with memory 6 s.
	d := startServe(t, bin, data, addr, "0.4")

	code, m := d.call(t, token, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1})
	if code != 201 {
		t.Fatalf("order: %d %v", code, m)
	}
	srv := m["data"].(map[string]any)
	name, id := srv["name"].(string), int64(srv["id"].(float64))
	d.waitOp(t, token, srv["operation"].(map[string]any)["id"].(float64), 60*time.Second)

	snapshot := func(snapName string, memory bool) int64 {
		t.Helper()
		code, m := d.call(t, token, "POST", fmt.Sprintf("/servers/%d/snapshots", id), map[string]any{"name": snapName, "include_memory": memory})
		if code != 201 {
			t.Fatalf("snapshot %s: %d %v", snapName, code, m)
		}
		return int64(m["data"].(map[string]any)["id"].(float64))
	}
	first := snapshot("before", false)
	d.waitOp(t, token, d.server(t, token, name)["operation"].(map[string]any)["id"].(float64), 30*time.Second)
	second := snapshot("busy", true)
	busy := d.server(t, token, name)["operation"].(map[string]any)["id"].(float64)
	for _, s := range []int64{first, second} {
		code, m := d.call(t, token, "DELETE", fmt.Sprintf("/servers/%d/snapshots/%d", id, s), nil)
		if code != 202 || m["data"].(map[string]any)["result"] != "scheduled" {
			t.Fatalf("delete snapshot %d while busy: %d %v", s, code, m)
		}
	}
	if err := d.cmd.Process.Kill(); err != nil { // SIGKILL, the snapshot still being taken
		t.Fatal(err)
	}
	_ = d.cmd.Wait()

	d = startServe(t, bin, data, addr, "0.4")
	if got := d.waitOp(t, token, busy, 60*time.Second); got["status"] != "success" {
		t.Fatalf("the snapshot operation after the restart: %v", got)
	}
	if code, m := d.call(t, token, "GET", fmt.Sprintf("/servers/%d/snapshots", id), nil); code != 200 || len(m["data"].([]any)) != 0 {
		t.Fatalf("snapshots after the scheduled deletions: %d %v", code, m)
	}

	db, jsonInt, rebind := storeDB(t, data)
	ctx := context.Background()
	// The removal of each snapshot's data is a job of its own: wait for both.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var done int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM river_job WHERE kind = 'berth.snapshot_delete' AND state = 'completed'`).Scan(&done); err != nil {
			t.Fatal(err)
		}
		if done >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 2 snapshot deletions completed\n%s", done, d.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, s := range []int64{first, second} {
		var jobs, events int
		if err := db.QueryRowContext(ctx, rebind(`SELECT COUNT(*) FROM river_job WHERE kind = 'berth.snapshot_delete' AND `+jsonInt("args", "snapshot_id")+` = ?`), s).Scan(&jobs); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRowContext(ctx, rebind(`SELECT COUNT(*) FROM sim_events WHERE machine = ? AND event = ?`), name, fmt.Sprintf("delete-snapshot:snap-%d", s)).Scan(&events); err != nil {
			t.Fatal(err)
		}
		if jobs != 1 || events != 1 {
			t.Errorf("snapshot %d: %d deletion jobs, %d deletions on the machine; want exactly one of each", s, jobs, events)
		}
	}
	var left int
	if err := db.QueryRowContext(ctx, rebind(`SELECT COUNT(*) FROM sim_snapshots WHERE machine = ?`), name).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d snapshots left on the machine (%v)", left, err)
	}
}
