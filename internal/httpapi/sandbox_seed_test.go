package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/simdriver"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/testenv"
)

// planHourly is the hourly price of plan 1 of the default catalog.
func planHourly(t testing.TB, env *testenv.Env) hosting.Money {
	t.Helper()
	p, err := env.App.DB.Plan(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	return p.PriceHourly
}

// machines counts the sim driver's machines, destroyed ones too.
func machines(t testing.TB, env *testenv.Env) int {
	t.Helper()
	var n int
	if err := env.App.DB.WriteDB().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM sim_machines`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSandboxSeed: POST /sandbox/v1/seed makes keys, projects, recipes and servers at
// once; the servers are running or stopped at once (GET shows it, the machine is in
// that state, no operation ran), billed from then as an order is, refer to projects
// and keys by name (seeded or the account's), and work as any server (power).
func TestSandboxSeed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := sandboxEnv(t)
	a := env.NewAccount("fr", "100", "")
	b := env.NewAccount("en", "100", "")
	own := createKey(t, a) // named "key"
	existing := createProject(t, a)
	deploy := testenv.PublicKey(t)
	r := a.Sandbox("POST", "/seed", map[string]any{
		"ssh_keys": []any{map[string]any{"name": "deploy", "public_key": deploy}},
		"projects": []any{map[string]any{"name": "web"}},
		"recipes":  []any{map[string]any{"name": "hello", "script": "#!/bin/sh\necho hello\n"}},
		"servers": []any{
			map[string]any{"display_name": "web-1", "plan_id": 1, "location_id": 1, "image_id": 1, "status": "running",
				"project": "web", "ssh_keys": []string{"deploy", "key"}},
			map[string]any{"display_name": "db-1", "plan_id": 1, "location_id": 1, "image_id": 2, "status": "stopped",
				"project": existing["name"]},
			map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1},
		},
	}).Want(t, http.StatusCreated)
	made := data(t, r)
	list := func(kind string) []map[string]any {
		var out []map[string]any
		for _, x := range made[kind].([]any) {
			out = append(out, x.(map[string]any))
		}
		return out
	}
	keys, projects, recipes, servers := list("ssh_keys"), list("projects"), list("recipes"), list("servers")
	if len(keys) != 1 || keys[0]["name"] != "deploy" || len(projects) != 1 || projects[0]["name"] != "web" ||
		num(t, projects[0]["server_count"]) != 1 || len(recipes) != 1 || recipes[0]["name"] != "hello" || len(servers) != 3 {
		t.Fatalf("seeded %s", r.Body)
	}
	web, db, plain := servers[0], servers[1], servers[2]
	if web["status"] != "running" || db["status"] != "stopped" || plain["status"] != "running" {
		t.Errorf("statuses %v %v %v, want running, stopped, running (the default)", web["status"], db["status"], plain["status"])
	}
	if web["display_name"] != "web-1" || plain["display_name"] != plain["name"] || num(t, web["project_id"]) != num(t, projects[0]["id"]) ||
		num(t, db["project_id"]) != num(t, existing["id"]) || plain["project_id"] != nil {
		t.Errorf("seeded servers %v", servers)
	}
	if got, want := fmt.Sprint(web["ssh_key_ids"]), fmt.Sprint([]any{float64(num(t, keys[0]["id"])), float64(num(t, own["id"]))}); got != want {
		t.Errorf("ssh_key_ids %s, want %s (the keys named, seeded or the account's)", got, want)
	}
	for _, srv := range servers {
		name := srv["name"].(string)
		got := data(t, a.Do("GET", "/servers/"+name, nil).Want(t, 200))
		if got["status"] != srv["status"] || got["operation"] != nil || got["ipv4"] == nil || got["ipv6"] == nil || got["ipv4"] != srv["ipv4"] {
			t.Errorf("GET %s at once: %v, want it %v with its addresses and no operation", name, got, srv["status"])
		}
		m, err := env.App.Driver().Machine(ctx, name)
		if err != nil || string(m.State) != srv["status"] || m.IPv4 != srv["ipv4"] || m.VCPUs != int(num(t, srv["vcpus"])) {
			t.Errorf("machine of %s: %+v %v, want %v", name, m, err, srv["status"])
		}
	}
	if h := holdingsOf(t, a); h.operations != 0 || h.servers != 3 || h.keys != 2 || h.projects != 2 || h.recipes != 1 {
		t.Errorf("the account holds %+v after the seed (no operation, ever)", h)
	}
	// Billed as three orders: each server's first hour.
	price := planHourly(t, env)
	txs := items(t, a.Do("GET", "/billing/transactions", nil).Want(t, 200))
	var charges int
	for _, tx := range txs {
		if tx["type"] == "charge" {
			charges++
			if tx["amount"] != (-price).String() {
				t.Errorf("charge %v, want %s", tx, -price)
			}
		}
	}
	if want := (100*hosting.MoneyScale - 3*price).String(); charges != 3 || holdingsOf(t, a).credit != want {
		t.Errorf("%d charges, credit %s; want 3 and %s", charges, holdingsOf(t, a).credit, want)
	}
	if p := items(t, a.Do("GET", "/projects", nil).Want(t, 200)); len(p) != 2 || num(t, p[0]["server_count"])+num(t, p[1]["server_count"]) != 2 {
		t.Errorf("projects %v", p)
	}
	// They work as any server.
	off := data(t, a.Do("POST", "/servers/"+web["name"].(string)+"/power", map[string]any{"action": "off"}).Want(t, 200))
	if s := serverAfter(t, a, off); s["status"] != "stopped" {
		t.Errorf("after power off: %v", s["status"])
	}
	on := data(t, a.Do("POST", "/servers/"+db["name"].(string)+"/power", map[string]any{"action": "on"}).Want(t, 200))
	if s := serverAfter(t, a, on); s["status"] != "running" {
		t.Errorf("after power on: %v", s["status"])
	}
	for name, want := range map[string]compute.State{web["name"].(string): compute.StateStopped, db["name"].(string): compute.StateRunning} {
		if m, err := env.App.Driver().Machine(ctx, name); err != nil || m.State != want {
			t.Errorf("machine of %s after power: %+v %v, want %s", name, m, err, want)
		}
	}
	a.Do("DELETE", "/servers/"+plain["name"].(string), nil).Want(t, http.StatusNoContent)
	// Another account sees none of it.
	if h := holdingsOf(t, b); h.servers != 0 || h.keys != 0 || h.projects != 0 || h.recipes != 0 {
		t.Errorf("another account holds %+v", h)
	}
	env.AssertLedger(t)
}

// TestSandboxSeedAllOrNothing: a seed with bad items makes nothing, and tells every
// bad item at its place with the create call's message, in the account's language.
func TestSandboxSeedAllOrNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := sandboxEnv(t)
	a := env.NewAccount("de", "100", "")
	createKey(t, a)
	existing := createProject(t, a)
	server := func(kv ...any) map[string]any { return with(baseOrder(), kv...) }
	valid := map[string]any{
		"ssh_keys": []any{map[string]any{"name": "deploy", "public_key": testenv.PublicKey(t)}},
		"projects": []any{map[string]any{"name": "web"}},
		"recipes":  []any{map[string]any{"name": "hello", "script": "#!/bin/sh\n"}},
		"servers":  []any{server("project", "web", "ssh_keys", []string{"deploy"})},
	}
	seedWith := func(kv ...any) map[string]any { return with(valid, kv...) }
	volume := func(kv ...any) map[string]any {
		return with(map[string]any{"name": uniqueName("vol"), "size_gb": 10, "location_id": 1}, kv...)
	}
	poor := env.NewAccount("de", (2*planHourly(t, env) + 1).String(), "") // two servers' first hours
	createKey(t, poor)
	de := func(id string, kv ...any) string { return msg("de", id, kv...) }
	for _, c := range []struct {
		name   string
		who    *testenv.Account
		body   map[string]any
		code   string
		fields map[string]string // each field with an error, and its first message ("": any)
	}{
		{"every kind of bad item at once", a, seedWith(
			"ssh_keys", []any{map[string]any{"name": "deploy", "public_key": testenv.PublicKey(t)}, map[string]any{"name": "bad", "public_key": "ssh-rsa nope"}},
			"projects", []any{map[string]any{"name": "web"}, map[string]any{"name": existing["name"]}},
			"recipes", []any{map[string]any{"name": "hello"}},
			"servers", []any{
				server("project", "web", "ssh_keys", []string{"deploy", "bad"}), // a failed key is not told twice
				server("plan_id", 999, "status", "paused"),
				server("project", "nope", "ssh_keys", []string{"nokey"}),
				server("image_id", drop),
			}), "validation_failed", map[string]string{
			"ssh_keys[1].public_key": "",
			"projects[1].name":       de("validation.name_taken"),
			"recipes[0].script":      de("validation.required"),
			"servers[1].plan_id":     de("validation.plan_unknown"),
			"servers[1].status":      de("validation.one_of", "values", "running, stopped"),
			"servers[2].project":     de("validation.sandbox_project_unknown", "name", "nope"),
			"servers[2].ssh_keys":    de("validation.sandbox_ssh_key_unknown", "name", "nokey"),
			"servers[3].image_id":    de("validation.required"),
		}},
		{"a name twice in the seed", a, seedWith("projects", []any{map[string]any{"name": "web"}, map[string]any{"name": "web"}}),
			"validation_failed", map[string]string{"projects[1].name": de("validation.name_taken")}},
		{"an SSH key name that is two keys'", a, seedWith("ssh_keys", []any{map[string]any{"name": "key", "public_key": testenv.PublicKey(t)}},
			"servers", []any{server("ssh_keys", []string{"key"})}),
			"validation_failed", map[string]string{"servers[0].ssh_keys": de("validation.sandbox_ssh_key_ambiguous", "name", "key")}},
		{"a repeated SSH key", a, seedWith("servers", []any{server("ssh_keys", []string{"deploy", "deploy"})}),
			"validation_failed", map[string]string{"servers[0].ssh_keys": ""}},
		{"licenses an order would refuse", a, seedWith("servers", []any{server("license_ids", []int{999}),
			server("license_ids", []int{licPlesk, licPlesk}), server("license_ids", []int{licCPanel})}),
			"validation_failed", map[string]string{
				"servers[0].license_ids": de("validation.license_unknown", "id", 999),
				"servers[1].license_ids": de("validation.license_repeated", "id", licPlesk),
				"servers[2].license_ids": de("validation.license_out_of_stock", "name", "cpanel-solo"),
			}},
		{"credit for the server's hour, not its license's month", poor, map[string]any{"servers": []any{server("license_ids", []int{licPlesk})}},
			"insufficient_credit", map[string]string{"servers[0].plan_id": de("validation.credit_too_low_licenses",
				"amount", (planHourly(t, env) + money(t, "11.4900")).String(), "currency", "EUR")}},
		{"an unknown location", a, seedWith("servers", []any{server("location_id", 999)}),
			"validation_failed", map[string]string{"servers[0].location_id": de("validation.location_unknown")}},
		{"credit for two servers, not three", poor, map[string]any{"servers": []any{server(), server(), server("ssh_keys", []string{"key"})}},
			"insufficient_credit", map[string]string{"servers[2].plan_id": de("validation.credit_too_low",
				"amount", planHourly(t, env).String(), "currency", "EUR")}},
		{"too many items", a, seedWith("projects", slices.Repeat([]any{map[string]any{"name": "p"}}, 101)),
			"validation_failed", map[string]string{"projects": de("validation.sandbox_seed_too_many", "max", 100)}},
		{"shapes: an unknown field, a wrong type, an item that is no object", a, map[string]any{
			"servers":  []any{map[string]any{"plan_idd": 1}, map[string]any{"plan_id": "1"}},
			"projects": []any{"web"},
			"recipes":  []any{map[string]any{"name": "r", "script": "x", "NAME": "y"}},
		}, "validation_failed", map[string]string{
			"servers[0].plan_idd": de("validation.unknown_field"),
			"servers[1].plan_id":  de("validation.type_integer"),
			"projects[0]":         de("validation.type_object"),
			"recipes[0].NAME":     de("validation.unknown_field"),
		}},
		{"bad volumes", a, seedWith("volumes", []any{
			volume("name", "Data", "size_gb", 9),
			volume("server", "nope", "location_id", drop, "automount", true, "format", "ext4"),
			volume("location_id", 999, "project", "nope"),
			volume("automount", true, "format", "ext4"),
			volume("format", "ntfs"),
		}), "validation_failed", map[string]string{
			"volumes[0].name":        "",
			"volumes[0].size_gb":     "",
			"volumes[1].server":      de("validation.sandbox_server_unknown", "name", "nope"),
			"volumes[2].location_id": de("validation.location_unknown"),
			"volumes[2].project":     de("validation.sandbox_project_unknown", "name", "nope"),
			"volumes[3].automount":   de("validation.automount_needs_server"),
			"volumes[4].format":      "",
		}},
		{"a volume name twice in the seed", a, seedWith("volumes", []any{volume("name", "data"), volume("name", "data")}),
			"validation_failed", map[string]string{"volumes[1].name": de("validation.name_taken")}},
		{"a volume on a server of the seed that failed, or on two", a, seedWith(
			"servers", []any{server("display_name", "bad", "plan_id", 999), server("display_name", "twin"), server("display_name", "twin")},
			"volumes", []any{volume("server", "bad"), volume("server", "twin")}),
			"validation_failed", map[string]string{
				"servers[0].plan_id": de("validation.plan_unknown"),
				"volumes[1].server":  de("validation.sandbox_server_ambiguous", "name", "twin"),
			}},
		{"a volume elsewhere than its server", a, seedWith("volumes", []any{volume("server", "web-1", "location_id", 2)},
			"servers", []any{server("display_name", "web-1")}),
			"validation_failed", map[string]string{"volumes[0].location_id": ""}},
		{"the volumes' size quota", a, seedWith("volumes", []any{volume("size_gb", 10240), volume()}),
			"validation_failed", map[string]string{"volumes[1].size_gb": ""}},
		{"credit for two servers, not a volume", poor, map[string]any{"servers": []any{server(), server()}, "volumes": []any{volume()}},
			"insufficient_credit", map[string]string{"volumes[0].size_gb": de("validation.volume_credit_too_low", "amount", volumeHour(t, env, 10).String())}},
		{"volumes' shapes", a, map[string]any{"volumes": []any{volume("server_id", 1), volume("size_gb", "10")}},
			"validation_failed", map[string]string{
				"volumes[0].server_id": de("validation.unknown_field"),
				"volumes[1].size_gb":   de("validation.type_integer"),
			}},
		{"null in a list", a, map[string]any{"servers": []any{baseOrder(), nil}},
			"validation_failed", map[string]string{"servers": de("validation.null_in_list")}},
		{"a list that is null", a, map[string]any{"servers": []any{baseOrder()}, "projects": nil},
			"validation_failed", map[string]string{"projects": de("validation.not_null")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before, machinesBefore, volumesBefore := holdingsOf(t, c.who), machines(t, env), simVolumes(t, env)
			e := wantError(t, c.who.Sandbox("POST", "/seed", c.body), http.StatusUnprocessableEntity, c.code)
			for field, want := range c.fields {
				if len(e.Errors[field]) == 0 {
					t.Errorf("no error on %s: %v", field, e.Errors)
				} else if want != "" && e.Errors[field][0] != want {
					t.Errorf("%s: %q, want %q", field, e.Errors[field][0], want)
				}
			}
			if len(e.Errors) != len(c.fields) {
				t.Errorf("errors %v, want exactly on the %d fields %v", e.Errors, len(c.fields), c.fields)
			}
			if got := holdingsOf(t, c.who); got != before {
				t.Errorf("a refused seed changed the account: %+v, want %+v", got, before)
			}
			if got := machines(t, env); got != machinesBefore {
				t.Errorf("a refused seed left machines: %d, want %d", got, machinesBefore)
			}
			if got := simVolumes(t, env); got != volumesBefore {
				t.Errorf("a refused seed left volumes in the driver: %d, want %d", got, volumesBefore)
			}
			if got := heldLicenses(t, env, c.who); got != 0 {
				t.Errorf("a refused seed left %d licenses", got)
			}
		})
	}
	// Two servers are what the poor account's credit covers.
	data(t, poor.Sandbox("POST", "/seed", map[string]any{"servers": []any{server(), server("status", "stopped")}}).Want(t, http.StatusCreated))
	// The message is the first error in the order of the body: the first list, the
	// first item, the first field.
	e := wantInvalid(t, a.Sandbox("POST", "/seed", seedWith(
		"servers", []any{server("plan_id", 999), server("status", "x")},
		"ssh_keys", []any{map[string]any{"name": "", "public_key": "x"}})), "ssh_keys[0].name")
	if want := e.Errors["ssh_keys[0].name"][0] + msg("de", "error.more_errors", "count", 3); e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
	// Quotas apply as to each create call.
	if _, err := env.App.Service.SetQuotas(ctx, a.ID, map[string]int{"projects": 2}); err != nil {
		t.Fatal(err)
	}
	wantInvalid(t, a.Sandbox("POST", "/seed", map[string]any{"projects": []any{map[string]any{"name": "p1"}, map[string]any{"name": "p2"}}}),
		"projects[1].project_quota")
	data(t, a.Sandbox("POST", "/seed", map[string]any{"projects": []any{map[string]any{"name": "p1"}}}).Want(t, http.StatusCreated))
	setQuotas(t, env, a, map[string]int{"volumes": 1})
	wantInvalid(t, a.Sandbox("POST", "/seed", map[string]any{"volumes": []any{volume(), volume()}}), "volumes[1].name")
	data(t, a.Sandbox("POST", "/seed", map[string]any{"volumes": []any{volume()}}).Want(t, http.StatusCreated))
	env.AssertLedger(t)
}

// heldLicenses counts the server licenses of a's account, cancelled ones too.
func heldLicenses(t testing.TB, env *testenv.Env, a *testenv.Account) int {
	t.Helper()
	var n int
	if err := env.App.DB.WriteDB().QueryRowContext(context.Background(),
		env.App.DB.Rebind(`SELECT COUNT(*) FROM server_licenses WHERE account_id = ?`), a.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSandboxSeedLicenses: a seeded server holds the products its license_ids name
// (a key pool's with a key of the pool) and those its image requires, active from the
// seed, each one's month charged at once as an order's is; the key pool it emptied is
// out of stock. A reset leaves the account no license and gives the key back to its
// pool.
func TestSandboxSeedLicenses(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t)
	a := env.NewAccount("en", "100", "")
	addKeys(t, env, licCPanel, "CP-SEED-1")
	made := data(t, a.Sandbox("POST", "/seed", map[string]any{"servers": []any{
		with(baseOrder(), "display_name", "web-1", "license_ids", []int{licPlesk, licCPanel}),
		with(baseOrder(), "display_name", "win-1", "plan_id", 2, "image_id", imgWindows, "status", "stopped"),
		with(baseOrder(), "display_name", "plain"),
	}}).Want(t, http.StatusCreated))
	var ids []int64
	for _, srv := range made["servers"].([]any) {
		ids = append(ids, num(t, srv.(map[string]any)["id"]))
	}
	web, win, plain := serverLicenses(t, a, ids[0]), serverLicenses(t, a, ids[1]), serverLicenses(t, a, ids[2])
	if len(web) != 2 || web[licPlesk]["status"] != "active" || web[licPlesk]["key"] != nil ||
		web[licCPanel]["status"] != "active" || web[licCPanel]["key"] != "CP-SEED-1" {
		t.Errorf("web-1's licenses: %v, want plesk and cpanel with the pool's key", web)
	}
	if len(win) != 1 || win[licWindows]["status"] != "active" || len(plain) != 0 {
		t.Errorf("win-1's licenses %v (want the image's), plain's %v (want none)", win, plain)
	}
	// Charged as orders are: each server's first hour, each license's month (the
	// Windows one per vCPU: plan 2 has 2).
	for _, c := range []struct {
		lic  map[string]any
		want string
	}{{web[licPlesk], "11.4900"}, {web[licCPanel], "19.9900"}, {win[licWindows], "8.4000"}} {
		if got := charged(t, env, hosting.ResourceLicense, num(t, c.lic["id"])); got != money(t, c.want) {
			t.Errorf("license %v charged %s, want %s", c.lic["license_id"], got, c.want)
		}
	}
	p2, err := env.App.DB.Plan(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	want := 100*hosting.MoneyScale - 2*planHourly(t, env) - p2.PriceHourly - money(t, "11.4900") - money(t, "19.9900") - money(t, "8.4000")
	if got := holdingsOf(t, a).credit; got != want.String() {
		t.Errorf("credit after the seed %s, want %s", got, want)
	}
	inStock := func() bool {
		for _, l := range items(t, a.Do("GET", "/licenses", nil).Want(t, http.StatusOK)) {
			if num(t, l["id"]) == licCPanel {
				return l["in_stock"].(bool)
			}
		}
		t.Fatal("cpanel not listed")
		return false
	}
	if inStock() {
		t.Error("cpanel in stock after the seed took the pool's one key")
	}
	env.AssertLedger(t)
	a.Sandbox("POST", "/reset", map[string]any{}).Want(t, http.StatusOK)
	if n := heldLicenses(t, env, a); n != 0 {
		t.Errorf("%d licenses after a reset", n)
	}
	if !inStock() {
		t.Error("cpanel out of stock after a reset: the seeded server's key did not go back to the pool")
	}
}

// simVolumes counts the sim driver's volumes.
func simVolumes(t testing.TB, env *testenv.Env) int {
	t.Helper()
	var n int
	if err := env.App.DB.WriteDB().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM sim_volumes`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// volumeHour is what the first hour of a volume of sizeGB in location 1 costs.
func volumeHour(t testing.TB, env *testenv.Env, sizeGB int) hosting.Money {
	t.Helper()
	loc, err := env.App.DB.Location(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	month := billing.SnapshotRate(sizeGB, loc.VolumePriceGBMonth)
	return billing.HourCharge(billing.SnapshotRate(sizeGB, loc.VolumePriceGBHour), &month, 0)
}

// TestSandboxSeedVolumes: a seed's volumes are available at once, with no operation:
// detached, or attached to the server whose display name they give (seeded by the
// same call, running or stopped, or the account's), the driver's volume with them
// (mounted by the guest when automount asks), in the project named; each billed as a
// creation is from then, each with its volume.created; they work as any volume.
func TestSandboxSeedVolumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var sim *simdriver.Driver
	env := sandboxEnv(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver { sim = d.(*simdriver.Driver); return d }})
	a := env.NewAccount("en", "100", "")
	b := env.NewAccount("en", "100", "")
	old := runningServer(t, a, "display_name", "old-1")
	before := holdingsOf(t, a)
	r := a.Sandbox("POST", "/seed", map[string]any{
		"projects": []any{map[string]any{"name": "db"}},
		"servers": []any{
			map[string]any{"display_name": "web-1", "plan_id": 1, "location_id": 1, "image_id": 1},
			map[string]any{"display_name": "db-1", "plan_id": 1, "location_id": 1, "image_id": 1, "status": "stopped"},
		},
		"volumes": []any{
			map[string]any{"name": "www", "size_gb": 20, "server": "web-1", "format": "ext4", "automount": true},
			map[string]any{"name": "pgdata", "size_gb": 30, "server": " db-1 ", "location_id": 1, "format": "xfs", "project": "db"},
			map[string]any{"name": "logs", "size_gb": 10, "server": "old-1"},
			map[string]any{"name": "spare", "size_gb": 10, "location_id": 1},
		},
	}).Want(t, http.StatusCreated)
	made := data(t, r)
	var servers, vols []map[string]any
	for _, x := range made["servers"].([]any) {
		servers = append(servers, x.(map[string]any))
	}
	for _, x := range made["volumes"].([]any) {
		vols = append(vols, x.(map[string]any))
	}
	if len(servers) != 2 || len(vols) != 4 {
		t.Fatalf("seeded %s", r.Body)
	}
	project := made["projects"].([]any)[0].(map[string]any)
	for i, want := range []struct {
		srv     map[string]any // nil: detached
		size    int64
		format  any
		project any
	}{{servers[0], 20, "ext4", nil}, {servers[1], 30, "xfs", project["id"]}, {old, 10, nil, nil}, {nil, 10, nil, nil}} {
		got := data(t, a.Do("GET", "/volumes/"+vols[i]["name"].(string), nil).Want(t, 200))
		var sid any
		machine := ""
		if want.srv != nil {
			sid, machine = want.srv["id"], want.srv["name"].(string)
		}
		if got["status"] != "available" || got["operation"] != nil || got["server_id"] != sid || num(t, got["size_gb"]) != want.size ||
			num(t, got["location_id"]) != 1 || got["format"] != want.format || got["project_id"] != want.project || got["id"] != vols[i]["id"] {
			t.Errorf("volume %d at once: %v, want it available on %v", i, got, sid)
		}
		st, ok := simVolume(t, sim, num(t, got["id"]))
		if !ok || st.Machine != machine || int64(st.SizeGB) != want.size {
			t.Errorf("the driver's volume %d: %+v %v, want it on %q", i, st, ok, machine)
		}
	}
	disks, err := sim.GuestDisks(ctx, servers[0]["name"].(string))
	if err != nil || len(disks) != 1 || disks[0].Serial != itoa(num(t, vols[0]["id"])) || disks[0].MountPoint != compute.VolumeMountPoint(num(t, vols[0]["id"])) {
		t.Errorf("web-1's guest sees %+v (%v), want www mounted", disks, err)
	}
	if disks, err := sim.GuestDisks(ctx, old["name"].(string)); err != nil || len(disks) != 1 || disks[0].MountPoint != "" {
		t.Errorf("old-1's guest sees %+v (%v), want logs, not mounted", disks, err)
	}
	if h := holdingsOf(t, a); h.operations != before.operations || h.volumes != 4 || h.servers != 3 {
		t.Errorf("the account holds %+v after the seed (no operation)", h)
	}
	// Billed as four creations, each its first hour.
	charged := map[int64]string{}
	for _, tx := range items(t, a.Do("GET", "/billing/transactions", nil).Want(t, 200)) {
		if res, ok := tx["resource"].(map[string]any); ok && res["type"] == "volume" {
			charged[num(t, res["id"])] = tx["amount"].(string)
		}
	}
	for _, v := range vols {
		if want := (-volumeHour(t, env, int(num(t, v["size_gb"])))).String(); charged[num(t, v["id"])] != want {
			t.Errorf("volume %v charged %q, want %s", v["name"], charged[num(t, v["id"])], want)
		}
	}
	// One volume.created each, as the volume is.
	var created []string
	for _, e := range items(t, a.Do("GET", "/events?types=volume.*", nil).Want(t, 200)) {
		d := e["data"].(map[string]any)
		created = append(created, e["type"].(string)+" "+d["name"].(string)+" "+d["status"].(string))
		if d["server_id"] == nil && d["name"] != "spare" {
			t.Errorf("event %v without its server", e)
		}
	}
	slices.Sort(created)
	if got := strings.Join(created, ", "); got != "volume.created logs available, volume.created pgdata available, volume.created spare available, volume.created www available" {
		t.Errorf("events: %s", got)
	}
	// They work as any volume.
	off := volumeAfter(t, a, data(t, a.Do("POST", "/volumes/www/detach", nil).Want(t, 200)))
	grown := volumeAfter(t, a, data(t, a.Do("POST", "/volumes/pgdata/resize", map[string]any{"size_gb": 40}).Want(t, 200)))
	if off["server_id"] != nil || num(t, grown["size_gb"]) != 40 {
		t.Errorf("after a detach and a growth: %v, %v", off, grown)
	}
	a.Do("DELETE", "/volumes/spare", nil).Want(t, http.StatusNoContent)
	if h := holdingsOf(t, b); h.volumes != 0 {
		t.Errorf("another account holds %+v", h)
	}
	env.AssertLedger(t)
}

// TestSandboxSeedDomains: a seed makes DNS zones as POST /domains does, with the
// RRsets of their zone files; a zone that breaks a rule (a name held by another
// account, a bad line of its zone file) is refused at its place, and then nothing of
// the seed is made; a reset removes the zones, and their names are free again.
func TestSandboxSeedDomains(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t, testenv.Options{})
	a := env.NewAccount("en", "100", "")
	b := env.NewAccount("en", "100", "")
	shop, blog, held := zoneName(), zoneName(), zoneName()
	createDomain(t, b, map[string]any{"name": held})

	r := a.Sandbox("POST", "/seed", map[string]any{"projects": []any{map[string]any{"name": "dns"}}, "domains": []any{
		map[string]any{"name": shop, "zone_file": "www 300 IN A 192.0.2.1\n@ IN MX 10 mail\n"},
		map[string]any{"name": "sub." + held},
		map[string]any{"name": blog, "zone_file": "www IN A 300.1.1.1\n"},
	}}).Want(t, http.StatusUnprocessableEntity)
	e := wantInvalid(t, r, "domains[1].name")
	if len(e.Errors["domains[2].line 1"]) == 0 {
		t.Errorf("the bad zone file is not refused at its place: %s", r.Body)
	}
	if got := items(t, a.Do("GET", "/domains", nil).Want(t, 200)); len(got) != 0 {
		t.Fatalf("a refused seed made zones: %v", got)
	}
	if got := items(t, a.Do("GET", "/projects", nil).Want(t, 200)); len(got) != 0 {
		t.Fatalf("a refused seed made projects: %v", got)
	}

	made := data(t, a.Sandbox("POST", "/seed", map[string]any{"domains": []any{
		map[string]any{"name": shop, "ttl": 600, "zone_file": "www 300 IN A 192.0.2.1\n@ IN MX 10 mail\n"},
		map[string]any{"name": blog},
	}}).Want(t, http.StatusCreated))
	ds := made["domains"].([]any)
	if len(ds) != 2 || ds[0].(map[string]any)["name"] != shop || num(t, ds[0].(map[string]any)["rrset_count"]) != 4 {
		t.Fatalf("seeded %v", made["domains"])
	}
	if got := rrsetKeys(t, a.Do("GET", "/domains/"+shop+"/rrsets", nil).Want(t, 200)); !slices.Equal(got, []string{"@ SOA", "@ NS", "@ MX", "www A"}) {
		t.Errorf("seeded RRsets %v", got)
	}
	a.Sandbox("POST", "/reset", nil).Want(t, http.StatusOK)
	if got := items(t, a.Do("GET", "/domains", nil).Want(t, 200)); len(got) != 0 {
		t.Errorf("zones after a reset: %v", got)
	}
	createDomain(t, b, map[string]any{"name": shop}) // free again, for anyone
}
