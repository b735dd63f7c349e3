package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/simdriver"
	"github.com/berthhq/berth/internal/testenv"
)

// simVolume is the sim driver's state of a volume (the machine it is attached to,
// its size); ok false when the driver has none.
func simVolume(t testing.TB, sim *simdriver.Driver, id int64) (compute.VolumeState, bool) {
	t.Helper()
	st, err := sim.Volume(context.Background(), compute.VolumeName(id))
	if err != nil && !errors.Is(err, compute.ErrVolumeNotFound) {
		t.Fatal(err)
	}
	return st, err == nil
}

// failedOp waits for the operation a volume record names and checks that a sandbox
// fault failed it.
func failedOp(t testing.TB, c caller, vol map[string]any) {
	t.Helper()
	op := opEnd(t, c, opID(t, vol))
	if op["status"] != "error" || op["error"] == nil || !strings.Contains(op["error"].(string), "sandbox") {
		t.Errorf("operation %v, want error by the sandbox fault", op)
	}
}

// volumeNow is the volume as GET shows it now.
func volumeNow(t testing.TB, c caller, vol map[string]any) map[string]any {
	t.Helper()
	return data(t, c.Do("GET", "/volumes/"+itoa(num(t, vol["id"])), nil).Want(t, 200))
}

// TestSandboxVolumeFaults: an operation fault naming a volume's operation fails the
// next one with the effects of a real failure (docs/api.md, Volumes and The sandbox):
// a creation leaves the volume in error, refunded and attached nowhere; an attachment
// leaves it detached, a detachment attached, a growth at its size; the server it held
// is free again and as it was; the driver agrees. Each is used once.
func TestSandboxVolumeFaults(t *testing.T) {
	t.Parallel()
	var sim *simdriver.Driver
	env := sandboxEnv(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver { sim = d.(*simdriver.Driver); return d }})
	t.Cleanup(func() { env.AssertLedger(t) })
	// serverFree checks that the server is running with no operation.
	serverFree := func(t *testing.T, a *testenv.Account, srv map[string]any) {
		t.Helper()
		if got := data(t, a.Do("GET", "/servers/"+itoa(num(t, srv["id"])), nil).Want(t, 200)); got["status"] != "running" || got["operation"] != nil {
			t.Errorf("the server after the failed operation: %v", got)
		}
	}

	t.Run("a failed creation on a server: error, refunded, attached nowhere", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("en", "100", "")
		srv := runningServer(t, a)
		before := credit(t, a)
		addFault(t, a, map[string]any{"operation": "create_volume", "fail": true})
		vol := data(t, a.Do("POST", "/volumes", map[string]any{"name": "doomed", "size_gb": 10, "server_id": num(t, srv["id"]), "format": "ext4"}).Want(t, 201))
		failedOp(t, a, vol)
		got := volumeNow(t, a, vol)
		if got["status"] != "error" || got["server_id"] != nil || got["operation"] != nil {
			t.Errorf("the volume after its failed creation: %v", got)
		}
		if c := credit(t, a); c != before {
			t.Errorf("credit %s, want %s (the first hour refunded)", c, before)
		}
		txs := items(t, a.Do("GET", "/billing/transactions", nil).Want(t, 200))
		if len(txs) < 2 || txs[0]["type"] != "refund" || txs[1]["type"] != "charge" || txs[1]["resource"].(map[string]any)["type"] != "volume" ||
			txs[0]["amount"] != strings.TrimPrefix(txs[1]["amount"].(string), "-") {
			t.Errorf("ledger %v", txs)
		}
		if _, ok := simVolume(t, sim, num(t, vol["id"])); ok {
			t.Errorf("the driver has the volume that failed")
		}
		serverFree(t, a, srv)
		a.Do("DELETE", "/volumes/doomed", nil).Want(t, http.StatusNoContent)
		// Used once: the next creation runs.
		if ok := createVolume(t, a, map[string]any{"server_id": num(t, srv["id"])}); ok["status"] != "available" || ok["server_id"] == nil {
			t.Errorf("the next creation: %v", ok)
		}
	})

	t.Run("a failed attachment leaves the volume detached", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("en", "100", "")
		srv := runningServer(t, a)
		vol := createVolume(t, a, map[string]any{"location_id": 1})
		addFault(t, a, map[string]any{"operation": "attach_volume", "fail": true})
		failedOp(t, a, data(t, a.Do("POST", "/volumes/"+itoa(num(t, vol["id"]))+"/attach", map[string]any{"server_id": num(t, srv["id"])}).Want(t, 200)))
		if got := volumeNow(t, a, vol); got["server_id"] != nil || got["status"] != "available" || got["operation"] != nil {
			t.Errorf("the volume after its failed attachment: %v", got)
		}
		if st, ok := simVolume(t, sim, num(t, vol["id"])); !ok || st.Machine != "" {
			t.Errorf("the driver's volume: %+v %v, want it detached", st, ok)
		}
		serverFree(t, a, srv)
		attached := volumeAfter(t, a, data(t, a.Do("POST", "/volumes/"+itoa(num(t, vol["id"]))+"/attach", map[string]any{"server_id": num(t, srv["id"])}).Want(t, 200)))
		if num(t, attached["server_id"]) != num(t, srv["id"]) {
			t.Errorf("the next attachment: %v", attached)
		}
	})

	t.Run("a failed detachment leaves the volume attached", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("en", "100", "")
		srv := runningServer(t, a)
		vol := createVolume(t, a, map[string]any{"server_id": num(t, srv["id"])})
		addFault(t, a, map[string]any{"operation": "detach_volume", "fail": true})
		failedOp(t, a, data(t, a.Do("POST", "/volumes/"+itoa(num(t, vol["id"]))+"/detach", nil).Want(t, 200)))
		if got := volumeNow(t, a, vol); num(t, got["server_id"]) != num(t, srv["id"]) || got["operation"] != nil {
			t.Errorf("the volume after its failed detachment: %v", got)
		}
		if st, ok := simVolume(t, sim, num(t, vol["id"])); !ok || st.Machine != srv["name"] {
			t.Errorf("the driver's volume: %+v %v, want it on %v", st, ok, srv["name"])
		}
		serverFree(t, a, srv)
		if got := volumeAfter(t, a, data(t, a.Do("POST", "/volumes/"+itoa(num(t, vol["id"]))+"/detach", nil).Want(t, 200))); got["server_id"] != nil {
			t.Errorf("the next detachment: %v", got)
		}
	})

	t.Run("a failed growth leaves the volume at its size", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("en", "100", "")
		srv := runningServer(t, a)
		vol := createVolume(t, a, map[string]any{"server_id": num(t, srv["id"]), "size_gb": 20})
		addFault(t, a, map[string]any{"operation": "resize_volume", "fail": true})
		failedOp(t, a, data(t, a.Do("POST", "/volumes/"+itoa(num(t, vol["id"]))+"/resize", map[string]any{"size_gb": 40}).Want(t, 200)))
		if got := volumeNow(t, a, vol); num(t, got["size_gb"]) != 20 || num(t, got["server_id"]) != num(t, srv["id"]) || got["operation"] != nil {
			t.Errorf("the volume after its failed growth: %v", got)
		}
		if st, ok := simVolume(t, sim, num(t, vol["id"])); !ok || st.SizeGB != 20 {
			t.Errorf("the driver's volume: %+v %v, want 20 GB", st, ok)
		}
		serverFree(t, a, srv)
		if got := volumeAfter(t, a, data(t, a.Do("POST", "/volumes/"+itoa(num(t, vol["id"]))+"/resize", map[string]any{"size_gb": 40}).Want(t, 200))); num(t, got["size_gb"]) != 40 {
			t.Errorf("the next growth: %v", got)
		}
	})

	t.Run("a volume's fault is not met by another type's operation", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("en", "100", "")
		f := addFault(t, a, map[string]any{"operation": "attach_volume", "fail": true})
		vol := createVolume(t, a, map[string]any{"location_id": 1})
		volumeAfter(t, a, data(t, a.Do("POST", "/volumes/"+itoa(num(t, vol["id"]))+"/resize", map[string]any{"size_gb": 20}).Want(t, 200)))
		if got := faultOf(t, a, f["id"]); got["remaining"] != 1.0 {
			t.Errorf("a creation or growth used the attachment's fault: %v", got)
		}
	})
}

// simVolumeTook is how long the sim driver made the last step of a volume's of the
// kind event ("create", "attach", "detach", "resize") take: from the step to the
// moment the volume is ready (its durations at the driver's scale, slowdown included;
// the machine's load has no part in it).
func simVolumeTook(t testing.TB, env *testenv.Env, id int64, event string) time.Duration {
	t.Helper()
	name := compute.VolumeName(id) // "volume-<id>": no quoting needed
	var ms int64
	err := env.App.DB.WriteDB().QueryRowContext(context.Background(), `SELECT v.ready_at - e.at FROM sim_volumes v
		JOIN sim_volume_events e ON e.volume = v.name WHERE v.name = '`+name+`' AND e.event LIKE '`+event+`%'
		ORDER BY e.at DESC LIMIT 1`).Scan(&ms)
	if err != nil {
		t.Fatalf("the driver's %s of %s: %v", event, name, err)
	}
	return time.Duration(ms) * time.Millisecond
}

// TestSandboxVolumeSlowFaults: slow multiplies the duration of each of a volume's
// operations by its factor, in the driver.
func TestSandboxVolumeSlowFaults(t *testing.T) {
	t.Parallel()
	const scale, slow = 0.001, 10 // testenv's scale
	env := sandboxEnv(t)
	path := func(vol map[string]any, action string) string {
		return "/volumes/" + itoa(num(t, vol["id"])) + "/" + action
	}
	for _, c := range []struct {
		op, event string
		span      simdriver.Span
		// start starts the operation on a fresh volume of a (srv: a running server).
		start func(t *testing.T, a *testenv.Account, srv map[string]any) map[string]any
	}{
		{"create_volume", "create", simdriver.VolumeCreateTime, func(t *testing.T, a *testenv.Account, _ map[string]any) map[string]any {
			return data(t, a.Do("POST", "/volumes", map[string]any{"name": uniqueName("vol"), "size_gb": 10, "location_id": 1}).Want(t, 201))
		}},
		{"attach_volume", "attach", simdriver.VolumeAttachTime, func(t *testing.T, a *testenv.Account, srv map[string]any) map[string]any {
			vol := createVolume(t, a, map[string]any{"location_id": 1})
			return data(t, a.Do("POST", path(vol, "attach"), map[string]any{"server_id": num(t, srv["id"])}).Want(t, 200))
		}},
		{"detach_volume", "detach", simdriver.VolumeDetachTime, func(t *testing.T, a *testenv.Account, srv map[string]any) map[string]any {
			vol := createVolume(t, a, map[string]any{"server_id": num(t, srv["id"])})
			return data(t, a.Do("POST", path(vol, "detach"), nil).Want(t, 200))
		}},
		{"resize_volume", "resize", simdriver.VolumeResizeTime, func(t *testing.T, a *testenv.Account, _ map[string]any) map[string]any {
			vol := createVolume(t, a, map[string]any{"location_id": 1})
			return data(t, a.Do("POST", path(vol, "resize"), map[string]any{"size_gb": 20}).Want(t, 200))
		}},
	} {
		t.Run(c.op, func(t *testing.T) {
			t.Parallel()
			a := env.NewAccount("en", "100", "")
			srv := runningServer(t, a)
			addFault(t, a, map[string]any{"operation": c.op, "slow": slow})
			vol := c.start(t, a, srv)
			if op := waitOp(t, a, opID(t, vol)); op["type"] != c.op {
				t.Fatalf("operation %v, want %s", op, c.op)
			}
			took := simVolumeTook(t, env, num(t, vol["id"]), c.event)
			// Within the step's span at the test's scale, times slow (a millisecond
			// below for rounding).
			lo := time.Duration(slow*scale*float64(c.span.Min)) - time.Millisecond
			hi := time.Duration(slow * scale * float64(c.span.Max))
			if took < lo || took > hi {
				t.Errorf("slow %s took %v in the driver, want %v to %v", c.op, took, lo, hi)
			}
		})
	}
}

// TestSandboxVolumeHTTPFaults: an HTTP fault on a volume's route answers its status
// and does nothing; a 409 on a volume that has an operation in progress names it, as
// a real busy answer does.
func TestSandboxVolumeHTTPFaults(t *testing.T) {
	t.Parallel()
	var gate *volumeGate
	env := sandboxEnv(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver { gate = gateVolumes(d); return gate }})
	a := env.NewAccount("de", "100", "")
	srv := runningServer(t, a)
	vol := createVolume(t, a, map[string]any{"location_id": 1, "name": "data"})
	attach := map[string]any{"server_id": num(t, srv["id"])}
	f := addFault(t, a, map[string]any{"method": "POST", "path": "/volumes/{id}/attach", "status": 503})
	r := a.Do("POST", "/volumes/data/attach", attach)
	if e := wantError(t, r, http.StatusServiceUnavailable, "unavailable"); e.Message != msg("de", "error.unavailable") || r.Header.Get("Retry-After") != "5" {
		t.Errorf("503: %s, Retry-After %q", r.Body, r.Header.Get("Retry-After"))
	}
	if got := volumeNow(t, a, vol); got["server_id"] != nil || got["operation"] != nil {
		t.Errorf("the faulted attachment did something: %v", got)
	}
	if got := faultOf(t, a, f["id"]); got["remaining"] != 0.0 {
		t.Errorf("the fault after its match: %v", got)
	}

	// The next attachment runs, held by the gate while the 409 meets the volume.
	attaching := data(t, a.Do("POST", "/volumes/data/attach", attach).Want(t, 200))
	op := attaching["operation"].(map[string]any)
	f = addFault(t, a, map[string]any{"method": "POST", "path": "/volumes/{id}/resize", "status": 409})
	r = a.Do("POST", "/volumes/data/resize", map[string]any{"size_gb": 20})
	e := wantError(t, r, http.StatusConflict, "busy")
	if e.Operation == nil || e.Operation.ID != num(t, op["id"]) || e.Operation.Type != "attach_volume" ||
		e.Message != msg("de", "error.busy", "operation", "attach_volume") || r.Header.Get("Retry-After") != "5" {
		t.Errorf("409: %s, Retry-After %q; want operation %v", r.Body, r.Header.Get("Retry-After"), op)
	}
	if got := faultOf(t, a, f["id"]); got["remaining"] != 0.0 {
		t.Errorf("the 409 fault after its match: %v", got)
	}
	close(gate.release)
	if got := volumeAfter(t, a, attaching); num(t, got["server_id"]) != num(t, srv["id"]) || num(t, got["size_gb"]) != 10 {
		t.Errorf("after the faulted growth: %v, want it attached at 10 GB", got)
	}
	// Without an operation, a 409 on a volume is the one of a change meanwhile.
	addFault(t, a, map[string]any{"method": "POST", "path": "/volumes/{id}/detach", "status": 409})
	if e := wantError(t, a.Do("POST", "/volumes/data/detach", nil), http.StatusConflict, "busy"); e.Operation != nil || e.Message != msg("de", "error.server_changed") {
		t.Errorf("409 without an operation: %+v", e)
	}
	if got := volumeNow(t, a, vol); got["server_id"] == nil || got["operation"] != nil {
		t.Errorf("the faulted detachment did something: %v", got)
	}
}
