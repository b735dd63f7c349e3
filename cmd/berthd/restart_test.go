package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testlog"
	"github.com/berthhq/berth/internal/testnet"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// runJSON runs an admin command and decodes its one JSON object.
func runJSON(t *testing.T, bin string, args ...string) map[string]any {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("berthd %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("berthd %s printed %q: %v", strings.Join(args, " "), out, err)
	}
	return m
}

type daemon struct {
	cmd  *exec.Cmd
	base string
	log  *testlog.Buffer // what it writes to its stdout and stderr
}

func startServe(t *testing.T, bin, data, addr string, scale string, extra ...string) *daemon {
	t.Helper()
	d := &daemon{base: "http://" + addr + "/v1", log: &testlog.Buffer{}}
	args := append([]string{"serve", "--addr", addr, "--sim-time-scale", scale}, serveStoreFlags(t, data)...)
	d.cmd = exec.Command(bin, append(args, extra...)...)
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.cmd.Process.Kill(); _ = d.cmd.Wait() })
	d.waitUp(t)
	return d
}

// waitUp waits until the daemon answers.
func (d *daemon) waitUp(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(d.base + "/openapi.json")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("berthd did not come up: %v\n%s", err, d.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (d *daemon) call(t *testing.T, token, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, d.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// waitOp holds on GET /operations/{id}?wait until the operation ends (no polling storm:
// the rate limit is on).
func (d *daemon) waitOp(t *testing.T, token string, op float64, timeout time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		code, m := d.call(t, token, "GET", fmt.Sprintf("/operations/%d?wait=30", int64(op)), nil)
		if code != 200 {
			t.Fatalf("GET operation %v: %d %v", op, code, m)
		}
		data := m["data"].(map[string]any)
		if data["status"] != "running" {
			return data
		}
		if time.Now().After(deadline) {
			t.Fatalf("operation %v still running: %v\n%s", op, data, d.log)
		}
	}
}

func (d *daemon) server(t *testing.T, token, name string) map[string]any {
	t.Helper()
	code, m := d.call(t, token, "GET", "/servers/"+name, nil)
	if code != 200 {
		t.Fatalf("GET server %s: %d %v", name, code, m)
	}
	return m["data"].(map[string]any)
}

// TestRestartAfterSIGKILL kills berthd while servers are provisioning and changing
// power state, restarts it on the same data directory, and checks that every accepted
// operation completes, exactly once, with the end state it promised.
func TestRestartAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	runJSON(t, bin, append([]string{"migrate"}, storeFlags(t, data)...)...)
	acct := runJSON(t, bin, append([]string{"admin", "account", "create", "--email", "ops@example.com", "--password", "long-enough-pw",
		"--credit", "500"}, storeFlags(t, data)...)...)
	tok := runJSON(t, bin, append([]string{"admin", "token", "create", "--account", fmt.Sprint(acct["id"]), "--name", "restart",
		"--scopes", "servers,power"}, storeFlags(t, data)...)...)
	token := tok["token"].(string)
	addr := testnet.FreeAddr(t)
	// Scale 0.4: provisioning 12 s, shutdown 2 s, reboot 4 s.
	d := startServe(t, bin, data, addr, "0.4")

	order := func() (name string, opID float64) {
		code, m := d.call(t, token, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1})
		if code != 201 {
			t.Fatalf("order: %d %v", code, m)
		}
		s := m["data"].(map[string]any)
		return s["name"].(string), s["operation"].(map[string]any)["id"].(float64)
	}
	type accepted struct {
		server, action, end string
		op                  float64
	}
	var ops []accepted
	var first []string
	for range 3 {
		name, op := order()
		first = append(first, name)
		ops = append(ops, accepted{name, "provision", "running", op})
	}
	for _, o := range ops {
		d.waitOp(t, token, o.op, 60*time.Second)
	}
	// Now, in flight together: three more provisionings and three power changes.
	for range 3 {
		name, op := order()
		ops = append(ops, accepted{name, "provision", "running", op})
	}
	for i, action := range []string{"shutdown", "reboot", "off"} {
		code, m := d.call(t, token, "POST", "/servers/"+first[i]+"/power", map[string]any{"action": action})
		if code != 200 {
			t.Fatalf("power %s: %d %v", action, code, m)
		}
		s := m["data"].(map[string]any)
		end := map[string]string{"shutdown": "stopped", "reboot": "running", "off": "stopped"}[action]
		ops = append(ops, accepted{first[i], action, end, s["operation"].(map[string]any)["id"].(float64)})
	}
	time.Sleep(300 * time.Millisecond) // let the workers pick everything up
	for _, o := range ops[3:5] {
		if s := d.server(t, token, o.server); s["operation"] == nil {
			t.Fatalf("server %s should still be busy before the kill: %v", o.server, s)
		}
	}
	if err := d.cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = d.cmd.Wait()

	d = startServe(t, bin, data, addr, "0.4")
	for _, o := range ops {
		if got := d.waitOp(t, token, o.op, 90*time.Second); got["status"] != "success" {
			t.Errorf("operation %v (%s on %s): %v", o.op, o.action, o.server, got)
		}
	}
	for _, o := range ops {
		if o.action == "provision" && slices.Contains(first, o.server) {
			continue // powered afterwards: the power action's end state is checked
		}
		if got := d.server(t, token, o.server); got["status"] != o.end || got["operation"] != nil {
			t.Errorf("%s after %s: status %v (operation %v), want %s", o.server, o.action, got["status"], got["operation"], o.end)
		}
	}
	if err := d.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Wait()

	// Exactly once: one job per operation, completed; each operation finished once; the
	// simulated machines saw each step once.
	db, jsonInt, rebind := storeDB(t, data)
	ctx := context.Background()
	for _, o := range ops {
		var jobs, completed int
		err := db.QueryRowContext(ctx, rebind(`SELECT COUNT(*), COUNT(CASE WHEN state = 'completed' THEN 1 END) FROM river_job
			WHERE `+jsonInt("args", "operation_id")+` = ?`), int64(o.op)).Scan(&jobs, &completed)
		if err != nil {
			t.Fatal(err)
		}
		if jobs != 1 || completed != 1 {
			t.Errorf("operation %v (%s): %d jobs, %d completed; want exactly one, completed", o.op, o.action, jobs, completed)
		}
	}
	wantEvents := map[string][]string{}
	for _, o := range ops {
		switch o.action {
		case "provision":
			wantEvents[o.server] = append(wantEvents[o.server], "create")
		case "shutdown":
			wantEvents[o.server] = append(wantEvents[o.server], "shutdown")
		case "reboot":
			wantEvents[o.server] = append(wantEvents[o.server], "shutdown", "start")
		case "off":
			wantEvents[o.server] = append(wantEvents[o.server], "stop")
		}
	}
	for server, want := range wantEvents {
		rows, err := db.QueryContext(ctx, rebind(`SELECT event FROM sim_events WHERE machine = ? ORDER BY id`), server)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var e string
			_ = rows.Scan(&e)
			got = append(got, e)
		}
		rows.Close()
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("machine %s: events %v, want %v", server, got, want)
		}
	}
}
