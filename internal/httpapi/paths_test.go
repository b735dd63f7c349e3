package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/httpapi"
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

// TestSandboxPaths: under serve --sandbox, every path of the sandbox's table answers
// OPTIONS with its methods, a method it does not take is 405 with Allow, and an
// unclean path is 404 as on /v1.
func TestSandboxPaths(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Sandbox: true})
	a := env.NewAccount("en", "", "")
	h, err := env.App.Handler()
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string][]string{}
	var paths []string
	for _, rt := range h.SandboxRoutes() {
		p := strings.Replace(strings.TrimPrefix(rt.Path, httpapi.SandboxBase), "{id}", "1", 1)
		if _, ok := methods[p]; !ok {
			paths = append(paths, p)
		}
		methods[p] = append(methods[p], rt.Method)
	}
	if len(paths) < 3 {
		t.Fatalf("sandbox paths %v", paths)
	}
	for _, p := range paths {
		r := env.SandboxDo("", "OPTIONS", p, nil, nil).Want(t, http.StatusNoContent)
		if got, want := r.Header.Get("Allow"), strings.Join(append(methods[p], "OPTIONS"), ", "); got != want {
			t.Errorf("OPTIONS %s: Allow %q, want %q", p, got, want)
		}
		r = env.SandboxDo(a.Token, "PUT", p, nil, nil)
		wantError(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
		if got, want := r.Header.Get("Allow"), strings.Join(append(methods[p], "OPTIONS"), ", "); got != want {
			t.Errorf("PUT %s: Allow %q, want %q", p, got, want)
		}
	}
	for _, p := range []string{"/faults/..", "/faults/../requests", "//faults", "/requests/.", "/faults/", "/nothing"} {
		wantNotFound(t, env.SandboxDo(a.Token, "GET", p, nil, nil))
	}
	env.SandboxDo(a.Token, "GET", "/requests", nil, nil).Want(t, http.StatusOK)
}
