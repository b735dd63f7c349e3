package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/berthhq/berth/internal/telemetry/telemetrytest"
	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// scrapeMetrics GETs /metrics and parses the text exposition format.
func scrapeMetrics(t *testing.T, metricsAddr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, b)
	}
	return telemetrytest.Parse(t, resp.Body)
}

// TestOperatorsSignals runs berthd with --metrics-addr and a low --rate-limit, orders
// a server, runs into a 429 and a failed console sign-in, and reads every series
// family back from /metrics; /healthz and /readyz answer without a token and outside
// the rate limit, on the API port, which does not serve the metrics.
func TestOperatorsSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	runJSON(t, bin, "migrate", "--data", data)
	runJSON(t, bin, "admin", "account", "create", "--data", data, "--email", "m@example.com", "--password", "correct-horse", "--credit", "10")
	token := runJSON(t, bin, "admin", "token", "create", "--data", data, "--account", "1", "--name", "t", "--scopes", "servers")["token"].(string)
	addr, metricsAddr := testnet.FreeAddr(t), testnet.FreeAddr(t)
	const limit = 6
	d := startServe(t, bin, data, addr, "0.01", "--metrics-addr", metricsAddr, "--rate-limit", fmt.Sprint(limit))
	root := "http://" + addr

	// Order a server and wait for its provisioning: two requests of the token's budget.
	code, m := d.call(t, token, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1})
	if code != http.StatusCreated {
		t.Fatalf("order: %d %v", code, m)
	}
	op := m["data"].(map[string]any)["operation"].(map[string]any)["id"].(float64)
	if got := d.waitOp(t, token, op, 60*time.Second); got["status"] != "success" {
		t.Fatalf("provisioning: %v", got)
	}

	// The probes: 200 without a token, and with the token as often as asked without
	// spending its budget.
	for i := range 3 * limit {
		for _, path := range []string{"/healthz", "/readyz"} {
			req, _ := http.NewRequest("GET", root+path, nil)
			if i%2 == 1 {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != `{"status":"ok"}` {
				t.Fatalf("GET %s (#%d): %d %s", path, i, resp.StatusCode, b)
			}
		}
	}
	if code, m := d.call(t, token, "GET", "/me", nil); code != 200 {
		t.Fatalf("GET /me after %d probes with the token: %d %v; the probes spent the token's budget", 6*limit, code, m)
	}
	// Now spend it: a 429.
	limited := false
	for range 2 * limit {
		if code, _ := d.call(t, token, "GET", "/me", nil); code == http.StatusTooManyRequests {
			limited = true
			break
		}
	}
	if !limited {
		t.Fatalf("no 429 past --rate-limit %d", limit)
	}

	// A failed console sign-in: the form's CSRF value is its pre-session cookie.
	resp, err := http.Get(root + "/signin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var pre string
	for _, c := range resp.Cookies() {
		if c.Name == "berth_pre" {
			pre = c.Value
		}
	}
	if pre == "" {
		t.Fatalf("GET /signin set no berth_pre cookie: %v", resp.Header)
	}
	form := url.Values{"email": {"m@example.com"}, "password": {"wrong-password"}, "csrf": {pre}}
	req, _ := http.NewRequest("POST", root+"/signin", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "berth_pre", Value: pre})
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("sign-in with a wrong password: %d", resp.StatusCode)
	}

	// The metrics are not on the public port.
	if resp, err := http.Get(root + "/metrics"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), "berth_http_requests_total") {
			t.Errorf("the API port serves the metrics")
		}
	}

	// The metering pass at start runs on the elected leader, soon after it starts.
	var fams map[string]*dto.MetricFamily
	deadline := time.Now().Add(30 * time.Second)
	for {
		fams = scrapeMetrics(t, metricsAddr)
		if n, _ := telemetrytest.Sample(fams, "berth_metering_pass_duration_seconds", map[string]string{"result": "success"}); n >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no metering pass in the metrics after 30 s\n%s", d.log)
		}
		time.Sleep(200 * time.Millisecond)
	}

	for _, c := range []struct {
		name   string
		labels map[string]string
		ok     func(v float64) bool
		want   string
	}{
		{"berth_http_requests_total", map[string]string{"handler": "api", "route": "POST /v1/servers", "method": "POST", "code": "201"},
			func(v float64) bool { return v == 1 }, "1 order"},
		{"berth_http_requests_total", map[string]string{"handler": "api", "route": "GET /v1/operations/{id}", "code": "200"},
			func(v float64) bool { return v >= 1 }, "the wait, under its route pattern"},
		{"berth_http_requests_total", map[string]string{"handler": "api", "route": "GET /v1/me", "code": "429"},
			func(v float64) bool { return v == 1 }, "the one 429"},
		{"berth_http_requests_total", map[string]string{"handler": "console", "route": "POST /signin", "code": "401"},
			func(v float64) bool { return v == 1 }, "the failed sign-in"},
		{"berth_http_request_duration_seconds", map[string]string{"handler": "api", "route": "POST /v1/servers", "method": "POST"},
			func(v float64) bool { return v == 1 }, "1 observation"},
		{"berth_operations_total", map[string]string{"type": "provision", "result": "success"},
			func(v float64) bool { return v == 1 }, "the provisioning"},
		{"berth_operation_duration_seconds", map[string]string{"type": "provision", "result": "success"},
			func(v float64) bool { return v == 1 }, "1 observation"},
		{"berth_job_queue_depth", map[string]string{"state": "available"}, func(v float64) bool { return v >= 0 }, "present"},
		{"berth_job_queue_depth", map[string]string{"state": "running"}, func(v float64) bool { return v >= 0 }, "present"},
		{"berth_job_queue_depth", map[string]string{"state": "retryable"}, func(v float64) bool { return v == 0 }, "none"},
		{"berth_job_queue_oldest_available_seconds", nil, func(v float64) bool { return v >= 0 && v < 60 }, "under a minute"},
		{"berth_metering_lag_seconds", nil, func(v float64) bool { return v >= 0 && v < 3600 }, "under an hour"},
		{"berth_servers", map[string]string{"status": "running"}, func(v float64) bool { return v == 1 }, "the server ordered"},
		{"berth_servers", map[string]string{"status": "error"}, func(v float64) bool { return v == 0 }, "none"},
		{"berth_rate_limited_total", map[string]string{"handler": "api", "by": "token"}, func(v float64) bool { return v == 1 }, "1"},
		{"berth_rate_limited_total", map[string]string{"handler": "api", "by": "address"}, func(v float64) bool { return v == 0 }, "0"},
		{"berth_console_signin_failures_total", nil, func(v float64) bool { return v == 1 }, "1"},
		{"go_goroutines", nil, func(v float64) bool { return v > 0 }, "the Go runtime's"},
		{"process_resident_memory_bytes", nil, func(v float64) bool { return v > 0 }, "the process's"},
	} {
		v, ok := telemetrytest.Sample(fams, c.name, c.labels)
		if !ok || !c.ok(v) {
			t.Errorf("%s%v = %v (present: %v), want %s", c.name, c.labels, v, ok, c.want)
		}
	}
	// Route labels are patterns, never paths: no server name or id in them.
	for _, name := range []string{"berth_http_requests_total", "berth_http_request_duration_seconds"} {
		for _, m := range fams[name].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" && l.GetValue() != "unmatched" && !strings.Contains(l.GetValue(), " /") {
					t.Errorf("%s: route %q is not a ServeMux pattern", name, l.GetValue())
				}
				if l.GetName() == "route" && (strings.Contains(l.GetValue(), "/operations/"+fmt.Sprint(op)) ||
					strings.Contains(l.GetValue(), "server-")) {
					t.Errorf("%s: a raw path as a route label: %q", name, l.GetValue())
				}
			}
		}
	}
	// The probes are not counted as requests.
	for _, m := range fams["berth_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "route" && (strings.Contains(l.GetValue(), "healthz") || strings.Contains(l.GetValue(), "readyz")) {
				t.Errorf("a probe counted as a request: %v", m)
			}
		}
	}
	// The simulated driver has no hosts: their series are absent, not zero.
	for name := range fams {
		if strings.HasPrefix(name, "berth_libvirt_") {
			t.Errorf("%s with the sim driver", name)
		}
	}
}
