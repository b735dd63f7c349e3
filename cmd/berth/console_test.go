package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testlog"
)

// TestServerConsole: berth server console attaches to a running server's serial
// console; piped input is typed into it and berth detaches once the console has been
// silent after it. A server that is not running is refused with the API's error.
func TestServerConsole(t *testing.T) {
	t.Parallel()
	c, name := runningServer(t)

	start := time.Now()
	r := c.runIn("root\nsecret\n", "server", "console", name)
	if r.code != 0 {
		t.Fatalf("console: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{name + " login: root\r\n", "Password: ", "Login incorrect"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("console output lacks %q:\n%q", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "secret") {
		t.Errorf("the password was echoed: %q", r.stdout)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("piped input ended, yet berth stayed attached %v", took)
	}

	if out := c.ok("server", "poweroff", name, "-q"); strings.TrimSpace(out) == "" {
		t.Fatalf("poweroff printed nothing")
	}
	r = c.run("server", "console", name)
	if r.code != 4 || !strings.Contains(r.stderr, "server") {
		t.Errorf("console of a stopped server: exit %d, stderr %q; want 4 naming the server", r.code, r.stderr)
	}
}

// TestServerConsoleTerminal: on a terminal keys go to the server as typed, and Ctrl-]
// detaches.
func TestServerConsoleTerminal(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) to run berth on a pseudo-terminal")
	}
	c, name := runningServer(t)

	cmd := exec.Command("script", "-qec", c.bin+" server console "+name, "/dev/null")
	cmd.Env = c.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &testlog.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Typed only once berth says it is attached (the console connected, the terminal
	// raw): typed before, a loaded machine's terminal echoed "admin" in cooked mode
	// and the guest never saw it. Ctrl-] only once the guest has answered.
	awaitOutput(t, cmd, out, "Ctrl-] detaches")
	_, _ = stdin.Write([]byte("admin\r"))
	awaitOutput(t, cmd, out, "Password: ")
	_, _ = stdin.Write([]byte{0x1d})
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after Ctrl-]: %v\n%q", err, out.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("Ctrl-] did not detach:\n%q", out.String())
	}
	_ = stdin.Close()
	for _, want := range []string{"Ctrl-] detaches", name + " login: admin", "Password: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("terminal output lacks %q:\n%q", want, out.String())
		}
	}
}

// awaitOutput waits until out holds want, or kills cmd and fails the test after a
// minute.
func awaitOutput(t *testing.T, cmd *exec.Cmd, out *testlog.Buffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !strings.Contains(out.String(), want); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no %q in the terminal's output within a minute:\n%q", want, out.String())
		}
	}
}

// runningServer is a CLI of a new account of a new Berth, and the name of a server
// of the account that runs.
func runningServer(t *testing.T) (*cli, string) {
	t.Helper()
	env := testenv.New(t, testenv.Options{SimTimeScale: 0.01})
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	plan, image := firstPlan(t, c), firstImage(t, c)
	name := strings.TrimSpace(c.ok("server", "create", "--plan", plan, "--location", "1", "--image", image, "-o", "columns=name"))
	return c, strings.TrimSpace(strings.TrimPrefix(name, "name:"))
}
