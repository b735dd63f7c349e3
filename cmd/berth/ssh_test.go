package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
)

// TestServerSSHConnectTimeout: berth server ssh on a simulated server (its address
// in 100.64.0.0/10, where nothing answers) gives ssh a connect timeout before the
// destination, says at once that the address is where simulated servers are, and
// when ssh fails to connect (status 255) ends with an error naming the server, its
// address, the timeout and the console instead. A fake ssh on PATH records its
// arguments and fails as ssh does; the last case runs the real ssh, when there is
// one, against the server's address: it must give up after the default timeout, not
// hang.
func TestServerSSHConnectTimeout(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	srv := c.ok("server", "create", "--plan", firstPlan(t, c), "--location", "fsn1", "--image", firstImage(t, c), "-o", "json")
	name, ipv4 := field(t, srv, "name").(string), field(t, srv, "ipv4").(string)
	if !strings.HasPrefix(ipv4, "100.") {
		t.Fatalf("a simulated server's IPv4 is %s, not in 100.64.0.0/10: update this test", ipv4)
	}

	// The fake ssh writes its arguments, one a line, into args.txt and exits with
	// $FAKE_SSH_EXIT, saying on stderr what ssh says when an address does not answer.
	tools := t.TempDir()
	argsFile := filepath.Join(tools, "args.txt")
	fake := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + argsFile + "\n" +
		"if [ \"${FAKE_SSH_EXIT:-0}\" != 0 ]; then echo \"ssh: connect to host $2 port 22: Connection timed out\" >&2; fi\n" +
		"exit ${FAKE_SSH_EXIT:-0}\n"
	if err := os.WriteFile(filepath.Join(tools, "ssh"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	withFake := func(exit string) *cli {
		f := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token, "FAKE_SSH_EXIT="+exit)
		f.env[2] = "PATH=" + tools + ":" + os.Getenv("PATH")
		return f
	}
	for _, tc := range []struct {
		name     string
		args     []string
		exit     string
		wantArgs []string
		wantCode int
		// in berth's stderr
		want []string
	}{
		{"default timeout", []string{"--", "uptime"}, "0",
			[]string{"-o", "ConnectTimeout=10", "root@" + ipv4, "uptime"}, 0,
			[]string{ipv4 + " is in 100.64.0.0/10, where simulated servers are"}},
		{"a timeout of its own", []string{"--connect-timeout", "2500ms", "--", "-p", "2222", "uptime"}, "0",
			[]string{"-o", "ConnectTimeout=3", "root@" + ipv4, "-p", "2222", "uptime"}, 0, nil},
		{"no timeout", []string{"--connect-timeout", "0"}, "0", []string{"root@" + ipv4}, 0, nil},
		{"ssh cannot connect", []string{"--connect-timeout", "5s"}, "255",
			[]string{"-o", "ConnectTimeout=5", "root@" + ipv4}, 1,
			[]string{"Connection timed out", "ssh root@" + ipv4 + " (server " + name + ") failed: it could not connect",
				"within 5s (--connect-timeout)", "where Berth's simulated servers are", "berth server console " + name}},
		{"the remote command fails", nil, "3", []string{"-o", "ConnectTimeout=10", "root@" + ipv4}, 1, []string{"exit status 3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(argsFile)
			r := withFake(tc.exit).run(append([]string{"server", "ssh", name}, tc.args...)...)
			if r.code != tc.wantCode {
				t.Errorf("exit %d, want %d\n%s", r.code, tc.wantCode, r.stderr)
			}
			got, err := os.ReadFile(argsFile)
			if want := strings.Join(tc.wantArgs, "\n") + "\n"; err != nil || string(got) != want {
				t.Errorf("ssh ran with %q (%v), want %q", got, err, want)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
	if r := withFake("0").run("server", "ssh", name, "--connect-timeout", "-1s"); r.code != 1 || !strings.Contains(r.stderr, "must not be negative") {
		t.Errorf("--connect-timeout -1s: exit %d\n%s", r.code, r.stderr)
	}
	if r := withFake("0").run("server", "ssh", name, "-q"); r.code != 0 || r.stderr != "" {
		t.Errorf("-q: exit %d, stderr %q (a note is not an error: -q leaves it out)", r.code, r.stderr)
	}

	t.Run("real ssh", func(t *testing.T) {
		if _, err := exec.LookPath("ssh"); err != nil {
			t.Skip("*** SKIPPED: no ssh on PATH (Debian: apt-get install openssh-client) ***")
		}
		// As the defect was met: the default timeout (10 s). Without one, ssh waited
		// on the address for as long as the network let it: here, for ever. berth and
		// the ssh it starts are a process group of their own, killed together after
		// 90 s, so that a hanging ssh cannot hold the test.
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, c.bin, "server", "ssh", name, "--", "-o", "BatchMode=yes", "true")
		cmd.Env = c.env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 5 * time.Second
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		err := cmd.Run()
		if took := time.Since(start); took > 45*time.Second {
			t.Errorf("berth server ssh took %s with the default --connect-timeout of 10s", took)
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr.String(), "(server "+name+") failed") {
			t.Errorf("%v, want exit 1 and the failure named\n%s", err, &stderr)
		}
	})
}
