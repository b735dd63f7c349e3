package httpapi_test

// Boundary input of issue 14, each through the real HTTP server: an id in a body that
// names nothing (0 above all, which the store once read as "the first row"), null on
// a field that is not nullable, a query parameter given twice, an unknown field that
// is a real one's case-folded twin. Each is a 422 on its field, in the account's
// language, like -1 and 999 always were.

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"maps"
	"net/http"
	"net/url"
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
	newVolume := func(kv ...any) any {
		return with(map[string]any{"name": "vol", "size_gb": 10, "location_id": 1}, kv...)
	}
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
		{"POST", "/servers", func(v int64) any { return orderWith("volume_ids", []int64{v}) }, "volume_ids", "validation.volume_unknown", true},
		{"POST", "/servers", func(v int64) any { return orderWith("license_ids", []int64{v}) }, "license_ids", "validation.license_unknown", true},
		{"POST", "/servers/" + fx.serverID + "/licenses", func(v int64) any { return map[string]any{"license_id": v} }, "license_id", "validation.license_unknown", true},
		{"POST", "/volumes", func(v int64) any { return newVolume("location_id", v) }, "location_id", "validation.location_unknown", false},
		{"POST", "/volumes", func(v int64) any { return newVolume("location_id", drop, "server_id", v) }, "server_id", "validation.server_unknown", false},
		{"POST", "/volumes", func(v int64) any { return newVolume("project_id", v) }, "project_id", "validation.project_unknown", false},
		{"PATCH", "/volumes/" + fx.volumeID, func(v int64) any { return map[string]any{"project_id": v} }, "project_id", "validation.project_unknown", false},
		{"POST", "/volumes/" + fx.volumeID + "/attach", func(v int64) any { return map[string]any{"server_id": v} }, "server_id", "validation.server_unknown", false},
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
	vols := items(t, a.Do("GET", "/volumes", nil).Want(t, http.StatusOK))
	if len(vols) != 1 || itoa(num(t, vols[0]["id"])) != fx.volumeID || vols[0]["project_id"] != nil || vols[0]["server_id"] != nil {
		t.Errorf("volumes after the refused creations, moves and attachments: %v; want the fixture's alone, as it was", vols)
	}
}

// TestNullOnFieldsThatAreNotNullable: null is a value, not "left out": on every body
// field the document does not mark nullable it is a 422 on that field (it was read
// as absent: {"display_name": null} answered 200 unchanged, an order with
// root_password null 201), and a null item of a list too ([null] was read as 0, the
// account's first key). A field the document marks nullable (a server's or a volume's
// project_id on PATCH, an order's) still takes null.
func TestNullOnFieldsThatAreNotNullable(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 30})
	a := env.NewAccount("fr", "1000", "")
	fx := newFixture(t, a)
	bodies, order := nullTableBodies(t, fx)
	paths := strings.NewReplacer("/servers/{id}/snapshots/{snapshot}", "/servers/"+fx.serverID+"/snapshots/"+fx.snapshotID,
		"/servers/{id}", "/servers/"+fx.serverID, "/projects/{id}", "/projects/"+fx.projectID, "/recipes/{id}", "/recipes/"+fx.recID,
		"/volumes/{id}", "/volumes/"+fx.volumeID)
	nullable := documentedNullable(t, bodies)
	cases := slices.SortedFunc(maps.Keys(nullable), func(x, y nullCase) int {
		return strings.Compare(x.route+" "+x.field, y.route+" "+y.field)
	})
	for _, c := range cases {
		t.Run(c.route+" "+c.field, func(t *testing.T) {
			method, path, _ := strings.Cut(c.route, " ")
			r := a.Do(method, paths.Replace(path), with(bodies[c.route], c.field, nil))
			if nullable[c] {
				if r.Status != http.StatusOK && r.Status != http.StatusCreated {
					t.Fatalf("%s null: status %d, want it accepted; body: %s", c.field, r.Status, r.Body)
				}
				if got := data(t, r)[c.field]; got != nil {
					t.Fatalf("%s null: the record has %v, want null", c.field, got)
				}
				return
			}
			e := wantInvalid(t, r, c.field)
			if want := msg("fr", "validation.not_null"); e.Errors[c.field][0] != want || e.Message != want {
				t.Errorf("message %q, errors.%s %q; want %q", e.Message, c.field, e.Errors[c.field], want)
			}
		})
	}
	for _, list := range []string{"ssh_key_ids", "volume_ids", "license_ids"} {
		t.Run("a null item of "+list, func(t *testing.T) {
			e := wantInvalid(t, a.Do("POST", "/servers", with(order, list, []any{nil})), list)
			if want := msg("fr", "validation.null_in_list"); e.Errors[list][0] != want {
				t.Errorf("errors.%s %q, want %q", list, e.Errors[list], want)
			}
		})
	}
	if got := data(t, a.Do("GET", "/servers/"+fx.serverID, nil).Want(t, http.StatusOK))["display_name"]; got == nil || got == "" {
		t.Errorf("display_name after a refused null: %v", got)
	}
}

// nullCase is a field of a route's body that TestNullOnFieldsThatAreNotNullable sets
// to null.
type nullCase struct{ route, field string }

// nullTableBodies is a valid body of each route that takes one, every field set (the
// order's app_id aside: the alternative of image_id), and the order among them.
func nullTableBodies(t *testing.T, fx *fixture) (bodies map[string]map[string]any, order map[string]any) {
	order = with(baseOrder(), "ssh_key_ids", []int64{num(t, fx.key["id"])}, "display_name", "web", "recipe_id", num(t, fx.recipe["id"]),
		"root_password", "correct-horse-1", "project_id", num(t, fx.project["id"]),
		"volume_ids", []int64{}, "automount", false, // no volume: an order accepted here would hold it
		"license_ids", []int64{}) // nor a license: its month would be charged
	project, server := num(t, fx.project["id"]), num(t, fx.server["id"])
	return map[string]map[string]any{
		"POST /servers":                                   order,
		"PATCH /servers/{id}":                             {"display_name": "renamed", "project_id": project},
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
		"POST /volumes": {"name": "vol", "size_gb": 10, "location_id": num(t, fx.server["location_id"]), "server_id": server,
			"project_id": project, "format": "ext4", "automount": true},
		"PATCH /volumes/{id}":         {"name": "vol-renamed", "project_id": project},
		"POST /volumes/{id}/attach":   {"server_id": server, "automount": false},
		"POST /volumes/{id}/detach":   {},
		"POST /volumes/{id}/resize":   {"size_gb": 20},
		"POST /servers/{id}/licenses": {"license_id": licPlesk},
	}, order
}

// documentedNullable is, for each field of bodies, whether the document marks it
// nullable; a field of a route's body in the document that bodies leaves out fails
// the test (add it).
func documentedNullable(t *testing.T, bodies map[string]map[string]any) map[nullCase]bool {
	doc := apitest.New(t).Doc()
	out := map[nullCase]bool{}
	for route, body := range bodies {
		method, path, _ := strings.Cut(route, " ")
		op := doc.Paths.Value(path).GetOperation(method)
		if op == nil || op.RequestBody == nil {
			t.Fatalf("%s: no request body in the document", route)
		}
		for name, prop := range op.RequestBody.Value.Content.Get("application/json").Schema.Value.Properties {
			_, ok := body[name]
			if route == "POST /servers" && name == "app_id" {
				ok = true
			}
			if !ok {
				t.Errorf("%s: field %s is not in the table; add it", route, name)
			}
			out[nullCase{route, name}] = prop.Value.Nullable
		}
	}
	return out
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
		{"/volumes", `{"name": "v", "size_gb": 10, "location_id": 1, "Size_GB": "x"}`, "Size_GB"},
	} {
		t.Run(c.body, func(t *testing.T) {
			e := wantInvalid(t, a.Do("POST", c.path, c.body), c.twin)
			if want := msg("de", "validation.unknown_field"); len(e.Errors) != 1 || e.Errors[c.twin][0] != want {
				t.Errorf("errors %v, want only %s: %q", e.Errors, c.twin, want)
			}
		})
	}
	for _, list := range []string{"/projects", "/volumes"} {
		if n := len(items(t, a.Do("GET", list, nil).Want(t, http.StatusOK))); n != 0 {
			t.Errorf("GET %s: %d after refused bodies", list, n)
		}
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
		{"/volumes", "server_id", "server_id=" + fx.serverID + "&server_id=" + fx.serverID},
		{"/volumes", "project_id", "project_id=" + fx.projectID + "&project_id=0"},
		{"/volumes", "project_id", "server_id=" + fx.serverID + "&project_id=" + fx.projectID + "&project_id=" + fx.projectID},
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

// TestVolumeListFilters: GET /volumes's server_id and project_id are positive
// integers (a name, 0, a number past int64: 422 on the parameter, in the account's
// language); one that names nothing of the account lists nothing.
func TestVolumeListFilters(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 30})
	a := env.NewAccount("de", "1000", "")
	fx := newFixture(t, a)
	for _, param := range []string{"server_id", "project_id"} {
		for _, v := range []string{"0", "-1", "", "abc", "1.5", "1e3", "+1", "9223372036854775808", "99999999999999999999", fx.serverName} {
			e := wantInvalid(t, a.Do("GET", "/volumes?"+param+"="+url.QueryEscape(v), nil), param)
			if want := msg("de", "validation.positive_integer"); len(e.Errors) != 1 || e.Errors[param][0] != want {
				t.Errorf("%s=%q: errors %v, want only %s: %q", param, v, e.Errors, param, want)
			}
		}
		for _, v := range []string{"9223372036854775807", "999999"} {
			if got := items(t, a.Do("GET", "/volumes?"+param+"="+v, nil).Want(t, http.StatusOK)); len(got) != 0 {
				t.Errorf("%s=%s lists %v", param, v, got)
			}
		}
	}
	if got := items(t, a.Do("GET", "/volumes", nil).Want(t, http.StatusOK)); len(got) != 1 || itoa(num(t, got[0]["id"])) != fx.volumeID {
		t.Errorf("unfiltered: %v, want the fixture's volume", got)
	}
}

// TestNULInText: a multi-line text (a ticket's message, a recipe's script) holding a
// NUL character is a 422 on its field in the account's language, and nothing is
// written. PostgreSQL's text cannot keep one: it was a 500 there. Tabs, line breaks
// and carriage returns are the text's own.
func TestNULInText(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 30})
	a := env.NewAccount("de", "1000", "")
	want := msg("de", "validation.text_nul")
	tk := data(t, a.Do("POST", "/tickets", map[string]any{"subject": "Disk", "body": "Line one\r\n\tLine two"}).Want(t, 201))
	rc := data(t, a.Do("POST", "/recipes", map[string]any{"name": "r", "script": "#!/bin/sh\n\techo ok\r\n"}).Want(t, 201))
	ticket, recipe := itoa(num(t, tk["id"])), itoa(num(t, rc["id"]))
	for _, c := range []struct {
		method, path string
		body         map[string]any
		field        string
	}{
		{"POST", "/tickets", map[string]any{"subject": "Disk", "body": "a\x00b"}, "body"},
		{"POST", "/tickets/" + ticket + "/messages", map[string]any{"body": "\x00"}, "body"},
		{"POST", "/recipes", map[string]any{"name": "r2", "script": "#!/bin/sh\necho \x00\n"}, "script"},
		{"PATCH", "/recipes/" + recipe, map[string]any{"script": "\x00"}, "script"},
	} {
		wantInvalidMsg(t, a.Do(c.method, c.path, c.body), c.field, want)
	}
	if n := len(items(t, a.Do("GET", "/tickets", nil).Want(t, 200))); n != 1 {
		t.Errorf("%d tickets, want 1", n)
	}
	if msgs := data(t, a.Do("GET", "/tickets/"+ticket, nil).Want(t, 200))["messages"].([]any); len(msgs) != 1 {
		t.Errorf("%d messages, want 1", len(msgs))
	}
	recipes := items(t, a.Do("GET", "/recipes", nil).Want(t, 200))
	if len(recipes) != 1 || recipes[0]["script"] != "#!/bin/sh\n\techo ok\r\n" {
		t.Errorf("recipes %v, want r alone with its script", recipes)
	}
}

// TestContentEncoding: a body sent compressed (Content-Encoding: gzip) is a 422 on
// Content-Encoding in the account's language, on each of the API's readers of a
// body (JSON, a zone file, an attachment), after the 404 of what the path names;
// identity is the body as it is.
func TestContentEncoding(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 30})
	a := env.NewAccount("de", "1000", "")
	want := msg("de", "validation.content_encoding")
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write([]byte(`{"name": "packed"}`))
	_ = w.Close()
	dom := data(t, a.Do("POST", "/domains", map[string]any{"name": "example.com"}).Want(t, 201))
	zone := "/domains/" + itoa(num(t, dom["id"])) + "/zone-file"
	for _, c := range []struct {
		method, path, ctype, encoding string
		body                          []byte
	}{
		{"POST", "/projects", "application/json", "gzip", gz.Bytes()},
		{"POST", "/projects", "application/json", "identity, br", []byte(`{"name": "p"}`)},
		{"PATCH", "/projects/0", "application/json", "gzip", gz.Bytes()},
		{"PUT", zone, "text/plain", "deflate", []byte("www 300 IN A 192.0.2.1\n")},
		{"POST", "/attachments", "text/plain", "gzip", gz.Bytes()},
	} {
		r := a.DoWith(c.method, c.path, c.body, http.Header{"Content-Type": {c.ctype}, "Content-Encoding": {c.encoding}})
		if c.path == "/projects/0" {
			r.Want(t, http.StatusNotFound)
			continue
		}
		wantInvalidMsg(t, r, "Content-Encoding", want)
	}
	a.DoWith("POST", "/projects", []byte(`{"name": "plain"}`), http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {"identity"}}).Want(t, 201)
	if got := items(t, a.Do("GET", "/projects", nil).Want(t, 200)); len(got) != 1 || got[0]["name"] != "plain" {
		t.Errorf("projects %v, want plain alone", got)
	}
}
