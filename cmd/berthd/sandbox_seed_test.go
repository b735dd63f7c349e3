package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// ciToken is the fixed token of the test's fixtures file.
const ciToken = "berth_sandbox_berthd-test-fixed-token-0123456789"

// fixturesFile writes a fixtures file (docs/sandbox-seed.md) with one account holding
// ciToken, an SSH key, a project and a running and a stopped server.
func fixturesFile(t *testing.T, token string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "fixtures.yaml")
	err := os.WriteFile(file, fmt.Appendf(nil, `accounts:
  - email: ci@example.com
    credit: "25.00"
    tokens:
      - name: ci
        value: %s
    ssh_keys:
      - name: deploy
        public_key: %q
    projects:
      - name: web
    servers:
      - {display_name: web-1, plan_id: 1, location_id: 1, image_id: 1, status: running, project: web, ssh_keys: [deploy]}
      - {display_name: db-1, plan_id: 1, location_id: 1, image_id: 1, status: stopped}
`, token, testenv.PublicKey(t)), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	return file
}

// get calls the API with token and decodes the answer.
func get(t *testing.T, base, token, path string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// TestServeSandboxSeed: serve --sandbox --seed FILE.yaml on a fresh data directory
// makes the file's account, and its fixed token works at once, with the seeded
// servers in their statuses; stopped and started again with the same file, nothing
// changes (the same servers, the same ledger). On SQLite whatever BERTH_TEST_STORE
// says: the sandbox refuses PostgreSQL (TestServeSandboxRefusesDatabase).
func TestServeSandboxSeed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := filepath.Join(t.TempDir(), "data") // fresh: serve creates it
	file := fixturesFile(t, ciToken)
	state := func(base string) (servers, ledger string) {
		t.Helper()
		st, m := get(t, base, ciToken, "/me")
		if st != http.StatusOK || m["data"].(map[string]any)["email"] != "ci@example.com" {
			t.Fatalf("GET /me with the fixed token: %d %v", st, m)
		}
		st, m = get(t, base, ciToken, "/servers")
		if st != http.StatusOK {
			t.Fatalf("GET /servers: %d %v", st, m)
		}
		var list []string
		for _, x := range m["data"].([]any) {
			s := x.(map[string]any)
			list = append(list, fmt.Sprintf("%v %v %v %v %v", s["id"], s["name"], s["display_name"], s["status"], s["ipv4"]))
		}
		_, tx := get(t, base, ciToken, "/billing/transactions")
		b, _ := json.Marshal(tx["data"])
		return strings.Join(list, "; "), string(b)
	}

	addr := testnet.FreeAddr(t)
	d := startServeArgs(t, bin, addr, "serve", "--addr", addr, "--sim-time-scale", "0.01", "--data", data, "--sandbox", "--seed", file)
	servers, ledger := state(d.base)
	if !strings.Contains(servers, "web-1 running") || !strings.Contains(servers, "db-1 stopped") {
		t.Errorf("seeded servers: %s", servers)
	}
	if strings.Count(ledger, `"charge"`) != 2 || strings.Count(ledger, `"topup"`) != 1 {
		t.Errorf("ledger: %s, want the opening top-up and each server's first hour", ledger)
	}
	if err := d.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Wait(); err != nil {
		t.Fatalf("serve did not stop cleanly: %v\n%s", err, d.log)
	}

	d = startServeArgs(t, bin, addr, "serve", "--addr", addr, "--sim-time-scale", "0.01", "--data", data, "--sandbox", "--seed", file)
	if s, l := state(d.base); s != servers || l != ledger {
		t.Errorf("started again with the same file:\n servers %s\n ledger %s\nwant as before:\n servers %s\n ledger %s", s, l, servers, ledger)
	}
	// The audit log says once that the operator's start made the account.
	var made []any
	for _, e := range runJSON(t, bin, "admin", "audit", "list", "--data", data)["entries"].([]any) {
		if e := e.(map[string]any); e["action"] == "serve --seed" && e["actor"] == "operator" {
			made = append(made, e)
		}
	}
	if len(made) != 1 || !strings.Contains(fmt.Sprint(made[0].(map[string]any)["target"]), "email=ci@example.com") {
		t.Errorf("audit entries of serve --seed: %v, want one for the account", made)
	}
}

// TestServeSeedRefused: --seed without --sandbox is a usage error, and a fixtures file
// with a token value that is not a fixed token's keeps serve from starting, naming
// the account and the token; neither leaves a database behind.
func TestServeSeedRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"without --sandbox", []string{"--seed", fixturesFile(t, ciToken)}, "--seed needs --sandbox"},
		{"a bad token value", []string{"--sandbox", "--seed", fixturesFile(t, "berth_sandbox_short")},
			`account 1 (ci@example.com): token "ci": a fixed token's value is "berth_sandbox_" followed by 32`},
		{"no such file", []string{"--sandbox", "--seed", filepath.Join(t.TempDir(), "none.yaml")}, "none.yaml"},
	} {
		data := filepath.Join(t.TempDir(), "data")
		cmd := exec.Command(bin, append([]string{"serve", "--data", data, "--addr", "127.0.0.1:0"}, c.args...)...)
		out, err := cmd.Output()
		var res struct{ Error string }
		_ = json.Unmarshal(out, &res)
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 || !strings.Contains(res.Error, c.want) {
			t.Errorf("%s: %v, %s; want exit 1 with an error naming %q", c.name, err, out, c.want)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("%s: the data directory was created (%v)", c.name, err)
		}
	}
}
