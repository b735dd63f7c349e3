package httpapi_test

import (
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// TestUncleanPaths: a path with a ".", ".." or empty segment is an unknown path (404),
// never a redirect to the cleaned path, which clients follow with the same method.
func TestUncleanPaths(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "", "")
	srv := runningServer(t, a)
	id := itoa(num(t, srv["id"]))
	for _, tc := range []struct{ method, path string }{
		{"DELETE", "/servers/" + id + "/snapshots/.."},
		{"DELETE", "/servers/" + id + "/snapshots/../"},
		{"POST", "/servers/" + id + "/snapshots/../power"},
		{"GET", "/servers/."},
		{"GET", "/servers/" + id + "/./snapshots"},
		{"GET", "//me"},
		{"GET", "/servers//" + id},
	} {
		r := a.Do(tc.method, tc.path, nil)
		if r.Status != 404 || r.Map(t)["code"] != "not_found" {
			t.Errorf("%s %s: %d %s, want 404 not_found", tc.method, tc.path, r.Status, r.Body)
		}
	}
	a.Do("GET", "/servers/"+id, nil).Want(t, 200)
}
