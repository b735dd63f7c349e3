package httpapi_test

// Boundary input of issue 14, each through the real HTTP server: an id in a body that
// names nothing (0 above all, which the store once read as "the first row"), null on
// a field that is not nullable, a query parameter given twice, an unknown field that
// is a real one's case-folded twin. Each is a 422 on its field, in the account's
// language, like -1 and 999 always were.

import (
	"fmt"
	"net/http"
	"testing"

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
