package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/telemetry"
	"github.com/berthhq/berth/internal/telemetry/telemetrytest"
	"github.com/berthhq/berth/internal/testenv"
)

// failingCreate makes every machine creation fail for good while on.
type failingCreate struct {
	compute.Driver
	on atomic.Bool
}

func (f *failingCreate) Create(ctx context.Context, key string, spec compute.Spec) (compute.Machine, error) {
	if f.on.Load() {
		return compute.Machine{}, fmt.Errorf("%w: no host has room", compute.ErrFailed)
	}
	return f.Driver.Create(ctx, key, spec)
}

// TestTelemetryWiring: with Config.Telemetry an App counts its requests by route and
// its operations by result, shows its store's state at scrape time, and takes that
// away when it closes, so that the next App of the process can show its own.
func TestTelemetryWiring(t *testing.T) {
	t.Parallel()
	tel := telemetry.New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	fail := &failingCreate{}
	dir := t.TempDir()
	env := testenv.New(t, testenv.Options{DataDir: dir, Telemetry: tel,
		WrapDriver: func(d compute.Driver) compute.Driver { fail.Driver = d; return fail }})
	a := env.NewAccount("en", "", "")
	order := func() string {
		r := a.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}).Want(t, 201)
		return r.Map(t)["data"].(map[string]any)["name"].(string)
	}
	a.WaitStatus(t, order(), "running", 10*time.Second)
	fail.on.Store(true)
	a.WaitStatus(t, order(), "error", 10*time.Second)

	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"berth_operations_total", map[string]string{"type": "provision", "result": "success"}, 1},
		{"berth_operations_total", map[string]string{"type": "provision", "result": "error"}, 1},
		{"berth_operation_duration_seconds", map[string]string{"type": "provision", "result": "error"}, 1},
		{"berth_http_requests_total", map[string]string{"handler": "api", "route": "POST /v1/servers", "code": "201"}, 2},
		{"berth_servers", map[string]string{"status": "running"}, 1},
		{"berth_servers", map[string]string{"status": "error"}, 1},
	} {
		// An operation is counted after the transaction that ends it, so a client
		// can see the server's status a moment before the count: wait for it.
		var v float64
		var ok bool
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if v, ok = telemetrytest.Sample(telemetrytest.Gather(t, tel.Registry()), c.name, c.labels); (ok && v == c.want) || time.Now().After(deadline) {
				break
			}
		}
		if !ok || v != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}

	env.Close()
	if _, ok := telemetrytest.Sample(telemetrytest.Gather(t, tel.Registry()), "berth_servers", nil); ok {
		t.Errorf("a closed App's store is still read at scrape time")
	}
	// The next App on the same Metrics watches its own store.
	env2 := testenv.New(t, testenv.Options{DataDir: dir, Telemetry: tel})
	defer env2.Close()
	if v, ok := telemetrytest.Sample(telemetrytest.Gather(t, tel.Registry()), "berth_servers", map[string]string{"status": "running"}); !ok || v != 1 {
		t.Errorf("after a restart: servers running %v (present %v), want 1", v, ok)
	}
}
