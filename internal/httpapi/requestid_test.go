package httpapi_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// newID is the form of an id Berth makes itself.
var newID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// TestRequestID: every answer of the API carries X-Request-Id (docs/api.md, The sandbox),
// success or error, a path no route has, OPTIONS, a 401 and a 429, the OpenAPI
// document and a replayed POST: the client's own when it sent exactly one of 1 to 128
// visible ASCII characters, else a new one, never the same twice.
func TestRequestID(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	// A token of one request a minute: its second request is a 429.
	limited := testenv.New(t, testenv.Options{RateLimit: 1})
	b := limited.NewAccount("en", "100", "")
	b.Do("GET", "/me", nil).Want(t, 200)

	visible := func(n int) string {
		var s strings.Builder
		for i := range n {
			s.WriteByte(byte(0x21 + i%94))
		}
		return s.String()
	}
	cases := []struct {
		name   string
		values []string // nil: no header
		keep   bool
	}{
		{"absent", nil, false},
		{"empty", []string{""}, false},
		{"one character", []string{"x"}, true},
		{"uuid", []string{"0f8fad5b-d9cb-469f-a165-70867728950e"}, true},
		{"every visible character, 128 of them", []string{visible(128)}, true},
		{"129 characters", []string{visible(129)}, false},
		{"a space", []string{"trace 42"}, false},
		{"a tab", []string{"trace\t42"}, false},
		{"beyond ASCII", []string{"trace-é"}, false},
		{"given twice", []string{"one", "two"}, false},
		{"given twice alike", []string{"same", "same"}, false},
	}
	type call func(h http.Header) *testenv.Response
	replays := 0
	kinds := []struct {
		name   string
		status int
		do     call
	}{
		{"success", 200, func(h http.Header) *testenv.Response { return env.Do(a.Token, "GET", "/me", nil, h) }},
		{"not found", 404, func(h http.Header) *testenv.Response { return env.Do(a.Token, "GET", "/servers/999999", nil, h) }},
		{"unknown path", 404, func(h http.Header) *testenv.Response { return env.Do(a.Token, "GET", "/nowhere", nil, h) }},
		{"unclean path", 404, func(h http.Header) *testenv.Response { return env.Do(a.Token, "GET", "/servers//1", nil, h) }},
		{"method not allowed", 405, func(h http.Header) *testenv.Response { return env.Do(a.Token, "PUT", "/me", nil, h) }},
		{"validation", 422, func(h http.Header) *testenv.Response {
			return env.Do(a.Token, "POST", "/projects", map[string]any{"name": ""}, h)
		}},
		{"no token", 401, func(h http.Header) *testenv.Response { return env.Do("", "GET", "/me", nil, h) }},
		{"rate limited", 429, func(h http.Header) *testenv.Response { return limited.Do(b.Token, "GET", "/me", nil, h) }},
		{"options", 204, func(h http.Header) *testenv.Response { return env.Do("", "OPTIONS", "/servers/1", nil, h) }},
		{"openapi", 200, func(h http.Header) *testenv.Response { return env.Do("", "GET", "/openapi.json", nil, h) }},
		{"created", 201, func(h http.Header) *testenv.Response {
			return env.Do(a.Token, "POST", "/projects", map[string]any{"name": uniqueName("rid")}, h)
		}},
		{"replay", 201, func(h http.Header) *testenv.Response {
			replays++
			key := http.Header{"Idempotency-Key": {fmt.Sprintf("rid-%d", replays)}}
			body := map[string]any{"name": uniqueName("rid")}
			first := env.Do(a.Token, "POST", "/projects", body, key).Want(t, 201)
			for k, v := range h {
				key[k] = v
			}
			r := env.Do(a.Token, "POST", "/projects", body, key)
			if r.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("replay %d: not replayed", replays)
			}
			if got := first.Header.Get("X-Request-Id"); got == r.Header.Get("X-Request-Id") {
				t.Errorf("the replay answers the first request's id %q", got)
			}
			return r
		}},
	}
	seen := map[string]string{}
	for _, c := range cases {
		for _, k := range kinds {
			h := http.Header{}
			if c.values != nil {
				h["X-Request-Id"] = c.values
			}
			r := k.do(h).Want(t, k.status)
			got := r.Header.Values("X-Request-Id")
			what := c.name + ", " + k.name
			if len(got) != 1 {
				t.Errorf("%s: X-Request-Id %q, want one", what, got)
				continue
			}
			if c.keep {
				if got[0] != c.values[0] {
					t.Errorf("%s: X-Request-Id %q, want the client's %q", what, got[0], c.values[0])
				}
				continue
			}
			if !newID.MatchString(got[0]) {
				t.Errorf("%s: X-Request-Id %q, want a new one of 32 hex digits", what, got[0])
			}
			if other, ok := seen[got[0]]; ok {
				t.Errorf("%s: X-Request-Id %q given before, to %s", what, got[0], other)
			}
			seen[got[0]] = what
		}
	}
}
