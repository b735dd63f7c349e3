package httpapi_test

import (
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// sandboxPaths are paths of the sandbox API (API-DECISIONS §11), with the methods
// each takes.
var sandboxPaths = []struct{ method, path string }{
	{"GET", ""},
	{"GET", "/faults"},
	{"POST", "/faults"},
	{"DELETE", "/faults"},
	{"DELETE", "/faults/1"},
	{"GET", "/requests"},
	{"GET", "/clock"},
	{"POST", "/clock"},
	{"POST", "/reset"},
	{"POST", "/seed"},
	{"OPTIONS", "/faults"},
}

// TestSandboxOffIs404: without --sandbox every /sandbox/v1 path is an unknown path of
// the API (404 not_found in the API's error format, never the console's page), with
// a token or without.
func TestSandboxOffIs404(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("de", "", "")
	for _, p := range sandboxPaths {
		for _, token := range []string{"", a.Token} {
			r := env.SandboxDo(token, p.method, p.path, nil, nil)
			e := wantError(t, r, 404, "not_found")
			if token != "" && e.Message != msg("de", "error.path_not_found") {
				t.Errorf("%s %s: message %q, want the account's language", p.method, p.path, e.Message)
			}
		}
	}
}
