package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// runError runs a command that must fail and returns its error message (stdout's one
// JSON object).
func runError(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	var ee *exec.ExitError
	if err == nil || !errorsAs(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("berthd %s: %v, want exit status 1\n%s", strings.Join(args, " "), err, out)
	}
	var m map[string]string
	if json.Unmarshal(out, &m) != nil || m["error"] == "" {
		t.Fatalf("berthd %s printed %q, want one JSON object with an error", strings.Join(args, " "), out)
	}
	return m["error"]
}

// TestNoSilentNewDatabase: admin never creates a database, and serve creates one only
// in a new or empty directory (issue 12, item 8): a mistyped --data or a lost
// berth.db is an error naming the path, not an empty Berth.
func TestNoSilentNewDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)

	// admin on a directory that does not exist, or holds no database.
	missing := filepath.Join(t.TempDir(), "dta")
	msg := runError(t, bin, "admin", "account", "create", "--email", "a@example.com", "--password", "long-enough-pw", "--data", missing)
	if !strings.Contains(msg, missing) || !strings.Contains(msg, "berthd migrate") {
		t.Errorf("admin on a missing directory: %q", msg)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("admin made %s", missing)
	}
	empty := t.TempDir()
	msg = runError(t, bin, "admin", "billing", "meter", "--data", empty)
	if !strings.Contains(msg, filepath.Join(empty, "berth.db")) {
		t.Errorf("admin on an empty directory: %q", msg)
	}
	if des, _ := os.ReadDir(empty); len(des) != 0 {
		t.Errorf("admin left %v in %s", des, empty)
	}

	// serve where a Berth was: berth.gen and demo-token, but no berth.db or an empty one.
	for _, zeroByte := range []bool{false, true} {
		dir := t.TempDir()
		for _, f := range []string{"berth.gen", "demo-token"} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if zeroByte {
			if err := os.WriteFile(filepath.Join(dir, "berth.db"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		var out bytes.Buffer
		cmd := exec.Command(bin, "serve", "--data", dir, "--addr", testnet.FreeAddr(t))
		cmd.Stdout, cmd.Stderr = &out, &out
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			var ee *exec.ExitError
			if !errorsAs(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out.String(), filepath.Join(dir, "berth.db")) {
				t.Errorf("serve on a lost database (zero-byte %v): %v\n%s", zeroByte, err, out.String())
			}
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("serve on a lost database (zero-byte %v) started:\n%s", zeroByte, out.String())
		}
		if st, err := os.Stat(filepath.Join(dir, "berth.db")); err == nil && st.Size() > 0 {
			t.Errorf("serve wrote a database of %d bytes", st.Size())
		}
		// migrate is the operator saying: a new Berth here.
		runJSON(t, bin, "migrate", "--data", dir)
		runJSON(t, bin, "admin", "billing", "meter", "--data", dir)
	}
}

// TestDataFilesPrivate: under umask 022, in a directory that exists already (0755),
// the database, its WAL and SHM, berth.gen, demo-token and the lock are 0600 while
// serve runs, and the log warns about the directory (issue 12, item 10).
func TestDataFilesPrivate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	addr := testnet.FreeAddr(t)
	logFile, err := os.Create(filepath.Join(t.TempDir(), "berthd.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	logText := func() string { b, _ := os.ReadFile(logFile.Name()); return string(b) }
	cmd := exec.Command("sh", "-c", `umask 022 && exec "$0" serve --demo --data "$1" --addr "$2"`, bin, dir, addr)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/v1/openapi.json")
		if err == nil {
			resp.Body.Close()
			if _, err := os.Stat(filepath.Join(dir, "demo-token")); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("berthd did not come up:\n%s", logText())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, f := range []string{"berth.db", "berth.db-wal", "berth.db-shm", "berth.gen", "demo-token", "berthd.lock"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
		} else if st.Mode().Perm() != 0o600 {
			t.Errorf("%s is %04o, want 0600", f, st.Mode().Perm())
		}
	}
	if !strings.Contains(logText(), "chmod 700") {
		t.Errorf("no warning about the 0755 data directory in the log:\n%s", logText())
	}
}

// TestDemoTokenGetsNewScopes: a demo token kept in DATA/demo-token from a build that
// had fewer scopes (one of read only stands for it) is replaced at the next
// serve --demo by one holding every scope, and revoked; a token that holds every scope
// is kept across restarts.
func TestDemoTokenGetsNewScopes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	dir := t.TempDir()
	addr := testnet.FreeAddr(t)
	serveDemo := func() string {
		t.Helper()
		d := startServeArgs(t, bin, addr, "serve", "--demo", "--data", dir, "--addr", addr)
		deadline := time.Now().Add(60 * time.Second)
		for {
			if b, err := os.ReadFile(filepath.Join(dir, "demo-token")); err == nil && len(b) > 0 {
				_ = d.cmd.Process.Kill()
				_ = d.cmd.Wait()
				return strings.TrimSpace(string(b))
			}
			if time.Now().After(deadline) {
				t.Fatalf("no demo token:\n%s", d.log)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	first := serveDemo()
	if again := serveDemo(); again != first {
		t.Fatalf("a demo token holding every scope was replaced at a restart")
	}
	old := runJSON(t, bin, "admin", "token", "create", "--account", "1", "--name", "demo", "--scopes", "read", "--data", dir)
	if err := os.WriteFile(filepath.Join(dir, "demo-token"), []byte(old["token"].(string)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	renewed := serveDemo()
	if renewed == old["token"] || renewed == first {
		t.Fatalf("the token of fewer scopes was kept")
	}
	tokens := runJSON(t, bin, "admin", "token", "list", "--account", "1", "--data", dir)["tokens"].([]any)
	for _, tk := range tokens {
		tk := tk.(map[string]any)
		if tk["id"] == old["id"] && tk["revoked_at"] == nil {
			t.Errorf("the replaced demo token is not revoked: %v", tk)
		}
		if tk["revoked_at"] == nil && tk["id"] != old["id"] {
			if n := len(tk["scopes"].([]any)); n != len(hosting.AllScopes) {
				t.Errorf("a live demo token with %d scopes, want %d: %v", n, len(hosting.AllScopes), tk)
			}
		}
	}
}
