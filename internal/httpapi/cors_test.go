package httpapi_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/httpapi"
	"github.com/berthhq/berth/internal/testenv"
)

// preflight sends a browser's CORS preflight for method on path from origin.
func preflight(t testing.TB, env *testenv.Env, path, origin, method string) *testenv.Response {
	t.Helper()
	h := http.Header{"Access-Control-Request-Method": {method}, "Access-Control-Request-Headers": {"authorization,content-type"}}
	if origin != "" {
		h.Set("Origin", origin)
	}
	return env.Do("", "OPTIONS", path, nil, h)
}

// corsHeaders lists the Access-Control-* headers of an answer.
func corsHeaders(h http.Header) []string {
	var out []string
	for k := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// TestCORS: with --cors-origin, a preflight from an allowed origin is answered 204
// with what it may send, one from any other origin gets no CORS header; actual
// answers to an allowed origin, errors and replays included, carry the origin and
// expose the headers clients act on.
func TestCORS(t *testing.T) {
	t.Parallel()
	const app, local = "https://app.example.com", "http://localhost:3000"
	env := testenv.New(t, testenv.Options{CORSOrigins: []string{"HTTPS://App.Example.com:443/", local}})
	a := env.NewAccount("en", "100", "")

	t.Run("preflight from an allowed origin", func(t *testing.T) {
		for _, tc := range []struct {
			origin, path, method string
			methods              []string
		}{
			{app, "/servers/1", "PATCH", []string{"GET", "PATCH", "DELETE", "OPTIONS"}},
			{local, "/servers", "POST", []string{"GET", "POST", "OPTIONS"}},
			{app, "/me", "PATCH", []string{"GET", "PATCH", "OPTIONS"}},
			{app, "/operations", "GET", []string{"GET", "OPTIONS"}},
			{app, "/servers/server-abc123/snapshots/7/restore", "POST", []string{"POST", "OPTIONS"}},
		} {
			r := preflight(t, env, tc.path, tc.origin, tc.method).Want(t, http.StatusNoContent)
			h := r.Header
			if len(r.Body) != 0 || h.Get("Access-Control-Allow-Origin") != tc.origin || h.Get("Access-Control-Max-Age") != httpapi.CORSMaxAge ||
				!slices.Equal(splitList(h.Get("Access-Control-Allow-Methods")), tc.methods) || !slices.Equal(splitList(h.Get("Allow")), tc.methods) {
				t.Errorf("%s %s: %v %q", tc.origin, tc.path, h, r.Body)
			}
			allowHeaders := splitList(strings.ToLower(h.Get("Access-Control-Allow-Headers")))
			for _, want := range []string{"authorization", "content-type", "idempotency-key", "accept-language"} {
				if !slices.Contains(allowHeaders, want) {
					t.Errorf("%s: Access-Control-Allow-Headers %q lacks %s", tc.path, h.Get("Access-Control-Allow-Headers"), want)
				}
			}
			if h.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("%s: credentials allowed", tc.path)
			}
			if !slices.Contains(h.Values("Vary"), "Origin") {
				t.Errorf("%s: Vary %q", tc.path, h.Values("Vary"))
			}
		}
	})

	t.Run("preflight from another origin", func(t *testing.T) {
		for _, origin := range []string{"https://evil.example.com", "http://app.example.com", "https://app.example.com.evil.com",
			"https://app.example.com:8443", "null", "*", ""} {
			r := preflight(t, env, "/servers/1", origin, "DELETE").Want(t, http.StatusNoContent)
			if got := corsHeaders(r.Header); len(got) != 0 {
				t.Errorf("origin %q: CORS headers %v", origin, got)
			}
			if r.Header.Get("Allow") == "" {
				t.Errorf("origin %q: no Allow", origin)
			}
		}
		// An unknown path is unknown to a preflight too.
		wantNotFound(t, preflight(t, env, "/nope", app, "GET"))
	})

	t.Run("actual answers to an allowed origin", func(t *testing.T) {
		exposed := func(t *testing.T, r *testenv.Response, origin string) {
			t.Helper()
			if got := r.Header.Get("Access-Control-Allow-Origin"); got != origin {
				t.Errorf("%d: Access-Control-Allow-Origin %q, want %q", r.Status, got, origin)
			}
			list := splitList(r.Header.Get("Access-Control-Expose-Headers"))
			for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Limit",
				"RateLimit-Remaining", "RateLimit-Reset", "Retry-After", "X-Request-Id", "Idempotent-Replayed"} {
				if !slices.Contains(list, h) {
					t.Errorf("%d: Access-Control-Expose-Headers %q lacks %s", r.Status, r.Header.Get("Access-Control-Expose-Headers"), h)
				}
			}
			if !slices.Contains(r.Header.Values("Vary"), "Origin") || r.Header.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("%d: Vary %q, credentials %q", r.Status, r.Header.Values("Vary"), r.Header.Get("Access-Control-Allow-Credentials"))
			}
		}
		from := func(origin string) http.Header { return http.Header{"Origin": {origin}} }

		r := env.Do(a.Token, "GET", "/me", nil, from(app)).Want(t, 200)
		exposed(t, r, app)
		if r.Header.Get("X-RateLimit-Remaining") == "" {
			t.Errorf("no rate-limit header to expose")
		}
		// Errors too: a script reads why it failed.
		exposed(t, env.Do("", "GET", "/me", nil, from(local)).Want(t, 401), local)
		exposed(t, env.Do(a.Token, "GET", "/servers/999999", nil, from(app)).Want(t, 404), app)
		exposed(t, env.Do(a.Token, "GET", "/nope", nil, from(app)).Want(t, 404), app)
		// A replayed POST: the script can see that it was one.
		h := from(app)
		h.Set("Idempotency-Key", "cors-replay")
		first := env.Do(a.Token, "POST", "/projects", map[string]any{"name": "cors"}, h).Want(t, 201)
		again := env.Do(a.Token, "POST", "/projects", map[string]any{"name": "cors"}, h).Want(t, 201)
		exposed(t, first, app)
		exposed(t, again, app)
		if again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay without Idempotent-Replayed")
		}
		// Another origin, or none: nothing.
		for _, origin := range []string{"https://evil.example.com", ""} {
			r := env.Do(a.Token, "GET", "/me", nil, from(origin)).Want(t, 200)
			if got := corsHeaders(r.Header); len(got) != 0 {
				t.Errorf("origin %q: CORS headers %v", origin, got)
			}
		}
	})
}

// TestOptionsEveryPath: without any CORS origin, every path of the route table
// answers OPTIONS 204 with its methods in Allow (no token needed, nothing else), and
// a method a path does not take is 405 with an Allow that names OPTIONS too.
func TestOptionsEveryPath(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	methods := map[string][]string{}
	var paths []string
	for _, rt := range routes(t, env) {
		if _, ok := methods[rt.Path]; !ok {
			paths = append(paths, rt.Path)
		}
		methods[rt.Path] = append(methods[rt.Path], rt.Method)
	}
	for _, sr := range socketRoutes(t, env) { // served outside the table, listed first
		methods[sr.Path] = append([]string{sr.Method}, methods[sr.Path]...)
	}
	fill := map[string]string{"servers/{id}": "1", "ssh-keys/{id}": "1", "projects/{id}": "1", "recipes/{id}": "1",
		"operations/{id}": "1", "snapshots/{snapshot}": "1", "webhooks/{id}": "1", "deliveries/{delivery}": "1", "volumes/{id}": "1",
		"domains/{id}": "1", "rrsets/{name}": "www", "{name}/{type}": "A", "licenses/{license}": "1",
		"tickets/{id}": "1", "attachments/{id}": "1"}
	for _, p := range paths {
		want := append(methods[p], "OPTIONS")
		r := preflight(t, env, fillPath(t, p, fill), "https://app.example.com", want[0]).Want(t, http.StatusNoContent)
		if got := splitList(r.Header.Get("Allow")); !slices.Equal(got, want) {
			t.Errorf("OPTIONS %s: Allow %v, want %v", p, got, want)
		}
		if got := corsHeaders(r.Header); len(got) != 0 || len(r.Header.Values("Vary")) != 0 {
			t.Errorf("OPTIONS %s without CORS origins: %v, Vary %v", p, got, r.Header.Values("Vary"))
		}
		if r.Header.Get("X-RateLimit-Limit") != "" || r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("OPTIONS %s: rate limited %q, Cache-Control %q", p, r.Header.Get("X-RateLimit-Limit"), r.Header.Get("Cache-Control"))
		}
	}
	r := a.Do("PUT", "/servers", nil)
	wantError(t, r, 405, "method_not_allowed")
	if got := splitList(r.Header.Get("Allow")); !slices.Equal(got, []string{"GET", "POST", "OPTIONS"}) {
		t.Errorf("405 Allow %v", got)
	}
	// A token on an OPTIONS is not looked at, not counted.
	before := a.Do("GET", "/me", nil).Header.Get("X-RateLimit-Remaining")
	for range 3 {
		env.Do(a.Token, "OPTIONS", "/me", nil, nil).Want(t, http.StatusNoContent)
	}
	if after := a.Do("GET", "/me", nil).Header.Get("X-RateLimit-Remaining"); after != decr(before) {
		t.Errorf("remaining %s then %s: the OPTIONS were counted", before, after)
	}
}

func decr(s string) string {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return itoa(int64(n - 1))
}

// TestPublicURL: with --public-url the links of a paginated list start with it,
// whatever Host the request names; without, with the request's own scheme and host.
func TestPublicURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, public string
		want         func(env *testenv.Env) string
	}{
		{"request host", "", func(env *testenv.Env) string { return env.URL }},
		{"public host", "https://api.example.com", func(*testenv.Env) string { return "https://api.example.com/v1" }},
		{"public host and prefix", "https://Example.COM:8443/berth/", func(*testenv.Env) string { return "https://example.com:8443/berth/v1" }},
	} {
		// (A subtest name with "#", as t.Run("") makes, puts it in the data directory's
		// path, which SQLite's file: URI would cut there.)
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := testenv.New(t, testenv.Options{PublicURL: tc.public})
			a := env.NewAccount("en", "100", "")
			base := tc.want(env)
			var page struct {
				Links struct {
					First, Last string
					Prev, Next  *string
				}
				Meta struct{ Path string }
			}
			req, err := http.NewRequest("GET", env.URL+"/billing/transactions?page=2", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+a.Token)
			if tc.public != "" {
				req.Host = "attacker.example.net" // a proxy's Host is not the public address
			}
			resp, err := env.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			(&testenv.Response{Status: resp.StatusCode, Header: resp.Header, Body: body}).Want(t, 200).JSON(t, &page)
			want := base + "/billing/transactions"
			if page.Meta.Path != want || page.Links.First != want+"?page=1" || page.Links.Last != want+"?page=1" ||
				page.Links.Prev == nil || *page.Links.Prev != want+"?page=1" {
				t.Errorf("links %+v, path %q; want them on %s", page.Links, page.Meta.Path, want)
			}
			var ops struct{ Links struct{ First string } }
			a.Do("GET", "/operations?status=error", nil).Want(t, 200).JSON(t, &ops)
			if want := base + "/operations?page=1&status=error"; ops.Links.First != want {
				t.Errorf("operations link %q, want %q", ops.Links.First, want)
			}
		})
	}
}

// TestParseCORSOriginAndPublicURL: the rules of --cors-origin and --public-url.
func TestParseCORSOriginAndPublicURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"https://app.example.com", "https://app.example.com"},
		{"HTTPS://App.Example.COM", "https://app.example.com"},
		{"https://app.example.com/", "https://app.example.com"},
		{"https://app.example.com:443", "https://app.example.com"},
		{"http://app.example.com:80", "http://app.example.com"},
		{"http://localhost:3000", "http://localhost:3000"},
		{"https://app.example.com:80", "https://app.example.com:80"},
		{"http://[::1]:8080", "http://[::1]:8080"},
		{"http://[::1]", "http://[::1]"},
		{"", ""}, {"*", ""}, {"null", ""}, {"app.example.com", ""}, {"ftp://app.example.com", ""},
		{"https://", ""}, {"https://app.example.com/app", ""}, {"https://app.example.com?x=1", ""},
		{"https://app.example.com?", ""}, {"https://app.example.com#x", ""}, {"https://u:p@app.example.com", ""},
		{"https://:443", ""},
	} {
		got, err := httpapi.ParseCORSOrigin(tc.in)
		if (err != nil) != (tc.want == "") || got != tc.want {
			t.Errorf("ParseCORSOrigin(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"https://api.example.com", "https://api.example.com"},
		{"https://api.example.com/", "https://api.example.com"},
		{"HTTP://API.Example.com:8080", "http://api.example.com:8080"},
		{"https://example.com/berth//", "https://example.com/berth"},
		{"https://example.com/a%20b", "https://example.com/a%20b"},
		{"", ""}, {"api.example.com", ""}, {"/v1", ""}, {"ftp://api.example.com", ""}, {"https://", ""},
		{"https://api.example.com?x=1", ""}, {"https://api.example.com/?", ""}, {"https://api.example.com#top", ""},
		{"https://u:p@api.example.com", ""}, {"https://api.example.com/v1", ""}, {"https://api.example.com/berth/v1/", ""},
		{"mailto:api@example.com", ""},
	} {
		u, err := httpapi.ParsePublicURL(tc.in)
		got := ""
		if err == nil {
			got = u.String()
		}
		if (err != nil) != (tc.want == "") || got != tc.want {
			t.Errorf("ParsePublicURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
