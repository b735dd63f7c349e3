package main

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/testenv"
)

// TestTimeout: against a server that takes the connection and never answers, berth
// gives up after its timeout (--timeout, BERTH_TIMEOUT or the context's), saying
// which server did not answer within how long, instead of waiting forever.
func TestTimeout(t *testing.T) {
	t.Parallel()
	silent := testenv.NewSilentServer(t)
	url := "http://" + silent.Addr + "/v1"
	withContext := newCLI(t)
	if r := withContext.runIn("berth_x\n", "context", "create", "silent", "--url", url, "--token-stdin", "--timeout", "1s"); r.code != 0 {
		t.Fatalf("context create --timeout 1s: exit %d %s", r.code, r.stderr)
	}
	// A ticket whose console never answers: opening the console is bounded too.
	b := fakeBerth(t, map[string]func() (int, any){
		"POST /v1/servers/server-abcdef/console": ok(api.One[api.ConsoleTicket]{Data: api.ConsoleTicket{
			URL: "ws://" + silent.Addr + "/v1/servers/1/console?ticket=berthc_secret", ExpiresAt: time.Now().Add(time.Minute)}}),
	})
	for _, tt := range []struct {
		name string
		c    *cli
		args []string
	}{
		{"--timeout", newCLI(t, "BERTH_URL="+url, "BERTH_TOKEN=berth_x"), []string{"me", "--timeout", "1s"}},
		{"BERTH_TIMEOUT", newCLI(t, "BERTH_URL="+url, "BERTH_TOKEN=berth_x", "BERTH_TIMEOUT=1s"), []string{"server", "list"}},
		{"context", withContext, []string{"project", "create", "web"}},
		{"console", newCLI(t, "BERTH_URL="+b.URL+"/v1", "BERTH_TOKEN=berth_x"), []string{"server", "console", "server-abcdef", "--timeout", "1s"}},
	} {
		start := time.Now()
		r := tt.c.runWithin(30*time.Second, "", tt.args...)
		took := time.Since(start)
		if r.code != 1 || took > 15*time.Second {
			t.Errorf("%s: berth %q: exit %d after %s, want 1 after about 1 s\n%s", tt.name, tt.args, r.code, took, r.stderr)
		}
		for _, want := range []string{"://" + silent.Addr + " did not answer within 1s", "--timeout, BERTH_TIMEOUT"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: berth %q: stderr %q lacks %q", tt.name, tt.args, r.stderr, want)
			}
		}
		if strings.Contains(r.stderr, "berthc_secret") || strings.Contains(r.stderr, "berth: berth:") {
			t.Errorf("%s: stderr %q", tt.name, r.stderr)
		}
	}

	c := newCLI(t, "BERTH_URL="+url, "BERTH_TOKEN=berth_x")
	for _, bad := range [][]string{{"me", "--timeout", "soon"}, {"me", "--timeout", "-1s"}} {
		if r := c.runWithin(30*time.Second, "", bad...); r.code != 1 || !strings.Contains(r.stderr, "want a duration") {
			t.Errorf("berth %q: exit %d %q", bad, r.code, r.stderr)
		}
	}
	bad := &cli{t: t, bin: c.bin, env: append(append([]string{}, c.env...), "BERTH_TIMEOUT=soon")}
	if r := bad.runWithin(30*time.Second, "", "me"); r.code != 1 || !strings.Contains(r.stderr, "BERTH_TIMEOUT: timeout \"soon\"") {
		t.Errorf("BERTH_TIMEOUT=soon: exit %d %q", r.code, r.stderr)
	}
}

// TestTimeoutSparesLongCalls: a timeout shorter than an operation and than a console
// session cuts neither: berth waits on the operation with held requests, each given
// the timeout on top of its wait, and the open console has no timeout. The timeout
// leaves room for one plain request on a loaded machine (CI saw an order take over
// 1 s), and the provisioning and the session are each well longer than it.
func TestTimeoutSparesLongCalls(t *testing.T) {
	t.Parallel()
	const timeout = 5 * time.Second
	env := testenv.New(t, testenv.Options{SimTimeScale: 0.5}) // a provisioning takes about 15 s
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token, "BERTH_TIMEOUT="+timeout.String())
	start := time.Now()
	r := c.run("server", "create", "--plan", firstPlan(t, c), "--location", "1", "--image", firstImage(t, c), "-o", "columns=name,status")
	if r.code != 0 || !strings.Contains(r.stdout, "running") {
		t.Fatalf("server create with a timeout of %s: exit %d after %s\n%s%s", timeout, r.code, time.Since(start), r.stdout, r.stderr)
	}
	if took := time.Since(start); took < 2*timeout {
		t.Errorf("server create took %s: too short to show the wait outlives the timeout", took)
	}
	name := strings.TrimSpace(strings.TrimPrefix(strings.Split(r.stdout, "\n")[0], "name:"))

	// A session of over twice the timeout: a login, a pause, then the password.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, "server", "console", name)
	cmd.Env = c.env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(in, "root\n")
	time.Sleep(2 * timeout)
	_, _ = io.WriteString(in, "secret\n")
	in.Close()
	if err := cmd.Wait(); err != nil || !strings.Contains(out.String(), "Login incorrect") {
		t.Errorf("a console session longer than the timeout: %v\nstdout %q\nstderr %q", err, out.String(), errb.String())
	}
}
