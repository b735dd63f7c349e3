package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testlog"
	"github.com/berthhq/berth/internal/testnet"
	"github.com/berthhq/berth/internal/testpg"
)

// TestStoreCopy moves a SQLite installation — servers in several states, snapshots,
// keys, a project, ledger entries and an operation in flight — to PostgreSQL with
// admin store copy, and checks that Berth there answers every GET as before, and that
// the operation completes there.
func TestStoreCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	testpg.Require(t)
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	runJSON(t, bin, "migrate", "--data", data)
	acct := runJSON(t, bin, "admin", "account", "create", "--email", "copy@example.com", "--password", "long-enough-pw",
		"--credit", "100", "--language", "de", "--data", data)
	token := runJSON(t, bin, "admin", "token", "create", "--account", fmt.Sprint(acct["id"]), "--name", "copy",
		"--scopes", "servers,power,snapshots,ssh-keys", "--data", data)["token"].(string)
	addr := testnet.FreeAddr(t)
	d := startServe(t, bin, data, addr, "0.05")
	call := func(method, path string, body any, want int) map[string]any {
		t.Helper()
		code, m := d.call(t, token, method, path, body)
		if code != want {
			t.Fatalf("%s %s: %d %v, want %d", method, path, code, m, want)
		}
		data, _ := m["data"].(map[string]any)
		return data
	}
	opOf := func(s map[string]any) float64 { return s["operation"].(map[string]any)["id"].(float64) }

	key := call("POST", "/ssh-keys", map[string]any{"name": "laptop", "public_key": testenv.PublicKey(t) + "\n"}, 201)
	project := call("POST", "/projects", map[string]any{"name": "web"}, 201)
	var servers []map[string]any
	for i := range 4 {
		order := map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}
		if i == 0 {
			order["ssh_key_ids"] = []any{key["id"]}
			order["project_id"] = project["id"]
		}
		s := call("POST", "/servers", order, 201)
		d.waitOp(t, token, opOf(s), time.Minute)
		servers = append(servers, s)
	}
	path := func(i int) string { return fmt.Sprintf("/servers/%v", servers[i]["id"]) }
	d.waitOp(t, token, opOf(call("POST", path(1)+"/power", map[string]any{"action": "off"}, 200)), time.Minute)
	d.waitOp(t, token, opOf(call("POST", path(1)+"/rescale", map[string]any{"plan_id": 2, "upgrade_disk": false}, 200)), time.Minute)
	call("POST", path(0)+"/snapshots", map[string]any{"name": "before-upgrade"}, 201)
	for deadline := time.Now().Add(time.Minute); call("GET", path(0), nil, 200)["operation"] != nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("snapshot did not end")
		}
	}
	call("DELETE", path(3), nil, 204)
	runJSON(t, bin, "admin", "credit", "add", "--account", fmt.Sprint(acct["id"]), "--amount", "12.50", "--data", data)

	// An operation in flight: on a slow simulation (a provisioning of 60 s), berthd is
	// killed a moment after the order.
	stopDaemon(t, d)
	d = startServe(t, bin, data, addr, "2")
	inFlight := call("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 2, "display_name": "in-flight"}, 201)
	time.Sleep(300 * time.Millisecond)

	// What the API shows before the move.
	gets := []string{"/me", "/servers", "/ssh-keys", "/projects", "/billing", "/billing/transactions", "/locations",
		path(0), path(1), path(2), path(0) + "/snapshots", fmt.Sprintf("/operations/%v", opOf(servers[0]))}
	before := map[string]any{}
	for _, p := range gets {
		_, m := d.call(t, token, "GET", p, nil)
		before[p] = m
	}

	pg := testpg.NewDatabase(t)
	// A serve holds the data directory: the copy refuses.
	if msg := runError(t, bin, "admin", "store", "copy", "--data", data, "--to", pg); !strings.Contains(msg, "serves") {
		t.Errorf("copy while serve runs: %q", msg)
	}
	if err := d.cmd.Process.Kill(); err != nil { // SIGKILL, the provisioning half done
		t.Fatal(err)
	}
	_ = d.cmd.Wait()
	src, err := sql.Open("sqlite", "file:"+filepath.Join(data, "berth.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var running float64
	if err := src.QueryRow(`SELECT COUNT(*) FROM operations WHERE status = 'running'`).Scan(&running); err != nil {
		t.Fatal(err)
	}
	src.Close()
	out := runJSON(t, bin, "admin", "store", "copy", "--data", data, "--to", pg)
	copied := out["copied"].(map[string]any)
	for table, want := range map[string]float64{"accounts": 1, "servers": 5, "snapshots": 1, "ssh_keys": 1, "projects": 1, "sim_machines": 5} {
		if copied[table] != want {
			t.Errorf("copied %v rows of %s, want %v (%v)", copied[table], table, want, copied)
		}
	}
	if jobs := out["jobs"].(map[string]any); running < 1 || jobs["berth.operation"] != running {
		t.Errorf("copied jobs %v, want one berth.operation for each of the %v operations in flight", jobs, running)
	}
	// (Tables are named in copied, password_resets among them: not a password.)
	if strings.Contains(fmt.Sprint(out["to"], out["from"], out["jobs"]), "password") {
		t.Errorf("the copy printed a password: %v", out)
	}
	// Into a database that holds anything, never.
	if msg := runError(t, bin, "admin", "store", "copy", "--data", data, "--to", pg); !strings.Contains(msg, "not empty") {
		t.Errorf("second copy into the same database: %q", msg)
	}

	// Berth on PostgreSQL answers as Berth on SQLite did.
	pgAddr := testnet.FreeAddr(t)
	d = startServeArgs(t, bin, pgAddr, "serve", "--database", pg, "--addr", pgAddr, "--sim-time-scale", "0.05")
	for _, p := range gets {
		_, m := d.call(t, token, "GET", p, nil)
		var got, want any = m, before[p]
		// Links name the address asked.
		got = sameBase(got, d.base, "BASE")
		want = sameBase(want, "http://"+addr+"/v1", "BASE")
		if p == "/servers" {
			// The provisioning in flight may have ended meanwhile: compared below.
			got, want = withoutServer(got, inFlight["id"]), withoutServer(want, inFlight["id"])
		}
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Errorf("GET %s on PostgreSQL:\n%s\nwant (on SQLite):\n%s", p, g, w)
		}
	}
	if got := d.waitOp(t, token, opOf(inFlight), 2*time.Minute); got["status"] != "success" {
		t.Errorf("the operation in flight ended %v on PostgreSQL", got)
	}
	if s := call("GET", fmt.Sprintf("/servers/%v", inFlight["id"]), nil, 200); s["status"] != "running" || s["operation"] != nil {
		t.Errorf("the server provisioned in flight: %v", s)
	}
	// New rows continue the ids.
	if p := call("POST", "/projects", map[string]any{"name": "after-the-move"}, 201); p["id"].(float64) <= project["id"].(float64) {
		t.Errorf("a project created after the move has id %v, not after %v", p["id"], project["id"])
	}
}

func withoutServer(list any, id any) any {
	m, ok := list.(map[string]any)
	if !ok {
		return list
	}
	items, _ := m["data"].([]any)
	var kept []any
	for _, it := range items {
		if s, _ := it.(map[string]any); s["id"] != id {
			kept = append(kept, it)
		}
	}
	return kept
}

func stopDaemon(t *testing.T, d *daemon) {
	t.Helper()
	if err := d.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Wait()
}

// startServeArgs starts berthd with args and waits until it answers on addr.
func startServeArgs(t *testing.T, bin, addr string, args ...string) *daemon {
	t.Helper()
	d := &daemon{base: "http://" + addr + "/v1", log: &testlog.Buffer{}}
	d.cmd = exec.Command(bin, args...)
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.cmd.Process.Kill(); _ = d.cmd.Wait() })
	d.waitUp(t)
	return d
}

// sameBase replaces base in every string of v.
func sameBase(v any, base, with string) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal([]byte(strings.ReplaceAll(string(b), base, with)), &out)
	return out
}
