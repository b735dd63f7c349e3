package app_test

import (
	"context"
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

// hostedSim is the simulated driver with the ability of a driver whose machines run
// on hosts (compute.Hosted): one host, and guests that may power off by themselves
// (the machine named off reads stopped).
type hostedSim struct {
	compute.Driver
	connected atomic.Bool
	off       atomic.Value // string
	// machines counts the machines read alone, batches the batches (batchedSim).
	machines, batches atomic.Int64
}

func (h *hostedSim) ConnectHosts(context.Context) error {
	h.connected.Store(true)
	return nil
}

func (h *hostedSim) HostUsage(context.Context) ([]compute.HostUsage, error) {
	return []compute.HostUsage{{ID: 3, LocationID: 1, Address: "host-a", VCPUs: 16, UsedVCPUs: 1, MemoryMB: 8192,
		Machines: 1, Reachable: true}}, nil
}

func (h *hostedSim) Machine(ctx context.Context, name string) (compute.Machine, error) {
	h.machines.Add(1)
	m, err := h.Driver.Machine(ctx, name)
	if err == nil && h.off.Load() == name {
		m.State = compute.StateStopped
	}
	return m, err
}

// batchedSim is hostedSim reading many machines' states at once, as libvirt does.
type batchedSim struct{ *hostedSim }

func (b batchedSim) StatesOf(ctx context.Context, names []string) (map[string]compute.State, map[string]error) {
	b.batches.Add(1)
	got := map[string]compute.State{}
	for _, n := range names {
		if m, err := b.Driver.Machine(ctx, n); err == nil { // not counted: a batch reads no machine alone
			got[n] = m.State
			if b.off.Load() == n {
				got[n] = compute.StateStopped
			}
		}
	}
	return got, nil
}

// TestHostedDriver: what a process that works operations does for a driver with
// hosts follows from the driver's ability (compute.Hosted), not from its name: it
// connects to the hosts at start, shows them in the operators' metrics, and makes a
// server whose guest powered itself off stopped. A driver that reads many machines'
// states at once (compute.StatesBatcher) is asked in one batch a round, and reads a
// machine alone only to confirm a change; another is read machine by machine.
func TestHostedDriver(t *testing.T) {
	t.Parallel()
	for _, batched := range []bool{true, false} {
		t.Run(map[bool]string{true: "batched", false: "one by one"}[batched], func(t *testing.T) {
			t.Parallel()
			hostedDriver(t, batched)
		})
	}
}

func hostedDriver(t *testing.T, batched bool) {
	tel := telemetry.New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	hosted := &hostedSim{}
	env := testenv.New(t, testenv.Options{Telemetry: tel, RateLimit: 1 << 30,
		WrapDriver: func(d compute.Driver) compute.Driver {
			hosted.Driver = d
			if batched {
				return batchedSim{hosted}
			}
			return hosted
		}})
	for deadline := time.Now().Add(10 * time.Second); !hosted.connected.Load(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the hosts were not connected to at start")
		}
	}
	if v, ok := telemetrytest.Sample(telemetrytest.Gather(t, tel.Registry()), "berth_libvirt_host_capacity", map[string]string{"host": "3", "address": "host-a", "resource": "vcpus"}); !ok || v != 16 {
		t.Errorf("host capacity in the metrics: %v (present %v), want 16 vCPUs", v, ok)
	}
	a := env.NewAccount("en", "", "")
	r := a.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}).Want(t, 201)
	name := r.Map(t)["data"].(map[string]any)["name"].(string)
	a.WaitStatus(t, name, "running", 10*time.Second)
	if batched {
		// A round where nothing differs reads no machine alone.
		machines, batches := hosted.machines.Load(), hosted.batches.Load()
		for deadline := time.Now().Add(20 * time.Second); hosted.batches.Load() < batches+2; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("no reconcile round in 20 s")
			}
		}
		if got := hosted.machines.Load() - machines; got != 0 {
			t.Errorf("%d machines read alone in rounds where nothing differed, want 0", got)
		}
	}
	hosted.off.Store(name)
	// The reconcile loop looks every 5 s.
	a.WaitStatus(t, name, "stopped", 20*time.Second)
	if batched && hosted.machines.Load() == 0 {
		t.Error("the change was not confirmed by reading the machine alone")
	}
}
