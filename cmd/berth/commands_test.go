package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/internal/testenv"
)

// commandPaths is every command a user can call, root first, as the words that name
// it; hidden ones are left out. cobra adds "help" only when it runs, so it is not
// among them (the root's help lists it).
func commandPaths() [][]string {
	var paths [][]string
	var walk func(cmd *cobra.Command, path []string)
	walk = func(cmd *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range cmd.Commands() { // sorted by name
			if !sub.Hidden {
				walk(sub, append(append([]string{}, path...), sub.Name()))
			}
		}
	}
	walk(rootCmd(&globals{}), nil)
	return paths
}

// transcript is what one run of berth showed: the command line, stdout, stderr and a
// non-zero exit code.
func transcript(args []string, r result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "$ berth %s\n%s", strings.Join(args, " "), r.stdout)
	if r.stderr != "" {
		fmt.Fprintf(&b, "[stderr]\n%s", r.stderr)
	}
	if r.code != 0 {
		fmt.Fprintf(&b, "[exit %d]\n", r.code)
	}
	return b.String() + "\n"
}

// checkGolden compares got with testdata/name.golden (go test -update rewrites it).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs from line %d:\ngot  %q\nwant %q\n(whole output:)\n%s", path, i+1, gl[i], wl[i], got)
			}
		}
		t.Fatalf("%s: %d lines, want %d:\n%s", path, len(gl), len(wl), got)
	}
}

// TestGoldenHelp: the help of every command (usage line, flags, subcommands), as
// testdata/help.golden holds it.
func TestGoldenHelp(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	var b strings.Builder
	for _, path := range commandPaths() {
		args := append(path, "--help")
		b.WriteString(transcript(args, c.run(args...)))
	}
	checkGolden(t, "help", b.String())
}

// TestGoldenUsage: every command (but completion's) with no argument and with six,
// against an address where nothing answers: what it says of its arguments, or that it
// asked the API (and of what), and its exit code, as testdata/usage.golden holds it.
func TestGoldenUsage(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "BERTH_URL=http://127.0.0.1:1/v1", "BERTH_TOKEN=berth_x")
	var b strings.Builder
	for _, path := range commandPaths() {
		if len(path) == 0 || path[0] == "completion" {
			continue
		}
		for _, extra := range [][]string{nil, {"x", "x", "x", "x", "x", "x"}} {
			args := append(append(append([]string{}, path...), extra...), "--retries", "0")
			b.WriteString(transcript(args, c.run(args...)))
		}
	}
	checkGolden(t, "usage", b.String())
}

// TestGoldenLookups: each resource found by name and by id, the errors of names that
// name nothing (exit 3) and ids that are not numbers, and the notes of deletions, as
// testdata/lookups.golden holds them; the server's random name is replaced by
// server-XXXXXX.
func TestGoldenLookups(t *testing.T) {
	t.Parallel()
	clock := testenv.NewFakeClock(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC))
	env := testenv.New(t, testenv.Options{Clock: clock.Now})
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	c.ok("project", "create", "web")
	c.ok("recipe", "create", "--name", "hello", "--script", "echo hi")
	c.ok("ssh-key", "create", "--name", "laptop", "--public-key", fixedKey)
	name := strings.TrimSpace(c.ok("server", "create", "--plan", "s1-1c-1g", "--location", "fsn1", "--image", "ubuntu-24.04",
		"--ssh-key", "laptop", "--project", "web", "--display-name", "www", "-q"))
	name = strings.TrimSpace(c.ok("server", "describe", name, "-o", "columns=name"))
	name = strings.TrimSpace(strings.TrimPrefix(name, "name:"))
	c.ok("snapshot", "create", name, "--name", "before")
	c.ok("volume", "create", "--name", "data", "--size", "10", "--server", name)
	c.ok("domain", "create", "example.com")
	fp := "SHA256:" + strings.TrimSpace(strings.SplitN(c.ok("ssh-key", "list", "-o", "columns=fingerprint"), "SHA256:", 2)[1])
	var b strings.Builder
	for _, args := range [][]string{
		{"ssh-key", "describe", "laptop", "-o", "columns=id,name"},
		{"ssh-key", "describe", "1", "-o", "columns=id,name"},
		{"ssh-key", "describe", fp, "-o", "columns=id,name"},
		{"ssh-key", "describe", "nope"},
		{"ssh-key", "describe", "99"},
		{"ssh-key", "delete", "nope"},
		{"ssh-key", "delete", "99"},
		{"project", "describe", "web", "-o", "columns=id,name,server_count"},
		{"project", "describe", "1", "-o", "columns=id,name"},
		{"project", "describe", "nope"},
		{"project", "describe", "99"},
		{"project", "update", "nope", "--name", "x"},
		{"project", "update", "99", "--name", "x"},
		{"project", "delete", "nope"},
		{"project", "delete", "99"},
		{"recipe", "describe", "hello", "-o", "columns=id,name"},
		{"recipe", "describe", "1", "-o", "columns=id,name"},
		{"recipe", "describe", "nope"},
		{"recipe", "describe", "99"},
		{"recipe", "update", "nope", "--name", "x"},
		{"recipe", "update", "99", "--name", "x"},
		{"recipe", "update", "nope", "--script-from-file", "/nonexistent"},
		{"recipe", "delete", "nope"},
		{"recipe", "delete", "99"},
		{"server", "describe", name, "-o", "columns=name,project_id"},
		{"server", "describe", "1", "-o", "columns=name"},
		{"server", "describe", "nope"},
		{"server", "describe", "99"},
		{"server", "update", "nope", "--display-name", "x"},
		{"server", "update", name, "--project", "nope"},
		{"server", "delete", "nope"},
		{"server", "list", "--project", "nope"},
		{"server", "list", "--project", "web", "-q"},
		{"server", "list", "--project", "1", "-q"},
		{"server", "create", "--plan", "s1-1c-1g", "--location", "nope"},
		{"server", "create", "--plan", "nope", "--location", "fsn1"},
		{"server", "create", "--plan", "s1-1c-1g", "--location", "fsn1", "--image", "nope"},
		{"server", "create", "--plan", "s1-1c-1g", "--location", "fsn1", "--app", "nope"},
		{"server", "create", "--plan", "s1-1c-1g", "--location", "fsn1", "--image", "ubuntu-24.04", "--recipe", "nope"},
		{"server", "create", "--plan", "s1-1c-1g", "--location", "fsn1", "--image", "ubuntu-24.04", "--project", "nope"},
		{"server", "create", "--plan", "s1-1c-1g", "--location", "fsn1", "--image", "ubuntu-24.04", "--ssh-key", "nope"},
		{"server", "reinstall", name, "--image", "nope"},
		{"server", "rescale", name, "--plan", "nope"},
		{"plan", "list", "--location", "nope"},
		{"image", "list", "--location", "nope"},
		{"image", "list", "--location", "fsn1", "-q"},
		{"snapshot", "list", "nope"},
		{"snapshot", "describe", name, "before", "-o", "columns=name,status"},
		{"snapshot", "describe", name, "1", "-o", "columns=name,status"},
		{"snapshot", "describe", name, "nope"},
		{"snapshot", "describe", name, "99"},
		{"snapshot", "describe", "nope", "before"},
		{"snapshot", "restore", name, "nope"},
		{"snapshot", "restore", name, "99"},
		{"snapshot", "delete", name, "nope"},
		{"snapshot", "delete", name, "99"},
		{"operation", "describe", "nope"},
		{"operation", "describe", "99"},
		{"operation", "wait", "nope"},
		{"operation", "wait", "99"},
		{"operation", "list", "--server", "nope"},
		{"volume", "describe", "data", "-o", "columns=id,name,server"},
		{"volume", "describe", "1", "-o", "columns=id,name"},
		{"volume", "describe", "nope"},
		{"volume", "describe", "99"},
		{"volume", "update", "nope", "--name", "x"},
		{"volume", "update", "data", "--project", "nope"},
		{"volume", "delete", "nope"},
		{"volume", "list", "--server", "nope"},
		{"volume", "list", "--server", name, "-q"},
		{"volume", "list", "--project", "nope"},
		{"volume", "create", "--name", "x", "--size", "10", "--location", "nope"},
		{"volume", "create", "--name", "x", "--size", "10", "--server", "nope"},
		{"volume", "create", "--name", "x", "--size", "10", "--location", "fsn1", "--project", "nope"},
		{"volume", "attach", "nope", "--server", name},
		{"volume", "attach", "data", "--server", "nope"},
		{"volume", "detach", "nope"},
		{"volume", "resize", "nope", "--size", "20"},
		{"domain", "describe", "example.com", "-o", "columns=id,name"},
		{"domain", "describe", "1", "-o", "columns=id,name"},
		{"domain", "describe", "nope.example"},
		{"domain", "describe", "99"},
		{"domain", "update", "nope.example", "--ttl", "600"},
		{"domain", "delete", "nope.example"},
		{"domain", "export", "nope.example"},
		{"domain", "import", "nope.example", "/nonexistent"},
		{"rrset", "list", "nope.example"},
		{"rrset", "list", "1", "-q"},
		{"rrset", "set", "nope.example", "www", "A", "192.0.2.1"},
		{"rrset", "delete", "example.com", "nope", "A"},
		{"server", "rdns", "list", "nope"},
		{"server", "rdns", "list", "www", "-o", "columns=ptr"},
		{"server", "license", "add", "www", "plesk-web-admin", "-o", "columns=id,license,status"},
		{"server", "license", "add", "www", "nope"},
		{"server", "license", "add", "www", "99"},
		{"server", "license", "add", "nope", "plesk-web-admin"},
		{"server", "create", "--plan", "s1-1c-1g", "--location", "fsn1", "--image", "ubuntu-24.04", "--license", "nope"},
		{"server", "license", "list", "nope"},
		{"server", "license", "list", "www", "-o", "columns=id,license,status"},
		{"server", "license", "remove", "www", "nope"},
		{"server", "license", "remove", "www", "cpanel-solo"},
		{"server", "license", "remove", "www", "99"},
		{"server", "license", "remove", "www", "plesk-web-admin"},
		{"server", "license", "remove", "www", "plesk-web-admin"},
		{"volume", "update", "data", "--name", "data2", "-o", "columns=id,name"},
		{"volume", "detach", "data2", "-q"},
		{"volume", "delete", "data2"},
		{"snapshot", "delete", name, "before"},
		{"project", "update", "web", "--name", "web2", "-o", "columns=id,name"},
		{"project", "delete", "web2"},
		{"recipe", "update", "hello", "--name", "hello2", "-o", "columns=id,name"},
		{"recipe", "delete", "hello2"},
		{"ssh-key", "delete", fp},
		{"domain", "delete", "1"},
		{"server", "delete", name},
	} {
		r := c.run(args...)
		for _, s := range []*string{&r.stdout, &r.stderr} {
			*s = strings.ReplaceAll(*s, name, "server-XXXXXX")
		}
		b.WriteString(strings.ReplaceAll(transcript(args, r), name, "server-XXXXXX"))
	}
	checkGolden(t, "lookups", b.String())
}
