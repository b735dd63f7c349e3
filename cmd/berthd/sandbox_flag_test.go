package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"
)

// TestServeSandboxRefusesLibvirt: --sandbox works with the sim driver only; with
// --driver libvirt serve refuses to start (exit 1) naming both flags, before it
// opens anything.
func TestServeSandboxRefusesLibvirt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := buildBerthd(t)
	for _, args := range [][]string{
		{"--driver", "libvirt", "--sandbox"},
		{"--sandbox", "--driver", "libvirt"},
	} {
		cmd := exec.Command(bin, append([]string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0"}, args...)...)
		out, err := cmd.Output()
		var res struct{ Error string }
		_ = json.Unmarshal(out, &res)
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 || !strings.Contains(res.Error, "--sandbox") || !strings.Contains(res.Error, "--driver libvirt") {
			t.Errorf("serve %v: %v, %s; want exit 1 with an error naming --sandbox and --driver libvirt", args, err, out)
		}
	}
}

// TestServeSandbox: serve --sandbox serves the sandbox API under /sandbox/v1 to any
// token of an account; without --sandbox those paths are the API's 404.
func TestServeSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := buildBerthd(t)
	data := t.TempDir()
	runJSON(t, bin, append([]string{"migrate"}, storeFlags(t, data)...)...)
	runJSON(t, bin, append([]string{"admin", "account", "create", "--email", "s@example.com", "--password", "correct-horse", "--credit", "10"},
		storeFlags(t, data)...)...)
	token := runJSON(t, bin, append([]string{"admin", "token", "create", "--account", "1", "--name", "t", "--scopes", "read"},
		storeFlags(t, data)...)...)["token"].(string)
	call := func(addr, method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}

	addr := freeAddr(t)
	d := startServe(t, bin, data, addr, "0.01")
	if st, m := call(addr, "GET", "/sandbox/v1/faults", ""); st != 404 || m["code"] != "not_found" {
		t.Errorf("without --sandbox: %d %v, want 404 not_found", st, m)
	}
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()

	addr = freeAddr(t)
	startServe(t, bin, data, addr, "0.01", "--sandbox")
	if st, m := call(addr, "POST", "/sandbox/v1/faults", `{"method": "GET", "path": "/me", "status": 503}`); st != 201 {
		t.Fatalf("POST /sandbox/v1/faults: %d %v", st, m)
	}
	if st, m := call(addr, "GET", "/v1/me", ""); st != 503 || m["code"] != "unavailable" {
		t.Errorf("GET /v1/me under the fault: %d %v", st, m)
	}
	if st, m := call(addr, "GET", "/sandbox/v1/requests", ""); st != 200 || len(m["data"].([]any)) != 1 {
		t.Errorf("journal: %d %v", st, m)
	}
}
