package apitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/berthhq/berth/api"
)

// fakeTB records failures instead of failing the real test, so that the checker's
// failures can be asserted.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	failures []string
}

func (f *fakeTB) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, s)
}

func (f *fakeTB) Helper()                           {}
func (f *fakeTB) Error(args ...any)                 { f.record(fmt.Sprint(args...)) }
func (f *fakeTB) Errorf(format string, args ...any) { f.record(fmt.Sprintf(format, args...)) }
func (f *fakeTB) Fail()                             { f.record("Fail") }
func (f *fakeTB) Fatal(args ...any)                 { f.record(fmt.Sprint(args...)); runtime.Goexit() }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.record(fmt.Sprintf(format, args...))
	runtime.Goexit()
}
func (f *fakeTB) FailNow() { f.record("FailNow"); runtime.Goexit() }
func (f *fakeTB) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.failures) > 0
}

// capture runs fn with a fake TB on its own goroutine (so that Fatalf can end it)
// and returns what fn reported.
func capture(t *testing.T, fn func(tb testing.TB)) []string {
	t.Helper()
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f.failures
}

// mustPass fails t when fn reports anything.
func mustPass(t *testing.T, fn func(tb testing.TB)) {
	t.Helper()
	if got := capture(t, fn); len(got) > 0 {
		t.Fatalf("the checker failed a correct answer:\n%s", strings.Join(got, "\n"))
	}
}

// mustFail fails t unless fn reports something containing want.
func mustFail(t *testing.T, want string, fn func(tb testing.TB)) {
	t.Helper()
	got := capture(t, fn)
	if len(got) == 0 {
		t.Fatalf("the checker passed a wrong answer (want a failure mentioning %q)", want)
	}
	all := strings.Join(got, "\n")
	if !strings.Contains(all, want) {
		t.Fatalf("the checker failed, but not about %q:\n%s", want, all)
	}
}

const base = "http://127.0.0.1:8080/v1"

func jsonHeader(extra ...string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	for _, n := range []string{"X-RateLimit-Limit", "RateLimit-Limit"} {
		h.Set(n, "120")
	}
	for _, n := range []string{"X-RateLimit-Remaining", "RateLimit-Remaining"} {
		h.Set(n, "119")
	}
	for _, n := range []string{"X-RateLimit-Reset", "RateLimit-Reset"} {
		h.Set(n, "1795860000")
	}
	h.Set("X-Request-Id", "0f8fad5bd9cb469fa16570867728950e")
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return h
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

var started = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func sampleMe() api.Me {
	return api.Me{
		ID: 1, Email: "holder@example.com", Name: "Holder", Language: "en", Currency: "EUR",
		Credit: "12.5000", Blocked: false, Scopes: []string{"read", "power", "servers"},
		Token: api.TokenInfo{ID: 3, Name: "ci", ExpiresAt: nil},
	}
}

func ptr[T any](v T) *T { return &v }

func sampleServer() api.Server {
	return api.Server{
		ID: 42, Name: "server-a1b2c3", DisplayName: "web", ProjectID: nil, Status: "provisioning",
		Operation:  &api.OperationRef{ID: 7, Type: "provision", StartedAt: started},
		LocationID: 1, PlanID: 2, ImageID: 3, AppID: nil, RecipeID: ptr(int64(5)),
		VCPUs: 2, MemoryMB: 4096, DiskGB: 40, IPv4: ptr("203.0.113.7"), IPv6: nil,
		SSHKeyIDs: []int64{}, CreatedAt: started,
	}
}

func getMe() *http.Request { return httptest.NewRequest(http.MethodGet, base+"/me", nil) }

func TestCheckPassesCorrectGetMe(t *testing.T) {
	c := New(t)
	body := mustJSON(t, api.One[api.Me]{Data: sampleMe()})
	mustPass(t, func(tb testing.TB) { c.Check(tb, getMe(), 200, jsonHeader(), body) })
	// Through a real server and the checking Transport as well.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range jsonHeader() {
			w.Header()[k] = v
		}
		w.Write(body)
	}))
	defer srv.Close()
	mustPass(t, func(tb testing.TB) {
		client := &http.Client{Transport: c.Transport(tb, nil)}
		resp, err := client.Get(srv.URL + "/v1/me")
		if err != nil {
			tb.Fatalf("get: %v", err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if string(got) != string(body) {
			tb.Errorf("the Transport did not restore the body: %s", got)
		}
	})
}

func TestCheckFailsUndocumentedStatus(t *testing.T) {
	c := New(t)
	body := mustJSON(t, api.Error{Message: "Forbidden.", Code: "account_blocked"})
	// GET /me never answers 403 (a blocked account still reads /me).
	mustFail(t, "a status the document does not give this route", func(tb testing.TB) { c.Check(tb, getMe(), 403, jsonHeader(), body) })
	mustFail(t, "a status the document does not give this route", func(tb testing.TB) { c.Check(tb, getMe(), 502, jsonHeader(), body) })
}

func TestCheckFailsExtraField(t *testing.T) {
	c := New(t)
	var m map[string]any
	json.Unmarshal(mustJSON(t, api.One[api.Me]{Data: sampleMe()}), &m)
	m["data"].(map[string]any)["nickname"] = "x"
	mustFail(t, "nickname", func(tb testing.TB) { c.Check(tb, getMe(), 200, jsonHeader(), mustJSON(t, m)) })
	m = map[string]any{"data": sampleMe(), "meta": map[string]any{}}
	mustFail(t, "meta", func(tb testing.TB) { c.Check(tb, getMe(), 200, jsonHeader(), mustJSON(t, m)) })
}

func TestCheckFailsMoneyWithTwoDecimals(t *testing.T) {
	c := New(t)
	me := sampleMe()
	me.Credit = "12.50"
	body := mustJSON(t, api.One[api.Me]{Data: me})
	mustFail(t, "credit", func(tb testing.TB) { c.Check(tb, getMe(), 200, jsonHeader(), body) })
}

func TestCheckFailsOtherMismatches(t *testing.T) {
	c := New(t)
	good := mustJSON(t, api.One[api.Me]{Data: sampleMe()})

	h := jsonHeader()
	h.Del("RateLimit-Remaining")
	mustFail(t, "RateLimit-Remaining", func(tb testing.TB) { c.Check(tb, getMe(), 200, h, good) })
	for _, id := range [][]string{nil, {""}, {strings.Repeat("x", 129)}, {"a b"}, {"é"}} {
		h := jsonHeader()
		h["X-Request-Id"] = id
		mustFail(t, "X-Request-Id", func(tb testing.TB) { c.Check(tb, getMe(), 200, h, good) })
	}
	h = jsonHeader("X-Request-Id", strings.Repeat("~", 128))
	mustPass(t, func(tb testing.TB) { c.Check(tb, getMe(), 200, h, good) })

	me := sampleMe()
	me.Scopes = nil // marshals as null
	mustFail(t, "scopes", func(tb testing.TB) {
		c.Check(tb, getMe(), 200, jsonHeader(), mustJSON(tb, api.One[api.Me]{Data: me}))
	})

	mustFail(t, "Content-Type", func(tb testing.TB) {
		h := jsonHeader()
		h.Del("Content-Type")
		c.Check(tb, getMe(), 200, h, good)
	})

	del := httptest.NewRequest(http.MethodDelete, base+"/servers/server-a1b2c3", nil)
	mustPass(t, func(tb testing.TB) { c.Check(tb, del, 204, jsonHeader(), nil) })
	mustFail(t, "no body", func(tb testing.TB) { c.Check(tb, del, 204, jsonHeader(), []byte(`{}`)) })
	mustFail(t, "a status the document does not give this route", func(tb testing.TB) { c.Check(tb, del, 200, jsonHeader(), nil) })

	unknown := httptest.NewRequest(http.MethodGet, base+"/nothing-here", nil)
	mustFail(t, "matches no documented route", func(tb testing.TB) { c.Check(tb, unknown, 200, jsonHeader(), good) })
}

func TestCheckServerAnswers(t *testing.T) {
	c := New(t)
	srv := sampleServer()
	get := httptest.NewRequest(http.MethodGet, base+"/servers/server-a1b2c3", nil)
	post := httptest.NewRequest(http.MethodPost, base+"/servers", strings.NewReader(`{"plan_id":2,"location_id":1,"image_id":3}`))
	list := httptest.NewRequest(http.MethodGet, base+"/servers?status=running&project_id=4", nil)
	power := httptest.NewRequest(http.MethodPost, base+"/servers/42/power", strings.NewReader(`{"action":"on"}`))

	mustPass(t, func(tb testing.TB) {
		c.Check(tb, get, 200, jsonHeader(), mustJSON(tb, api.One[api.Server]{Data: srv}))
		c.Check(tb, post, 201, jsonHeader(), mustJSON(tb, api.One[api.Server]{Data: srv}))
		c.Check(tb, list, 200, jsonHeader(), mustJSON(tb, api.List[api.Server]{Data: []api.Server{srv}}))
		c.Check(tb, list, 200, jsonHeader(), []byte(`{"data":[]}`))
		busy := api.Error{Message: "The server is busy.", Code: "busy", Operation: srv.Operation}
		c.Check(tb, power, 409, jsonHeader("Retry-After", "5"), mustJSON(tb, busy))
		invalid := api.Error{Message: "Bad action.", Code: "validation_failed",
			Errors: map[string][]string{"action": {"Bad action."}}}
		c.Check(tb, power, 422, jsonHeader(), mustJSON(tb, invalid))
		suspended := api.Error{Message: "Suspended.", Code: "server_suspended"}
		c.Check(tb, power, 403, jsonHeader(), mustJSON(tb, suspended))
		c.Check(tb, get, 401, jsonHeader("WWW-Authenticate", `Bearer realm="berth"`), mustJSON(tb, api.Error{Message: "Unauthenticated.", Code: "unauthenticated"}))
		c.Check(tb, get, 429, jsonHeader("Retry-After", "30"), mustJSON(tb, api.Error{Message: "Slow down.", Code: "rate_limited"}))
	})

	bad := srv
	bad.Name = "server-ABC"
	mustFail(t, "name", func(tb testing.TB) {
		c.Check(tb, get, 200, jsonHeader(), mustJSON(tb, api.One[api.Server]{Data: bad}))
	})
	bad = srv
	bad.Status = "paused"
	mustFail(t, "status", func(tb testing.TB) {
		c.Check(tb, get, 200, jsonHeader(), mustJSON(tb, api.One[api.Server]{Data: bad}))
	})
	mustFail(t, "Retry-After", func(tb testing.TB) {
		busy := api.Error{Message: "The server is busy.", Code: "busy", Operation: srv.Operation}
		c.Check(tb, power, 409, jsonHeader(), mustJSON(tb, busy))
	})
	// A 409 without `operation` is allowed (an Idempotency-Key still in use); one with
	// another code is not.
	c.Check(t, power, 409, jsonHeader("Retry-After", "1"), mustJSON(t, api.Error{Message: "Busy.", Code: "busy"}))
	mustFail(t, "code", func(tb testing.TB) {
		c.Check(tb, power, 409, jsonHeader("Retry-After", "5"), mustJSON(tb, api.Error{Message: "Busy.", Code: "not_found"}))
	})
	mustFail(t, "errors", func(tb testing.TB) {
		c.Check(tb, power, 422, jsonHeader(), mustJSON(tb, api.Error{Message: "Bad.", Code: "validation_failed"}))
	})
	mustFail(t, "code", func(tb testing.TB) {
		c.Check(tb, get, 404, jsonHeader(), mustJSON(tb, api.Error{Message: "Gone.", Code: "busy"}))
	})
	// A suspended server still answers GETs: GET /servers/{id} has no server_suspended.
	mustFail(t, "code", func(tb testing.TB) {
		c.Check(tb, get, 403, jsonHeader(), mustJSON(tb, api.Error{Message: "Suspended.", Code: "server_suspended"}))
	})
}

// TestCheckNullableFields: the fields that are null in everyday answers (an idle
// server's operation, a billing without budget, a top-up's period_start) pass,
// while what is not null keeps being checked against its schema (issue 14: these
// were `nullable` beside a bare allOf, which OpenAPI 3.0 leaves not nullable).
func TestCheckNullableFields(t *testing.T) {
	c := New(t)
	get := httptest.NewRequest(http.MethodGet, base+"/servers/42", nil)
	idle := sampleServer()
	idle.Status, idle.Operation = "running", nil
	mustPass(t, func(tb testing.TB) {
		c.Check(tb, get, 200, jsonHeader(), mustJSON(tb, api.One[api.Server]{Data: idle}))
	})
	withOp := func(op string) []byte {
		b := mustJSON(t, api.One[api.Server]{Data: idle})
		return bytes.Replace(b, []byte(`"operation":null`), []byte(`"operation":`+op), 1)
	}
	mustFail(t, "started_at", func(tb testing.TB) { c.Check(tb, get, 200, jsonHeader(), withOp(`{"id":7,"type":"power"}`)) })
	mustFail(t, "type", func(tb testing.TB) {
		c.Check(tb, get, 200, jsonHeader(), withOp(`{"id":7,"type":"nap","started_at":"2026-11-22T10:00:00Z"}`))
	})
	mustFail(t, "operation", func(tb testing.TB) { c.Check(tb, get, 200, jsonHeader(), withOp(`"busy"`)) })

	billing := httptest.NewRequest(http.MethodGet, base+"/billing", nil)
	withBudget := func(budget string) []byte {
		return []byte(`{"data":{"credit":"10.0000","currency":"EUR","hourly_burn":"0.0000","monthly_burn":"0.0000",` +
			`"days_left":null,"month_to_date":"0.0000","budget":` + budget + `}}`)
	}
	mustPass(t, func(tb testing.TB) {
		c.Check(tb, billing, 200, jsonHeader(), withBudget(`null`))
		c.Check(tb, billing, 200, jsonHeader(), withBudget(`"50.0000"`))
	})
	mustFail(t, "budget", func(tb testing.TB) { c.Check(tb, billing, 200, jsonHeader(), withBudget(`"50.00"`)) })
	mustFail(t, "budget", func(tb testing.TB) { c.Check(tb, billing, 200, jsonHeader(), withBudget(`50`)) })

	ledger := httptest.NewRequest(http.MethodGet, base+"/billing/transactions", nil)
	withPeriod := func(period string) []byte {
		return []byte(`{"data":[{"id":1,"type":"topup","amount":"10.0000","balance_after":"10.0000","description":"Top-up",` +
			`"resource":null,"period_start":` + period + `,"created_at":"2026-11-22T10:00:00Z"}],` +
			`"links":{"first":"http://x/v1/billing/transactions?page=1","last":"http://x/v1/billing/transactions?page=1","prev":null,"next":null},` +
			`"meta":{"current_page":1,"from":1,"last_page":1,"path":"http://x/v1/billing/transactions","per_page":50,"to":1,"total":1}}`)
	}
	mustPass(t, func(tb testing.TB) {
		c.Check(tb, ledger, 200, jsonHeader(), withPeriod(`null`))
		c.Check(tb, ledger, 200, jsonHeader(), withPeriod(`"2026-11-22T10:00:00Z"`))
	})
	mustFail(t, "period_start", func(tb testing.TB) { c.Check(tb, ledger, 200, jsonHeader(), withPeriod(`"yesterday"`)) })
}

// TestCheckMetricPoints: a point is [integer time, number value], both at least 0.
func TestCheckMetricPoints(t *testing.T) {
	c := New(t)
	get := httptest.NewRequest(http.MethodGet, base+"/servers/42/metrics", nil)
	withCPU := func(points string) []byte {
		return []byte(`{"data":{"range":"1h","step_seconds":60,"cpu":` + points +
			`,"network":{"in":[],"out":[]},"disk":{"read":[],"write":[]}}}`)
	}
	mustPass(t, func(tb testing.TB) {
		c.Check(tb, get, 200, jsonHeader(), withCPU(`[]`))
		c.Check(tb, get, 200, jsonHeader(), withCPU(`[[1795514400,12.5],[1795514460,0],[1795514520,100]]`))
	})
	mustFail(t, "cpu", func(tb testing.TB) { c.Check(tb, get, 200, jsonHeader(), withCPU(`[[1795514400]]`)) })
	mustFail(t, "cpu", func(tb testing.TB) { c.Check(tb, get, 200, jsonHeader(), withCPU(`[[1795514400,1,2]]`)) })
	mustFail(t, "cpu", func(tb testing.TB) { c.Check(tb, get, 200, jsonHeader(), withCPU(`[["1795514400",1]]`)) })
	mustFail(t, "cpu", func(tb testing.TB) { c.Check(tb, get, 200, jsonHeader(), withCPU(`[[1795514400,-1]]`)) })
}

func TestCheckUndocumented(t *testing.T) {
	c := New(t)
	unknown := httptest.NewRequest(http.MethodGet, base+"/nothing-here", nil)
	wrongMethod := httptest.NewRequest(http.MethodPut, base+"/servers/42", nil)
	notFound := mustJSON(t, api.Error{Message: "Not found.", Code: "not_found"})
	notAllowed := mustJSON(t, api.Error{Message: "Method not allowed.", Code: "method_not_allowed"})

	mustPass(t, func(tb testing.TB) {
		c.CheckUndocumented(tb, unknown, 404, jsonHeader(), notFound)
		c.CheckUndocumented(tb, wrongMethod, 405, jsonHeader("Allow", "GET, PATCH, DELETE"), notAllowed)
	})
	mustFail(t, "Allow", func(tb testing.TB) { c.CheckUndocumented(tb, wrongMethod, 405, jsonHeader(), notAllowed) })
	for _, id := range [][]string{nil, {strings.Repeat("x", 129)}} {
		h := jsonHeader()
		h["X-Request-Id"] = id
		mustFail(t, "X-Request-Id", func(tb testing.TB) { c.CheckUndocumented(tb, unknown, 404, h, notFound) })
	}
	mustFail(t, "only 401, 403 (blocked), 429, 404 and 405", func(tb testing.TB) { c.CheckUndocumented(tb, unknown, 200, jsonHeader(), notFound) })
	mustFail(t, "not an Error", func(tb testing.TB) {
		c.CheckUndocumented(tb, unknown, 404, jsonHeader(), []byte(`{"error":"not found"}`))
	})
	mustFail(t, "use Check", func(tb testing.TB) { c.CheckUndocumented(tb, getMe(), 404, jsonHeader(), notFound) })

	// The Transport applies the same rules to answers for unknown paths.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "fake-1")
		if r.URL.Path == "/v1/teapot" {
			w.WriteHeader(418)
			w.Write([]byte(`{}`))
			return
		}
		w.WriteHeader(404)
		w.Write(notFound)
	}))
	defer srv.Close()
	mustPass(t, func(tb testing.TB) {
		resp, err := (&http.Client{Transport: c.Transport(tb, nil)}).Get(srv.URL + "/v1/nothing-here")
		if err == nil {
			resp.Body.Close()
		}
	})
	mustFail(t, "matches no documented route", func(tb testing.TB) {
		resp, err := (&http.Client{Transport: c.Transport(tb, nil)}).Get(srv.URL + "/v1/teapot")
		if err == nil {
			resp.Body.Close()
		}
	})
}

func TestOpenAPIJSON(t *testing.T) {
	b, err := api.OpenAPIJSON()
	if err != nil {
		t.Fatalf("OpenAPIJSON: %v", err)
	}
	if !json.Valid(b) {
		t.Fatalf("OpenAPIJSON returned invalid JSON")
	}
	if !strings.Contains(string(b), `"openapi"`) {
		t.Fatalf(`OpenAPIJSON lacks "openapi"`)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openapi"] != "3.0.3" {
		t.Errorf("openapi = %v, want 3.0.3", doc["openapi"])
	}
	// The JSON form loads and validates like the YAML.
	jd, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatalf("load JSON: %v", err)
	}
	if err := jd.Validate(t.Context()); err != nil {
		t.Fatalf("validate JSON: %v", err)
	}
}

// TestOperations checks the route table: every operation has an operationId and
// its scope, both in x-berth-scope and in the description, and the statuses the
// contract gives it.
func TestOperations(t *testing.T) {
	doc := New(t).Doc()
	type op struct {
		scope    string
		statuses []string
	}
	want := map[string]op{
		"GET /openapi.json":          {"", []string{"200", "500"}},
		"GET /me":                    {"read", []string{"200", "401", "429", "500", "503"}},
		"PATCH /me":                  {"read", []string{"200", "401", "403", "422", "429", "500", "503"}},
		"GET /billing":               {"read", []string{"200", "401", "403", "429", "500", "503"}},
		"GET /billing/transactions":  {"read", []string{"200", "401", "403", "422", "429", "500", "503"}},
		"GET /locations":             {"read", []string{"200", "401", "403", "429", "500", "503"}},
		"GET /apps":                  {"read", []string{"200", "401", "403", "429", "500", "503"}},
		"GET /servers":               {"read", []string{"200", "401", "403", "422", "429", "500", "503"}},
		"POST /servers":              {"servers", []string{"201", "401", "403", "409", "422", "429", "500", "503"}},
		"GET /servers/{id}":          {"read", []string{"200", "401", "403", "404", "429", "500", "503"}},
		"PATCH /servers/{id}":        {"servers", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"DELETE /servers/{id}":       {"servers", []string{"204", "401", "403", "404", "409", "429", "500", "503"}},
		"POST /servers/{id}/power":   {"power", []string{"200", "401", "403", "404", "409", "422", "429", "500", "503"}},
		"POST /servers/{id}/console": {"power", []string{"201", "401", "403", "404", "409", "422", "429", "500", "503"}},
		// The console's WebSocket: its ticket is the credential, its success 101.
		"GET /servers/{id}/console":                           {"", []string{"101", "401", "403", "404", "409", "422", "426", "429", "500", "503"}},
		"POST /servers/{id}/reinstall":                        {"servers", []string{"200", "401", "403", "404", "409", "422", "429", "500", "503"}},
		"GET /servers/{id}/rescale-options":                   {"read", []string{"200", "401", "403", "404", "429", "500", "503"}},
		"GET /servers/{id}/metrics":                           {"read", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"POST /servers/{id}/rescale":                          {"servers", []string{"200", "401", "403", "404", "409", "422", "429", "500", "503"}},
		"GET /servers/{id}/operations":                        {"read", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"GET /servers/{id}/snapshots":                         {"read", []string{"200", "401", "403", "404", "429", "500", "503"}},
		"POST /servers/{id}/snapshots":                        {"snapshots", []string{"201", "401", "403", "404", "409", "422", "429", "500", "503"}},
		"POST /servers/{id}/snapshots/{snapshot}/restore":     {"snapshots", []string{"200", "401", "403", "404", "409", "422", "429", "500", "503"}},
		"DELETE /servers/{id}/snapshots/{snapshot}":           {"snapshots", []string{"202", "401", "403", "404", "429", "500", "503"}},
		"GET /ssh-keys":                                       {"read", []string{"200", "401", "403", "429", "500", "503"}},
		"POST /ssh-keys":                                      {"ssh-keys", []string{"201", "401", "403", "409", "422", "429", "500", "503"}},
		"DELETE /ssh-keys/{id}":                               {"ssh-keys", []string{"204", "401", "403", "404", "429", "500", "503"}},
		"GET /projects":                                       {"read", []string{"200", "401", "403", "429", "500", "503"}},
		"POST /projects":                                      {"servers", []string{"201", "401", "403", "409", "422", "429", "500", "503"}},
		"PATCH /projects/{id}":                                {"servers", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"DELETE /projects/{id}":                               {"servers", []string{"204", "401", "403", "404", "429", "500", "503"}},
		"GET /volumes":                                        {"read", []string{"200", "401", "403", "422", "429", "500", "503"}},
		"POST /volumes":                                       {"storage", []string{"201", "401", "403", "409", "422", "429", "500", "503"}},
		"GET /volumes/{id}":                                   {"read", []string{"200", "401", "403", "404", "429", "500", "503"}},
		"PATCH /volumes/{id}":                                 {"storage", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"DELETE /volumes/{id}":                                {"storage", []string{"204", "401", "403", "404", "409", "422", "429", "500", "503"}},
		"POST /volumes/{id}/attach":                           {"storage", []string{"200", "401", "403", "404", "409", "422", "429", "500", "503"}},
		"POST /volumes/{id}/detach":                           {"storage", []string{"200", "401", "403", "404", "409", "422", "429", "500", "503"}},
		"POST /volumes/{id}/resize":                           {"storage", []string{"200", "401", "403", "404", "409", "422", "429", "500", "503"}},
		"GET /domains":                                        {"read", []string{"200", "401", "403", "429", "500", "503"}},
		"POST /domains":                                       {"domains", []string{"201", "401", "403", "422", "429", "500", "503"}},
		"GET /domains/{id}":                                   {"read", []string{"200", "401", "403", "404", "429", "500", "503"}},
		"PATCH /domains/{id}":                                 {"domains", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"DELETE /domains/{id}":                                {"domains", []string{"204", "401", "403", "404", "429", "500", "503"}},
		"GET /domains/{id}/rrsets":                            {"read", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"GET /domains/{id}/rrsets/{name}/{type}":              {"read", []string{"200", "401", "403", "404", "429", "500", "503"}},
		"PUT /domains/{id}/rrsets/{name}/{type}":              {"domains", []string{"200", "201", "401", "403", "404", "422", "429", "500", "503"}},
		"DELETE /domains/{id}/rrsets/{name}/{type}":           {"domains", []string{"204", "401", "403", "404", "422", "429", "500", "503"}},
		"GET /domains/{id}/zone-file":                         {"read", []string{"200", "401", "403", "404", "429", "500", "503"}},
		"PUT /domains/{id}/zone-file":                         {"domains", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"GET /licenses":                                       {"read", []string{"200", "401", "403", "429", "500", "503"}},
		"GET /servers/{id}/licenses":                          {"read", []string{"200", "401", "403", "404", "429", "500", "503"}},
		"POST /servers/{id}/licenses":                         {"licenses", []string{"201", "401", "403", "404", "422", "429", "500", "503"}},
		"DELETE /servers/{id}/licenses/{license}":             {"licenses", []string{"204", "401", "403", "404", "422", "429", "500", "503"}},
		"GET /tickets":                                        {"read", []string{"200", "401", "403", "422", "429", "500", "503"}},
		"POST /tickets":                                       {"tickets", []string{"201", "401", "403", "422", "429", "500", "503"}},
		"GET /tickets/{id}":                                   {"read", []string{"200", "401", "403", "404", "429", "500", "503"}},
		"POST /tickets/{id}/messages":                         {"tickets", []string{"201", "401", "403", "404", "422", "429", "500", "503"}},
		"POST /tickets/{id}/close":                            {"tickets", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"POST /attachments":                                   {"tickets", []string{"201", "401", "403", "422", "429", "500", "503"}},
		"GET /attachments/{id}":                               {"read", []string{"200", "401", "403", "404", "429", "500", "503"}},
		"GET /servers/{id}/rdns":                              {"read", []string{"200", "401", "403", "404", "429", "500", "503"}},
		"PUT /servers/{id}/rdns":                              {"domains", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"GET /recipes":                                        {"read", []string{"200", "401", "403", "429", "500", "503"}},
		"POST /recipes":                                       {"recipes", []string{"201", "401", "403", "409", "422", "429", "500", "503"}},
		"GET /recipes/{id}":                                   {"read", []string{"200", "401", "403", "404", "429", "500", "503"}},
		"PATCH /recipes/{id}":                                 {"recipes", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"DELETE /recipes/{id}":                                {"recipes", []string{"204", "401", "403", "404", "429", "500", "503"}},
		"GET /operations":                                     {"read", []string{"200", "401", "403", "422", "429", "500", "503"}},
		"GET /operations/{id}":                                {"read", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"GET /events":                                         {"read", []string{"200", "401", "403", "422", "429", "500", "503"}},
		"GET /webhooks":                                       {"read", []string{"200", "401", "403", "429", "500", "503"}},
		"POST /webhooks":                                      {"all", []string{"201", "401", "403", "422", "429", "500", "503"}},
		"GET /webhooks/{id}":                                  {"read", []string{"200", "401", "403", "404", "429", "500", "503"}},
		"PATCH /webhooks/{id}":                                {"all", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"DELETE /webhooks/{id}":                               {"all", []string{"204", "401", "403", "404", "429", "500", "503"}},
		"POST /webhooks/{id}/test":                            {"all", []string{"202", "401", "403", "404", "422", "429", "500", "503"}},
		"POST /webhooks/{id}/rotate-secret":                   {"all", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"GET /webhooks/{id}/deliveries":                       {"read", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"POST /webhooks/{id}/deliveries/{delivery}/redeliver": {"all", []string{"202", "401", "403", "404", "422", "429", "500", "503"}},
		// The sandbox (under /sandbox/v1, only with serve --sandbox: 404 without it).
		"GET /faults":              {"any", []string{"200", "401", "403", "404", "429", "500", "503"}},
		"POST /faults":             {"any", []string{"201", "401", "403", "404", "422", "429", "500", "503"}},
		"DELETE /faults":           {"any", []string{"204", "401", "403", "404", "429", "500", "503"}},
		"DELETE /faults/{id}":      {"any", []string{"204", "401", "403", "404", "429", "500", "503"}},
		"GET /requests":            {"any", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"GET /clock":               {"any", []string{"200", "401", "403", "404", "429", "500", "503"}},
		"POST /reset":              {"any", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"POST /seed":               {"any", []string{"201", "401", "403", "404", "422", "429", "500", "503"}},
		"POST /clock":              {"any", []string{"200", "401", "403", "404", "422", "429", "500", "503"}},
		"POST /tickets/{id}/reply": {"any", []string{"201", "401", "403", "404", "422", "429", "500", "503"}},
	}
	seen := map[string]bool{}
	ids := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, o := range item.Operations() {
			key := method + " " + path
			seen[key] = true
			// A sandbox path is under /sandbox/v1, and 404 without serve --sandbox.
			sandbox := len(item.Servers) == 1 && item.Servers[0].URL == "/sandbox/v1"
			if len(item.Servers) > 0 && !sandbox {
				t.Errorf("%s: servers %v; only the sandbox's paths have servers of their own, [/sandbox/v1]", key, item.Servers)
			}
			if sandbox && !slices.Contains(o.Tags, "sandbox") && method != http.MethodOptions {
				t.Errorf("%s: a sandbox path must be tagged sandbox", key)
			}
			if method == http.MethodOptions {
				// Every path answers OPTIONS alike (its methods; CORS preflights).
				_, only204 := o.Responses.Map()["204"]
				n := 1
				if _, off := o.Responses.Map()["404"]; sandbox && off {
					n = 2
				}
				if o.OperationID == "" || ids[o.OperationID] || o.Security == nil || len(*o.Security) != 0 ||
					o.Responses.Len() != n || !only204 {
					t.Errorf("%s: want a unique operationId, security: [] and only 204 (and 404 on a sandbox path)", key)
				}
				if only204 {
					checkRequestIDHeader(t, key+" 204", o.Responses.Status(204).Value)
				}
				ids[o.OperationID] = true
				continue
			}
			if item.Options == nil {
				t.Errorf("%s: its path has no OPTIONS", key)
			}
			w, ok := want[key]
			if !ok {
				t.Errorf("%s is documented but not in this test's route table", key)
				continue
			}
			if o.OperationID == "" || ids[o.OperationID] {
				t.Errorf("%s: operationId %q missing or not unique", key, o.OperationID)
			}
			ids[o.OperationID] = true
			scope, _ := o.Extensions["x-berth-scope"].(string)
			if scope != w.scope {
				t.Errorf("%s: x-berth-scope %q, want %q", key, scope, w.scope)
			}
			if w.scope != "" && !strings.Contains(o.Description, "Scope: `"+w.scope+"`") {
				t.Errorf("%s: description does not name scope %q", key, w.scope)
			}
			if w.scope == "" && (o.Security == nil || len(*o.Security) != 0) {
				t.Errorf("%s: must have security: []", key)
			}
			var got []string
			for status := range o.Responses.Map() {
				got = append(got, status)
			}
			sort.Strings(got)
			if !slices.Equal(got, w.statuses) {
				t.Errorf("%s: statuses %v, want %v", key, got, w.statuses)
			}
			// Every response of an authenticated route carries the rate-limit headers.
			for status, r := range o.Responses.Map() {
				checkRequestIDHeader(t, key+" "+status, r.Value)
				if w.scope == "" || status == "404" && sandbox {
					// A sandbox 404 without --sandbox is an unknown path's: the headers
					// come only with a token (SandboxNotFound).
					continue
				}
				for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
					"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
					if hr := r.Value.Headers[h]; hr == nil || !hr.Value.Required {
						t.Errorf("%s %s: header %s missing or not required", key, status, h)
					}
				}
				_, retry := r.Value.Headers["Retry-After"]
				if wantRetry := status == "409" || status == "429" || status == "503"; retry != wantRetry {
					t.Errorf("%s %s: Retry-After present = %v, want %v", key, status, retry, wantRetry)
				}
			}
		}
	}
	for key := range want {
		if !seen[key] {
			t.Errorf("%s is not documented", key)
		}
	}
}

// checkRequestIDHeader fails t unless response documents the X-Request-Id every
// answer carries, as the shared header.
func checkRequestIDHeader(t *testing.T, what string, response *openapi3.Response) {
	t.Helper()
	hr := response.Headers["X-Request-Id"]
	if hr == nil || hr.Ref != "#/components/headers/X-Request-Id" || !hr.Value.Required {
		t.Errorf("%s: X-Request-Id not documented as #/components/headers/X-Request-Id", what)
	}
}

// TestSchemasMatchGoTypes checks every schema against its type in api/types.go:
// the same JSON names; for response types, every field not tagged omitempty is
// required and pointer fields are exactly the nullable ones.
func TestSchemasMatchGoTypes(t *testing.T) {
	doc := New(t).Doc()
	responses := map[string]any{
		"Error": api.Error{}, "TokenInfo": api.TokenInfo{}, "Me": api.Me{}, "Plan": api.Plan{},
		"Image": api.Image{}, "Location": api.Location{}, "App": api.App{},
		"OperationRef": api.OperationRef{}, "Operation": api.Operation{}, "Server": api.Server{},
		"SSHKey": api.SSHKey{}, "Project": api.Project{}, "Recipe": api.Recipe{},
		"SandboxFault": api.SandboxFault{}, "SandboxRequest": api.SandboxRequest{}, "SandboxClock": api.Clock{},
		"SandboxSeeded": api.SandboxSeeded{}, "Volume": api.Volume{}, "VolumeResponse": api.One[api.Volume]{},
		"VolumeList": api.List[api.Volume]{},
	}
	requests := map[string]any{
		"ServerCreate": api.ServerCreate{}, "ServerUpdate": api.ServerUpdate{},
		"PowerRequest": api.PowerRequest{}, "SSHKeyCreate": api.SSHKeyCreate{},
		"ProjectWrite": api.ProjectWrite{}, "RecipeWrite": api.RecipeWrite{}, "RecipeUpdate": api.RecipeWrite{},
		"SandboxFaultCreate": api.SandboxFaultCreate{}, "SandboxClockAdvance": api.ClockAdvance{},
		"SandboxReset": api.SandboxReset{}, "SandboxSeed": api.SandboxSeed{}, "SandboxSeedServer": api.SandboxSeedServer{},
		"SandboxSeedVolume": api.SandboxSeedVolume{}, "VolumeCreate": api.VolumeCreate{}, "VolumeUpdate": api.VolumeUpdate{},
		"VolumeAttach": api.VolumeAttach{}, "VolumeResize": api.VolumeResize{},
	}
	for name, v := range responses {
		checkSchema(t, doc, name, v, true)
	}
	for name, v := range requests {
		checkSchema(t, doc, name, v, false)
	}
	wantRequired := map[string][]string{
		"ServerCreate": {"plan_id", "location_id"}, "ServerUpdate": nil, "PowerRequest": {"action"},
		"SSHKeyCreate": {"name", "public_key"}, "ProjectWrite": {"name"},
		"RecipeWrite": {"name", "script"}, "RecipeUpdate": nil, "SandboxFaultCreate": nil,
		"SandboxClockAdvance": {"advance"}, "VolumeCreate": {"name", "size_gb"}, "VolumeUpdate": nil,
		"VolumeAttach": {"server_id"}, "VolumeResize": {"size_gb"},
	}
	for name, want := range wantRequired {
		if got := doc.Components.Schemas[name].Value.Required; !slices.Equal(got, want) {
			t.Errorf("%s: required %v, want %v", name, got, want)
		}
	}
}

// checkSchema checks the schema name against v, a value of its type in api/types.go,
// as TestSchemasMatchGoTypes says.
func checkSchema(t *testing.T, doc *openapi3.T, name string, v any, response bool) {
	t.Helper()
	ref := doc.Components.Schemas[name]
	if ref == nil {
		t.Errorf("schema %s is missing", name)
		return
	}
	s := ref.Value
	if s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has {
		t.Errorf("%s: additionalProperties must be false", name)
	}
	typ := reflect.TypeOf(v)
	var fields []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		jname, opts, _ := strings.Cut(tag, ",")
		if jname == "" || jname == "-" {
			continue
		}
		fields = append(fields, jname)
		prop := s.Properties[jname]
		if prop == nil {
			t.Errorf("%s: field %s is not a property", name, jname)
			continue
		}
		checkField(t, name+"."+jname, f, opts, prop.Value, slices.Contains(s.Required, jname), response)
	}
	for p := range s.Properties {
		if !slices.Contains(fields, p) {
			t.Errorf("%s: property %s has no field in api/types.go", name, p)
		}
	}
}

// checkField checks the property at (schema.field) against its field f (json tag
// options opts): required, nullable, as checkSchema says.
func checkField(t *testing.T, at string, f reflect.StructField, opts string, prop *openapi3.Schema, required, response bool) {
	t.Helper()
	if f.Type == reflect.TypeFor[json.RawMessage]() {
		// Any JSON value, null included: every member of its anyOf is nullable.
		if len(prop.AnyOf) == 0 || slices.ContainsFunc(prop.AnyOf, func(m *openapi3.SchemaRef) bool { return !m.Value.Nullable }) {
			t.Errorf("%s: any JSON value: want an anyOf of nullable types", at)
		}
		if response && !required {
			t.Errorf("%s: not required", at)
		}
		return
	}
	if !response {
		if wantNull := strings.HasPrefix(f.Type.Name(), "Nullable["); prop.Nullable != wantNull {
			t.Errorf("%s: nullable = %v, want %v", at, prop.Nullable, wantNull)
		}
		return
	}
	omit := strings.Contains(opts, "omitempty")
	if required == omit {
		t.Errorf("%s: required = %v, but omitempty = %v", at, required, omit)
	}
	isPtr := f.Type.Kind() == reflect.Pointer
	if isPtr && !omit && !prop.Nullable {
		t.Errorf("%s: pointer field must be nullable", at)
	}
	if !isPtr && prop.Nullable {
		t.Errorf("%s: non-pointer field must not be nullable", at)
	}
}
