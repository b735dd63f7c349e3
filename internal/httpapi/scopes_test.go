package httpapi_test

// The scope matrix, driven by the route table: a route added without its scope, or
// with a scope the test cannot exercise, fails here.

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/apitest"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/httpapi"
	"github.com/berthhq/berth/internal/testenv"
)

func TestScopes(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	// Two tokens for every route: more than the default token quota.
	setQuotas(t, env, a, map[string]int{"tokens": 1000})
	rs := routes(t, env)

	t.Run("table and OpenAPI document agree", func(t *testing.T) {
		doc := apitest.New(t).Doc()
		inTable := map[string]bool{}
		for _, rt := range rs {
			key := rt.Method + " " + strings.TrimPrefix(rt.Path, "/v1")
			inTable[key] = true
			if rt.Scope != "" && rt.Scope != string(hosting.ScopeAll) && !slices.Contains(hosting.AllScopes, hosting.Scope(rt.Scope)) {
				t.Errorf("%s: scope %q is not one of docs/api.md's", key, rt.Scope)
			}
			item := doc.Paths.Find(strings.TrimPrefix(rt.Path, "/v1"))
			if item == nil || item.GetOperation(rt.Method) == nil {
				t.Errorf("%s is not in api/openapi.yaml", key)
				continue
			}
			op := item.GetOperation(rt.Method)
			docScope, _ := op.Extensions["x-berth-scope"].(string)
			if docScope != rt.Scope {
				t.Errorf("%s: scope %q in the table, x-berth-scope %q in api/openapi.yaml", key, rt.Scope, docScope)
			}
			if rt.Scope == "" && (op.Security == nil || len(*op.Security) != 0) {
				t.Errorf("%s needs no token but api/openapi.yaml does not say security: []", key)
			}
		}
		// The sandbox's routes (served only with serve --sandbox) need any valid token.
		h, err := env.App.Handler()
		if err != nil {
			t.Fatal(err)
		}
		for _, rt := range h.SandboxRoutes() {
			path := strings.TrimPrefix(rt.Path, httpapi.SandboxBase)
			inTable[rt.Method+" "+path] = true
			item := doc.Paths.Find(path)
			if item == nil || item.GetOperation(rt.Method) == nil || len(item.Servers) != 1 || item.Servers[0].URL != httpapi.SandboxBase {
				t.Errorf("%s %s is not in api/openapi.yaml under its servers' /sandbox/v1", rt.Method, rt.Path)
				continue
			}
			if docScope, _ := item.GetOperation(rt.Method).Extensions["x-berth-scope"].(string); docScope != "any" {
				t.Errorf("%s %s: x-berth-scope %q in api/openapi.yaml, want any", rt.Method, rt.Path, docScope)
			}
		}
		// The WebSockets are served outside the table (their URL carries their
		// credential) and documented as such.
		for _, sr := range socketRoutes(t, env) {
			key := sr.Method + " " + strings.TrimPrefix(sr.Path, "/v1")
			inTable[key] = true
			item := doc.Paths.Find(strings.TrimPrefix(sr.Path, "/v1"))
			if item == nil || item.GetOperation(sr.Method) == nil {
				t.Errorf("%s is not in api/openapi.yaml", key)
			} else if op := item.GetOperation(sr.Method); op.Extensions["x-berth-websocket"] != true || op.Security == nil || len(*op.Security) != 0 {
				t.Errorf("%s: api/openapi.yaml does not say x-berth-websocket: true and security: []", key)
			}
		}
		for path, item := range doc.Paths.Map() {
			for method := range item.Operations() {
				// OPTIONS is every path's, outside the table (TestOptionsEveryPath).
				if !inTable[method+" "+path] && method != http.MethodOptions {
					t.Errorf("%s %s is documented but not served", method, path)
				}
			}
		}
	})

	// Resources for the read routes (which change nothing).
	shared := newFixture(t, as(env, a, ""))

	for _, rt := range rs {
		t.Run(rt.Method+" "+rt.Path, func(t *testing.T) {
			switch rt.Scope {
			case "":
				r := env.Do("", rt.Method, fillPath(t, rt.Path, shared.params(false)), validBody(t, rt.Method, rt.Path), nil)
				if r.Status == 401 || r.Status == 403 {
					t.Errorf("route without scope answered %d without a token", r.Status)
				}
			case string(hosting.ScopeRead):
				// A read-only token may call it; so may a token with any one other scope.
				for _, scopes := range []string{"read", "tickets"} {
					r := env.Do(a.NewToken(scopes), rt.Method, fillPath(t, rt.Path, shared.params(false)), validBody(t, rt.Method, rt.Path), nil)
					if r.Status != http.StatusOK {
						t.Errorf("token %q: %d %s, want 200", scopes, r.Status, r.Body)
					}
				}
			case string(hosting.ScopeAll):
				// Every scope: a token lacking any one is refused, naming what it lacks.
				c := as(env, a, "")
				f := newFixture(t, c)
				path := fillPath(t, rt.Path, f.params(false))
				for _, tc := range []struct{ scopes, missing string }{
					{allScopesBut("tickets"), "tickets"},
					{allScopesBut("power"), "power"},
					{"read", allScopesBut("read")},
					{"read,servers,tickets", "power,snapshots,ssh-keys,recipes,domains,storage,licenses"},
				} {
					r := env.Do(a.NewToken(tc.scopes), rt.Method, path, validBody(t, rt.Method, rt.Path), nil)
					e := wantError(t, r, http.StatusForbidden, "missing_scope")
					if e.Message != msg("en", "error.missing_scopes", "scopes", tc.missing) {
						t.Errorf("token %q: message %q, want it to name %s", tc.scopes, e.Message, tc.missing)
					}
				}
				assertFixtureIntact(t, c, f)
				r := env.Do(a.NewToken(""), rt.Method, path, validBody(t, rt.Method, rt.Path), nil)
				if r.Status == http.StatusForbidden || r.Status >= 500 {
					t.Errorf("token with every scope: %d %s", r.Status, r.Body)
				}
			default:
				// Fresh resources: the request with the scope may change or delete them.
				c := as(env, a, "") // a token per route keeps within the rate limit
				f := newFixture(t, c)
				path := fillPath(t, rt.Path, f.params(false))
				for _, scopes := range []string{allScopesBut(rt.Scope), "read"} {
					r := env.Do(a.NewToken(scopes), rt.Method, path, validBody(t, rt.Method, rt.Path), nil)
					e := wantError(t, r, http.StatusForbidden, "missing_scope")
					if e.Message != msg("en", "error.missing_scope", "scope", rt.Scope) {
						t.Errorf("token %q: message %q", scopes, e.Message)
					}
				}
				// Nothing changed.
				assertFixtureIntact(t, c, f)
				r := env.Do(a.NewToken(rt.Scope), rt.Method, path, validBody(t, rt.Method, rt.Path), nil)
				if r.Status == http.StatusForbidden || r.Status >= 500 {
					t.Errorf("token with only %q (and read): %d %s", rt.Scope, r.Status, r.Body)
				}
				if r.Status >= 300 {
					t.Logf("token with only %q (and read): %d %s", rt.Scope, r.Status, r.Body)
				}
			}
		})
	}
}

// assertFixtureIntact checks that a fixture's resources are as they were created.
func assertFixtureIntact(t testing.TB, c caller, f *fixture) {
	t.Helper()
	srv := data(t, c.Do("GET", "/servers/"+f.serverID, nil).Want(t, 200))
	if srv["display_name"] != f.server["display_name"] || srv["status"] != f.server["status"] || srv["operation"] != nil ||
		num(t, srv["project_id"]) != num(t, f.project["id"]) {
		t.Errorf("server changed: %v, was %v", srv, f.server)
	}
	find := func(path, id string) map[string]any {
		for _, it := range items(t, c.Do("GET", path, nil).Want(t, 200)) {
			if itoa(num(t, it["id"])) == id {
				return it
			}
		}
		t.Errorf("%s %s is gone", path, id)
		return nil
	}
	if k := find("/ssh-keys", f.keyID); k != nil && k["fingerprint"] != f.key["fingerprint"] {
		t.Errorf("key changed: %v", k)
	}
	if p := find("/projects", f.projectID); p != nil && (p["name"] != f.project["name"] || num(t, p["server_count"]) != 1) {
		t.Errorf("project changed: %v", p)
	}
	rc := data(t, c.Do("GET", "/recipes/"+f.recID, nil).Want(t, 200))
	if rc["name"] != f.recipe["name"] || rc["script"] != f.recipe["script"] {
		t.Errorf("recipe changed: %v", rc)
	}
	snaps := items(t, c.Do("GET", "/servers/"+f.serverID+"/snapshots", nil).Want(t, 200))
	if len(snaps) != 1 || itoa(num(t, snaps[0]["id"])) != f.snapshotID || snaps[0]["status"] != "available" ||
		snaps[0]["size_gb"] != f.snapshot["size_gb"] {
		t.Errorf("snapshots changed: %v, was %v", snaps, f.snapshot)
	}
	op := data(t, c.Do("GET", "/operations/"+f.opID, nil).Want(t, 200))
	if op["status"] != "success" || itoa(num(t, op["server_id"])) != f.serverID {
		t.Errorf("operation %v", op)
	}
}
