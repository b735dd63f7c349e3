package main

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// TestVolumeOperationsAcrossRestart SIGKILLs berthd while a volume's attachment, its
// growth and its detachment each run, restarts it, and checks that each operation
// then ends once, in success, and that the driver's view of the volume (the sim's
// tables) agrees with the store's: attached to the server, at its new size, detached.
func TestVolumeOperationsAcrossRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	runJSON(t, bin, append([]string{"migrate"}, storeFlags(t, data)...)...)
	acct := runJSON(t, bin, append([]string{"admin", "account", "create", "--email", "vol@example.com", "--password", "long-enough-pw",
		"--credit", "500"}, storeFlags(t, data)...)...)
	tok := runJSON(t, bin, append([]string{"admin", "token", "create", "--account", fmt.Sprint(acct["id"]), "--name", "vol",
		"--scopes", "servers,storage"}, storeFlags(t, data)...)...)
	token := tok["token"].(string)
	addr := testnet.FreeAddr(t)
	// Scale 0.5: provisioning 15 s, a volume's creation 1-2.5 s, its attachment,
	// growth and detachment 0.5-1.5 s each: a SIGKILL right after the request meets
	// each running.
	d := startServe(t, bin, data, addr, "0.5")
	code, m := d.call(t, token, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1})
	if code != 201 {
		t.Fatalf("order: %d %v", code, m)
	}
	srv := m["data"].(map[string]any)
	d.waitOp(t, token, srv["operation"].(map[string]any)["id"].(float64), 90*time.Second)
	code, m = d.call(t, token, "POST", "/volumes", map[string]any{"name": "data", "size_gb": 10, "location_id": 1, "format": "ext4"})
	if code != 201 {
		t.Fatalf("create volume: %d %v", code, m)
	}
	d.waitOp(t, token, m["data"].(map[string]any)["operation"].(map[string]any)["id"].(float64), 60*time.Second)

	db, _, rebind := storeDB(t, data)
	steps := []struct {
		path    string
		body    map[string]any
		machine any // the sim's machine of the volume after the step (nil: detached)
		sizeGB  int
	}{
		{"/volumes/data/attach", map[string]any{"server_id": srv["id"], "automount": true}, srv["name"], 10},
		{"/volumes/data/resize", map[string]any{"size_gb": 20}, srv["name"], 20},
		{"/volumes/data/detach", map[string]any{}, nil, 20},
	}
	for _, s := range steps {
		code, m := d.call(t, token, "POST", s.path, s.body)
		if code != 200 {
			t.Fatalf("%s: %d %v", s.path, code, m)
		}
		op := m["data"].(map[string]any)["operation"].(map[string]any)["id"].(float64)
		if err := d.cmd.Process.Kill(); err != nil { // SIGKILL, the operation running
			t.Fatal(err)
		}
		_ = d.cmd.Wait()
		d = startServe(t, bin, data, addr, "0.5")
		if got := d.waitOp(t, token, op, 60*time.Second); got["status"] != "success" {
			t.Fatalf("%s after the restart: %v", s.path, got)
		}
		var ended int
		if err := db.QueryRow(rebind(`SELECT COUNT(*) FROM events WHERE type = 'operation.succeeded' AND resource_type = 'operation' AND resource_id = ?`), int64(op)).Scan(&ended); err != nil || ended != 1 {
			t.Errorf("%s: the operation ended %d times (%v)", s.path, ended, err)
		}
		var machine sql.NullString
		var size int
		err := db.QueryRow(rebind(`SELECT machine, size_gb FROM sim_volumes WHERE name = ?`), "volume-"+fmt.Sprint(m["data"].(map[string]any)["id"])).Scan(&machine, &size)
		if errors.Is(err, sql.ErrNoRows) || err != nil {
			t.Fatalf("%s: the sim's volume: %v", s.path, err)
		}
		var got any
		if machine.Valid {
			got = machine.String
		}
		if got != s.machine || size != s.sizeGB {
			t.Errorf("%s: the sim has the volume on %v at %d GB, want %v at %d GB", s.path, got, size, s.machine, s.sizeGB)
		}
	}
}
