package httpapi_test

// Isolation of accounts, driven by the route table: another account's resource is
// 404, never 403, whatever the route, and nothing of it changes.

import (
	"net/http"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

func TestCrossAccount(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	b := env.NewAccount("en", "100", "")
	fb := newFixture(t, b)
	fa := newFixture(t, a) // A has resources of its own, so its requests reach the lookup
	lic := data(t, b.Do("POST", "/servers/"+fb.serverID+"/licenses", map[string]any{"license_id": licPlesk}).Want(t, http.StatusCreated))
	fb.licenseID = itoa(num(t, lic["id"]))

	t.Run("B's license on A's server", func(t *testing.T) {
		wantNotFound(t, a.Do("DELETE", "/servers/"+fa.serverID+"/licenses/"+fb.licenseID, nil))
		if got := serverLicenses(t, b, num(t, fb.server["id"]))[licPlesk]; got["status"] != "active" {
			t.Errorf("B's license after A's requests: %v", got)
		}
	})

	t.Run("every route with an id", func(t *testing.T) {
		n := 0
		for _, rt := range routes(t, env) {
			if !strings.Contains(rt.Path, "{") {
				continue
			}
			refs := []bool{false}
			if strings.HasPrefix(rt.Path, "/v1/servers/{id}") {
				refs = []bool{false, true} // by id and by name
			}
			for _, byName := range refs {
				path := fillPath(t, rt.Path, fb.params(byName))
				r := a.Do(rt.Method, path, validBody(t, rt.Method, rt.Path))
				if r.Status != http.StatusNotFound {
					t.Errorf("%s %s (B's resource) from A: %d %s", rt.Method, path, r.Status, r.Body)
					continue
				}
				e := wantError(t, r, http.StatusNotFound, "not_found")
				if e.Message != msg("en", "error.not_found") {
					t.Errorf("%s %s: message %q", rt.Method, path, e.Message)
				}
				n++
			}
		}
		if n == 0 {
			t.Fatal("no route with an id")
		}
	})

	t.Run("an invalid body does not tell either", func(t *testing.T) {
		for _, req := range []struct{ method, path string }{
			{"PATCH", "/servers/" + fb.serverID},
			{"POST", "/servers/" + fb.serverName + "/power"},
			{"PATCH", "/projects/" + fb.projectID},
			{"PATCH", "/recipes/" + fb.recID},
		} {
			wantNotFound(t, a.Do(req.method, req.path, `{"nope": 1}`))
			wantNotFound(t, a.Do(req.method, req.path, "{"))
		}
		wantNotFound(t, a.Do("GET", "/operations/"+fb.opID+"?wait=0", nil))
	})

	t.Run("lists", func(t *testing.T) {
		if list := items(t, a.Do("GET", "/servers?project_id="+fb.projectID, nil).Want(t, 200)); len(list) != 0 {
			t.Errorf("A lists servers of B's project: %v", list)
		}
		for _, path := range []string{"/servers", "/ssh-keys", "/projects", "/recipes"} {
			for _, it := range items(t, a.Do("GET", path, nil).Want(t, 200)) {
				id := itoa(num(t, it["id"]))
				if id == fb.serverID || (path == "/ssh-keys" && id == fb.keyID) || (path == "/projects" && id == fb.projectID) || (path == "/recipes" && id == fb.recID) {
					t.Errorf("A's %s lists B's %v", path, it)
				}
			}
		}
	})

	t.Run("ordering with B's resources", func(t *testing.T) {
		for _, tc := range []struct {
			field string
			value any
			want  string
		}{
			{"ssh_key_ids", []string{fb.keyID}, msg("en", "validation.ssh_key_unknown", "id", fb.keyID)},
			{"project_id", fb.projectID, msg("en", "validation.project_unknown")},
			{"recipe_id", fb.recID, msg("en", "validation.recipe_unknown")},
		} {
			body := `{"plan_id": 1, "location_id": 1, "image_id": 1, "` + tc.field + `": ` + jsonIDs(tc.value) + `}`
			e := wantInvalid(t, a.Do("POST", "/servers", body), tc.field)
			if len(e.Errors) != 1 || e.Errors[tc.field][0] != tc.want {
				t.Errorf("%s of B: %v, want the message for an unknown one (%q)", tc.field, e.Errors, tc.want)
			}
		}
		e := wantInvalid(t, a.Do("PATCH", "/servers/"+fa.serverName, `{"project_id": `+fb.projectID+`}`), "project_id")
		if e.Errors["project_id"][0] != msg("en", "validation.project_unknown") {
			t.Errorf("moving into B's project: %v", e.Errors)
		}
		if n := len(items(t, a.Do("GET", "/servers", nil).Want(t, 200))); n != 1 {
			t.Errorf("A has %d servers, want 1", n)
		}
	})

	t.Run("B is untouched", func(t *testing.T) {
		assertFixtureIntact(t, b, fb)
		if got := data(t, b.Do("GET", "/servers/"+fb.serverName, nil).Want(t, 200)); got["status"] != "running" {
			t.Errorf("B's server %v", got["status"])
		}
		if list := items(t, b.Do("GET", "/servers?project_id="+fb.projectID, nil).Want(t, 200)); len(list) != 1 {
			t.Errorf("B's project lists %d servers", len(list))
		}
		// And A's own resources answer as usual.
		assertFixtureIntact(t, a, fa)
	})
}

// jsonIDs writes a string id, or a list of them, as JSON numbers.
func jsonIDs(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	}
	panic("jsonIDs: unexpected type")
}
