package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
)

// TestREADMEWalkthrough runs the README's walk-through with berth, as written (the
// shell blocks of its section), against a real Berth with the sandbox on (it begins
// with a sandbox reset): the address is the test's, data/demo-token holds the
// account's token, ~/.ssh/id_ed25519.pub a fresh key, and berth is what its own
// make build makes. Its dig lines ask the Berth's nameserver (Options.DNS, for the
// README's serve --dns-addr), each failing when the answer is not the one it greps
// for. Every command must succeed, and the walk-through ends with the account as it
// began: no server, volume, SSH key, project or zone left.
func TestREADMEWalkthrough(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(raw)
	start := strings.Index(section, "## Walk-through with `berth`")
	if start < 0 {
		t.Fatal("README has no section \"Walk-through with `berth`\"")
	}
	section = section[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	var blocks []string
	for rest := section; ; {
		i := strings.Index(rest, "```sh\n")
		if i < 0 {
			break
		}
		rest = rest[i+len("```sh\n"):]
		j := strings.Index(rest, "```")
		if j < 0 {
			t.Fatal("an unterminated shell block")
		}
		blocks = append(blocks, rest[:j])
		rest = rest[j+3:]
	}
	if len(blocks) < 2 {
		t.Fatalf("%d shell blocks in the section, want the set-up and the server's", len(blocks))
	}
	script := strings.Join(blocks, "\n")
	const readmeURL, readmeSandbox = "http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/sandbox/v1/reset"
	if !strings.Contains(script, readmeURL) || !strings.Contains(script, readmeSandbox) {
		t.Fatalf("the walk-through no longer names %s and %s: update this test", readmeURL, readmeSandbox)
	}
	// It begins with make build and a sandbox reset, with curl.
	for _, tool := range []string{"make", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("*** SKIPPED: the README's walk-through with berth needs %s (Debian: apt-get install make curl) ***", tool)
		}
	}
	testenv.Dig(t)
	const readmeDig = "dig @127.0.0.1 -p 8053 " // the README's serve --dns-addr 127.0.0.1:8053
	if n := strings.Count(script, readmeDig); n != 2 {
		t.Fatalf("the walk-through has %d lines %q, this test expects 2: update it\n%s", n, readmeDig, script)
	}

	env := testenv.New(t, testenv.Options{Sandbox: true, ServeDNS: true})
	acct := env.NewAccount("en", "100", "")
	host, port, err := net.SplitHostPort(env.DNSAddr)
	if err != nil {
		t.Fatal(err)
	}
	script = strings.NewReplacer("http://127.0.0.1:8080/", strings.TrimSuffix(env.URL, "v1"),
		readmeDig, "dig @"+host+" -p "+port+" ").Replace(script)
	// In a directory that stands for a fresh clone: the walk-through builds berth there
	// (make build) and puts it on PATH itself.
	work, home := testenv.Checkout(t), t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "data", "demo-token"), []byte(acct.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519.pub"), []byte(testenv.PublicKey(t)+" cli@berth"+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A fake ssh on PATH (server ssh runs it; a simulated server has no machine at its
	// address).
	tools := t.TempDir()
	if err := os.WriteFile(filepath.Join(tools, "ssh"), []byte("#!/bin/sh\necho \"ssh $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-x", "-c", script)
	cmd.Dir = work
	cmd.Env = append([]string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "PATH=" + tools + ":" + os.Getenv("PATH"), "LANG=C"},
		testenv.GoEnv(t)...)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's walk-through with berth failed: %v\n%s", err, out)
	}
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	for _, kind := range []string{"server", "volume", "ssh-key", "project", "domain"} {
		if got := c.ok(kind, "list", "-q"); strings.TrimSpace(got) != "" {
			t.Errorf("%ss left after the walk-through: %q\n%s", kind, got, out)
		}
	}
	// The ticket it opened is closed, the file it downloaded the one it attached.
	if got := tableRows(c.ok("ticket", "list", "-o", "columns=status")); !equalRows(got, [][]string{{"closed"}}) {
		t.Errorf("tickets after the walk-through: %q, want one closed\n%s", got, out)
	}
	if got, err := os.ReadFile(filepath.Join(work, "boot-copy.log")); err != nil || string(got) != "kernel: I/O error, dev vda\n" {
		t.Errorf("the downloaded file: %q, %v", got, err)
	}
	// The follower started at its beginning saw the server's and the volume's lives as
	// they happened.
	followed, err := os.ReadFile(filepath.Join(work, "events.txt"))
	for _, typ := range []string{"ssh_key.created", "server.created", "operation.succeeded", "volume.attached", "volume.deleted", "ticket.created", "ticket.closed"} {
		if err != nil || !strings.Contains(string(followed), typ) {
			t.Errorf("berth event list --follow did not print %s: %v\n%s", typ, err, followed)
		}
	}
}
