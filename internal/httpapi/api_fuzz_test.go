package httpapi_test

// Fuzz tests through the real /v1 handler of a whole in-process Berth (issue 6): the
// Authorization header, the {id}-or-name path parameter, and any request at all. The
// handler is called directly (no sockets), with rate limits out of the way, and every
// answer is checked against api/openapi.yaml like the other API tests' answers.
//
//	go test -run='^$' -fuzz='^FuzzAPIRequest$' -fuzztime=1m ./internal/httpapi
//
// Inputs may name the fixture's resources with placeholders, so that seeds stay valid
// in every fuzzing process (each has its own Berth): {server} {name} {snapshot} {key}
// {project} {recipe} {op} in paths, {TOKEN} {READ} {REVOKED} {EXPIRED} in headers.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/apitest"
	"github.com/berthhq/berth/internal/testenv"
)

// fuzzBerth is a Berth for one fuzz target in one process.
type fuzzBerth struct {
	env     *testenv.Env
	h       http.Handler
	fx      *fixture
	tokens  map[string]string // placeholder → secret
	tokenID map[string]int64  // secret → token id, for the tokens that are valid
	addr    atomic.Int64
}

func newFuzzBerth(f *testing.F) *fuzzBerth {
	f.Helper()
	env := testenv.New(f, testenv.Options{RateLimit: 1 << 30})
	a := env.NewAccount("en", "1000", "")
	h, err := env.App.Handler()
	if err != nil {
		f.Fatal(err)
	}
	b := &fuzzBerth{env: env, h: h, fx: newFixture(f, a), tokens: map[string]string{}, tokenID: map[string]int64{}}
	ctx := context.Background()
	all, allSecret := newToken(f, env, a.ID, allScopesBut(""), 0)
	read, readSecret := newToken(f, env, a.ID, "read", 0)
	revoked, revokedSecret := newToken(f, env, a.ID, allScopesBut(""), 0)
	if _, err := env.App.Service.RevokeToken(ctx, revoked); err != nil {
		f.Fatal(err)
	}
	_, expiredSecret := newToken(f, env, a.ID, allScopesBut(""), time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	b.tokens["{TOKEN}"], b.tokens["{READ}"] = allSecret, readSecret
	b.tokens["{REVOKED}"], b.tokens["{EXPIRED}"] = revokedSecret, expiredSecret
	b.tokenID[allSecret], b.tokenID[readSecret] = all, read
	return b
}

// expandPath fills the resource placeholders of a path.
func (b *fuzzBerth) expandPath(s string) string {
	return strings.NewReplacer("{server}", b.fx.serverID, "{name}", b.fx.serverName, "{snapshot}", b.fx.snapshotID,
		"{key}", b.fx.keyID, "{project}", b.fx.projectID, "{recipe}", b.fx.recID, "{op}", b.fx.opID).Replace(s)
}

// expandTokens fills the token placeholders of a header value.
func (b *fuzzBerth) expandTokens(s string) string {
	for k, v := range b.tokens {
		s = strings.ReplaceAll(s, k, v)
	}
	return s
}

// serve sends req to the handler from a client address of its own (so that failed
// authentications never add up to a 429), checks the answer against the OpenAPI
// document on t, and returns it. A 5xx fails t.
func (b *fuzzBerth) serve(t *testing.T, req *http.Request) *http.Response {
	t.Helper()
	n := b.addr.Add(1)
	req.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:4242", n>>16&255, n>>8&255, n&255)
	var rt http.RoundTripper = roundTrip(func(req *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		b.h.ServeHTTP(rec, req)
		return rec.Result(), nil
	})
	if req.Method != http.MethodHead { // the document lists no HEAD
		rt = apitest.New(t).Transport(t, rt)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode >= 500 {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s answered %d: %s", req.Method, req.URL, resp.StatusCode, body)
	}
	return resp
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// FuzzBearerToken: the Authorization header of GET /v1/me. Exactly "Bearer " (scheme
// in any case) followed by a valid token is that token's principal (200); anything
// else, revoked and expired tokens included, is 401 unauthenticated with a
// WWW-Authenticate challenge, never another status.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{
		"", "Bearer", "Bearer ", "Bearer  ", "Bearer {TOKEN}", "bearer {TOKEN}", "BEARER {READ}", "Bearer  {TOKEN}",
		"Bearer {TOKEN} ", "Bearer\t{TOKEN}", " Bearer {TOKEN}", "Bearer {TOKEN}\x00", "Bearer {TOKEN}x", "Bearer x{TOKEN}",
		"Bearer {TOKEN}{TOKEN}", "Bearer {TOKEN},Bearer {READ}", "Bearer {TOKEN} {READ}", "Basic {TOKEN}",
		"Token {TOKEN}", "{TOKEN}", "Bearer {REVOKED}", "Bearer {EXPIRED}", "Bearer berth_", "Bearer berth_x",
		"Bearer Berth_x", "Bearer " + strings.Repeat("a", 300), "Bearer berth_" + strings.Repeat("A", 43),
		"Bearer berth_" + strings.Repeat("A", 500), "Bearer \xff\xfe", "Bearer berth_\u00e9", "Bearer {TOKEN}\r\nX: y",
		"Bearer=\"{TOKEN}\"", "Bearer %7BTOKEN%7D",
	} {
		f.Add(s)
	}
	b := newFuzzBerth(f)
	f.Fuzz(func(t *testing.T, header string) {
		value := b.expandTokens(header)
		req := httptest.NewRequest("GET", "http://berth.test/v1/me", nil)
		req.Header.Set("Authorization", value)
		resp := b.serve(t, req)
		scheme, secret, _ := strings.Cut(value, " ")
		id, valid := b.tokenID[secret]
		valid = valid && strings.EqualFold(scheme, "Bearer")
		var body struct {
			Code string
			Data struct{ Token struct{ ID int64 } }
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatalf("Authorization %q: %d with a body that is not JSON: %v", value, resp.StatusCode, err)
		}
		switch {
		case valid && (resp.StatusCode != 200 || body.Data.Token.ID != id):
			t.Fatalf("Authorization %q: %d, token %d; want 200 for token %d", value, resp.StatusCode, body.Data.Token.ID, id)
		case !valid && (resp.StatusCode != 401 || body.Code != "unauthenticated" || resp.Header.Get("WWW-Authenticate") == ""):
			t.Fatalf("Authorization %q: %d %q; want 401 unauthenticated with a challenge", value, resp.StatusCode, body.Code)
		}
	})
}

// serverRoutes are requests on one server, {ref} standing for the path parameter;
// none changes anything, whatever server they reach. want is the status on the
// fixture's server.
var serverRoutes = []struct {
	method, path, body string
	want               int
}{
	{"GET", "/v1/servers/{ref}", "", 200},
	{"GET", "/v1/servers/{ref}/snapshots", "", 200},
	{"GET", "/v1/servers/{ref}/rescale-options", "", 200},
	{"GET", "/v1/servers/{ref}/metrics?range=1h", "", 200},
	{"POST", "/v1/servers/{ref}/power", `{"action":"dance"}`, 422},
	{"PATCH", "/v1/servers/{ref}", `{"status":"running"}`, 422},
	{"DELETE", "/v1/servers/{ref}/snapshots/0", "", 404},
}

// FuzzServerPath: the {id}-or-name path parameter of every server route. The
// fixture's server answers to its id and to its name, exactly written; anything
// else is 404 not_found (never 422, 405 or a 5xx), whatever the route.
func FuzzServerPath(f *testing.F) {
	for i, s := range []string{
		"{server}", "{name}", "0", "-1", "+{server}", "0{server}", "{server}.0", "{server} ", " {server}", "{server}\x00",
		"1e0", "0x1", "9223372036854775807", "9223372036854775808", "99999999999999999999999", "server-", "server-abcdef",
		"SERVER-abcdef", "{name}x", "x{name}", "{name}/", "/{name}", "{name}?", "{name}#", "server-ab%63def", "%",
		"%2e", "%2E%2E", ".", "..", "...", "a/../{server}", "{server}/..", "\u0661", "\xff", "", " ", "//", "{server};x",
		"{server}%00", "{server}\n", "server-\u00e9bcdef",
	} {
		f.Add(s, uint8(i))
	}
	b := newFuzzBerth(f)
	f.Fuzz(func(t *testing.T, raw string, which uint8) {
		rt := serverRoutes[int(which)%len(serverRoutes)]
		ref := b.expandPath(raw)
		u := "http://berth.test" + strings.Replace(rt.path, "{ref}", url.PathEscape(ref), 1)
		req, err := http.NewRequest(rt.method, u, strings.NewReader(rt.body))
		if err != nil {
			t.Fatalf("%q: %v", u, err)
		}
		req.Header.Set("Authorization", "Bearer "+b.tokens["{TOKEN}"])
		resp := b.serve(t, req)
		want := 404
		if ref == b.fx.serverID || ref == b.fx.serverName {
			want = rt.want
		}
		if resp.StatusCode != want {
			body, _ := io.ReadAll(resp.Body)
			t.Fatalf("%s %s: %d, want %d: %s", rt.method, req.URL.EscapedPath(), resp.StatusCode, want, body)
		}
	})
}

// apiMethods are the methods FuzzAPIRequest picks from: the API's, and some it does
// not serve.
var apiMethods = []string{"GET", "POST", "PATCH", "DELETE", "PUT", "OPTIONS", "HEAD", "TRACE", "BREW"}

// FuzzAPIRequest: any method, path (with query) and body with a token of every scope:
// no panic, no 5xx, and every answer is one the OpenAPI document allows for that
// route (404 or 405 in the API's error format for paths and methods it does not list).
// The fuzzer may change the fixture (delete the server, say); every answer must
// still be valid.
func FuzzAPIRequest(f *testing.F) {
	add := func(method, path, body string) {
		for i, m := range apiMethods {
			if m == method {
				f.Add(uint8(i), path, []byte(body))
			}
		}
	}
	add("GET", "/v1/me", "")
	add("GET", "/v1/billing", "")
	add("GET", "/v1/billing/transactions?page=1", "")
	add("GET", "/v1/billing/transactions?page=0", "")
	add("GET", "/v1/billing/transactions?page=99999999999999999999", "")
	add("GET", "/v1/locations", "")
	add("GET", "/v1/apps", "")
	add("GET", "/v1/openapi.json", "")
	add("GET", "/v1/servers?project_id={project}&status=running", "")
	add("GET", "/v1/servers?status=bogus&project_id=x", "")
	add("GET", "/v1/servers/{server}", "")
	add("GET", "/v1/servers/{name}/metrics?range=7d", "")
	add("GET", "/v1/servers/{server}/metrics?range=", "")
	add("GET", "/v1/servers/{server}/rescale-options", "")
	add("GET", "/v1/servers/{server}/snapshots", "")
	add("GET", "/v1/ssh-keys", "")
	add("GET", "/v1/projects", "")
	add("GET", "/v1/recipes", "")
	add("GET", "/v1/recipes/{recipe}", "")
	add("GET", "/v1/operations/{op}", "")
	add("GET", "/v1/operations/{op}?wait=0", "")
	add("GET", "/v1/operations/{op}?wait=1", "")
	// A valid root password costs a SHA-512-crypt hash (a second under -race):
	// FuzzTextRules covers them; this one is 73 characters, one too many.
	add("POST", "/v1/servers", `{"plan_id":1,"location_id":1,"image_id":1,"ssh_key_ids":[{key}],"project_id":{project},"recipe_id":{recipe},"display_name":"web"}`)
	add("POST", "/v1/servers", `{"plan_id":1,"location_id":1,"app_id":1,"root_password":"`+strings.Repeat("ä", 73)+`"}`)
	add("POST", "/v1/servers", `{"plan_id":1,"location_id":1,"image_id":1,"ssh_key_ids":[{key},{key},99]}`)
	add("PATCH", "/v1/servers/{server}", `{"display_name":"renamed","project_id":null}`)
	add("POST", "/v1/servers/{server}/power", `{"action":"off"}`)
	add("POST", "/v1/servers/{name}/power", `{"action":"on"}`)
	add("POST", "/v1/servers/{server}/reinstall", `{"image_id":2}`)
	add("POST", "/v1/servers/{server}/rescale", `{"plan_id":2,"upgrade_disk":false}`)
	add("POST", "/v1/servers/{server}/snapshots", `{"name":"fuzz-1","include_memory":true}`)
	add("POST", "/v1/servers/{server}/snapshots/{snapshot}/restore", ``)
	add("DELETE", "/v1/servers/{server}/snapshots/{snapshot}", ``)
	add("POST", "/v1/ssh-keys", `{"name":"k","public_key":"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAID3YGPkvxwpLYTWLsdn1mLoJiEPHQZpKYiaXghboYDVf fuzz"}`)
	add("DELETE", "/v1/ssh-keys/{key}", ``)
	add("POST", "/v1/projects", `{"name":"fuzz"}`)
	add("PATCH", "/v1/projects/{project}", `{"name":"fuzzier"}`)
	add("DELETE", "/v1/projects/{project}", ``)
	add("POST", "/v1/recipes", `{"name":"r","script":"#!/bin/sh\n"}`)
	add("PATCH", "/v1/recipes/{recipe}", `{"script":""}`)
	add("DELETE", "/v1/recipes/{recipe}", ``)
	add("DELETE", "/v1/servers/{server}", ``)
	add("PUT", "/v1/servers", ``)
	add("OPTIONS", "/v1/me", ``)
	add("HEAD", "/v1/me", ``)
	add("TRACE", "/v1/me", ``)
	add("BREW", "/v1/me", ``)
	add("GET", "/v1/nope", ``)
	add("GET", "/v2/me", ``)
	add("GET", "/", ``)
	add("GET", "/v1/servers/{server}/../../me", ``)
	add("GET", "/v1//me", ``)
	add("GET", "/v1/servers/%2e%2e", ``)
	add("POST", "/v1/projects", "{\"name\":\"p\",\"PLAN_ID\":1}")
	add("POST", "/v1/projects", "\u00a0{\"name\":\"nbsp\"}")
	add("POST", "/v1/recipes", `{"name":"big","script":"`+strings.Repeat("x", 70000)+`"}`)
	add("POST", "/v1/projects", `{"name":"`+strings.Repeat("x", 70000)+`"}`)
	b := newFuzzBerth(f)
	f.Fuzz(func(t *testing.T, which uint8, path string, body []byte) {
		method := apiMethods[int(which)%len(apiMethods)]
		path = b.expandPath(path)
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		u, err := url.ParseRequestURI(path)
		if err != nil || u.Host != "" || u.Scheme != "" {
			return // not a request path
		}
		if q := u.Query(); q.Has("wait") {
			if n, err := strconv.Atoi(q.Get("wait")); err == nil && n > 1 {
				return // a long wait is a slow input, not an interesting one
			}
		}
		req, err := http.NewRequest(method, "http://berth.test"+path, bytes.NewReader([]byte(b.expandPath(string(body)))))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+b.tokens["{TOKEN}"])
		req.Header.Set("Content-Type", "application/json")
		resp := b.serve(t, req)
		_, _ = io.Copy(io.Discard, resp.Body)
	})
}
