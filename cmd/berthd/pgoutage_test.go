package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
	"github.com/berthhq/berth/internal/testpg"
)

// TestPostgresOutage: while PostgreSQL is down, /readyz answers 503 (a load balancer
// takes the process out) and the API answers 503 with Retry-After, never 500; once
// it is back, both answer again without a restart of berthd.
func TestPostgresOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	pg := testpg.NewServer(t)
	bin := testenv.BerthdBinary(t)
	// An operator command on a database without Berth's schema (a mistyped URL) is
	// an error, not a new, empty Berth.
	if msg := runError(t, bin, "admin", "account", "list", "--database", pg.URL); !strings.Contains(msg, "migrate") {
		t.Errorf("admin on a database without Berth: %q", msg)
	}
	runJSON(t, bin, "migrate", "--database", pg.URL)
	acct := runJSON(t, bin, "admin", "account", "create", "--email", "o@example.com", "--password", "long-enough-pw", "--database", pg.URL)
	token := runJSON(t, bin, "admin", "token", "create", "--account", fmt.Sprint(acct["id"]), "--name", "t", "--database", pg.URL)["token"].(string)
	addr := testnet.FreeAddr(t)
	d := startServeArgs(t, bin, addr, "serve", "--database", pg.URL, "--addr", addr)
	root := "http://" + addr
	status := func(path string) (int, http.Header) {
		t.Helper()
		req, _ := http.NewRequest("GET", root+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	until := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30 s\n%s", what, d.log)
			}
		}
	}
	if code, _ := status("/readyz"); code != 200 {
		t.Fatalf("/readyz with PostgreSQL up: %d", code)
	}
	before := len(d.log.String())
	pg.Stop()
	down := time.Now()
	until("/readyz 503 while PostgreSQL is down", func() bool { code, _ := status("/readyz"); return code == 503 })
	if code, _ := status("/healthz"); code != 200 {
		t.Errorf("/healthz while PostgreSQL is down: %d, want 200 (the process is alive)", code)
	}
	for _, path := range []string{"/v1/me", "/v1/servers"} {
		if code, h := status(path); code != 503 || h.Get("Retry-After") == "" {
			t.Errorf("GET %s while PostgreSQL is down: %d (Retry-After %q), want 503 with Retry-After", path, code, h.Get("Retry-After"))
		}
	}
	// Ten seconds down: the job queue's fetch loop fails every 100 ms and the
	// listener retries every second, yet each of their messages is logged once
	// (issue 33 saw ~50 ERROR lines in a 10 s outage). A failed request is logged
	// each time: each is one of its own.
	time.Sleep(time.Until(down.Add(10 * time.Second)))
	outage := d.log.String()[before:]
	repeated := map[string]int{}
	for _, line := range strings.Split(outage, "\n") {
		var rec struct{ Level, Msg string }
		if json.Unmarshal([]byte(line), &rec) == nil && (rec.Level == "ERROR" || rec.Level == "WARN") && rec.Msg != "request failed" {
			if repeated[rec.Msg]++; repeated[rec.Msg] == 2 {
				t.Errorf("logged more than once in a 10 s outage: %q", rec.Msg)
			}
		}
	}
	pg.Start()
	until("/readyz 200 once PostgreSQL is back", func() bool { code, _ := status("/readyz"); return code == 200 })
	until("the API once PostgreSQL is back", func() bool { code, _ := status("/v1/me"); return code == 200 })
	if t.Failed() {
		t.Logf("the log of the outage:\n%s", outage)
	}
	until("a line that says the notifications are back", func() bool {
		return strings.Contains(d.log.String()[before:], `"msg":"notifications of operations and events: listening again"`)
	})
}
