package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
	"github.com/berthhq/berth/internal/testpg"
)

// TestServeSandboxRefusesLibvirt: --sandbox works with the sim driver only; with
// --driver libvirt serve refuses to start (exit 1) naming both flags, before it
// opens anything.
func TestServeSandboxRefusesLibvirt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	for _, args := range [][]string{
		{"--driver", "libvirt", "--sandbox"},
		{"--sandbox", "--driver", "libvirt"},
	} {
		cmd := exec.Command(bin, append([]string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0"}, args...)...)
		out, err := cmd.Output()
		var res struct{ Error string }
		_ = json.Unmarshal(out, &res)
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 || !strings.Contains(res.Error, "--sandbox") || !strings.Contains(res.Error, "--driver libvirt") {
			t.Errorf("serve %v: %v, %s; want exit 1 with an error naming --sandbox and --driver libvirt", args, err, out)
		}
	}
}

// TestServeSandboxRefusesDatabase: --sandbox works on a SQLite data directory only;
// with --database (PostgreSQL, which production's processes may share: a sandbox
// reset wipes an account there, and each process keeps its own clock offsets) serve
// refuses to start, exit 1, naming --sandbox and where the database came from (the
// flag, or BERTH_DATABASE / BERTH_DATABASE_URL), and writes nothing: the database
// is left without a table. With a PostgreSQL server for tests each case points at a
// real empty database (serve would migrate it and serve, and the test would time
// out on it); without one, at an address where nothing listens.
func TestServeSandboxRefusesDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	url := "postgres://berth:S3cretPassw0rd@127.0.0.1:1/berth"
	if testpg.Available() {
		url = testpg.NewDatabase(t)
	}
	seed := fixturesFile(t, ciToken)
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"--sandbox --database", nil, []string{"--sandbox", "--database", url}, []string{"--sandbox with --database: "}},
		{"--database --sandbox", nil, []string{"--database", url, "--sandbox"}, []string{"--sandbox with --database: "}},
		{"--sandbox --seed --database", nil, []string{"--sandbox", "--seed", seed, "--database", url},
			[]string{"--sandbox with --database: "}},
		{"BERTH_DATABASE", []string{"BERTH_DATABASE=" + url}, []string{"--sandbox", "--data", t.TempDir()},
			[]string{"--sandbox with $BERTH_DATABASE (which stands for --database): "}},
		{"BERTH_DATABASE_URL", []string{"BERTH_DATABASE_URL=" + url}, []string{"--sandbox"},
			[]string{"--sandbox with $BERTH_DATABASE_URL (which stands for --database): "}},
		{"BERTH_DATABASE and --database", []string{"BERTH_DATABASE=postgres://elsewhere/berth"}, []string{"--sandbox", "--database", url},
			[]string{"--sandbox with --database: "}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, c.args...)...)
		cmd.Env = append(envWithoutStore(), c.env...)
		cmd.Dir = t.TempDir() // the default --data is ./data: none may appear
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		cancel()
		var res struct{ Error string }
		_ = json.Unmarshal(out, &res)
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 {
			t.Errorf("%s: %v, %s %s; want exit 1", c.name, err, out, &stderr)
			continue
		}
		for _, w := range append(c.want, "SQLite data directory (--data) only", "reset", "clock") {
			if !strings.Contains(res.Error, w) || !strings.Contains(stderr.String(), w) {
				t.Errorf("%s: stdout %s, stderr %s; want both to say %q", c.name, out, &stderr, w)
			}
		}
		if entries, _ := os.ReadDir(cmd.Dir); len(entries) != 0 {
			t.Errorf("%s: serve left %v in its working directory", c.name, entries)
		}
	}
	if !testpg.Available() {
		return
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables []string
	rows, err := db.Query(`SELECT table_name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(tables) != 0 {
		t.Errorf("serve --sandbox wrote to the PostgreSQL database: tables %v, want none (no migration, no account)", tables)
	}
}

// TestServeSandbox: serve --sandbox serves the sandbox API under /sandbox/v1 to any
// token of an account; without --sandbox those paths are the API's 404. On SQLite
// whatever BERTH_TEST_STORE says: the sandbox refuses PostgreSQL
// (TestServeSandboxRefusesDatabase).
func TestServeSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	runJSON(t, bin, "migrate", "--data", data)
	runJSON(t, bin, "admin", "account", "create", "--email", "s@example.com", "--password", "correct-horse", "--credit", "10", "--data", data)
	token := runJSON(t, bin, "admin", "token", "create", "--account", "1", "--name", "t", "--scopes", "read", "--data", data)["token"].(string)
	call := func(addr, method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
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

	addr := testnet.FreeAddr(t)
	d := startServeArgs(t, bin, addr, "serve", "--addr", addr, "--sim-time-scale", "0.01", "--data", data)
	if st, m := call(addr, "GET", "/sandbox/v1/faults", ""); st != 404 || m["code"] != "not_found" {
		t.Errorf("without --sandbox: %d %v, want 404 not_found", st, m)
	}
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()

	addr = testnet.FreeAddr(t)
	startServeArgs(t, bin, addr, "serve", "--addr", addr, "--sim-time-scale", "0.01", "--data", data, "--sandbox")
	if st, m := call(addr, "POST", "/sandbox/v1/faults", `{"method": "GET", "path": "/me", "status": 503}`); st != 201 {
		t.Fatalf("POST /sandbox/v1/faults: %d %v", st, m)
	}
	if st, m := call(addr, "GET", "/v1/me", ""); st != 503 || m["code"] != "unavailable" {
		t.Errorf("GET /v1/me under the fault: %d %v", st, m)
	}
	if st, m := call(addr, "GET", "/sandbox/v1/requests", ""); st != 200 || len(m["data"].([]any)) != 1 {
		t.Errorf("journal: %d %v", st, m)
	}
}
