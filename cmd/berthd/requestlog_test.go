package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// TestServeRequestLog: berthd serve logs one JSON line per API request, each whole,
// naming the request's id, and none is lost when it stops at once after the last
// request (the log is written from memory at most 100 ms later, and all of it at
// shutdown); the token and the body's root_password are nowhere in it.
func TestServeRequestLog(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	store := storeFlags(t, data)
	runJSON(t, bin, append([]string{"migrate"}, store...)...)
	runJSON(t, bin, append([]string{"admin", "account", "create", "--email", "log@example.com", "--password", "correct-horse", "--credit", "10"}, store...)...)
	token := runJSON(t, bin, append([]string{"admin", "token", "create", "--account", "1", "--name", "t", "--scopes", "servers"}, store...)...)["token"].(string)
	d := startServe(t, bin, data, testnet.FreeAddr(t), "0.01")

	const password = "Never-In-The-Log-42"
	var ids []string
	for i := range 50 {
		id := fmt.Sprintf("serve-log-%d", i)
		ids = append(ids, id)
		body := `{"plan_id": 999999, "location_id": 1, "image_id": 1, "root_password": "` + password + `"}`
		req, _ := http.NewRequest("POST", d.base+"/servers", strings.NewReader(body))
		if i%2 == 0 {
			req, _ = http.NewRequest("GET", d.base+"/me", nil)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Request-Id", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Request-Id"); got != id {
			t.Errorf("X-Request-Id %q, want %q", got, id)
		}
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("berthd exited with %v\n%s", err, d.log)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("berthd still running 30 s after SIGTERM")
	}
	logged := map[string]int{}
	for _, line := range bytes.Split(bytes.TrimSpace(d.log.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("a log line that is not one JSON object: %q", line)
		}
		if m["msg"] == "request" {
			logged[fmt.Sprint(m["request_id"])]++
			if m["route"] != "GET /v1/openapi.json" && m["account_id"] != float64(1) { // startServe's probes have no token
				t.Errorf("request line without the account: %s", line)
			}
		}
	}
	for _, id := range ids {
		if logged[id] != 1 {
			t.Errorf("request %s logged %d times", id, logged[id])
		}
	}
	for _, secret := range []string{token, password} {
		if bytes.Contains(d.log.Bytes(), []byte(secret)) {
			t.Errorf("the log holds %q", secret)
		}
	}
	if !strings.Contains(d.log.String(), `"msg":"stopped"}`) {
		t.Errorf("the log does not show the stop:\n%s", d.log)
	}
}
