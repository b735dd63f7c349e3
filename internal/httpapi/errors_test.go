package httpapi_test

// The error format (docs/api.md, Errors): body, 422 message and its order, languages,
// precedence of the checks, and the rate limit (docs/api.md, Rate limits).

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
)

func testErrorBody(t *testing.T, env *testenv.Env, a *testenv.Account) {
	keys := func(r *testenv.Response) []string {
		var raw map[string]json.RawMessage
		r.JSON(t, &raw)
		var out []string
		for k := range raw {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name   string
		r      *testenv.Response
		status int
		want   []string
	}{
		{"401", env.Do("", "GET", "/me", nil, nil), 401, []string{"code", "message"}},
		{"403", env.Do(a.NewToken("read"), "POST", "/projects", map[string]any{"name": "x"}, nil), 403, []string{"code", "message"}},
		{"404", a.Do("GET", "/servers/999999", nil), 404, []string{"code", "message"}},
		{"404 path", a.Do("GET", "/nope", nil), 404, []string{"code", "message"}},
		{"405", a.Do("PUT", "/servers", nil), 405, []string{"code", "message"}},
		{"422", a.Do("POST", "/projects", map[string]any{}), 422, []string{"code", "errors", "message"}},
	} {
		if tc.r.Status != tc.status {
			t.Errorf("%s: status %d", tc.name, tc.r.Status)
			continue
		}
		if got := keys(tc.r); !slices.Equal(got, tc.want) {
			t.Errorf("%s: body keys %v, want %v: %s", tc.name, got, tc.want, tc.r.Body)
		}
	}
}

// badOrderField is, for each field of the order schema, a change to a valid order
// that fails that field (and only it).
var badOrderField = map[string][]any{
	"plan_id":       {"plan_id", 999},
	"location_id":   {"location_id", 999},
	"image_id":      {"image_id", 999},
	"ssh_key_ids":   {"ssh_key_ids", []int{999999}},
	"display_name":  {"display_name", ""},
	"project_id":    {"project_id", 999999},
	"app_id":        {"image_id", drop, "app_id", 999},
	"recipe_id":     {"recipe_id", 999999},
	"root_password": {"root_password", "short"},
}

var orderSchema = []string{"plan_id", "location_id", "image_id", "ssh_key_ids", "display_name", "project_id", "app_id", "recipe_id", "root_password"}

func TestErrorMessageOrder(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	more := func(n int) string { return msg("en", "error.more_errors", "count", n) }

	t.Run("body keys", func(t *testing.T) { testErrorBody(t, env, a) })

	t.Run("the first field of the schema names the message", func(t *testing.T) {
		for i, fi := range orderSchema {
			for _, fj := range orderSchema[i+1:] {
				if fi == "image_id" && fj == "app_id" {
					continue // an app order has no image_id to fail
				}
				body := with(with(baseOrder(), badOrderField[fi]...), badOrderField[fj]...)
				e := wantError(t, a.Do("POST", "/servers", body), 422, "validation_failed")
				if len(e.Errors) != 2 || len(e.Errors[fi]) != 1 || len(e.Errors[fj]) != 1 {
					t.Errorf("%s and %s: errors %v", fi, fj, e.Errors)
					continue
				}
				if want := e.Errors[fi][0] + more(1); e.Message != want {
					t.Errorf("%s and %s: message %q, want %q", fi, fj, e.Message, want)
				}
			}
		}
	})

	t.Run("body order does not matter", func(t *testing.T) {
		body := `{"root_password": "short", "display_name": "` + strings.Repeat("d", 65) + `", "image_id": 1, "location_id": 999, "plan_id": 999}`
		e := wantError(t, a.Do("POST", "/servers", body), 422, "validation_failed")
		if want := msg("en", "validation.plan_unknown") + " (and 3 more errors)"; e.Message != want {
			t.Errorf("message %q, want %q", e.Message, want)
		}
		if want := msg("en", "validation.plan_unknown") + more(3); e.Message != want {
			t.Errorf("message %q, want %q", e.Message, want)
		}
		body = `{"root_password": "short", "display_name": "` + strings.Repeat("d", 65) + `", "image_id": 1, "location_id": 1, "plan_id": 1}`
		e = wantError(t, a.Do("POST", "/servers", body), 422, "validation_failed")
		if want := msg("en", "validation.max_chars", "max", 64) + " (and 1 more error)"; e.Message != want {
			t.Errorf("message %q, want %q", e.Message, want)
		}
	})

	t.Run("N counts messages, not fields", func(t *testing.T) {
		e := wantError(t, a.Do("POST", "/servers", with(baseOrder(), "ssh_key_ids", []int{999998, 999999})), 422, "validation_failed")
		want := []string{msg("en", "validation.ssh_key_unknown", "id", 999998), msg("en", "validation.ssh_key_unknown", "id", 999999)}
		if !slices.Equal(e.Errors["ssh_key_ids"], want) || e.Message != want[0]+more(1) {
			t.Errorf("got %+v", e)
		}
		e = wantError(t, a.Do("POST", "/servers", map[string]any{"ssh_key_ids": []int{999997, 999998, 999999}, "root_password": "x"}), 422, "validation_failed")
		// plan_id, location_id, image_id, 3 × ssh_key_ids, root_password: 7 messages.
		if e.Message != msg("en", "validation.required")+more(6) {
			t.Errorf("message %q", e.Message)
		}
	})

	t.Run("one error has no suffix", func(t *testing.T) {
		e := wantInvalid(t, a.Do("POST", "/servers", with(baseOrder(), "plan_id", 999)), "plan_id")
		if e.Message != msg("en", "validation.plan_unknown") {
			t.Errorf("message %q", e.Message)
		}
	})

	t.Run("PATCH in its schema order", func(t *testing.T) {
		srv := order(t, a, baseOrder())
		e := wantError(t, a.Do("PATCH", "/servers/"+srv["name"].(string), `{"project_id": 999999, "display_name": ""}`), 422, "validation_failed")
		if e.Message != msg("en", "validation.required")+more(1) || len(e.Errors["project_id"]) != 1 {
			t.Errorf("got %+v", e)
		}
	})
}

func TestErrorPrecedenceAndLanguages(t *testing.T) {
	t.Parallel()
	// A provisioning lasts ~30 s, the realistic time: the precedence cases need one in
	// progress, and on a loaded CI machine a 1.5 s one had ended before them.
	env := testenv.New(t, testenv.Options{SimTimeScale: 1})
	en := env.NewAccount("en", "100", "")
	de := env.NewAccount("de", "100", "")
	fr := env.NewAccount("fr", "100", "")
	ctx := context.Background()

	// A server of en, suspended while it is provisioning.
	enSusp := order(t, en, baseOrder())
	if _, err := env.App.Service.SetServerSuspended(ctx, num(t, enSusp["id"]), true); err != nil {
		t.Fatal(err)
	}
	name := func(s map[string]any) string { return s["name"].(string) }

	t.Run("languages", func(t *testing.T) {
		for _, acc := range []struct {
			lang string
			a    *testenv.Account
		}{{"de", de}, {"fr", fr}, {"en", en}} {
			lang := acc.lang
			// 409 (first, while the server provisions)
			busy := order(t, acc.a, baseOrder())
			r := acc.a.Do("POST", "/servers/"+name(busy)+"/power", map[string]any{"action": "off"})
			e := wantError(t, r, 409, "busy")
			if e.Message != msg(lang, "error.busy", "operation", "provision") {
				t.Errorf("%s 409: %q", lang, e.Message)
			}
			// 404
			e = wantError(t, acc.a.Do("GET", "/servers/999999", nil), 404, "not_found")
			if e.Message != msg(lang, "error.not_found") {
				t.Errorf("%s 404: %q", lang, e.Message)
			}
			// 422
			e = wantError(t, acc.a.Do("POST", "/servers", map[string]any{"plan_id": 999, "location_id": 999, "image_id": 1}), 422, "validation_failed")
			want := msg(lang, "validation.plan_unknown") + msg(lang, "error.more_errors", "count", 1)
			if e.Message != want || e.Errors["location_id"][0] != msg(lang, "validation.location_unknown") {
				t.Errorf("%s 422: %+v, want message %q", lang, e, want)
			}
			e = wantError(t, acc.a.Do("POST", "/servers", map[string]any{"plan_id": 999, "location_id": 999}), 422, "validation_failed")
			if want := msg(lang, "validation.plan_unknown") + msg(lang, "error.more_errors", "count", 2); e.Message != want {
				t.Errorf("%s 422 with 3 errors: %q, want %q", lang, e.Message, want)
			}
			// 403
			e = wantError(t, env.Do(acc.a.NewToken("read"), "POST", "/projects", map[string]any{"name": "x"}, nil), 403, "missing_scope")
			if e.Message != msg(lang, "error.missing_scope", "scope", "servers") {
				t.Errorf("%s 403: %q", lang, e.Message)
			}
			// The account's language wins over Accept-Language.
			r = env.Do(acc.a.Token, "GET", "/servers/999999", nil, http.Header{"Accept-Language": {"fr, de;q=0.5"}})
			if e := wantError(t, r, 404, "not_found"); e.Message != msg(lang, "error.not_found") {
				t.Errorf("%s with Accept-Language fr: %q", lang, e.Message)
			}
		}
		// The catalogs really differ.
		if msg("de", "error.not_found") == msg("en", "error.not_found") || msg("fr", "error.not_found") == msg("en", "error.not_found") ||
			msg("de", "error.more_errors", "count", 1) == msg("en", "error.more_errors", "count", 1) {
			t.Error("German or French messages are English")
		}
	})

	t.Run("401 speaks Accept-Language", func(t *testing.T) {
		for _, tc := range []struct{ header, lang string }{
			{"de", "de"}, {"de-CH, en;q=0.5", "de"}, {"fr-FR", "fr"}, {"fr;q=0.9, de;q=1", "de"},
			{"xx", "en"}, {"", "en"}, {"!!!", "en"}, {"en-GB", "en"},
		} {
			h := http.Header{}
			if tc.header != "" {
				h.Set("Accept-Language", tc.header)
			}
			e := wantError(t, env.Do("berth_unknown", "GET", "/me", nil, h), 401, "unauthenticated")
			if e.Message != msg(tc.lang, "error.unauthenticated") {
				t.Errorf("Accept-Language %q: %q, want the %s message", tc.header, e.Message, tc.lang)
			}
		}
		if msg("de", "error.unauthenticated") == msg("en", "error.unauthenticated") {
			t.Error("German 401 message is English")
		}
		// 404 of an unknown path is before authentication too.
		r := env.Do("", "GET", "/nope", nil, http.Header{"Accept-Language": {"de"}})
		if e := wantError(t, r, 404, "not_found"); e.Message != msg("de", "error.path_not_found") {
			t.Errorf("unknown path in German: %q", e.Message)
		}
	})

	t.Run("unknown paths with a valid token", func(t *testing.T) {
		for _, req := range []struct {
			method, path string
			status       int
			id           string
		}{{"GET", "/nope", 404, "error.path_not_found"}, {"PUT", "/servers", 405, "error.method_not_allowed"}} {
			r := de.Do(req.method, req.path, nil)
			if r.Status != req.status {
				t.Fatalf("%s %s: %d", req.method, req.path, r.Status)
			}
			var e apiError
			r.JSON(t, &e)
			if e.Message != msg("de", req.id) {
				t.Errorf("%s %s for a German account: %q", req.method, req.path, e.Message)
			}
			if r.Header.Get("X-RateLimit-Remaining") == "" {
				t.Errorf("%s %s with a valid token: no rate-limit headers", req.method, req.path)
			}
		}
	})

	t.Run("codes are never translated", func(t *testing.T) {
		for _, a := range []*testenv.Account{en, de, fr} {
			for _, req := range []struct {
				method, path string
				body         any
				status       int
				code         string
			}{
				{"GET", "/servers/999999", nil, 404, "not_found"},
				{"POST", "/projects", map[string]any{}, 422, "validation_failed"},
				{"PUT", "/servers", nil, 405, "method_not_allowed"},
			} {
				wantError(t, a.Do(req.method, req.path, req.body), req.status, req.code)
			}
		}
	})

	t.Run("precedence", func(t *testing.T) {
		noPower := as(env, en, allScopesBut("power"))
		readOnly := as(env, en, "read")
		deSrv := order(t, de, baseOrder())
		enBusy := order(t, en, baseOrder()) // provisioning for ~30 s
		for _, tc := range []struct {
			name   string
			c      caller
			method string
			path   string
			body   any
			status int
			code   string
		}{
			{"422 body before 409", en, "POST", "/servers/" + name(enBusy) + "/power", map[string]any{"action": "dance"}, 422, "validation_failed"},
			{"422 invalid JSON before 409", en, "POST", "/servers/" + name(enBusy) + "/power", "[", 422, "validation_failed"},
			{"409 before 422 state (on while provisioning)", en, "POST", "/servers/" + name(enBusy) + "/power", map[string]any{"action": "on"}, 409, "busy"},
			{"409 before 422 state (reset while provisioning)", en, "POST", "/servers/" + name(enBusy) + "/power", map[string]any{"action": "reset"}, 409, "busy"},
			{"401 before 404 and 422", tokenCaller{env, ""}, "POST", "/servers/999999/power", "{", 401, "unauthenticated"},
			{"403 scope before 404 (another account's server)", noPower, "POST", "/servers/" + name(deSrv) + "/power", map[string]any{"action": "on"}, 403, "missing_scope"},
			{"403 scope before 404 (no server)", noPower, "POST", "/servers/999999/power", map[string]any{"action": "on"}, 403, "missing_scope"},
			{"403 scope before 422", readOnly, "POST", "/servers", "{", 403, "missing_scope"},
			{"403 scope before 403 suspended", noPower, "POST", "/servers/" + name(enSusp) + "/power", map[string]any{"action": "on"}, 403, "missing_scope"},
			{"404 before 422 (power)", en, "POST", "/servers/999999/power", map[string]any{"action": "dance"}, 404, "not_found"},
			{"404 before 422 (invalid JSON)", en, "POST", "/servers/999999/power", "{", 404, "not_found"},
			{"404 before 422 (PATCH)", en, "PATCH", "/servers/999999", map[string]any{"status": "running"}, 404, "not_found"},
			{"404 before 422 (project)", en, "PATCH", "/projects/999999", map[string]any{"nom": "x"}, 404, "not_found"},
			{"404 before 422 (recipe)", en, "PATCH", "/recipes/999999", "[]", 404, "not_found"},
			{"404 before 422 (operation wait)", en, "GET", "/operations/999999?wait=0", nil, 404, "not_found"},
			{"404 before 403 suspended (another account's suspended server)", de, "POST", "/servers/" + name(enSusp) + "/power", map[string]any{"action": "on"}, 404, "not_found"},
			{"403 suspended before 422 (action)", en, "POST", "/servers/" + name(enSusp) + "/power", map[string]any{"action": "dance"}, 403, "server_suspended"},
			{"403 suspended before 422 (invalid JSON)", en, "POST", "/servers/" + name(enSusp) + "/power", "{", 403, "server_suspended"},
			{"403 suspended before 422 (PATCH)", en, "PATCH", "/servers/" + name(enSusp), map[string]any{"status": "running"}, 403, "server_suspended"},
		} {
			r := tc.c.Do(tc.method, tc.path, tc.body)
			if r.Status != tc.status {
				t.Errorf("%s: %d %s, want %d %s", tc.name, r.Status, r.Body, tc.status, tc.code)
				continue
			}
			wantError(t, r, tc.status, tc.code)
		}
		// Nothing of the above reached the servers.
		for _, c := range []struct {
			a   *testenv.Account
			srv map[string]any
		}{{en, enBusy}, {de, deSrv}} {
			got := data(t, c.a.Do("GET", "/servers/"+name(c.srv), nil).Want(t, 200))
			if op, _ := got["operation"].(map[string]any); op != nil && op["type"] != "provision" {
				t.Errorf("server %s got operation %v", name(c.srv), op)
			}
			if got["status"] != "provisioning" && got["status"] != "running" {
				t.Errorf("server %s status %v", name(c.srv), got["status"])
			}
		}
	})
}

// rateHeaders reads the six rate-limit headers and checks that both spellings agree.
func rateHeaders(t testing.TB, r *testenv.Response) (limit, remaining int, reset int64) {
	t.Helper()
	get := func(name string) int64 {
		x, y := r.Header.Get("X-"+name), r.Header.Get(name)
		if x == "" || x != y {
			t.Fatalf("X-%s %q and %s %q (status %d)", name, x, name, y, r.Status)
		}
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			t.Fatalf("%s %q: %v", name, x, err)
		}
		return n
	}
	return int(get("RateLimit-Limit")), int(get("RateLimit-Remaining")), get("RateLimit-Reset")
}

func TestErrorRateLimit(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 5})
	a := env.NewAccount("en", "100", "")

	t.Run("per token", func(t *testing.T) {
		tok := a.NewToken("")
		start := time.Now().Unix()
		for i := range 5 {
			r := env.Do(tok, "GET", "/me", nil, nil).Want(t, 200)
			limit, remaining, reset := rateHeaders(t, r)
			if limit != 5 || remaining != 4-i {
				t.Errorf("request %d: limit %d remaining %d, want 5 and %d", i+1, limit, remaining, 4-i)
			}
			if reset < start+59 || reset > time.Now().Unix()+61 {
				t.Errorf("request %d: reset %d, now %d", i+1, reset, time.Now().Unix())
			}
		}
		r := env.Do(tok, "GET", "/me", nil, nil)
		e := wantError(t, r, 429, "rate_limited")
		retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || retry < 1 || retry > 60 {
			t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
		}
		if _, remaining, _ := rateHeaders(t, r); remaining != 0 {
			t.Errorf("remaining %d on a 429", remaining)
		}
		if e.Message != msg("en", "error.rate_limited", "seconds", retry) {
			t.Errorf("message %q", e.Message)
		}
		// 429 comes before 403 and 404.
		wantError(t, env.Do(tok, "GET", "/servers/999999", nil, nil), 429, "rate_limited")

		// Another token of the same account has its own budget.
		other := a.NewToken("")
		r = env.Do(other, "GET", "/me", nil, nil).Want(t, 200)
		if _, remaining, _ := rateHeaders(t, r); remaining != 4 {
			t.Errorf("another token: remaining %d, want 4", remaining)
		}
	})

	t.Run("429 before 403", func(t *testing.T) {
		ro := a.NewToken("read")
		for range 5 {
			env.Do(ro, "GET", "/me", nil, nil).Want(t, 200)
		}
		wantError(t, env.Do(ro, "POST", "/projects", map[string]any{"name": "x"}, nil), 429, "rate_limited")
	})

	t.Run("every outcome counts and carries the headers", func(t *testing.T) {
		tok := a.NewToken("read")
		for i, req := range []struct {
			method, path string
			body         any
			status       int
		}{
			{"GET", "/servers/999999", nil, 404},
			{"POST", "/projects", map[string]any{"name": "x"}, 403},
			{"GET", "/servers?status=bogus", nil, 422},
			{"GET", "/locations", nil, 200},
		} {
			r := env.Do(tok, req.method, req.path, req.body, nil)
			if r.Status != req.status {
				t.Fatalf("%s %s: %d", req.method, req.path, r.Status)
			}
			if limit, remaining, _ := rateHeaders(t, r); limit != 5 || remaining != 4-i {
				t.Errorf("%s %s: limit %d remaining %d, want 5 and %d", req.method, req.path, limit, remaining, 4-i)
			}
		}
	})

	t.Run("reset is when the budget is full again", func(t *testing.T) {
		tok := a.NewToken("")
		env.Do(tok, "GET", "/me", nil, nil).Want(t, 200)
		time.Sleep(2 * time.Second)
		before := time.Now()
		_, _, reset := rateHeaders(t, env.Do(tok, "GET", "/me", nil, nil).Want(t, 200))
		if reset < before.Add(time.Minute).Unix() {
			t.Errorf("reset %d, before the last request leaves the window (%d)", reset, before.Add(time.Minute).Unix())
		}
	})

	// Last: it uses up the address's budget for failed authentication.
	t.Run("unauthenticated per address", func(t *testing.T) {
		for i := range 60 {
			r := env.Do("berth_bogus", "GET", "/me", nil, nil)
			wantError(t, r, 401, "unauthenticated")
			if limit, remaining, _ := rateHeaders(t, r); limit != 60 || remaining != 59-i {
				t.Fatalf("failed authentication %d: limit %d remaining %d, want 60 and %d", i+1, limit, remaining, 59-i)
			}
		}
		for _, header := range []string{"Bearer berth_bogus", "", "Basic x"} {
			h := http.Header{"Accept-Language": {"de"}}
			if header != "" {
				h.Set("Authorization", header)
			}
			r := env.Do("", "GET", "/servers", nil, h)
			e := wantError(t, r, 429, "rate_limited")
			retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
			if err != nil || retry < 1 || retry > 60 {
				t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
			}
			if e.Message != msg("de", "error.rate_limited", "seconds", retry) {
				t.Errorf("429 before authentication not in the Accept-Language language: %q", e.Message)
			}
		}
		// openapi.json needs no token and is not limited.
		env.Do("", "GET", "/openapi.json", nil, nil).Want(t, 200)
	})

	t.Run("a limited address gets 429 before any token lookup", func(t *testing.T) {
		r := env.Do(a.NewToken(""), "GET", "/me", nil, nil)
		wantError(t, r, 429, "rate_limited")
	})
}
