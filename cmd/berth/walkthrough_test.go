package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

func field(t *testing.T, js, name string) any {
	t.Helper()
	m, ok := decode(t, js).(map[string]any)
	if !ok {
		t.Fatalf("not an object: %s", js)
	}
	return m[name]
}

// TestWalkthrough: every resource's commands, end to end, by name where a name is
// taken.
func TestWalkthrough(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	dir := t.TempDir()
	// A fake ssh on PATH records what server ssh runs.
	fakeSSH := filepath.Join(dir, "ssh")
	if err := os.WriteFile(fakeSSH, []byte("#!/bin/sh\necho \"ssh $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	c.env[2] = "PATH=" + dir + ":" + os.Getenv("PATH")

	keyFile := filepath.Join(dir, "id.pub")
	if err := os.WriteFile(keyFile, []byte(testenv.PublicKey(t)+" cli@berth"+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ok("ssh-key", "create", "--name", "laptop", "--public-key-from-file", keyFile)
	if got := c.ok("ssh-key", "describe", "laptop", "-o", "columns=name"); !strings.Contains(got, "laptop") {
		t.Errorf("ssh-key describe: %q", got)
	}
	c.ok("project", "create", "web")
	script := filepath.Join(dir, "boot.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ok("recipe", "create", "--name", "hello", "--script-from-file", script)
	c.ok("recipe", "update", "hello", "--name", "hello2")
	if got := field(t, c.ok("recipe", "describe", "hello2", "-o", "json"), "script"); got != "#!/bin/sh\necho hi\n" {
		t.Errorf("recipe script: %q", got)
	}

	srv := c.ok("server", "create", "--plan", firstPlan(t, c), "--location", "fsn1", "--image", firstImage(t, c),
		"--ssh-key", "laptop", "--project", "web", "--recipe", "hello2", "--display-name", "www", "-o", "json")
	name := field(t, srv, "name").(string)
	if field(t, srv, "status") != "running" || field(t, srv, "display_name") != "www" {
		t.Fatalf("server create: %s", srv)
	}
	if got := c.ok("server", "list", "--project", "web", "--quiet"); strings.TrimSpace(got) != jsonString(field(t, srv, "id")) {
		t.Errorf("server list --project web --quiet: %q", got)
	}
	if got := c.ok("project", "describe", "web", "-o", "columns=server_count"); !strings.Contains(got, "1") {
		t.Errorf("project server_count: %q", got)
	}
	if got := c.ok("server", "ssh", name, "--", "-p", "2222", "uptime"); !strings.HasPrefix(got, "ssh -o ConnectTimeout=10 root@") || !strings.HasSuffix(got, " -p 2222 uptime\n") {
		t.Errorf("server ssh: %q", got)
	}
	c.ok("server", "update", name, "--display-name", "www2", "--no-project")
	if got := c.ok("server", "describe", name, "-o", "columns=display_name,project_id"); !strings.Contains(got, "www2") {
		t.Errorf("server update: %q", got)
	}
	c.ok("server", "metrics", name)
	c.ok("server", "metrics", name, "--range", "24h", "-o", "json")

	snap := c.ok("snapshot", "create", name, "--name", "before", "-o", "json")
	if field(t, snap, "status") != "available" {
		t.Errorf("snapshot create waited, yet: %s", snap)
	}
	c.ok("snapshot", "describe", name, "before")
	if got := c.ok("snapshot", "list", name, "--quiet"); len(strings.Fields(got)) != 1 {
		t.Errorf("snapshot list: %q", got)
	}
	c.ok("snapshot", "restore", name, "before")
	c.ok("snapshot", "delete", name, "before")

	for _, a := range []string{"reboot", "reset", "shutdown", "poweron", "poweroff"} {
		c.ok("server", a, name)
	}
	if st := field(t, c.ok("server", "describe", name, "-o", "json"), "status"); st != "stopped" {
		t.Fatalf("after poweroff: %v", st)
	}
	if got := c.ok("server", "rescale-options", name); !strings.Contains(got, "DISK_OK") {
		t.Errorf("rescale-options: %q", got)
	}
	c.ok("server", "rescale", name, "--plan", "s2-2c-4g")
	if got := c.ok("server", "describe", name, "-o", "columns=plan_id"); !strings.Contains(got, "2") {
		t.Errorf("rescale: %q", got)
	}
	c.ok("server", "reinstall", name, "--image", "debian-12")

	ops := c.ok("operation", "list", "--server", name, "-o", "json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(ops), &list); err != nil || len(list) < 10 {
		t.Fatalf("operation list: %v %s", err, ops)
	}
	id := jsonString(list[0]["id"])
	c.ok("operation", "describe", id)
	if got := c.ok("operation", "wait", id, "-o", "columns=status"); !strings.Contains(got, "success") {
		t.Errorf("operation wait: %q", got)
	}
	c.ok("billing", "show")
	if got := c.ok("billing", "transactions", "-o", "json"); !strings.HasPrefix(got, "[") {
		t.Errorf("billing transactions: %q", got)
	}

	// --no-wait answers the server as the order left it; operation wait waits.
	other := c.ok("server", "create", "--plan", firstPlan(t, c), "--location", "fsn1", "--app", "docker",
		"--no-wait", "-o", "json")
	if field(t, other, "status") != "provisioning" || field(t, other, "app_id") == nil {
		t.Fatalf("server create --no-wait --app docker: %s", other)
	}
	opID := jsonString(field(t, other, "operation").(map[string]any)["id"])
	if got := c.ok("operation", "wait", opID, "-o", "columns=status"); !strings.Contains(got, "success") {
		t.Errorf("operation wait %s: %q", opID, got)
	}
	c.ok("server", "delete", field(t, other, "name").(string), name)
	if r := c.run("server", "describe", name); r.code != 3 {
		t.Errorf("describe a deleted server: exit %d", r.code)
	}
	c.ok("recipe", "delete", "hello2")
	c.ok("project", "delete", "web")
	c.ok("ssh-key", "delete", "laptop")
	for _, l := range [][]string{{"recipe", "list"}, {"project", "list"}, {"ssh-key", "list"}} {
		if got := c.ok(append(l, "-o", "json")...); got != "[]\n" {
			t.Errorf("berth %q after delete: %q", l, got)
		}
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestProgressOnATerminal: on a pseudo-terminal (script(1)) server create draws a
// spinner (carriage returns), without one it prints plain lines.
func TestProgressOnATerminal(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) to run berth on a pseudo-terminal")
	}
	env := testenv.New(t, testenv.Options{SimTimeScale: 0.25}) // provisioning takes ~7 s: more than one 5 s hold
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	plan, image := firstPlan(t, c), firstImage(t, c)
	line := strings.Join([]string{c.bin, "server", "create", "--plan", plan, "--location", "1", "--image", image}, " ")
	cmd := exec.Command("script", "-qec", line, "/dev/null")
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("on a terminal: %v\n%q", err, out)
	}
	if !strings.Contains(string(out), "\r\033[K") || !strings.Contains(string(out), ": provisioning (") || !strings.Contains(string(out), "succeeded after") {
		t.Errorf("on a terminal, no spinner: %q", out)
	}
	r := c.run("server", "create", "--plan", plan, "--location", "1", "--image", image, "-o", "json")
	if r.code != 0 || strings.Contains(r.stderr, "\r") || !strings.Contains(r.stderr, "Waiting for operation") || !strings.Contains(r.stderr, "succeeded after") {
		t.Errorf("without a terminal: exit %d, stderr %q", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "Waiting") {
		t.Errorf("progress on stdout: %q", r.stdout)
	}

	// --quiet: the id alone, no progress, on a terminal or not; notes neither.
	cmd = exec.Command("script", "-qec", line+" --quiet", "/dev/null")
	cmd.Env = c.env
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("--quiet on a terminal: %v\n%q", err, out)
	}
	if id := strings.TrimSpace(string(out)); !isDigits(id) {
		t.Errorf("--quiet on a terminal printed %q, not an id alone", out)
	}
	r = c.run("server", "create", "--plan", plan, "--location", "1", "--image", image, "--quiet")
	if id := strings.TrimSpace(r.stdout); r.code != 0 || r.stderr != "" || !isDigits(id) {
		t.Fatalf("--quiet: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := c.run("server", "delete", strings.TrimSpace(r.stdout), "-q"); r.code != 0 || r.stderr != "" {
		t.Errorf("delete -q: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := c.run("server", "describe", "no-such-server", "-q"); r.code == 0 || r.stderr == "" {
		t.Errorf("an error with -q: exit %d, stderr %q; want it on stderr", r.code, r.stderr)
	}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
