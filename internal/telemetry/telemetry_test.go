package telemetry_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/telemetry"
	"github.com/berthhq/berth/internal/telemetry/telemetrytest"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// scrape GETs the metrics handler and parses what it answers.
func scrape(t *testing.T, m *telemetry.Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	return telemetrytest.Parse(t, rec.Body)
}

// TestInstrumentLabelsRoutesNotPaths: requests are counted under the pattern that
// matched, so a thousand servers make one series; an unknown path and an odd method
// are folded into one value each.
func TestInstrumentLabelsRoutesNotPaths(t *testing.T) {
	t.Parallel()
	m := telemetry.New(quiet())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/servers/{id}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	h := m.Instrument(telemetry.SurfaceAPI, mux)
	for _, p := range []string{"/v1/servers/1", "/v1/servers/2", "/v1/servers/server-abc"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/v1/nothing/here", nil))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("BREW", "/v1/servers/1", nil))

	fams := scrape(t, m)
	if v, _ := telemetrytest.Sample(fams, "berth_http_requests_total", map[string]string{"handler": "api", "route": "GET /v1/servers/{id}",
		"method": "GET", "code": "200"}); v != 3 {
		t.Errorf("GET /v1/servers/{id} 200: %v, want 3", v)
	}
	if v, _ := telemetrytest.Sample(fams, "berth_http_requests_total", map[string]string{"route": "unmatched", "method": "GET", "code": "404"}); v != 1 {
		t.Errorf("unmatched GET 404: %v, want 1", v)
	}
	if v, _ := telemetrytest.Sample(fams, "berth_http_requests_total", map[string]string{"route": "unmatched", "method": "other"}); v != 1 {
		t.Errorf("unmatched BREW: %v, want 1 under method other", v)
	}
	if v, _ := telemetrytest.Sample(fams, "berth_http_request_duration_seconds", map[string]string{"route": "GET /v1/servers/{id}"}); v != 3 {
		t.Errorf("latency observations of GET /v1/servers/{id}: %v, want 3", v)
	}
	for _, f := range fams["berth_http_requests_total"].Metric {
		for _, l := range f.Label {
			if l.GetName() == "route" && strings.Contains(l.GetValue(), "/servers/1") {
				t.Errorf("a raw path became a label: %v", f)
			}
		}
	}
}

// TestNilMetricsIsOff: a nil *Metrics is what "no --metrics-addr" passes around.
func TestNilMetricsIsOff(t *testing.T) {
	t.Parallel()
	var m *telemetry.Metrics
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	if got := m.Instrument(telemetry.SurfaceAPI, h); got == nil {
		t.Fatal("Instrument on nil returned nil")
	}
	m.OperationFinished(hosting.OpProvision, hosting.OpSuccess, time.Second)
	m.MeterPassed(time.Second, nil)
	m.RateLimited(telemetry.SurfaceAPI, telemetry.ByToken)
	m.SignInFailed()
	if _, err := m.WatchStore(nil, nil); err != nil {
		t.Fatal(err)
	}
}

type fakeStore struct {
	q     store.JobQueue
	by    map[hosting.Status]int
	due   *time.Time
	fails error
}

func (f fakeStore) JobQueue(context.Context) (store.JobQueue, error) { return f.q, f.fails }
func (f fakeStore) ServersByStatus(context.Context) (map[hosting.Status]int, error) {
	return f.by, f.fails
}
func (f fakeStore) EarliestDue(context.Context, time.Time, int64) (*time.Time, error) {
	return f.due, f.fails
}

// TestScrapeTimeSeries: the queue, the servers and the metering lag are read when
// scraped; hosts appear only when watched; a store that fails leaves its series out
// and the others are still served.
func TestScrapeTimeSeries(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)
	due := now.Add(-90 * time.Second)
	oldest := time.Now().Add(-time.Minute)
	m := telemetry.New(quiet())
	unwatch, err := m.WatchStore(fakeStore{q: store.JobQueue{Available: 2, Running: 1, Retryable: 3, OldestAvailable: &oldest},
		by: map[hosting.Status]int{hosting.StatusRunning: 4}, due: &due}, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, m)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"berth_job_queue_depth", map[string]string{"state": "available"}, 2},
		{"berth_job_queue_depth", map[string]string{"state": "running"}, 1},
		{"berth_job_queue_depth", map[string]string{"state": "retryable"}, 3},
		{"berth_servers", map[string]string{"status": "running"}, 4},
		{"berth_servers", map[string]string{"status": "stopped"}, 0},
		{"berth_metering_lag_seconds", nil, 90},
	} {
		if v, ok := telemetrytest.Sample(fams, c.name, c.labels); !ok || v != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
	if v, _ := telemetrytest.Sample(fams, "berth_job_queue_oldest_available_seconds", nil); v < 59 || v > 120 {
		t.Errorf("oldest available job: %v s, want about 60", v)
	}
	if _, ok := fams["berth_libvirt_host_capacity"]; ok {
		t.Errorf("host series without a libvirt driver")
	}
	if _, err := m.WatchStore(fakeStore{}, nil); err == nil {
		t.Errorf("a second store was watched")
	}
	unwatch()

	if _, err := m.WatchStore(fakeStore{fails: errors.New("database is closed")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.WatchHosts(func(context.Context) ([]telemetry.Host, error) {
		return []telemetry.Host{{ID: 3, LocationID: 1, Address: "hv1.example.com", VCPUs: 16, UsedVCPUs: 4, MemoryMB: 65536,
			UsedMemoryMB: 8192, DiskGB: 1000, UsedDiskGB: 80, Machines: 2, Reachable: true}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	fams = scrape(t, m)
	if _, ok := fams["berth_servers"]; ok {
		t.Errorf("servers series from a failing store")
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Errorf("the Go runtime's series went with the failing store")
	}
	host := map[string]string{"host": "3", "location": "1", "address": "hv1.example.com"}
	with := func(k, v string) map[string]string {
		out := map[string]string{k: v}
		for k, v := range host {
			out[k] = v
		}
		return out
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"berth_libvirt_host_capacity", with("resource", "vcpus"), 16},
		{"berth_libvirt_host_used", with("resource", "memory_bytes"), 8192 << 20},
		{"berth_libvirt_host_capacity", with("resource", "disk_bytes"), 1000 << 30},
		{"berth_libvirt_host_reachable", host, 1},
		{"berth_libvirt_host_machines", host, 2},
		{"berth_libvirt_host_draining", host, 0},
	} {
		if v, ok := telemetrytest.Sample(fams, c.name, c.labels); !ok || v != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
}

// TestCounters: operations, metering passes, 429s and failed sign-ins.
func TestCounters(t *testing.T) {
	t.Parallel()
	m := telemetry.New(quiet())
	fams := scrape(t, m)
	if v, ok := telemetrytest.Sample(fams, "berth_rate_limited_total", map[string]string{"handler": "api", "by": "token"}); !ok || v != 0 {
		t.Errorf("429s by token before any: %v (present %v), want a 0 series", v, ok)
	}
	m.OperationFinished(hosting.OpProvision, hosting.OpSuccess, 3*time.Second)
	m.OperationFinished(hosting.OpPower, hosting.OpError, time.Second)
	m.MeterPassed(10*time.Millisecond, nil)
	m.RateLimited(telemetry.SurfaceAPI, telemetry.ByToken)
	m.RateLimited(telemetry.SurfaceConsole, telemetry.ByEmail)
	m.SignInFailed()
	fams = scrape(t, m)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"berth_operations_total", map[string]string{"type": "provision", "result": "success"}, 1},
		{"berth_operations_total", map[string]string{"type": "power", "result": "error"}, 1},
		{"berth_operation_duration_seconds", map[string]string{"type": "provision", "result": "success"}, 1},
		{"berth_metering_pass_duration_seconds", map[string]string{"result": "success"}, 1},
		{"berth_rate_limited_total", map[string]string{"handler": "api", "by": "token"}, 1},
		{"berth_rate_limited_total", map[string]string{"handler": "console", "by": "email"}, 1},
		{"berth_console_signin_failures_total", nil, 1},
	} {
		if v, ok := telemetrytest.Sample(fams, c.name, c.labels); !ok || v != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
}
