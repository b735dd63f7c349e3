package main

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testlog"
	"github.com/berthhq/berth/internal/testnet"
	"github.com/berthhq/berth/internal/testpg"
)

// dbPassword is the database password these tests give berthd and look for in all it
// prints.
const dbPassword = "S3cretPassw0rd"

// envWithoutStore is the test's environment without the variables that name a
// store (BERTH_DATA, BERTH_DATABASE, BERTH_DATABASE_URL), for a berthd that must see
// only the store a test gives it.
func envWithoutStore() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "BERTH_DATA", "BERTH_DATABASE", "BERTH_DATABASE_URL":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// runBerthd runs the binary with the store variables of the test's environment
// replaced by env, and returns its exit code and what it printed.
func runBerthd(t *testing.T, bin string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(envWithoutStore(), env...)
	cmd.Dir = t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	} else if err != nil {
		t.Fatalf("berthd %s: %v", strings.Join(args, " "), err)
	}
	return 0, out.String(), errb.String()
}

// TestDatabasePasswordNeverPrinted: with the database in BERTH_DATABASE (or
// BERTH_DATABASE_URL), every command's --help shows --database's default without its
// password, whether the password is in the URL's user part, a ?password= parameter
// or PostgreSQL's keyword form; and the errors of commands that cannot reach the
// database (or refuse it) do not print it either (docs/SECURITY.md). The commands are
// all those of berthd's command tree.
func TestDatabasePasswordNeverPrinted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	walk(root(), nil)
	if len(paths) < 30 {
		t.Fatalf("berthd's command tree has %d commands; walked it wrong?", len(paths))
	}
	data := t.TempDir()
	runJSON(t, bin, "migrate", "--data", data) // for admin store copy's source
	for _, v := range []struct {
		name, env, url, shown string
	}{
		{"user part", "BERTH_DATABASE", "postgres://berth:" + dbPassword + "@127.0.0.1:1/x",
			"postgres://berth:xxxxx@127.0.0.1:1/x"},
		{"query parameter", "BERTH_DATABASE", "postgres://berth@127.0.0.1:1/x?password=" + dbPassword + "&sslmode=disable",
			"postgres://berth@127.0.0.1:1/x?password=xxxxx&sslmode=disable"},
		{"keyword form", "BERTH_DATABASE", "host=127.0.0.1 port=1 user=berth password=" + dbPassword + " dbname=x",
			"host=127.0.0.1 port=1 user=berth password=xxxxx dbname=x"},
		{"BERTH_DATABASE_URL", "BERTH_DATABASE_URL", "postgres://berth:" + dbPassword + "@127.0.0.1:1/x",
			"postgres://berth:xxxxx@127.0.0.1:1/x"},
	} {
		env := []string{v.env + "=" + v.url}
		check := func(what string, wantCode int, args ...string) (stdout, stderr string) {
			t.Helper()
			code, stdout, stderr := runBerthd(t, bin, env, args...)
			if code != wantCode {
				t.Errorf("%s: berthd %s: exit %d, want %d\n%s%s", v.name, what, code, wantCode, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, dbPassword) {
				t.Errorf("%s: berthd %s printed the database password:\n%s%s", v.name, what, stdout, stderr)
			}
			return stdout, stderr
		}
		for _, p := range paths {
			what := strings.Join(append(slices.Clone(p), "--help"), " ")
			stdout, _ := check(what, 0, append(slices.Clone(p), "--help")...)
			if !strings.Contains(stdout, `(default "`+v.shown+`")`) {
				t.Errorf("%s: berthd %s: --database's default is not shown as %q:\n%s", v.name, what, v.shown, stdout)
			}
		}
		// Commands that fail on the database: unreachable, or not a URL Berth takes.
		check("admin account list", 1, "admin", "account", "list")
		check("admin account list --database", 1, "admin", "account", "list", "--database", v.url)
		check("migrate", 1, "migrate")
		check("serve", 1, "serve", "--addr", "127.0.0.1:0")
		check("serve --sandbox", 1, "serve", "--sandbox", "--addr", "127.0.0.1:0")
		code, stdout, stderr := runBerthd(t, bin, nil, "admin", "store", "copy", "--data", data, "--to", v.url)
		if code != 1 || strings.Contains(stdout+stderr, dbPassword) {
			t.Errorf("%s: admin store copy --to: exit %d, want 1 without the password:\n%s%s", v.name, code, stdout, stderr)
		}
	}
}

// TestServeLogsNoDatabasePassword: serve's log from start to stop, and migrate's
// output, name the database without its password (docs/SECURITY.md). The test
// server trusts local connections, so a URL with a password reaches it.
func TestServeLogsNoDatabasePassword(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	u, err := url.Parse(testpg.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	withUser := *u
	withUser.User = url.UserPassword(u.User.Username(), dbPassword)
	withQuery := *u
	q := withQuery.Query()
	q.Set("password", dbPassword)
	withQuery.RawQuery = q.Encode()
	for _, dsn := range []string{withUser.String(), withQuery.String()} {
		env := []string{"BERTH_DATABASE=" + dsn}
		code, stdout, stderr := runBerthd(t, bin, env, "migrate")
		if code != 0 || strings.Contains(stdout+stderr, dbPassword) || !strings.Contains(stdout, "xxxxx") {
			t.Errorf("migrate: exit %d, want 0 and the URL redacted:\n%s%s", code, stdout, stderr)
		}
		addr := testnet.FreeAddr(t)
		d := &daemon{base: "http://" + addr + "/v1", log: &testlog.Buffer{}}
		d.cmd = exec.Command(bin, "serve", "--addr", addr, "--sim-time-scale", "0.01")
		d.cmd.Env = append(envWithoutStore(), env...)
		d.cmd.Dir = t.TempDir()
		d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
		if err := d.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.cmd.Process.Kill(); _ = d.cmd.Wait() })
		d.waitUp(t)
		if err := d.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if err := d.cmd.Wait(); err != nil {
			t.Errorf("serve did not stop cleanly: %v", err)
		}
		if log := d.log.String(); strings.Contains(log, dbPassword) || !strings.Contains(log, `"database":"postgres://`) ||
			!strings.Contains(log, "xxxxx") {
			t.Errorf("serve's log, want the database named without its password:\n%s", log)
		}
		if _, err := os.Stat(filepath.Join(d.cmd.Dir, "data")); !os.IsNotExist(err) {
			t.Errorf("serve on PostgreSQL made a data directory (%v)", err)
		}
	}
}
