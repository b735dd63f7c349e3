package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
)

// TestEventList: berth event list shows what happened, narrowed as asked, and
// --follow prints each change as it commits (json: one object a line) until
// interrupted, then exits 0.
func TestEventList(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 20})
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	c.ok("project", "create", "web")
	c.ok("project", "create", "db")
	c.ok("project", "delete", "db")

	out := c.ok("event", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// The account's opening credit, the two projects, the deletion.
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], "billing.topped_up") ||
		!strings.Contains(lines[4], "project.deleted") {
		t.Fatalf("event list:\n%s", out)
	}
	if got := c.ok("event", "list", "--type", "project.deleted", "-q"); len(strings.Fields(got)) != 1 {
		t.Errorf("--type project.deleted -q: %q", got)
	}
	if got := c.ok("event", "list", "--limit", "2", "-q"); len(strings.Fields(got)) != 2 {
		t.Errorf("--limit 2: %q", got)
	}
	if r := c.run("event", "list", "--type", "project.renamed"); r.code == 0 || !strings.Contains(r.stderr, "types") {
		t.Errorf("an unknown type: exit %d, %s", r.code, r.stderr)
	}
	last := strings.Fields(lines[4])[0]

	cmd := exec.Command(c.bin, "event", "list", "--follow", "--after", last, "-o", "json")
	cmd.Env = c.env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	got := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			got <- sc.Text()
		}
		close(got)
	}()
	time.Sleep(500 * time.Millisecond)
	c.ok("project", "create", "cache")
	select {
	case line := <-got:
		var e struct {
			Type     string `json:"type"`
			Resource struct {
				Type string `json:"type"`
			} `json:"resource"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Type != "project.created" || e.Resource.Type != "project" {
			t.Errorf("followed line %q (%v)", line, err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("--follow printed nothing within 60 s of the change")
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("--follow after an interrupt: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("--follow did not end on an interrupt")
	}
}
