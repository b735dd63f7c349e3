package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/simdriver"
	"github.com/berthhq/berth/internal/testenv"
)

// createVolume creates a volume with what body adds to a fresh name and 10 GB, and
// waits until its creation has ended; it returns the volume then.
func createVolume(t testing.TB, c caller, body map[string]any) map[string]any {
	t.Helper()
	b := map[string]any{"name": uniqueName("vol"), "size_gb": 10}
	for k, v := range body {
		b[k] = v
	}
	vol := data(t, c.Do("POST", "/volumes", b).Want(t, 201))
	return volumeAfter(t, c, vol)
}

// volumeAfter waits until the volume's operation (its creation, attachment, ...) has
// ended, and returns the volume then.
func volumeAfter(t testing.TB, c caller, vol map[string]any) map[string]any {
	t.Helper()
	op, ok := vol["operation"].(map[string]any)
	if ok && op != nil {
		waitOp(t, c, num(t, op["id"]))
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		cur := data(t, c.Do("GET", "/volumes/"+itoa(num(t, vol["id"])), nil).Want(t, 200))
		if cur["operation"] == nil {
			return cur
		}
		if time.Now().After(deadline) {
			t.Fatalf("volume %v still busy: %v", vol["id"], cur)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// volumeGate holds a driver's volume attachments until released, so that a test sees
// an attachment's operation while it runs.
type volumeGate struct {
	compute.Driver
	vs      compute.Volumes
	release chan struct{}
}

func gateVolumes(d compute.Driver) *volumeGate {
	vs, _ := compute.As[compute.Volumes](d)
	return &volumeGate{Driver: d, vs: vs, release: make(chan struct{})}
}

func (g *volumeGate) Unwrap() []compute.Driver { return []compute.Driver{g.Driver} }

func (g *volumeGate) CreateVolume(ctx context.Context, key string, spec compute.VolumeSpec) error {
	return g.vs.CreateVolume(ctx, key, spec)
}

func (g *volumeGate) AttachVolume(ctx context.Context, key, machine string, spec compute.VolumeSpec, automount bool) error {
	select {
	case <-g.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.vs.AttachVolume(ctx, key, machine, spec, automount)
}

func (g *volumeGate) DetachVolume(ctx context.Context, key, machine, volume string, timeout time.Duration) error {
	return g.vs.DetachVolume(ctx, key, machine, volume, timeout)
}

func (g *volumeGate) ResizeVolume(ctx context.Context, key, volume string, sizeGB int) error {
	return g.vs.ResizeVolume(ctx, key, volume, sizeGB)
}

func (g *volumeGate) DeleteVolume(ctx context.Context, key, volume string) error {
	return g.vs.DeleteVolume(ctx, key, volume)
}

func (g *volumeGate) Volume(ctx context.Context, volume string) (compute.VolumeState, error) {
	return g.vs.Volume(ctx, volume)
}

// TestVolumes walks a volume's life through the API (docs/api.md, Volumes): made in
// a location, found by id and by name, attached while its operation holds the
// server (409 for the server's other changes, and for the volume's), refused
// deletion while attached, grown (never shrunk), detached, deleted; each step's
// events; another account's volume is 404, a token without storage 403.
func TestVolumes(t *testing.T) {
	t.Parallel()
	var gate *volumeGate
	env := testenv.New(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver { gate = gateVolumes(d); return gate }})
	a := env.NewAccount("en", "100", "")
	vol := data(t, a.Do("POST", "/volumes", map[string]any{"name": "pgdata", "size_gb": 20, "location_id": 1, "format": "ext4"}).Want(t, 201))
	if vol["status"] != "creating" || vol["server_id"] != nil || vol["format"] != "ext4" || vol["operation"] == nil ||
		vol["linux_device"] != "/dev/disk/by-id/scsi-0BERTH_Volume_"+itoa(num(t, vol["id"])) {
		t.Fatalf("created: %v", vol)
	}
	op := waitOp(t, a, opID(t, vol))
	if op["type"] != "create_volume" || op["server_id"] != nil || num(t, op["volume_id"]) != num(t, vol["id"]) {
		t.Errorf("its operation: %v", op)
	}
	id := itoa(num(t, vol["id"]))
	if got := data(t, a.Do("GET", "/volumes/pgdata", nil).Want(t, 200)); got["status"] != "available" || got["id"] != vol["id"] {
		t.Errorf("by name: %v", got)
	}

	srv := runningServer(t, a)
	sid := itoa(num(t, srv["id"]))
	attaching := data(t, a.Do("POST", "/volumes/"+id+"/attach", map[string]any{"server_id": num(t, srv["id"])}).Want(t, 200))
	busySrv := data(t, a.Do("GET", "/servers/"+sid, nil).Want(t, 200))
	if o, _ := busySrv["operation"].(map[string]any); o == nil || o["type"] != "attach_volume" {
		t.Errorf("the server while the volume attaches: %v", busySrv)
	}
	wantError(t, a.Do("POST", "/servers/"+sid+"/power", map[string]any{"action": "off"}), 409, "busy")
	if e := wantError(t, a.Do("DELETE", "/volumes/"+id, nil), 409, "busy"); e.Message != msg("en", "error.volume_busy", "operation", "attach_volume") {
		t.Errorf("a busy volume's 409 says %q", e.Message)
	}
	wantError(t, a.Do("POST", "/volumes/"+id+"/resize", map[string]any{"size_gb": 30}), 409, "busy")
	close(gate.release)
	waitOp(t, a, opID(t, attaching))
	if got := items(t, a.Do("GET", "/volumes?server_id="+sid, nil).Want(t, 200)); len(got) != 1 || got[0]["id"] != vol["id"] {
		t.Errorf("the server's volumes: %v", got)
	}

	wantInvalid(t, a.Do("DELETE", "/volumes/"+id, nil), "server_id")
	wantInvalid(t, a.Do("POST", "/volumes/"+id+"/resize", map[string]any{"size_gb": 20}), "size_gb")
	grown := volumeAfter(t, a, data(t, a.Do("POST", "/volumes/"+id+"/resize", map[string]any{"size_gb": 30}).Want(t, 200)))
	if num(t, grown["size_gb"]) != 30 || num(t, grown["server_id"]) != num(t, srv["id"]) {
		t.Errorf("grown: %v", grown)
	}
	detached := volumeAfter(t, a, data(t, a.Do("POST", "/volumes/"+id+"/detach", nil).Want(t, 200)))
	if detached["server_id"] != nil {
		t.Errorf("detached: %v", detached)
	}
	wantInvalid(t, a.Do("POST", "/volumes/"+id+"/detach", nil), "server_id")

	other := env.NewAccount("en", "100", "")
	wantNotFound(t, other.Do("GET", "/volumes/"+id, nil))
	wantNotFound(t, other.Do("DELETE", "/volumes/pgdata", nil))
	reader := as(env, a, "read")
	data(t, reader.Do("GET", "/volumes/"+id, nil).Want(t, 200))
	wantError(t, reader.Do("DELETE", "/volumes/"+id, nil), 403, "missing_scope")

	a.Do("DELETE", "/volumes/"+id, nil).Want(t, 204)
	wantNotFound(t, a.Do("GET", "/volumes/"+id, nil))
	var types []string
	for _, e := range items(t, a.Do("GET", "/events?types=volume.*", nil).Want(t, 200)) {
		types = append(types, e["type"].(string))
	}
	want := "volume.created volume.updated volume.attached volume.resized volume.detached volume.deleted"
	if strings.Join(types, " ") != want {
		t.Errorf("events: %v, want %s", types, want)
	}
}

// TestVolumeRefusals: every field's rule is a 422 naming the field, in the account's
// language, and nothing is made: boundary sizes, names, formats, places, automount,
// servers of other accounts, and both quotas.
func TestVolumeRefusals(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("de", "100", "")
	other := env.NewAccount("en", "100", "")
	foreign := runningServer(t, other)
	base := func(kv ...any) map[string]any {
		return with(map[string]any{"name": uniqueName("vol"), "size_gb": 10, "location_id": 1}, kv...)
	}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{base("name", ""), "name"},
		{base("name", "-data"), "name"},
		{base("name", "Data"), "name"},
		{base("name", "data_1"), "name"},
		{base("name", "12345"), "name"},
		{base("name", strings.Repeat("a", 65)), "name"},
		{base("size_gb", 9), "size_gb"},
		{base("size_gb", 0), "size_gb"},
		{base("size_gb", -1), "size_gb"},
		{base("size_gb", 10241), "size_gb"},
		{base("size_gb", int64(1)<<62), "size_gb"},
		{base("format", "ntfs"), "format"},
		{base("format", ""), "format"},
		{base("location_id", 999), "location_id"},
		{with(map[string]any{"name": uniqueName("vol"), "size_gb": 10}), "location_id"},
		{base("server_id", num(t, foreign["id"])), "server_id"},
		{base("automount", true, "format", "ext4"), "automount"},
		{base("project_id", 999), "project_id"},
	} {
		r := a.Do("POST", "/volumes", c.body)
		e := wantInvalid(t, r, c.field)
		for _, m := range e.Errors[c.field] {
			if strings.Contains(m, "validation.") {
				t.Errorf("%v: untranslated %q", c.body, m)
			}
		}
	}
	if got := items(t, a.Do("GET", "/volumes", nil).Want(t, 200)); len(got) != 0 {
		t.Fatalf("refused creations made volumes: %v", got)
	}
	// 10240 GB is the largest volume and the account's whole GB quota.
	big := createVolume(t, a, map[string]any{"location_id": 1, "size_gb": 10240})
	wantInvalid(t, a.Do("POST", "/volumes", base()), "size_gb")
	a.Do("DELETE", "/volumes/"+itoa(num(t, big["id"])), nil).Want(t, 204)
	// project_id null or absent is no project, as an order's is; a project is kept.
	for _, body := range []map[string]any{{"location_id": 1, "project_id": nil}, {"location_id": 1}} {
		v := createVolume(t, a, body)
		if v["project_id"] != nil {
			t.Errorf("created with %v: project_id %v, want null", body, v["project_id"])
		}
		a.Do("DELETE", "/volumes/"+itoa(num(t, v["id"])), nil).Want(t, 204)
	}
	proj := data(t, a.Do("POST", "/projects", map[string]any{"name": uniqueName("proj")}).Want(t, 201))
	if v := createVolume(t, a, map[string]any{"location_id": 1, "project_id": proj["id"]}); v["project_id"] != proj["id"] {
		t.Errorf("created in project %v: %v", proj["id"], v["project_id"])
	} else {
		a.Do("DELETE", "/volumes/"+itoa(num(t, v["id"])), nil).Want(t, 204)
	}
	setQuotas(t, env, a, map[string]int{"volumes": 1})
	createVolume(t, a, map[string]any{"location_id": 1})
	wantInvalid(t, a.Do("POST", "/volumes", base()), "name")
}

// TestVolumeOnServer: a volume made on a server is attached once made, and mounted by
// the guest at /mnt/volume-<id> when automount asks; a detach the guest refuses ends
// the operation in error after its timeout, the volume still attached; deleting the
// server detaches its volumes, which stay.
func TestVolumeOnServer(t *testing.T) {
	t.Parallel()
	var sim *simdriver.Driver
	var holds atomic.Bool
	env := testenv.New(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver {
		sim = d.(*simdriver.Driver)
		sim.GuestHolds = func(string, string) bool { return holds.Load() }
		return d
	}})
	a := env.NewAccount("en", "100", "")
	srv := runningServer(t, a)
	vol := createVolume(t, a, map[string]any{"server_id": num(t, srv["id"]), "format": "xfs", "automount": true})
	if num(t, vol["server_id"]) != num(t, srv["id"]) || num(t, vol["location_id"]) != num(t, srv["location_id"]) {
		t.Fatalf("made on the server: %v", vol)
	}
	id := num(t, vol["id"])
	disks, err := sim.GuestDisks(context.Background(), srv["name"].(string))
	if err != nil || len(disks) != 1 || disks[0].Vendor != "BERTH" || disks[0].Model != "Volume" || disks[0].Serial != itoa(id) ||
		disks[0].MountPoint != compute.VolumeMountPoint(id) || disks[0].FSType != "xfs" {
		t.Errorf("the guest sees %+v (%v)", disks, err)
	}

	holds.Store(true)
	detaching := data(t, a.Do("POST", "/volumes/"+itoa(id)+"/detach", nil).Want(t, 200))
	op := data(t, a.Do("GET", "/operations/"+itoa(opID(t, detaching))+"?wait=30", nil).Want(t, 200))
	if op["status"] != "error" {
		t.Fatalf("a detach the guest refused: %v", op)
	}
	if got := data(t, a.Do("GET", "/volumes/"+itoa(id), nil).Want(t, 200)); num(t, got["server_id"]) != num(t, srv["id"]) || got["operation"] != nil {
		t.Errorf("after the refused detach: %v", got)
	}
	holds.Store(false)

	a.Do("DELETE", "/servers/"+itoa(num(t, srv["id"])), nil).Want(t, 204)
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := data(t, a.Do("GET", "/volumes/"+itoa(id), nil).Want(t, 200))
		if got["server_id"] == nil && got["operation"] == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deleted server's volume: %v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	a.Do("DELETE", "/volumes/"+itoa(id), nil).Want(t, 204)
}

// TestSandboxResetRemovesVolumes: a sandbox reset removes the account's volumes, their
// data in the driver with them (attached, detached, and one deleted whose removal had
// not run), and leaves another account's.
func TestSandboxResetRemovesVolumes(t *testing.T) {
	t.Parallel()
	var sim *simdriver.Driver
	env := sandboxEnv(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver { sim = d.(*simdriver.Driver); return d }})
	a := env.NewAccount("en", "100", "")
	b := env.NewAccount("en", "100", "")
	srv := runningServer(t, a)
	attached := createVolume(t, a, map[string]any{"server_id": num(t, srv["id"])})
	detached := createVolume(t, a, map[string]any{"location_id": 1})
	kept := createVolume(t, b, map[string]any{"location_id": 1})
	a.Sandbox("POST", "/reset", nil).Want(t, http.StatusOK)
	if got := items(t, a.Do("GET", "/volumes", nil).Want(t, 200)); len(got) != 0 {
		t.Errorf("volumes after the reset: %v", got)
	}
	ctx := context.Background()
	for _, v := range []map[string]any{attached, detached} {
		if _, err := sim.Volume(ctx, compute.VolumeName(num(t, v["id"]))); !errors.Is(err, compute.ErrVolumeNotFound) {
			t.Errorf("volume %v in the driver after the reset: %v", v["id"], err)
		}
	}
	if _, err := sim.Volume(ctx, compute.VolumeName(num(t, kept["id"]))); err != nil {
		t.Errorf("another account's volume: %v", err)
	}
	data(t, b.Do("GET", "/volumes/"+itoa(num(t, kept["id"])), nil).Want(t, 200))
}

// TestOrderWithVolumes: an order's volume_ids are attached once the server is made,
// the formatted ones mounted with automount; the provisioning holds them (409 for
// their changes meanwhile); unknown, repeated, attached and other locations' volumes
// are 422 on volume_ids, and nothing is ordered then.
func TestOrderWithVolumes(t *testing.T) {
	t.Parallel()
	var sim *simdriver.Driver
	env := testenv.New(t, testenv.Options{SimTimeScale: 0.1, // a provisioning of 3 s: the 409 below meets it
		WrapDriver: func(d compute.Driver) compute.Driver { sim = d.(*simdriver.Driver); return d }})
	a := env.NewAccount("en", "100", "")
	data1 := createVolume(t, a, map[string]any{"location_id": 1, "format": "ext4"})
	blank := createVolume(t, a, map[string]any{"location_id": 1})
	elsewhere := createVolume(t, a, map[string]any{"location_id": 2})
	ids := []int64{num(t, data1["id"]), num(t, blank["id"])}

	for _, bad := range [][]int64{{ids[0], ids[0]}, {999}, {num(t, elsewhere["id"])}} {
		wantInvalid(t, a.Do("POST", "/servers", with(baseOrder(), "volume_ids", bad)), "volume_ids")
	}
	srv := data(t, a.Do("POST", "/servers", with(baseOrder(), "volume_ids", ids, "automount", true)).Want(t, 201))
	wantError(t, a.Do("DELETE", "/volumes/"+itoa(ids[0]), nil), 409, "busy")
	srv = serverAfter(t, a, srv)
	for _, id := range ids {
		if v := data(t, a.Do("GET", "/volumes/"+itoa(id), nil).Want(t, 200)); num(t, v["server_id"]) != num(t, srv["id"]) || v["operation"] != nil {
			t.Errorf("volume %d after the provisioning: %v", id, v)
		}
	}
	disks, err := sim.GuestDisks(context.Background(), srv["name"].(string))
	if err != nil || len(disks) != 2 || disks[0].MountPoint != compute.VolumeMountPoint(ids[0]) || disks[1].MountPoint != "" {
		t.Errorf("the guest sees %+v (%v): want the formatted one mounted, the blank one not", disks, err)
	}
	wantInvalid(t, a.Do("POST", "/servers", with(baseOrder(), "volume_ids", []int64{ids[0]})), "volume_ids")
	if got := items(t, a.Do("GET", "/servers", nil).Want(t, 200)); len(got) != 1 {
		t.Errorf("refused orders made servers: %d servers", len(got))
	}
}

// TestSnapshotOfServerWithVolumes (docs/volumes.md, Snapshots): a running server with
// a volume attached takes no snapshot, disk-only (422 on server) or with memory (422
// on include_memory), in each language, and before its host's reachability is asked
// (no 503 first); nothing is made, the server stays free. Stopped, it is snapshotted
// and the snapshot restored, the volume attached throughout and in the guest once it
// runs again; running with the volume detached, it is snapshotted.
func TestSnapshotOfServerWithVolumes(t *testing.T) {
	t.Parallel()
	var sim *simdriver.Driver
	var away atomic.Bool
	env := testenv.New(t, testenv.Options{Unreachable: func(context.Context, string) bool { return away.Load() },
		WrapDriver: func(d compute.Driver) compute.Driver { sim = d.(*simdriver.Driver); return d }})
	a := env.NewAccount("en", "100", "")
	srv := runningServer(t, a)
	sid := itoa(num(t, srv["id"]))
	vol := createVolume(t, a, map[string]any{"server_id": num(t, srv["id"]), "format": "ext4", "automount": true})
	vid := itoa(num(t, vol["id"]))

	away.Store(true) // a 503 would come after the 422 (docs/api.md, Errors)
	refuseSnapshotsWithVolumes(t, a, sid)
	away.Store(false)
	refuseSnapshotsWithVolumes(t, a, sid)

	powerWait(t, a, sid, "off")
	snap, got := createSnapshot(t, a, sid, map[string]any{"name": "with-volume"})
	if got["status"] != "stopped" {
		t.Errorf("the server after its snapshot: %v", got["status"])
	}
	restored := opWait(t, a, "POST", "/servers/"+sid+"/snapshots/"+itoa(num(t, snap["id"]))+"/restore", nil, "restoring", "restore")
	if restored["status"] != "stopped" {
		t.Errorf("restored: %v, want stopped", restored["status"])
	}
	if v := data(t, a.Do("GET", "/volumes/"+vid, nil).Want(t, 200)); v["server_id"] != srv["id"] || v["operation"] != nil {
		t.Errorf("the volume after the snapshot and its restore: %v", v)
	}
	powerWait(t, a, sid, "on")
	disks, err := sim.GuestDisks(context.Background(), srv["name"].(string))
	if err != nil || len(disks) != 1 || disks[0].Serial != vid || disks[0].MountPoint != compute.VolumeMountPoint(num(t, vol["id"])) {
		t.Errorf("the guest after the restore sees %+v (%v)", disks, err)
	}

	volumeAfter(t, a, data(t, a.Do("POST", "/volumes/"+vid+"/detach", nil).Want(t, 200)))
	createSnapshot(t, a, sid, map[string]any{"name": "detached"})
	createSnapshot(t, a, sid, map[string]any{"name": "detached-memory", "include_memory": true})
}

// refuseSnapshotsWithVolumes checks that server, running with volumes, refuses a
// snapshot with and without memory in each language, and is left as it was.
func refuseSnapshotsWithVolumes(t *testing.T, a *testenv.Account, server string) {
	t.Helper()
	path := "/servers/" + server + "/snapshots"
	for _, lang := range []string{"de", "fr", "en"} {
		a.Do("PATCH", "/me", map[string]any{"language": lang}).Want(t, 200)
		wantInvalidMsg(t, a.Do("POST", path, map[string]any{"name": "disk"}), "server", msg(lang, "validation.snapshot_running_volumes"))
		wantInvalidMsg(t, a.Do("POST", path, map[string]any{"name": "memory", "include_memory": true}), "include_memory",
			msg(lang, "validation.memory_snapshot_volumes"))
	}
	if list := snapshotList(t, a, server); len(list) != 0 {
		t.Errorf("refused snapshots are listed: %v", list)
	}
	if got := data(t, a.Do("GET", "/servers/"+server, nil).Want(t, 200)); got["status"] != "running" || got["operation"] != nil {
		t.Errorf("the server after the refused snapshots: %v, operation %v", got["status"], got["operation"])
	}
}
