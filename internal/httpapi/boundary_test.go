package httpapi_test

// Boundary input of issue 14, each through the real HTTP server: an id in a body that
// names nothing (0 above all, which the store once read as "the first row"), null on
// a field that is not nullable, a query parameter given twice, an unknown field that
// is a real one's case-folded twin. Each is a 422 on its field, in the account's
// language, like -1 and 999 always were.

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/apitest"
	"github.com/berthhq/berth/internal/testenv"
)

// TestIDsThatNameNothing: every id-taking body field, given an id that names nothing
// of the account, is a 422 on that field with the message of an unknown one.
func TestIDsThatNameNothing(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 30})
	a := env.NewAccount("de", "1000", "")
	fx := newFixture(t, a)
	before := len(items(t, a.Do("GET", "/servers", nil).Want(t, http.StatusOK)))
	orderWith := func(field string, v any) any { return with(baseOrder(), field, v) }
	cases := []struct {
		method, path string
		body         func(v int64) any
		field, msg   string
		withID       bool // the message names the id
	}{
		{"POST", "/servers", func(v int64) any { return orderWith("plan_id", v) }, "plan_id", "validation.plan_unknown", false},
		{"POST", "/servers", func(v int64) any { return orderWith("location_id", v) }, "location_id", "validation.location_unknown", false},
		{"POST", "/servers", func(v int64) any { return orderWith("image_id", v) }, "image_id", "validation.image_unknown", false},
		{"POST", "/servers", func(v int64) any { return with(baseOrder(), "image_id", drop, "app_id", v) }, "app_id", "validation.app_unknown", false},
		{"POST", "/servers", func(v int64) any { return orderWith("project_id", v) }, "project_id", "validation.project_unknown", false},
		{"POST", "/servers", func(v int64) any { return orderWith("recipe_id", v) }, "recipe_id", "validation.recipe_unknown", false},
		{"POST", "/servers", func(v int64) any { return orderWith("ssh_key_ids", []int64{v}) }, "ssh_key_ids", "validation.ssh_key_unknown", true},
		{"PATCH", "/servers/" + fx.serverID, func(v int64) any { return map[string]any{"project_id": v} }, "project_id", "validation.project_unknown", false},
		{"POST", "/servers/" + fx.serverID + "/reinstall", func(v int64) any { return map[string]any{"image_id": v} }, "image_id", "validation.image_unknown", false},
		{"POST", "/servers/" + fx.serverID + "/rescale", func(v int64) any { return map[string]any{"plan_id": v} }, "plan_id", "validation.plan_unknown", false},
	}
	for _, c := range cases {
		for _, v := range []int64{0, -1, 999, 1 << 31, 1<<63 - 1} {
			t.Run(fmt.Sprintf("%s %s %s=%d", c.method, c.path, c.field, v), func(t *testing.T) {
				e := wantInvalid(t, a.Do(c.method, c.path, c.body(v)), c.field)
				want := msg("de", c.msg)
				if c.withID {
					want = msg("de", c.msg, "id", v)
				}
				if e.Errors[c.field][0] != want {
					t.Errorf("errors.%s = %q, want %q", c.field, e.Errors[c.field], want)
				}
			})
		}
	}
	if after := len(items(t, a.Do("GET", "/servers", nil).Want(t, http.StatusOK))); after != before {
		t.Errorf("%d servers after the refused orders, want %d", after, before)
	}
	srv := data(t, a.Do("GET", "/servers/"+fx.serverID, nil).Want(t, http.StatusOK))
	if got := itoa(num(t, srv["project_id"])); got != fx.projectID {
		t.Errorf("server's project %s after refused moves, want %s", got, fx.projectID)
	}
}

// TestNullOnFieldsThatAreNotNullable: null is a value, not "left out": on every body
// field the document does not mark nullable it is a 422 on that field (it was read
// as absent: {"display_name": null} answered 200 unchanged, an order with
// root_password null 201), and a null item of a list too ([null] was read as 0, the
// account's first key). project_id, which is nullable, still takes null.
func TestNullOnFieldsThatAreNotNullable(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 30})
	a := env.NewAccount("fr", "1000", "")
	fx := newFixture(t, a)
	srv, snap := "/servers/"+fx.serverID, "/servers/"+fx.serverID+"/snapshots/"+fx.snapshotID
	order := with(baseOrder(), "ssh_key_ids", []int64{num(t, fx.key["id"])}, "display_name", "web", "recipe_id", num(t, fx.recipe["id"]),
		"root_password", "correct-horse-1", "project_id", num(t, fx.project["id"]),
		"volume_ids", []int64{}, "automount", false) // no volume: an order accepted here would hold it
	bodies := map[string]map[string]any{ // a valid body of each route, every field set
		"POST /servers":                                   order,
		"PATCH /servers/{id}":                             {"display_name": "renamed", "project_id": num(t, fx.project["id"])},
		"POST /servers/{id}/power":                        {"action": "reboot"},
		"POST /servers/{id}/reinstall":                    {"image_id": 2},
		"POST /servers/{id}/rescale":                      {"plan_id": 2, "upgrade_disk": false},
		"POST /servers/{id}/snapshots":                    {"name": "snap", "include_memory": false},
		"POST /ssh-keys":                                  {"name": "key", "public_key": testenv.PublicKey(t)},
		"POST /projects":                                  {"name": "p"},
		"PATCH /projects/{id}":                            {"name": "p"},
		"POST /recipes":                                   {"name": "r", "script": "#!/bin/sh\n"},
		"PATCH /recipes/{id}":                             {"name": "r", "script": "#!/bin/sh\n"},
		"POST /servers/{id}/snapshots/{snapshot}/restore": {},
	}
	paths := strings.NewReplacer("/servers/{id}/snapshots/{snapshot}", snap, "/servers/{id}", srv,
		"/projects/{id}", "/projects/"+fx.projectID, "/recipes/{id}", "/recipes/"+fx.recID)
	type tc struct{ route, field string }
	var cases []tc
	for route, body := range bodies {
		for field := range body {
			cases = append(cases, tc{route, field})
		}
	}
	cases = append(cases, tc{"POST /servers", "app_id"}) // the alternative of image_id
	slices.SortFunc(cases, func(x, y tc) int { return strings.Compare(x.route+" "+x.field, y.route+" "+y.field) })

	// The table covers every body field of the document.
	doc := apitest.New(t).Doc()
	for route, body := range bodies {
		method, path, _ := strings.Cut(route, " ")
		op := doc.Paths.Value(path).GetOperation(method)
		if op == nil || op.RequestBody == nil {
			t.Fatalf("%s: no request body in the document", route)
		}
		for name := range op.RequestBody.Value.Content.Get("application/json").Schema.Value.Properties {
			if _, ok := body[name]; !ok && !(route == "POST /servers" && name == "app_id") {
				t.Errorf("%s: field %s is not in the table; add it", route, name)
			}
		}
	}

	for _, c := range cases {
		t.Run(c.route+" "+c.field, func(t *testing.T) {
			method, path, _ := strings.Cut(c.route, " ")
			body := with(bodies[c.route], c.field, nil)
			r := a.Do(method, paths.Replace(path), body)
			if c.field == "project_id" { // nullable: unassigned
				if r.Status != http.StatusOK && r.Status != http.StatusCreated {
					t.Fatalf("project_id null: status %d, want it accepted; body: %s", r.Status, r.Body)
				}
				if got := data(t, r)["project_id"]; got != nil {
					t.Fatalf("project_id null: the server's project is %v, want null", got)
				}
				return
			}
			e := wantInvalid(t, r, c.field)
			if want := msg("fr", "validation.not_null"); e.Errors[c.field][0] != want || e.Message != want {
				t.Errorf("message %q, errors.%s %q; want %q", e.Message, c.field, e.Errors[c.field], want)
			}
		})
	}
	t.Run("a null item of ssh_key_ids", func(t *testing.T) {
		e := wantInvalid(t, a.Do("POST", "/servers", with(order, "ssh_key_ids", []any{nil})), "ssh_key_ids")
		if want := msg("fr", "validation.null_in_list"); e.Errors["ssh_key_ids"][0] != want {
			t.Errorf("errors.ssh_key_ids %q, want %q", e.Errors["ssh_key_ids"], want)
		}
	})
	if got := data(t, a.Do("GET", srv, nil).Want(t, http.StatusOK))["display_name"]; got == nil || got == "" {
		t.Errorf("display_name after a refused null: %v", got)
	}
}

// TestUnknownTwinOfAField: a member whose name is a real field's only when case is
// ignored is an unknown field beside that field too; it was decoded into the field
// ("must be a string" on name for {"NAME": 1, "name": "x"}).
func TestUnknownTwinOfAField(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 30})
	a := env.NewAccount("de", "1000", "")
	for _, c := range []struct {
		path string
		body string
		twin string
	}{
		{"/projects", `{"NAME": 1, "name": "x"}`, "NAME"},
		{"/projects", `{"name": "x", "Name": "y"}`, "Name"},
		{"/ssh-keys", `{"name": "k", "Public_Key": 1, "public_key": "x"}`, "Public_Key"},
		{"/servers", `{"plan_id": 1, "location_id": 1, "image_id": 1, "PLAN_ID": "x"}`, "PLAN_ID"},
	} {
		t.Run(c.body, func(t *testing.T) {
			e := wantInvalid(t, a.Do("POST", c.path, c.body), c.twin)
			if want := msg("de", "validation.unknown_field"); len(e.Errors) != 1 || e.Errors[c.twin][0] != want {
				t.Errorf("errors %v, want only %s: %q", e.Errors, c.twin, want)
			}
		})
	}
	if n := len(items(t, a.Do("GET", "/projects", nil).Want(t, http.StatusOK))); n != 0 {
		t.Errorf("%d projects after refused bodies", n)
	}
}

// TestRepeatedQueryParameters: a query parameter given twice is a 422 on it,
// whatever the values (?wait=1&wait=0 answered 200 while ?wait=0 is a 422): which
// one the client meant is not Berth's to guess.
func TestRepeatedQueryParameters(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 30})
	a := env.NewAccount("de", "1000", "")
	fx := newFixture(t, a)
	for _, c := range []struct{ path, param, query string }{
		{"/operations/" + fx.opID, "wait", "wait=1&wait=0"},
		{"/operations/" + fx.opID, "wait", "wait=1&wait=1"},
		{"/servers", "project_id", "project_id=" + fx.projectID + "&project_id=" + fx.projectID},
		{"/servers", "status", "status=running&status=stopped"},
		{"/servers", "status", "project_id=" + fx.projectID + "&status=running&status=running"},
		{"/servers/" + fx.serverID + "/metrics", "range", "range=1h&range=1h"},
		{"/servers/" + fx.serverID + "/metrics", "range", "range=1h&range=7d"},
		{"/billing/transactions", "page", "page=1&page=1"},
		{"/billing/transactions", "page", "page=1&page=2"},
	} {
		t.Run(c.path+"?"+c.query, func(t *testing.T) {
			once := strings.Split(c.query, "&")[0]
			a.Do("GET", c.path+"?"+once, nil).Want(t, http.StatusOK)
			e := wantInvalid(t, a.Do("GET", c.path+"?"+c.query, nil), c.param)
			if want := msg("de", "validation.query_repeated"); len(e.Errors) != 1 || e.Errors[c.param][0] != want || e.Message != want {
				t.Errorf("message %q, errors %v; want only %s: %q", e.Message, e.Errors, c.param, want)
			}
		})
	}
	// 404 still comes before the 422.
	wantNotFound(t, a.Do("GET", "/operations/999999?wait=1&wait=1", nil))
	wantNotFound(t, a.Do("GET", "/servers/999999/metrics?range=1h&range=1h", nil))
}
