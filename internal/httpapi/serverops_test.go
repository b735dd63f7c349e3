package httpapi_test

// The contract of the server operations of issue "Server operations": reinstall,
// rescale options, rescale and snapshots (docs/api.md, Servers and Snapshots).
// Every answer is checked against api/openapi.yaml by the test client.

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/testenv"
)

// ---- helpers ----

// createSnapshot takes a snapshot of server with body, checks the 201 (status
// creating, size 0), waits until the server is free again and returns the snapshot,
// then available, and the server.
func createSnapshot(t testing.TB, c caller, server string, body map[string]any) (snap, srv map[string]any) {
	t.Helper()
	created := data(t, c.Do("POST", "/servers/"+server+"/snapshots", body).Want(t, http.StatusCreated))
	if created["status"] != "creating" || num(t, created["size_gb"]) != 0 || created["name"] != body["name"] ||
		created["include_memory"] != (body["include_memory"] == true) {
		t.Fatalf("created snapshot %v for %v", created, body)
	}
	srv = data(t, c.Do("GET", "/servers/"+server, nil).Want(t, 200))
	// Wait on each snapshot operation the server shows: a caller sharing the server
	// (TestScopes' fixture) may have started the next one meanwhile.
	for range 5 {
		op, ok := srv["operation"].(map[string]any)
		if !ok {
			break
		}
		if op["type"] != "snapshot" {
			t.Fatalf("server busy with %v after a snapshot create", op)
		}
		waitOp(t, c, num(t, op["id"]))
		srv = data(t, c.Do("GET", "/servers/"+server, nil).Want(t, 200))
	}
	if srv["operation"] != nil {
		t.Fatalf("server still busy after its snapshot: %v", srv)
	}
	snap = snapshotOf(t, c, server, num(t, created["id"]))
	if snap == nil || snap["status"] != "available" || num(t, snap["size_gb"]) <= 0 {
		t.Fatalf("snapshot after its operation: %v", snap)
	}
	return snap, srv
}

// snapshotList lists a server's snapshots.
func snapshotList(t testing.TB, c caller, server string) []map[string]any {
	t.Helper()
	return items(t, c.Do("GET", "/servers/"+server+"/snapshots", nil).Want(t, 200))
}

// snapshotOf is the snapshot id in a server's list, or nil.
func snapshotOf(t testing.TB, c caller, server string, id int64) map[string]any {
	t.Helper()
	for _, s := range snapshotList(t, c, server) {
		if num(t, s["id"]) == id {
			return s
		}
	}
	return nil
}

// powerWait runs a power action and waits for it; it returns the server.
func powerWait(t testing.TB, c caller, server, action string) map[string]any {
	t.Helper()
	return serverAfter(t, c, data(t, c.Do("POST", "/servers/"+server+"/power", map[string]any{"action": action}).Want(t, 200)))
}

// opWait starts an operation with method path body, checks its answer (status, the
// server's transient status, the operation type) and returns the server once the
// operation ended.
func opWait(t testing.TB, c caller, method, path string, body any, transient, opType string) map[string]any {
	t.Helper()
	srv := data(t, c.Do(method, path, body).Want(t, 200))
	op, _ := srv["operation"].(map[string]any)
	if srv["status"] != transient || op == nil || op["type"] != opType {
		t.Fatalf("%s %s: status %v operation %v, want %s with a %s operation", method, path, srv["status"], srv["operation"], transient, opType)
	}
	return serverAfter(t, c, srv)
}

// wantBusyWith checks a 409 naming op (an operation as a server record shows it).
func wantBusyWith(t testing.TB, r *testenv.Response, op map[string]any) {
	t.Helper()
	e := wantError(t, r, http.StatusConflict, "busy")
	if e.Operation == nil || e.Operation.ID != num(t, op["id"]) || e.Operation.Type != op["type"] || e.Operation.StartedAt != op["started_at"] {
		t.Errorf("409 names %+v, want %v", e.Operation, op)
	}
	if e.Message != msg("en", "error.busy", "operation", op["type"]) {
		t.Errorf("409 message %q", e.Message)
	}
	if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("409 Retry-After %q", r.Header.Get("Retry-After"))
	}
}

// wantInvalidMsg checks a 422 whose only error is field with the message want.
func wantInvalidMsg(t testing.TB, r *testenv.Response, field, want string) {
	t.Helper()
	e := wantInvalid(t, r, field)
	if !slices.Equal(e.Errors[field], []string{want}) || len(e.Errors) != 1 || e.Message != want {
		t.Errorf("errors %v (message %q), want only %s: %q", e.Errors, e.Message, field, want)
	}
}

// setCapacity applies the default catalog with the capacities of plans (plan id to
// capacity) at location changed.
func setCapacity(t testing.TB, env *testenv.Env, location int64, plans map[int64]int) {
	t.Helper()
	cat := catalog.Default()
	found := 0
	for i, l := range cat.Locations {
		if l.ID != location {
			continue
		}
		for j, o := range l.Offers {
			if c, ok := plans[o.PlanID]; ok {
				cat.Locations[i].Offers[j].Capacity = &c
				found++
			}
		}
	}
	if found != len(plans) {
		t.Fatalf("plans %v not all offered at location %d", plans, location)
	}
	if err := env.App.Service.ApplyCatalog(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
}

// ---- reinstall ----

func TestServerOpsReinstall(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	srv := runningServer(t, a, "location_id", 2) // hel1 offers images 1, 2, 3
	name := srv["name"].(string)
	path := "/servers/" + name + "/reinstall"

	t.Run("422", func(t *testing.T) {
		wantInvalidMsg(t, a.Do("POST", path, map[string]any{}), "image_id", msg("en", "validation.required"))
		wantInvalidMsg(t, a.Do("POST", path, nil), "image_id", msg("en", "validation.required"))
		wantInvalidMsg(t, a.Do("POST", path, map[string]any{"image_id": 999}), "image_id", msg("en", "validation.image_unknown"))
		wantInvalidMsg(t, a.Do("POST", path, map[string]any{"image_id": 4}), "image_id", msg("en", "validation.image_not_offered"))
		wantInvalid(t, a.Do("POST", path, map[string]any{"image_id": "2"}), "image_id")
		wantInvalid(t, a.Do("POST", path, map[string]any{"image_id": 2, "ssh_key_ids": []int{}}), "ssh_key_ids")
		wantInvalid(t, a.Do("POST", path, "[]"), "body")
		wantInvalid(t, a.Do("POST", path, "{"), "body")
		got := data(t, a.Do("GET", "/servers/"+name, nil).Want(t, 200))
		if got["status"] != "running" || got["operation"] != nil || num(t, got["image_id"]) != 1 {
			t.Errorf("refused reinstalls changed the server: %v", got)
		}
	})

	t.Run("from running", func(t *testing.T) {
		got := opWait(t, a, "POST", path, map[string]any{"image_id": 2}, "reinstalling", "reinstall")
		if got["status"] != "running" || num(t, got["image_id"]) != 2 || got["ipv4"] != srv["ipv4"] {
			t.Errorf("after reinstall: %v", got)
		}
		if m, err := env.App.Driver().Machine(context.Background(), name); err != nil || m.State != "running" {
			t.Errorf("machine %v %v", m, err)
		}
	})

	t.Run("from stopped ends running", func(t *testing.T) {
		if got := powerWait(t, a, name, "off"); got["status"] != "stopped" {
			t.Fatalf("powered off: %v", got["status"])
		}
		got := opWait(t, a, "POST", "/servers/"+itoa(num(t, srv["id"]))+"/reinstall", map[string]any{"image_id": 3}, "reinstalling", "reinstall")
		if got["status"] != "running" || num(t, got["image_id"]) != 3 {
			t.Errorf("after reinstall: %v", got)
		}
	})

	t.Run("unknown server", func(t *testing.T) {
		wantNotFound(t, a.Do("POST", "/servers/server-zzzzzz/reinstall", map[string]any{"image_id": 1}))
		wantNotFound(t, a.Do("POST", "/servers/999999/reinstall", map[string]any{"image_id": 1}))
	})
}

// ---- rescale ----

func TestServerOpsRescale(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	// hel1 (location 2) offers plans 1 to 4 (25, 40, 80, 160 GB); plan 3 gets room
	// for one server, plan 4 for none.
	setCapacity(t, env, 2, map[int64]int{3: 1, 4: 0})

	srv := runningServer(t, a, "location_id", 2, "plan_id", 1)
	name := srv["name"].(string)
	path := "/servers/" + name + "/rescale"

	options := func(t *testing.T, server string) map[int64]map[string]any {
		t.Helper()
		out := map[int64]map[string]any{}
		for _, o := range items(t, a.Do("GET", "/servers/"+server+"/rescale-options", nil).Want(t, 200)) {
			out[num(t, o["id"])] = o
		}
		return out
	}
	flags := func(t *testing.T, server string) map[int64][2]bool {
		t.Helper()
		out := map[int64][2]bool{}
		for id, o := range options(t, server) {
			out[id] = [2]bool{o["in_stock"].(bool), o["disk_ok"].(bool)}
		}
		return out
	}

	t.Run("options", func(t *testing.T) {
		opts := options(t, name)
		if len(opts) != 3 || opts[1] != nil {
			t.Fatalf("options %v, want plans 2, 3, 4 (every other plan of hel1)", opts)
		}
		if p := opts[2]; p["name"] != "s2-2c-4g" || num(t, p["vcpus"]) != 2 || num(t, p["memory_mb"]) != 4096 ||
			num(t, p["disk_gb"]) != 40 || p["price_hourly"] != "0.0110" || p["price_monthly"] != "7.0900" {
			t.Errorf("plan 2 as an option: %v", p)
		}
		want := map[int64][2]bool{2: {true, true}, 3: {true, true}, 4: {false, true}}
		if got := flags(t, name); !mapsEqual(got, want) {
			t.Errorf("in_stock/disk_ok %v, want %v", got, want)
		}
		// By id as well as by name; a plan-2 server finds plan 1's disk too small.
		if got := flags(t, itoa(num(t, srv["id"]))); !mapsEqual(got, want) {
			t.Errorf("by id: %v", got)
		}
		big := runningServer(t, a, "location_id", 2, "plan_id", 2)
		want = map[int64][2]bool{1: {true, false}, 3: {true, true}, 4: {false, true}}
		if got := flags(t, big["name"].(string)); !mapsEqual(got, want) {
			t.Errorf("plan-2 server: %v, want %v", got, want)
		}
		// The one unit of plan 3 taken: out of stock for everyone.
		taker := order(t, a, map[string]any{"plan_id": 3, "location_id": 2, "image_id": 1})
		waitOp(t, a, opID(t, taker))
		if got := flags(t, name)[3]; got != [2]bool{false, true} {
			t.Errorf("plan 3 with its capacity used: in_stock/disk_ok %v", got)
		}
		powerWait(t, a, big["name"].(string), "off")
		wantInvalidMsg(t, a.Do("POST", "/servers/"+big["name"].(string)+"/rescale", map[string]any{"plan_id": 1}),
			"plan_id", msg("en", "validation.plan_disk_too_small", "disk", 40))
		wantInvalidMsg(t, a.Do("POST", "/servers/"+big["name"].(string)+"/rescale", map[string]any{"plan_id": 3}),
			"plan_id", msg("en", "validation.plan_out_of_stock"))
		wantInvalidMsg(t, a.Do("POST", "/servers/"+big["name"].(string)+"/rescale", map[string]any{"plan_id": 4, "upgrade_disk": true}),
			"plan_id", msg("en", "validation.plan_out_of_stock"))
		// Deleting the taker frees the unit.
		a.Do("DELETE", "/servers/"+taker["name"].(string), nil).Want(t, 204)
		if got := flags(t, name)[3]; got != [2]bool{true, true} {
			t.Errorf("plan 3 after its server was deleted: %v", got)
		}
		a.Do("DELETE", "/servers/"+big["name"].(string), nil).Want(t, 204)
	})

	t.Run("422 while running", func(t *testing.T) {
		wantInvalidMsg(t, a.Do("POST", path, map[string]any{"plan_id": 2}), "server", msg("en", "validation.rescale_not_stopped", "status", "running"))
		// Body errors come first.
		wantInvalidMsg(t, a.Do("POST", path, map[string]any{}), "plan_id", msg("en", "validation.required"))
	})

	powerWait(t, a, name, "off")

	t.Run("422 on plan_id and the body", func(t *testing.T) {
		wantInvalidMsg(t, a.Do("POST", path, map[string]any{}), "plan_id", msg("en", "validation.required"))
		wantInvalidMsg(t, a.Do("POST", path, map[string]any{"upgrade_disk": true}), "plan_id", msg("en", "validation.required"))
		wantInvalidMsg(t, a.Do("POST", path, map[string]any{"plan_id": 1}), "plan_id", msg("en", "validation.plan_same"))
		wantInvalidMsg(t, a.Do("POST", path, map[string]any{"plan_id": 999}), "plan_id", msg("en", "validation.plan_unknown"))
		wantInvalidMsg(t, a.Do("POST", path, map[string]any{"plan_id": 5}), "plan_id", msg("en", "validation.plan_not_offered"))
		wantInvalidMsg(t, a.Do("POST", path, map[string]any{"plan_id": 4}), "plan_id", msg("en", "validation.plan_out_of_stock"))
		wantInvalid(t, a.Do("POST", path, map[string]any{"plan_id": 2, "upgrade_disk": "yes"}), "upgrade_disk")
		wantInvalid(t, a.Do("POST", path, map[string]any{"plan_id": 2, "disk": 80}), "disk")
		wantInvalid(t, a.Do("POST", path, "[]"), "body")
		got := data(t, a.Do("GET", "/servers/"+name, nil).Want(t, 200))
		if got["status"] != "stopped" || got["operation"] != nil || num(t, got["plan_id"]) != 1 {
			t.Errorf("refused rescales changed the server: %v", got)
		}
	})

	wantSize := func(t *testing.T, got map[string]any, plan, vcpus, mem, disk int64) {
		t.Helper()
		if got["status"] != "stopped" || num(t, got["plan_id"]) != plan || num(t, got["vcpus"]) != vcpus ||
			num(t, got["memory_mb"]) != mem || num(t, got["disk_gb"]) != disk {
			t.Errorf("server %v; want stopped, plan %d, %d vCPUs, %d MB, %d GB", got, plan, vcpus, mem, disk)
		}
		m, err := env.App.Driver().Machine(context.Background(), name)
		if err != nil || m.State != "stopped" || int64(m.VCPUs) != vcpus || int64(m.MemoryMB) != mem || int64(m.DiskGB) != disk {
			t.Errorf("machine %+v %v; want stopped %d/%d/%d", m, err, vcpus, mem, disk)
		}
	}

	t.Run("up without upgrade_disk, and back down", func(t *testing.T) {
		got := opWait(t, a, "POST", path, map[string]any{"plan_id": 2}, "rescaling", "rescale")
		wantSize(t, got, 2, 2, 4096, 25)
		if got := flags(t, name)[1]; got != [2]bool{true, true} {
			t.Errorf("plan 1 after an upgrade that kept the disk: in_stock/disk_ok %v", got)
		}
		got = opWait(t, a, "POST", path, map[string]any{"plan_id": 1, "upgrade_disk": false}, "rescaling", "rescale")
		wantSize(t, got, 1, 1, 1024, 25)
	})

	t.Run("up with upgrade_disk", func(t *testing.T) {
		got := opWait(t, a, "POST", path, map[string]any{"plan_id": 3, "upgrade_disk": true}, "rescaling", "rescale")
		wantSize(t, got, 3, 4, 8192, 80)
		// The unit of plan 3 is now this server's.
		if got := flags(t, name); got[1] != [2]bool{true, false} || got[2] != [2]bool{true, false} || got[4] != [2]bool{false, true} {
			t.Errorf("options after a disk upgrade: %v", got)
		}
		wantInvalidMsg(t, a.Do("POST", path, map[string]any{"plan_id": 2}), "plan_id", msg("en", "validation.plan_disk_too_small", "disk", 80))
		other := runningServer(t, a, "location_id", 2, "plan_id", 1)
		if got := flags(t, other["name"].(string))[3]; got[0] {
			t.Errorf("plan 3 in stock with its one unit rescaled into: %v", got)
		}
	})

	t.Run("powered on afterwards", func(t *testing.T) {
		if got := powerWait(t, a, name, "on"); got["status"] != "running" || num(t, got["vcpus"]) != 4 {
			t.Errorf("after power on: %v", got)
		}
	})
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// ---- snapshots ----

func TestServerOpsSnapshotNames(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	srv := runningServer(t, a)
	name := srv["name"].(string)
	path := "/servers/" + name + "/snapshots"

	chars := msg("en", "validation.snapshot_name_chars")
	length := msg("en", "validation.between_chars", "min", 2, "max", 40)
	reserved := msg("en", "validation.snapshot_name_reserved", "prefix", "auto-")
	for _, tc := range []struct {
		name string
		body any
		want string // "" = accepted
	}{
		{"two characters", map[string]any{"name": "ab"}, ""},
		{"forty characters", map[string]any{"name": "a" + strings.Repeat("b", 39)}, ""},
		{"letters digits dash underscore", map[string]any{"name": "Pre_upgrade-2025"}, ""},
		{"auto without dash", map[string]any{"name": "autosave"}, ""},
		{"auto_ with underscore", map[string]any{"name": "auto_1"}, ""},
		{"one character", map[string]any{"name": "a"}, length},
		{"forty-one characters", map[string]any{"name": "a" + strings.Repeat("b", 40)}, length},
		{"empty", map[string]any{"name": ""}, msg("en", "validation.required")},
		{"missing", map[string]any{}, msg("en", "validation.required")},
		{"missing, no body", nil, msg("en", "validation.required")},
		{"starts with a digit", map[string]any{"name": "1st"}, chars},
		{"starts with a dash", map[string]any{"name": "-ab"}, chars},
		{"starts with an underscore", map[string]any{"name": "_ab"}, chars},
		{"space", map[string]any{"name": "my snap"}, chars},
		{"dot", map[string]any{"name": "v1.2"}, chars},
		{"slash", map[string]any{"name": "a/b"}, chars},
		{"non-ASCII letter", map[string]any{"name": "äb"}, chars},
		{"reserved prefix", map[string]any{"name": "auto-nightly"}, reserved},
		{"reserved prefix, upper case", map[string]any{"name": "AUTO-nightly"}, reserved},
		{"reserved prefix, mixed case", map[string]any{"name": "Auto-1"}, reserved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.Do("POST", path, tc.body)
			switch {
			case tc.want == "":
				if r.Status != http.StatusCreated {
					t.Fatalf("%v refused: %d %s", tc.body, r.Status, r.Body)
				}
				// The snapshot may already be done when we look; wait only if not.
				srv := data(t, a.Do("GET", "/servers/"+name, nil).Want(t, 200))
				if srv["operation"] != nil {
					waitOp(t, a, opID(t, srv))
				}
			default:
				wantInvalidMsg(t, r, "name", tc.want)
			}
		})
	}
	wantInvalid(t, a.Do("POST", path, map[string]any{"name": 5}), "name")
	wantInvalid(t, a.Do("POST", path, map[string]any{"name": "okay", "memory": true}), "memory")
	wantInvalid(t, a.Do("POST", path, map[string]any{"name": "okay", "include_memory": "yes"}), "include_memory")
	wantInvalid(t, a.Do("POST", path, "[]"), "body")
	if n := len(snapshotList(t, a, name)); n != 5 {
		t.Errorf("%d snapshots, want the 5 accepted", n)
	}
	// A snapshot's name may be long and of any case, but stays unique per server
	// ignoring case; another server may use it.
	e := wantInvalid(t, a.Do("POST", path, map[string]any{"name": "AB"}), "name")
	if e.Errors["name"][0] != msg("en", "validation.snapshot_name_taken") {
		t.Errorf("duplicate name: %v", e.Errors)
	}
	wantInvalid(t, a.Do("POST", path, map[string]any{"name": "pre_UPGRADE-2025", "include_memory": true}), "name")
	other := runningServer(t, a)
	createSnapshot(t, a, other["name"].(string), map[string]any{"name": "AB"})
}

func TestServerOpsSnapshots(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	srv := runningServer(t, a)
	name, id := srv["name"].(string), num(t, srv["id"])
	path := "/servers/" + name + "/snapshots"

	if list := snapshotList(t, a, name); len(list) != 0 {
		t.Fatalf("new server lists snapshots %v", list)
	}

	// A disk snapshot of a running server, one with memory, one of a stopped server.
	disk, got := createSnapshot(t, a, name, map[string]any{"name": "disk-running"})
	if got["status"] != "running" || num(t, disk["server_id"]) != id || disk["include_memory"] != false || disk["created_at"] == "" {
		t.Errorf("disk snapshot %v of server %v", disk, got)
	}
	mem, _ := createSnapshot(t, a, itoa(id), map[string]any{"name": "with-memory", "include_memory": true})
	if mem["include_memory"] != true || num(t, mem["size_gb"]) <= num(t, disk["size_gb"]) {
		t.Errorf("memory snapshot %v should be larger than the disk one %v", mem, disk)
	}
	if got := powerWait(t, a, name, "off"); got["status"] != "stopped" {
		t.Fatalf("off: %v", got)
	}
	e := wantInvalid(t, a.Do("POST", path, map[string]any{"name": "mem-stopped", "include_memory": true}), "include_memory")
	if e.Errors["include_memory"][0] != msg("en", "validation.memory_needs_running", "status", "stopped") || len(e.Errors) != 1 {
		t.Errorf("memory snapshot of a stopped server: %v", e.Errors)
	}
	stopped, got := createSnapshot(t, a, name, map[string]any{"name": "disk-stopped", "include_memory": false})
	if got["status"] != "stopped" {
		t.Errorf("a snapshot changed the server's status: %v", got["status"])
	}

	t.Run("newest first", func(t *testing.T) {
		want := []int64{num(t, stopped["id"]), num(t, mem["id"]), num(t, disk["id"])}
		if got := ids(t, snapshotList(t, a, name)); !slices.Equal(got, want) {
			t.Errorf("list %v, want %v", got, want)
		}
		if got := ids(t, snapshotList(t, a, itoa(id))); !slices.Equal(got, want) {
			t.Errorf("list by id %v, want %v", got, want)
		}
	})

	restore := func(t *testing.T, snap map[string]any) map[string]any {
		t.Helper()
		return opWait(t, a, "POST", path+"/"+itoa(num(t, snap["id"]))+"/restore", nil, "restoring", "restore")
	}
	machineState := func(t *testing.T, want string) {
		t.Helper()
		if m, err := env.App.Driver().Machine(context.Background(), name); err != nil || string(m.State) != want {
			t.Errorf("machine %v %v, want %s", m.State, err, want)
		}
	}

	t.Run("restore", func(t *testing.T) {
		// The server is stopped: a memory snapshot resumes it running.
		if got := restore(t, mem); got["status"] != "running" {
			t.Errorf("memory snapshot restored on a stopped server: %v, want running", got["status"])
		}
		machineState(t, "running")
		// Disk-only, asked while running: running.
		if got := restore(t, stopped); got["status"] != "running" {
			t.Errorf("disk snapshot restored on a running server: %v, want running", got["status"])
		}
		machineState(t, "running")
		// Disk-only, asked while stopped: stopped, also from a snapshot taken running.
		powerWait(t, a, name, "shutdown")
		if got := restore(t, disk); got["status"] != "stopped" {
			t.Errorf("disk snapshot restored on a stopped server: %v, want stopped", got["status"])
		}
		machineState(t, "stopped")
		// An empty object is no body too; anything in it is not.
		r := a.Do("POST", path+"/"+itoa(num(t, disk["id"]))+"/restore", "{}").Want(t, 200)
		serverAfter(t, a, data(t, r))
		wantInvalid(t, a.Do("POST", path+"/"+itoa(num(t, disk["id"]))+"/restore", map[string]any{"running": true}), "running")
		wantInvalid(t, a.Do("POST", path+"/"+itoa(num(t, disk["id"]))+"/restore", "[]"), "body")
		// The snapshots are still there and available.
		for _, s := range snapshotList(t, a, name) {
			if s["status"] != "available" {
				t.Errorf("after restores: %v", s)
			}
		}
	})

	t.Run("another server's snapshot, unknown ids", func(t *testing.T) {
		other := runningServer(t, a)
		on := "/servers/" + other["name"].(string) + "/snapshots/"
		for _, sid := range []string{itoa(num(t, disk["id"])), "999999", "0", "-1", "abc", "1.5"} {
			wantNotFound(t, a.Do("POST", on+sid+"/restore", nil))
			wantNotFound(t, a.Do("DELETE", on+sid, nil))
		}
		// 404 before a body's 422.
		wantNotFound(t, a.Do("POST", on+itoa(num(t, disk["id"]))+"/restore", map[string]any{"x": 1}))
		wantNotFound(t, a.Do("POST", on+"999999/restore", "["))
		if s := snapshotOf(t, a, name, num(t, disk["id"])); s == nil || s["status"] != "available" {
			t.Errorf("snapshot after requests through another server: %v", s)
		}
	})

	t.Run("delete when idle", func(t *testing.T) {
		sp := path + "/" + itoa(num(t, stopped["id"]))
		res := data(t, a.Do("DELETE", sp, nil).Want(t, http.StatusAccepted))
		if res["result"] != "deleted" || len(res) != 1 {
			t.Errorf("delete: %v", res)
		}
		if s := snapshotOf(t, a, name, num(t, stopped["id"])); s != nil {
			t.Errorf("deleted snapshot still listed: %v", s)
		}
		wantNotFound(t, a.Do("DELETE", sp, nil))
		wantNotFound(t, a.Do("POST", sp+"/restore", nil))
		got := data(t, a.Do("GET", "/servers/"+name, nil).Want(t, 200))
		if got["operation"] != nil {
			t.Errorf("deleting a snapshot made the server busy: %v", got["operation"])
		}
		// Its name is free again.
		again, _ := createSnapshot(t, a, name, map[string]any{"name": "DISK-stopped"})
		if num(t, again["id"]) <= num(t, stopped["id"]) {
			t.Errorf("new snapshot id %v", again["id"])
		}
	})

	t.Run("deleting the server deletes its snapshots", func(t *testing.T) {
		list := snapshotList(t, a, name)
		if len(list) == 0 {
			t.Fatal("no snapshots left to test with")
		}
		a.Do("DELETE", "/servers/"+name, nil).Want(t, 204)
		wantNotFound(t, a.Do("GET", path, nil))
		wantNotFound(t, a.Do("GET", "/servers/"+name+"/rescale-options", nil))
		for _, s := range list {
			sp := path + "/" + itoa(num(t, s["id"]))
			wantNotFound(t, a.Do("DELETE", sp, nil))
			wantNotFound(t, a.Do("POST", sp+"/restore", nil))
			got, err := env.App.DB.SnapshotAny(context.Background(), num(t, s["id"]))
			if err != nil || got.DeletedAt == nil {
				t.Errorf("snapshot %v of a deleted server: deleted_at %v, %v", s["id"], got.DeletedAt, err)
			}
		}
	})
}

// TestServerOpsBusy runs slowly enough (a snapshot with memory takes 3 s) to see
// each operation while it runs.
func TestServerOpsBusy(t *testing.T) {
	t.Parallel()
	// Scale 0.5: the snapshot with memory this test works in lasts 7.5 s, time enough
	// for its requests on a loaded CI machine.
	env := testenv.New(t, testenv.Options{SimTimeScale: 0.5})
	a := env.NewAccount("en", "100", "")
	ordered := order(t, a, baseOrder())
	name := ordered["name"].(string)
	path := "/servers/" + name

	// While provisioning.
	prov := ordered["operation"].(map[string]any)
	wantBusyWith(t, a.Do("POST", path+"/reinstall", map[string]any{"image_id": 2}), prov)
	wantBusyWith(t, a.Do("POST", path+"/snapshots", map[string]any{"name": "early"}), prov)
	wantBusyWith(t, a.Do("POST", path+"/snapshots", map[string]any{"name": "early", "include_memory": true}), prov)
	// Busy comes before the state precondition (not stopped), after the body's 422s.
	wantBusyWith(t, a.Do("POST", path+"/rescale", map[string]any{"plan_id": 2}), prov)
	wantInvalid(t, a.Do("POST", path+"/rescale", map[string]any{"plan_id": 1}), "plan_id")
	wantInvalid(t, a.Do("POST", path+"/reinstall", map[string]any{"image_id": 999}), "image_id")
	wantInvalid(t, a.Do("POST", path+"/snapshots", map[string]any{"name": "auto-x"}), "name")
	// Reads answer.
	if opts := items(t, a.Do("GET", path+"/rescale-options", nil).Want(t, 200)); len(opts) != 5 {
		t.Errorf("options while provisioning: %v", opts)
	}
	snapshotList(t, a, name)
	waitOp(t, a, num(t, prov["id"]))

	keep, _ := createSnapshot(t, a, name, map[string]any{"name": "keep"})
	old, _ := createSnapshot(t, a, name, map[string]any{"name": "old"})

	t.Run("while a snapshot is taken", func(t *testing.T) {
		created := data(t, a.Do("POST", path+"/snapshots", map[string]any{"name": "mem", "include_memory": true}).Want(t, 201))
		srv := data(t, a.Do("GET", path, nil).Want(t, 200))
		op, _ := srv["operation"].(map[string]any)
		if op == nil || op["type"] != "snapshot" || srv["status"] != "running" {
			t.Fatalf("server while its snapshot is taken: %v", srv)
		}
		wantBusyWith(t, a.Do("POST", path+"/power", map[string]any{"action": "off"}), op)
		wantBusyWith(t, a.Do("POST", path+"/reinstall", map[string]any{"image_id": 2}), op)
		wantBusyWith(t, a.Do("POST", path+"/rescale", map[string]any{"plan_id": 2}), op)
		wantBusyWith(t, a.Do("POST", path+"/snapshots", map[string]any{"name": "another"}), op)
		wantBusyWith(t, a.Do("POST", path+"/snapshots/"+itoa(num(t, keep["id"]))+"/restore", nil), op)
		wantBusyWith(t, a.Do("POST", path+"/snapshots/"+itoa(num(t, created["id"]))+"/restore", nil), op)
		wantBusyWith(t, a.Do("DELETE", path, nil), op)
		// The same name is taken even while it is being made.
		wantInvalid(t, a.Do("POST", path+"/snapshots", map[string]any{"name": "MEM"}), "name")

		// Deleting while busy is scheduled: an available snapshot, and the one being made.
		for _, sid := range []int64{num(t, old["id"]), num(t, created["id"])} {
			res := data(t, a.Do("DELETE", path+"/snapshots/"+itoa(sid), nil).Want(t, http.StatusAccepted))
			if res["result"] != "scheduled" {
				t.Errorf("delete of %d while busy: %v", sid, res)
			}
			if s := snapshotOf(t, a, name, sid); s == nil || s["status"] != "deleting" {
				t.Errorf("snapshot %d scheduled for deletion: %v", sid, s)
			}
		}
		// Asking twice changes nothing.
		res := data(t, a.Do("DELETE", path+"/snapshots/"+itoa(num(t, old["id"])), nil).Want(t, http.StatusAccepted))
		if res["result"] != "scheduled" {
			t.Errorf("second delete: %v", res)
		}
		// Restoring a snapshot whose deletion is scheduled: still busy first.
		wantBusyWith(t, a.Do("POST", path+"/snapshots/"+itoa(num(t, old["id"]))+"/restore", nil), op)
		if cur := data(t, a.Do("GET", "/operations/"+itoa(num(t, op["id"])), nil).Want(t, 200)); cur["status"] != "running" {
			t.Fatalf("the snapshot operation ended during the checks (%v); the test needs a slower time scale", cur)
		}

		waitOp(t, a, num(t, op["id"]))
		want := []int64{num(t, keep["id"])}
		if got := ids(t, snapshotList(t, a, name)); !slices.Equal(got, want) {
			t.Errorf("after the operation: snapshots %v, want %v (scheduled deletions done)", got, want)
		}
		for _, sid := range []int64{num(t, old["id"]), num(t, created["id"])} {
			wantNotFound(t, a.Do("DELETE", path+"/snapshots/"+itoa(sid), nil))
		}
		if got := data(t, a.Do("GET", path, nil).Want(t, 200)); got["operation"] != nil || got["status"] != "running" {
			t.Errorf("server after the snapshot: %v", got)
		}
	})

	t.Run("while reinstalling", func(t *testing.T) {
		srv := data(t, a.Do("POST", path+"/reinstall", map[string]any{"image_id": 3}).Want(t, 200))
		op := srv["operation"].(map[string]any)
		if srv["status"] != "reinstalling" || op["type"] != "reinstall" {
			t.Fatalf("reinstall: %v", srv)
		}
		wantBusyWith(t, a.Do("POST", path+"/reinstall", map[string]any{"image_id": 2}), op)
		wantBusyWith(t, a.Do("POST", path+"/snapshots", map[string]any{"name": "during"}), op)
		wantBusyWith(t, a.Do("POST", path+"/power", map[string]any{"action": "reboot"}), op)
		// The reinstall keeps the snapshots; one deleted meanwhile goes when it ends.
		res := data(t, a.Do("DELETE", path+"/snapshots/"+itoa(num(t, keep["id"])), nil).Want(t, http.StatusAccepted))
		if res["result"] != "scheduled" {
			t.Errorf("delete during a reinstall: %v", res)
		}
		got := serverAfter(t, a, srv)
		if got["status"] != "running" || num(t, got["image_id"]) != 3 {
			t.Errorf("after reinstall: %v", got)
		}
		if list := snapshotList(t, a, name); len(list) != 0 {
			t.Errorf("snapshots after the reinstall: %v", list)
		}
	})

	t.Run("while rescaling and restoring", func(t *testing.T) {
		snap, _ := createSnapshot(t, a, name, map[string]any{"name": "before"})
		powerWait(t, a, name, "off")
		srv := data(t, a.Do("POST", path+"/rescale", map[string]any{"plan_id": 2}).Want(t, 200))
		op := srv["operation"].(map[string]any)
		wantBusyWith(t, a.Do("POST", path+"/rescale", map[string]any{"plan_id": 3}), op)
		wantBusyWith(t, a.Do("POST", path+"/snapshots/"+itoa(num(t, snap["id"]))+"/restore", nil), op)
		serverAfter(t, a, srv)
		srv = data(t, a.Do("POST", path+"/snapshots/"+itoa(num(t, snap["id"]))+"/restore", nil).Want(t, 200))
		op = srv["operation"].(map[string]any)
		if srv["status"] != "restoring" || op["type"] != "restore" {
			t.Fatalf("restore: %v", srv)
		}
		wantBusyWith(t, a.Do("POST", path+"/power", map[string]any{"action": "on"}), op)
		wantBusyWith(t, a.Do("POST", path+"/rescale", map[string]any{"plan_id": 1}), op)
		if got := serverAfter(t, a, srv); got["status"] != "stopped" || num(t, got["plan_id"]) != 2 {
			t.Errorf("after restoring a disk snapshot on a stopped server: %v", got)
		}
	})
}

func TestServerOpsSuspendedAndLanguage(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("de", "100", "")
	srv := runningServer(t, a)
	name, id := srv["name"].(string), num(t, srv["id"])
	snap, _ := createSnapshot(t, a, name, map[string]any{"name": "vorher"})
	sid := itoa(num(t, snap["id"]))

	t.Run("messages in German", func(t *testing.T) {
		e := wantInvalid(t, a.Do("POST", "/servers/"+name+"/rescale", map[string]any{"plan_id": 2}), "server")
		if want := msg("de", "validation.rescale_not_stopped", "status", "running"); e.Message != want || !strings.Contains(want, "ausgeschaltet") {
			t.Errorf("message %q, want %q", e.Message, want)
		}
		e = wantInvalid(t, a.Do("POST", "/servers/"+name+"/snapshots", map[string]any{"name": "Auto-1"}), "name")
		if want := msg("de", "validation.snapshot_name_reserved", "prefix", "auto-"); e.Errors["name"][0] != want || !strings.Contains(want, "reserviert") {
			t.Errorf("message %q, want %q", e.Errors["name"][0], want)
		}
	})

	if _, err := env.App.Service.SetServerSuspended(context.Background(), id, true); err != nil {
		t.Fatal(err)
	}
	for _, req := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/servers/" + name + "/reinstall", map[string]any{"image_id": 2}},
		{"POST", "/servers/" + itoa(id) + "/reinstall", map[string]any{"image_id": 999}},
		{"POST", "/servers/" + name + "/rescale", map[string]any{"plan_id": 2}},
		{"POST", "/servers/" + name + "/rescale", map[string]any{}},
		{"POST", "/servers/" + name + "/snapshots", map[string]any{"name": "again"}},
		{"POST", "/servers/" + name + "/snapshots", map[string]any{"name": "auto-x", "bogus": 1}},
		{"POST", "/servers/" + name + "/snapshots/" + sid + "/restore", nil},
		{"POST", "/servers/" + name + "/snapshots/" + sid + "/restore", map[string]any{"bogus": 1}},
		{"DELETE", "/servers/" + name + "/snapshots/" + sid, nil},
	} {
		e := wantError(t, a.Do(req.method, req.path, req.body), http.StatusForbidden, "server_suspended")
		if e.Message != msg("de", "error.server_suspended") {
			t.Errorf("%s %s: message %q", req.method, req.path, e.Message)
		}
	}
	// 404 still comes before the suspension's 403.
	wantNotFound(t, a.Do("POST", "/servers/"+name+"/snapshots/999999/restore", nil))
	wantNotFound(t, a.Do("DELETE", "/servers/"+name+"/snapshots/999999", nil))
	// Reads answer.
	if opts := items(t, a.Do("GET", "/servers/"+name+"/rescale-options", nil).Want(t, 200)); len(opts) != 5 {
		t.Errorf("options of a suspended server: %v", opts)
	}
	if list := snapshotList(t, a, name); len(list) != 1 || list[0]["status"] != "available" {
		t.Errorf("snapshots of a suspended server: %v", list)
	}
}

func TestServerOpsOtherAccount(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	b := env.NewAccount("en", "100", "")
	mine := runningServer(t, a)
	theirs := runningServer(t, b)
	theirSnap, _ := createSnapshot(t, b, theirs["name"].(string), map[string]any{"name": "theirs"})
	tsid := itoa(num(t, theirSnap["id"]))

	for _, ref := range []string{theirs["name"].(string), itoa(num(t, theirs["id"]))} {
		p := "/servers/" + ref
		for _, req := range []struct {
			method, path string
			body         any
		}{
			{"POST", p + "/reinstall", map[string]any{"image_id": 2}},
			{"POST", p + "/reinstall", map[string]any{"image_id": "x"}},
			{"GET", p + "/rescale-options", nil},
			{"POST", p + "/rescale", map[string]any{"plan_id": 2}},
			{"POST", p + "/rescale", "{"},
			{"GET", p + "/snapshots", nil},
			{"POST", p + "/snapshots", map[string]any{"name": "mine"}},
			{"POST", p + "/snapshots", map[string]any{"name": "x"}},
			{"POST", p + "/snapshots/" + tsid + "/restore", nil},
			{"POST", p + "/snapshots/" + tsid + "/restore", map[string]any{"x": 1}},
			{"DELETE", p + "/snapshots/" + tsid, nil},
		} {
			wantNotFound(t, a.Do(req.method, req.path, req.body))
		}
	}
	// B's snapshot through A's own server.
	wantNotFound(t, a.Do("POST", "/servers/"+mine["name"].(string)+"/snapshots/"+tsid+"/restore", nil))
	wantNotFound(t, a.Do("DELETE", "/servers/"+mine["name"].(string)+"/snapshots/"+tsid, nil))

	// Nothing of B's changed.
	got := data(t, b.Do("GET", "/servers/"+theirs["name"].(string), nil).Want(t, 200))
	if got["status"] != "running" || got["operation"] != nil || num(t, got["image_id"]) != 1 || num(t, got["plan_id"]) != 1 {
		t.Errorf("B's server: %v", got)
	}
	if list := snapshotList(t, b, theirs["name"].(string)); len(list) != 1 || list[0]["status"] != "available" {
		t.Errorf("B's snapshots: %v", list)
	}
	if list := snapshotList(t, a, mine["name"].(string)); len(list) != 0 {
		t.Errorf("A's snapshots: %v", list)
	}
}
