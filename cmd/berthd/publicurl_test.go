package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// TestServePublicURLAndCORSFlags: --public-url and --cors-origin are checked before
// anything starts (exit 1, the error names the flag), and once given reach the API:
// the ledger's links start with the public URL, and a browser origin that was allowed
// gets its CORS headers while another does not.
func TestServePublicURLAndCORSFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--public-url", "api.example.com"}, `--public-url "api.example.com"`},
		{[]string{"--public-url", "ftp://api.example.com"}, "--public-url"},
		{[]string{"--public-url", "https://"}, "--public-url"},
		{[]string{"--public-url", "https://api.example.com/?x=1"}, "--public-url"},
		{[]string{"--public-url", "https://api.example.com?"}, "--public-url"},
		{[]string{"--public-url", "https://api.example.com/#top"}, "--public-url"},
		{[]string{"--public-url", "https://user:pw@api.example.com"}, "--public-url"},
		{[]string{"--public-url", "https://api.example.com/v1"}, "without /v1"},
		{[]string{"--cors-origin", "https://app.example.com", "--cors-origin", "app.example.com"}, `--cors-origin "app.example.com"`},
		{[]string{"--cors-origin", "*"}, "--cors-origin"},
		{[]string{"--cors-origin", "null"}, "--cors-origin"},
		{[]string{"--cors-origin", "https://app.example.com/path"}, "--cors-origin"},
		{[]string{"--cors-origin", "https://app.example.com?x"}, "--cors-origin"},
		{[]string{"--cors-origin", ""}, "--cors-origin"},
		// Not about the public URL, but the same kind of mistake: a flag's value that
		// would silently mean something else is refused, naming the flag.
		{[]string{"--sim-time-scale", "0"}, "--sim-time-scale 0"},
		{[]string{"--sim-time-scale", "-1"}, "--sim-time-scale -1"},
		{[]string{"--sim-time-scale", "NaN"}, "--sim-time-scale"},
		{[]string{"--sim-time-scale", "+Inf"}, "--sim-time-scale"},
		{[]string{"--rate-limit", "0"}, "--rate-limit"},
		{[]string{"--read-cache-servers", "0"}, "--read-cache-servers 0: must be from 1 to 100000000"},
		{[]string{"--read-cache-servers", "100000001"}, "--read-cache-servers 100000001: must be from 1 to 100000000"},
		{[]string{"--read-cache-servers", "9223372036854775807"}, "--read-cache-servers 9223372036854775807"},
		{[]string{"--read-cache-servers", "-1"}, "--read-cache-servers -1"},
		{[]string{"--read-cache-servers", "9223372036854775808"}, "--read-cache-servers"},
		{[]string{"--read-cache-servers", ""}, "--read-cache-servers"},
		{[]string{"--trusted-proxy", "10.0.0.0/8", "--trusted-proxy", "balancer.internal"}, `--trusted-proxy "balancer.internal"`},
		{[]string{"--trusted-proxy", "10.0.0.1/8"}, "--trusted-proxy"},
		{[]string{"--trusted-proxy", ""}, "--trusted-proxy"},
		{[]string{"--ipv6-limit-prefix", "31"}, "--ipv6-limit-prefix 31: must be a prefix length from 32 to 128"},
		{[]string{"--ipv6-limit-prefix", "129"}, "--ipv6-limit-prefix 129"},
		{[]string{"--ipv6-limit-prefix", "0"}, "--ipv6-limit-prefix 0"},
		{[]string{"--ipv6-limit-prefix", "/64"}, "--ipv6-limit-prefix"},
		{[]string{"--metrics-url", "127.0.0.1:8428"}, `--metrics-url: metrics url "127.0.0.1:8428"`},
		{[]string{"--metrics-url", "ftp://127.0.0.1:8428"}, "--metrics-url"},
		{[]string{"--metrics-url", "http://"}, "--metrics-url"},
		{[]string{"--metrics-url", "http://127.0.0.1:8428/?x=1"}, "--metrics-url"},
	} {
		cmd := exec.Command(bin, append([]string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0"}, tc.args...)...)
		out, err := cmd.Output() // stdout: one JSON object with the error
		var res struct{ Error string }
		_ = json.Unmarshal(out, &res)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(res.Error, tc.want) {
			t.Errorf("serve %v: %v, %s; want exit 1 with an error mentioning %s", tc.args, err, out, tc.want)
		}
	}

	data := t.TempDir()
	runJSON(t, bin, "migrate", "--data", data)
	runJSON(t, bin, "admin", "account", "create", "--data", data, "--email", "p@example.com", "--password", "correct-horse", "--credit", "10")
	token := runJSON(t, bin, "admin", "token", "create", "--data", data, "--account", "1", "--name", "t", "--scopes", "read")["token"].(string)
	addr := testnet.FreeAddr(t)
	startServe(t, bin, data, addr, "0.01", "--public-url", "HTTPS://API.example.com:8443/berth/",
		"--cors-origin", "https://app.example.com", "--cors-origin", "http://localhost:3000")
	get := func(path, origin string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+addr+"/v1"+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, body := get("/billing/transactions", "http://localhost:3000")
	var page struct {
		Links struct{ First string }
		Meta  struct{ Path string }
	}
	if err := json.Unmarshal(body, &page); err != nil || resp.StatusCode != 200 {
		t.Fatalf("transactions: %d %s", resp.StatusCode, body)
	}
	if want := "https://api.example.com:8443/berth/v1/billing/transactions"; page.Meta.Path != want || page.Links.First != want+"?page=1" {
		t.Errorf("links on the public URL: first %q, path %q; want %s", page.Links.First, page.Meta.Path, want)
	}
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "http://localhost:3000" {
		t.Errorf("allowed origin: Access-Control-Allow-Origin %q", got)
	}
	resp, _ = get("/me", "https://evil.example.com")
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("another origin: %d, Access-Control-Allow-Origin %q; want none", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
}
