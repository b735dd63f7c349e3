package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute/simdriver"
	"github.com/berthhq/berth/internal/sandbox"
	"github.com/berthhq/berth/internal/testenv"
)

// sandboxPaths are paths of the sandbox API (docs/api.md, The sandbox), with the methods
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

// sandboxEnv is a Berth under serve --sandbox. Its accounts' rate limit is high
// enough for the journal's 1,000 requests unless a test sets its own.
func sandboxEnv(t *testing.T, opts ...testenv.Options) *testenv.Env {
	t.Helper()
	var o testenv.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Sandbox = true
	if o.RateLimit == 0 {
		o.RateLimit = 1 << 20
	}
	return testenv.New(t, o)
}

// addFault adds a fault and checks the 201 and what it echoes.
func addFault(t testing.TB, a *testenv.Account, body map[string]any) map[string]any {
	t.Helper()
	f := data(t, a.Sandbox("POST", "/faults", body).Want(t, http.StatusCreated))
	if num(t, f["id"]) < 1 {
		t.Fatalf("fault without an id: %v", f)
	}
	return f
}

// faultOf is the account's fault id as GET /sandbox/v1/faults lists it (nil: none).
func faultOf(t testing.TB, a *testenv.Account, id any) map[string]any {
	t.Helper()
	for _, f := range items(t, a.Sandbox("GET", "/faults", nil).Want(t, http.StatusOK)) {
		if f["id"] == id {
			return f
		}
	}
	return nil
}

// opEnd waits for an operation to end and returns it, however it ended.
func opEnd(t testing.TB, c caller, id int64) map[string]any {
	t.Helper()
	for range 3 {
		op := data(t, c.Do("GET", fmt.Sprintf("/operations/%d?wait=20", id), nil).Want(t, http.StatusOK))
		if op["status"] != "running" {
			return op
		}
	}
	t.Fatalf("operation %d still running after 60 s", id)
	return nil
}

// TestSandboxFaultEcho: a fault answers with every field, those of the other kind
// and those not given null, the defaults filled in; GET lists them oldest first;
// DELETE removes one (404 for an unknown id, and for another account's) or all.
func TestSandboxFaultEcho(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t)
	a, b := env.NewAccount("en", "", ""), env.NewAccount("en", "", "read")
	httpFault := addFault(t, a, map[string]any{"status": 503})
	want := map[string]any{"id": httpFault["id"], "method": "*", "path": "*", "status": 503.0, "delay_ms": nil, "operation": nil,
		"fail": nil, "slow": nil, "times": 1.0, "remaining": 1.0, "probability": 1.0}
	if !reflect.DeepEqual(httpFault, want) {
		t.Errorf("HTTP fault %v, want %v", httpFault, want)
	}
	delay := addFault(t, a, map[string]any{"method": "POST", "path": "/servers/{id}/power", "delay_ms": 0, "times": 0, "probability": 0.5})
	want = map[string]any{"id": delay["id"], "method": "POST", "path": "/servers/{id}/power", "status": nil, "delay_ms": 0.0,
		"operation": nil, "fail": nil, "slow": nil, "times": 0.0, "remaining": nil, "probability": 0.5}
	if !reflect.DeepEqual(delay, want) {
		t.Errorf("delay fault %v, want %v", delay, want)
	}
	slow := addFault(t, a, map[string]any{"operation": "reinstall", "slow": 2.5, "times": 3})
	want = map[string]any{"id": slow["id"], "method": nil, "path": nil, "status": nil, "delay_ms": nil,
		"operation": "reinstall", "fail": false, "slow": 2.5, "times": 3.0, "remaining": 3.0, "probability": 1.0}
	if !reflect.DeepEqual(slow, want) {
		t.Errorf("operation fault %v, want %v", slow, want)
	}
	fail := addFault(t, a, map[string]any{"operation": "provision", "fail": true})
	if fail["fail"] != true || fail["slow"] != nil {
		t.Errorf("failing fault %v", fail)
	}
	list := items(t, a.Sandbox("GET", "/faults", nil).Want(t, http.StatusOK))
	if got := ids(t, list); !slices.Equal(got, []int64{num(t, httpFault["id"]), num(t, delay["id"]), num(t, slow["id"]), num(t, fail["id"])}) {
		t.Errorf("faults listed %v", got)
	}

	// Another account sees none of them and cannot remove them.
	if list := items(t, b.Sandbox("GET", "/faults", nil).Want(t, http.StatusOK)); len(list) != 0 {
		t.Errorf("account b sees faults %v", list)
	}
	wantNotFound(t, b.Sandbox("DELETE", fmt.Sprintf("/faults/%d", num(t, delay["id"])), nil))
	b.Sandbox("DELETE", "/faults", nil).Want(t, http.StatusNoContent)
	for _, id := range []string{"999999", "0", "-1", "x", "9223372036854775808"} {
		wantNotFound(t, a.Sandbox("DELETE", "/faults/"+id, nil))
	}

	a.Sandbox("DELETE", fmt.Sprintf("/faults/%d", num(t, delay["id"])), nil).Want(t, http.StatusNoContent)
	wantNotFound(t, a.Sandbox("DELETE", fmt.Sprintf("/faults/%d", num(t, delay["id"])), nil))
	if got := ids(t, items(t, a.Sandbox("GET", "/faults", nil).Want(t, http.StatusOK))); len(got) != 3 {
		t.Errorf("after deleting one of 4: %v", got)
	}
	a.Sandbox("DELETE", "/faults", nil).Want(t, http.StatusNoContent)
	if list := items(t, a.Sandbox("GET", "/faults", nil).Want(t, http.StatusOK)); len(list) != 0 {
		t.Errorf("after deleting all: %v", list)
	}
}

// TestSandboxFaultValidation: every field out of its limits, and every body that is
// not one fault of one kind, is 422 naming the field, in the account's language;
// never a 500.
func TestSandboxFaultValidation(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t)
	a := env.NewAccount("fr", "", "")
	for _, tc := range []struct {
		body  string
		field string
		msg   string // message id of the field's first error ("": not checked)
		args  []any
	}{
		{`{}`, "body", "validation.sandbox_fault_kind", nil},
		{``, "body", "validation.sandbox_fault_kind", nil},
		{`[]`, "body", "validation.body_shape", nil},
		{`{"status": 503, "operation": "power", "fail": true}`, "operation", "validation.sandbox_fault_both", nil},
		{`{"delay_ms": 5, "slow": 2}`, "slow", "validation.sandbox_fault_both", nil},
		{`{"method": "GET"}`, "status", "validation.sandbox_fault_status_or_delay", nil},
		{`{"method": "get", "status": 503}`, "method", "validation.one_of", []any{"values", "GET, POST, PATCH, DELETE, *"}},
		{`{"method": "PUT", "status": 503}`, "method", "validation.one_of", []any{"values", "GET, POST, PATCH, DELETE, *"}},
		{`{"method": "", "status": 503}`, "method", "validation.one_of", []any{"values", "GET, POST, PATCH, DELETE, *"}},
		{`{"method": null, "status": 503}`, "method", "validation.not_null", nil},
		{`{"method": 1, "status": 503}`, "method", "validation.type_string", nil},
		{`{"path": "/v1/servers", "status": 503}`, "path", "validation.sandbox_fault_path", nil},
		{`{"path": "/servers/42", "status": 503}`, "path", "validation.sandbox_fault_path", nil},
		{`{"path": "/openapi.json", "status": 500}`, "path", "validation.sandbox_fault_path", nil},
		{`{"path": "", "status": 503}`, "path", "validation.sandbox_fault_path", nil},
		{`{"method": "DELETE", "path": "/me", "status": 503}`, "method", "validation.sandbox_fault_route", []any{"method", "DELETE", "path", "/me"}},
		{`{"method": "GET", "path": "/servers/{id}", "status": 409}`, "status", "validation.sandbox_fault_status_route", []any{"status", 409}},
		{`{"method": "*", "path": "/me", "status": 409}`, "status", "validation.sandbox_fault_status_route", []any{"status", 409}},
		{`{"status": 0}`, "status", "validation.one_of", []any{"values", "409, 429, 500, 503"}},
		{`{"status": -1}`, "status", "validation.one_of", []any{"values", "409, 429, 500, 503"}},
		{`{"status": 404}`, "status", "validation.one_of", []any{"values", "409, 429, 500, 503"}},
		{`{"status": 9223372036854775808}`, "status", "validation.type_integer", nil},
		{`{"status": "503"}`, "status", "validation.type_integer", nil},
		{`{"status": 503.5}`, "status", "validation.type_integer", nil},
		{`{"status": null}`, "status", "validation.not_null", nil},
		{`{"delay_ms": -1}`, "delay_ms", "validation.int_range", []any{"min", 0, "max", 30000}},
		{`{"delay_ms": 30001}`, "delay_ms", "validation.int_range", []any{"min", 0, "max", 30000}},
		{`{"delay_ms": 9223372036854775807}`, "delay_ms", "validation.int_range", []any{"min", 0, "max", 30000}},
		{`{"delay_ms": 9223372036854775808}`, "delay_ms", "validation.type_integer", nil},
		{`{"operation": "reboot", "fail": true}`, "operation", "validation.one_of", []any{"values", "provision, power, reinstall, rescale, snapshot, restore, delete, create_volume, attach_volume, detach_volume, resize_volume"}},
		{`{"operation": "", "fail": true}`, "operation", "validation.one_of", []any{"values", "provision, power, reinstall, rescale, snapshot, restore, delete, create_volume, attach_volume, detach_volume, resize_volume"}},
		{`{"fail": true}`, "operation", "validation.required", nil},
		{`{"operation": "power"}`, "fail", "validation.sandbox_fail_or_slow", nil},
		{`{"operation": "power", "fail": false}`, "fail", "validation.sandbox_fail_or_slow", nil},
		{`{"operation": "power", "fail": "yes"}`, "fail", "validation.type_boolean", nil},
		{`{"operation": "power", "fail": true, "slow": 2}`, "slow", "validation.sandbox_slow_with_fail", nil},
		{`{"operation": "power", "slow": 0}`, "slow", "validation.sandbox_slow_range", []any{"max", 10}},
		{`{"operation": "power", "slow": -1}`, "slow", "validation.sandbox_slow_range", []any{"max", 10}},
		{`{"operation": "power", "slow": 10.001}`, "slow", "validation.sandbox_slow_range", []any{"max", 10}},
		{`{"operation": "power", "slow": 1e400}`, "slow", "", nil},
		{`{"status": 503, "times": -1}`, "times", "validation.int_range", []any{"min", 0, "max", 1000000}},
		{`{"status": 503, "times": 1000001}`, "times", "validation.int_range", []any{"min", 0, "max", 1000000}},
		{`{"status": 503, "times": 9223372036854775808}`, "times", "validation.type_integer", nil},
		{`{"status": 503, "times": 1.5}`, "times", "validation.type_integer", nil},
		{`{"status": 503, "probability": -0.1}`, "probability", "validation.number_range", []any{"min", 0, "max", 1}},
		{`{"status": 503, "probability": 1.01}`, "probability", "validation.number_range", []any{"min", 0, "max", 1}},
		{`{"status": 503, "probability": null}`, "probability", "validation.not_null", nil},
		{`{"status": 503, "when": "now"}`, "when", "validation.unknown_field", nil},
		{`{"status": 503, "Status": 500}`, "Status", "validation.unknown_field", nil},
	} {
		r := env.SandboxDo(a.Token, "POST", "/faults", tc.body, nil)
		e := wantInvalid(t, r, tc.field)
		if want := msg("fr", tc.msg, tc.args...); tc.msg != "" && e.Errors[tc.field][0] != want {
			t.Errorf("%s: errors.%s %q, want %q", tc.body, tc.field, e.Errors[tc.field], want)
		}
	}
	if list := items(t, a.Sandbox("GET", "/faults", nil).Want(t, http.StatusOK)); len(list) != 0 {
		t.Errorf("refused faults were kept: %v", list)
	}

	// At most 100 faults that still apply; a used-up one leaves room.
	for i := range sandbox.MaxFaults {
		addFault(t, a, map[string]any{"method": "GET", "path": "/me", "status": 503 - i%2*3, "probability": 0})
	}
	e := wantInvalid(t, a.Sandbox("POST", "/faults", map[string]any{"status": 503}), "fault_quota")
	if e.Message != msg("fr", "validation.sandbox_fault_quota", "quota", sandbox.MaxFaults) {
		t.Errorf("quota message %q", e.Message)
	}
	list := items(t, a.Sandbox("GET", "/faults", nil).Want(t, http.StatusOK))
	a.Sandbox("DELETE", fmt.Sprintf("/faults/%d", num(t, list[0]["id"])), nil).Want(t, http.StatusNoContent)
	addFault(t, a, map[string]any{"method": "GET", "path": "/billing", "status": 503})
	a.Do("GET", "/billing", nil).Want(t, http.StatusServiceUnavailable) // used up now, still listed
	addFault(t, a, map[string]any{"method": "GET", "path": "/apps", "status": 503})
	if list := items(t, a.Sandbox("GET", "/faults", nil).Want(t, http.StatusOK)); len(list) != sandbox.MaxFaults {
		t.Errorf("%d faults listed, want at most %d (the used-up one made room)", len(list), sandbox.MaxFaults)
	}
}

// limitHeaders are the token's rate-limit headers of an answer, as numbers.
func limitHeaders(t testing.TB, r *testenv.Response) (limit, remaining, reset int64) {
	t.Helper()
	n := func(name string) int64 {
		v, err := strconv.ParseInt(r.Header.Get(name), 10, 64)
		if err != nil {
			t.Fatalf("header %s = %q", name, r.Header.Get(name))
		}
		if other := r.Header.Get(strings.TrimPrefix(name, "X-")); other != r.Header.Get(name) {
			t.Errorf("%s = %q but %s = %q", name, r.Header.Get(name), strings.TrimPrefix(name, "X-"), other)
		}
		return v
	}
	return n("X-RateLimit-Limit"), n("X-RateLimit-Remaining"), n("X-RateLimit-Reset")
}

// TestSandboxHTTPFaults: each status a fault answers, with the body and headers of
// the real answer, in the account's language, and nothing done.
func TestSandboxHTTPFaults(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t, testenv.Options{RateLimit: 120})

	t.Run("503 unavailable, then the real answer", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("de", "", "")
		addFault(t, a, map[string]any{"method": "GET", "path": "/servers", "status": 503})
		r := a.Do("GET", "/servers", nil)
		e := wantError(t, r, http.StatusServiceUnavailable, "unavailable")
		if e.Message != msg("de", "error.unavailable") || r.Header.Get("Retry-After") != "5" {
			t.Errorf("503: message %q, Retry-After %q", e.Message, r.Header.Get("Retry-After"))
		}
		limitHeaders(t, r)
		a.Do("GET", "/servers", nil).Want(t, http.StatusOK)
	})

	t.Run("500 internal, nothing done, the Idempotency-Key not used", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("fr", "", "")
		addFault(t, a, map[string]any{"method": "POST", "path": "/projects", "status": 500})
		key := http.Header{"Idempotency-Key": {"sandbox-500"}}
		body := map[string]any{"name": "survives"}
		r := env.Do(a.Token, "POST", "/projects", body, key)
		e := wantError(t, r, http.StatusInternalServerError, "internal")
		if e.Message != msg("fr", "error.internal") || r.Header.Get("Retry-After") != "" {
			t.Errorf("500: message %q, Retry-After %q", e.Message, r.Header.Get("Retry-After"))
		}
		if list := items(t, a.Do("GET", "/projects", nil).Want(t, http.StatusOK)); len(list) != 0 {
			t.Errorf("the faulted POST created %v", list)
		}
		r = env.Do(a.Token, "POST", "/projects", body, key).Want(t, http.StatusCreated)
		if r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("the retry was a replay of the fault")
		}
		if list := items(t, a.Do("GET", "/projects", nil).Want(t, http.StatusOK)); len(list) != 1 {
			t.Errorf("projects after the retry: %v", list)
		}
	})

	t.Run("429 rate_limited with the token's own budget", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("en", "", "")
		before := a.Do("GET", "/me", nil).Want(t, http.StatusOK)
		_, left, _ := limitHeaders(t, before)
		addFault(t, a, map[string]any{"method": "GET", "path": "/me", "status": 429})
		r := a.Do("GET", "/me", nil)
		e := wantError(t, r, http.StatusTooManyRequests, "rate_limited")
		if e.Message != msg("en", "error.rate_limited", "seconds", 1) || r.Header.Get("Retry-After") != "1" {
			t.Errorf("429: message %q, Retry-After %q", e.Message, r.Header.Get("Retry-After"))
		}
		limit, remaining, _ := limitHeaders(t, r)
		if limit != 120 || remaining != left-1 {
			t.Errorf("429: limit %d remaining %d, want 120 and %d (the request counted, as every one does)", limit, remaining, left-1)
		}
		after := a.Do("GET", "/me", nil).Want(t, http.StatusOK)
		if _, rem, _ := limitHeaders(t, after); rem != left-2 {
			t.Errorf("after the 429: remaining %d, want %d", rem, left-2)
		}
	})

	t.Run("409 busy without an operation: nothing done", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("de", "", "")
		srv := runningServer(t, a)
		name := srv["name"].(string)
		addFault(t, a, map[string]any{"method": "POST", "path": "/servers/{id}/power", "status": 409})
		r := a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "off"})
		e := wantError(t, r, http.StatusConflict, "busy")
		if e.Operation != nil || e.Message != msg("de", "error.server_changed") || r.Header.Get("Retry-After") != "1" {
			t.Errorf("409: %s, Retry-After %q", r.Body, r.Header.Get("Retry-After"))
		}
		if got := data(t, a.Do("GET", "/servers/"+name, nil).Want(t, http.StatusOK)); got["status"] != "running" || got["operation"] != nil {
			t.Errorf("the faulted power off did something: %v", got)
		}
		// Off the server routes, a 409 is the one of an Idempotency-Key in use.
		addFault(t, a, map[string]any{"method": "POST", "path": "/ssh-keys", "status": 409})
		r = a.Do("POST", "/ssh-keys", map[string]any{"name": "k", "public_key": testenv.PublicKey(t)})
		if e := wantError(t, r, http.StatusConflict, "busy"); e.Operation != nil || e.Message != msg("de", "error.idempotency_in_progress") {
			t.Errorf("409 off the server routes: %s", r.Body)
		}
		if list := items(t, a.Do("GET", "/ssh-keys", nil).Want(t, http.StatusOK)); len(list) != 0 {
			t.Errorf("the faulted POST created %v", list)
		}
	})

	t.Run("a fault only meets the routes that can answer its status", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("en", "", "")
		f := addFault(t, a, map[string]any{"status": 409, "times": 0})
		a.Do("GET", "/me", nil).Want(t, http.StatusOK)
		a.Do("PATCH", "/me", map[string]any{"language": "en"}).Want(t, http.StatusOK)
		a.Do("POST", "/projects", map[string]any{"name": "p"}).Want(t, http.StatusConflict)
		if got := faultOf(t, a, f["id"]); got["remaining"] != nil || got["times"] != 0.0 {
			t.Errorf("fault %v", got)
		}
	})

	t.Run("401, 429 and 403 come first", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("en", "", "")
		addFault(t, a, map[string]any{"method": "POST", "path": "/servers", "status": 503})
		readOnly := a.NewToken("read")
		wantError(t, env.Do(readOnly, "POST", "/servers", baseOrder(), nil), http.StatusForbidden, "missing_scope")
		wantError(t, env.Do("", "POST", "/servers", baseOrder(), nil), http.StatusUnauthorized, "unauthenticated")
		wantError(t, a.Do("POST", "/servers", map[string]any{}), http.StatusServiceUnavailable, "unavailable")
	})

	t.Run("sandbox calls are never faulted", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("en", "", "")
		addFault(t, a, map[string]any{"status": 500, "times": 0})
		for range 3 {
			a.Sandbox("GET", "/faults", nil).Want(t, http.StatusOK)
		}
	})
}

// TestSandboxFaultTimesAndProbability: times counts the matches (0: until deleted);
// probability 0 never applies (and counts nothing), 1 always.
func TestSandboxFaultTimesAndProbability(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t)
	for _, tc := range []struct {
		times   int
		faulted int // of 5 requests
	}{{1, 1}, {2, 2}, {0, 5}} {
		t.Run(fmt.Sprintf("times %d", tc.times), func(t *testing.T) {
			t.Parallel()
			a := env.NewAccount("en", "", "")
			f := addFault(t, a, map[string]any{"method": "GET", "path": "/billing", "status": 503, "times": tc.times})
			got := 0
			for range 5 {
				if a.Do("GET", "/billing", nil).Status == http.StatusServiceUnavailable {
					got++
				}
			}
			if got != tc.faulted {
				t.Errorf("%d of 5 faulted, want %d", got, tc.faulted)
			}
			listed := faultOf(t, a, f["id"])
			switch {
			case tc.times == 0 && listed["remaining"] != nil:
				t.Errorf("times 0: remaining %v, want null", listed["remaining"])
			case tc.times > 0 && listed["remaining"] != 0.0:
				t.Errorf("remaining %v, want 0 (used up, still listed)", listed["remaining"])
			}
			if tc.times == 0 {
				a.Sandbox("DELETE", fmt.Sprintf("/faults/%d", num(t, f["id"])), nil).Want(t, http.StatusNoContent)
				a.Do("GET", "/billing", nil).Want(t, http.StatusOK)
			}
		})
	}
	t.Run("probability 0 and 1", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("en", "", "")
		never := addFault(t, a, map[string]any{"method": "GET", "path": "/apps", "status": 500, "probability": 0, "times": 3})
		for range 20 {
			a.Do("GET", "/apps", nil).Want(t, http.StatusOK)
		}
		if got := faultOf(t, a, never["id"]); got["remaining"] != 3.0 {
			t.Errorf("probability 0: remaining %v, want 3 (never applied)", got["remaining"])
		}
		addFault(t, a, map[string]any{"method": "GET", "path": "/apps", "status": 503, "probability": 1, "times": 3})
		for range 3 {
			a.Do("GET", "/apps", nil).Want(t, http.StatusServiceUnavailable)
		}
		a.Do("GET", "/apps", nil).Want(t, http.StatusOK)
	})
}

// TestSandboxFaultDelay: delay_ms alone delays the real answer; with a status it
// delays the fault's answer.
func TestSandboxFaultDelay(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t)
	a := env.NewAccount("en", "", "")
	addFault(t, a, map[string]any{"method": "GET", "path": "/locations", "delay_ms": 300})
	start := time.Now()
	r := a.Do("GET", "/locations", nil).Want(t, http.StatusOK)
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("delayed answer after %v, want at least 300 ms", took)
	}
	if len(items(t, r)) == 0 {
		t.Errorf("the delayed answer is not the real one: %s", r.Body)
	}
	addFault(t, a, map[string]any{"method": "GET", "path": "/locations", "delay_ms": 200, "status": 503})
	start = time.Now()
	a.Do("GET", "/locations", nil).Want(t, http.StatusServiceUnavailable)
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Errorf("delayed 503 after %v, want at least 200 ms", took)
	}
	start = time.Now()
	a.Do("GET", "/locations", nil).Want(t, http.StatusOK)
}

// TestSandboxAccountsApart: two accounts at once, one with faults on every request:
// the other never meets them, nor sees them.
func TestSandboxAccountsApart(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t)
	a, b := env.NewAccount("en", "", ""), env.NewAccount("en", "", "")
	addFault(t, a, map[string]any{"status": 503, "times": 0})
	addFault(t, a, map[string]any{"operation": "provision", "fail": true, "times": 0})
	var wg sync.WaitGroup
	for _, c := range []struct {
		acct *testenv.Account
		want int
	}{{a, http.StatusServiceUnavailable}, {b, http.StatusOK}} {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 10 {
					if r := c.acct.Do("GET", "/servers", nil); r.Status != c.want {
						t.Errorf("account %d: %d, want %d", c.acct.ID, r.Status, c.want)
					}
				}
			}()
		}
	}
	wg.Wait()
	srv := runningServer(t, b) // a's provisioning fault is not b's
	if srv["status"] != "running" {
		t.Errorf("b's server %v", srv)
	}
	if list := items(t, b.Sandbox("GET", "/faults", nil).Want(t, http.StatusOK)); len(list) != 0 {
		t.Errorf("b sees %v", list)
	}
}

// TestSandboxBusyFault: a 409 fault on a server with an operation in progress names
// that operation, as a real busy answer does, and the server is left alone.
func TestSandboxBusyFault(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t, testenv.Options{SimTimeScale: 0.01})
	a := env.NewAccount("en", "", "")
	srv := runningServer(t, a)
	name := srv["name"].(string)
	a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "off"}).Want(t, http.StatusOK)
	a.WaitStatus(t, name, "stopped", 30*time.Second)
	// A slow reinstall (40 s × 0.01 × 10) holds the server long enough to be seen busy.
	addFault(t, a, map[string]any{"operation": "reinstall", "slow": 10})
	reinstalling := data(t, a.Do("POST", "/servers/"+name+"/reinstall", map[string]any{"image_id": 2}).Want(t, http.StatusOK))
	op := reinstalling["operation"].(map[string]any)
	f := addFault(t, a, map[string]any{"method": "DELETE", "path": "/servers/{id}", "status": 409})
	r := a.Do("DELETE", "/servers/"+name, nil)
	e := wantError(t, r, http.StatusConflict, "busy")
	if e.Operation == nil || e.Operation.ID != num(t, op["id"]) || e.Operation.Type != "reinstall" || e.Operation.StartedAt != op["started_at"] ||
		e.Message != msg("en", "error.busy", "operation", "reinstall") || r.Header.Get("Retry-After") != "5" {
		t.Errorf("409: %s, Retry-After %q; want operation %v", r.Body, r.Header.Get("Retry-After"), op)
	}
	if got := faultOf(t, a, f["id"]); got["remaining"] != 0.0 {
		t.Errorf("the fault after its match: %v", got)
	}
	end := opEnd(t, a, num(t, op["id"]))
	if end["status"] != "success" {
		t.Errorf("the slow reinstall ended %v", end)
	}
	a.Do("GET", "/servers/"+name, nil).Want(t, http.StatusOK) // not deleted
}

// TestSandboxOperationFaults: fail ends the next operation of its type in error with
// the effects of a real failure; slow multiplies its duration; each counts once per
// operation.
func TestSandboxOperationFaults(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t)
	t.Cleanup(func() { env.AssertLedger(t) })

	t.Run("a failed provisioning: server error, first hour refunded", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("de", "10", "")
		before := credit(t, a)
		addFault(t, a, map[string]any{"operation": "provision", "fail": true})
		srv := order(t, a, baseOrder())
		op := opEnd(t, a, opID(t, srv))
		if op["status"] != "error" || op["error"] == nil || !strings.Contains(op["error"].(string), "sandbox") {
			t.Errorf("operation %v, want error by the sandbox fault", op)
		}
		got := a.WaitStatus(t, srv["name"].(string), "error", 10*time.Second)
		if got["ipv4"] != nil {
			t.Errorf("failed server has addresses: %v", got)
		}
		if c := credit(t, a); c != before {
			t.Errorf("credit %s after the failed provisioning, want %s (the hour refunded)", c, before)
		}
		list := items(t, a.Do("GET", "/billing/transactions", nil).Want(t, http.StatusOK))
		if len(list) != 3 || list[0]["type"] != "refund" || list[1]["type"] != "charge" || list[0]["amount"] != strings.TrimPrefix(list[1]["amount"].(string), "-") {
			t.Errorf("ledger %v", list)
		}
		// Used once: the next provisioning runs.
		runningServer(t, a)
	})

	t.Run("a failed power action leaves the server as its machine is", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("en", "", "")
		name := runningServer(t, a)["name"].(string)
		addFault(t, a, map[string]any{"operation": "power", "fail": true})
		srv := data(t, a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "off"}).Want(t, http.StatusOK))
		if op := opEnd(t, a, opID(t, srv)); op["status"] != "error" {
			t.Errorf("power operation %v, want error", op)
		}
		a.WaitStatus(t, name, "running", 10*time.Second)
		// The next one runs.
		srv = data(t, a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "off"}).Want(t, http.StatusOK))
		waitOp(t, a, opID(t, srv))
		a.WaitStatus(t, name, "stopped", 10*time.Second)
	})

	t.Run("a failed snapshot is gone", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("en", "", "")
		name := runningServer(t, a)["name"].(string)
		addFault(t, a, map[string]any{"operation": "snapshot", "fail": true})
		a.Do("POST", "/servers/"+name+"/snapshots", map[string]any{"name": "doomed"}).Want(t, http.StatusCreated)
		srv := data(t, a.Do("GET", "/servers/"+name, nil).Want(t, http.StatusOK))
		if op, ok := srv["operation"].(map[string]any); ok {
			if end := opEnd(t, a, num(t, op["id"])); end["status"] != "error" {
				t.Errorf("snapshot operation %v, want error", end)
			}
		}
		a.WaitStatus(t, name, "running", 10*time.Second)
		if list := items(t, a.Do("GET", "/servers/"+name+"/snapshots", nil).Want(t, http.StatusOK)); len(list) != 0 {
			t.Errorf("snapshots after the failed one: %v", list)
		}
	})

	t.Run("another type's operation is not met", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("en", "", "")
		f := addFault(t, a, map[string]any{"operation": "delete", "fail": true})
		runningServer(t, a)
		if got := faultOf(t, a, f["id"]); got["remaining"] != 1.0 {
			t.Errorf("a provisioning used the delete fault: %v", got)
		}
	})

	t.Run("slow multiplies the duration", func(t *testing.T) {
		t.Parallel()
		a := env.NewAccount("en", "", "")
		addFault(t, a, map[string]any{"operation": "provision", "slow": 10})
		op := waitOp(t, a, opID(t, order(t, a, baseOrder())))
		took := parseTime(t, op["finished_at"]).Sub(parseTime(t, op["started_at"]))
		// 30 s at the test's scale of 0.001, times 10.
		if want := 10 * time.Duration(float64(simdriver.CreateTime)*0.001); took < want {
			t.Errorf("slow provisioning took %v, want at least %v", took, want)
		}
	})
}

func parseTime(t testing.TB, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %v: %v", v, err)
	}
	return at
}

// journalOf is the account's journal, newest first (query: "?limit=N" or "").
func journalOf(t testing.TB, a *testenv.Account, query string) []map[string]any {
	t.Helper()
	return items(t, a.Sandbox("GET", "/requests"+query, nil).Want(t, http.StatusOK))
}

// TestSandboxJournal: the account's latest /v1 requests, newest first, with their
// bodies as JSON, secrets redacted, the token never kept; sandbox calls and other
// accounts' requests are not in it.
func TestSandboxJournal(t *testing.T) {
	t.Parallel()
	// A provisioning of 15 s: the list below must still find the server provisioning
	// on a loaded machine (at the default 30 ms it had ended first there).
	env := sandboxEnv(t, testenv.Options{SimTimeScale: 0.5})
	a, b := env.NewAccount("en", "", ""), env.NewAccount("en", "", "")
	b.Do("GET", "/me", nil).Want(t, http.StatusOK)

	r := env.Do(a.Token, "POST", "/servers", with(baseOrder(), "root_password", "hunter2-secret", "display_name", "web"),
		http.Header{"Idempotency-Key": {"journal-1"}}).Want(t, http.StatusCreated)
	created := data(t, r)
	a.Do("GET", "/servers?status=provisioning", nil).Want(t, http.StatusOK)
	a.Sandbox("GET", "/faults", nil).Want(t, http.StatusOK)
	// A body the API refuses is kept too, its secrets at any depth redacted.
	nested := `{"plan_id": 1, "extra": {"list": [{"ROOT_PASSWORD": "deep-secret"}]}, "root_password": "top-secret"}`
	a.Do("POST", "/servers", nested).Want(t, http.StatusUnprocessableEntity)
	a.Do("POST", "/servers", `{"root_password": "broken-secret", `).Want(t, http.StatusUnprocessableEntity)

	list := journalOf(t, a, "")
	if len(list) != 4 {
		t.Fatalf("journal has %d entries, want 4: %v", len(list), list)
	}
	raw, _ := json.Marshal(list)
	for _, secret := range []string{a.Token, "hunter2-secret", "deep-secret", "top-secret", "broken-secret", "Bearer"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the journal keeps %q: %s", secret, raw)
		}
	}
	if got := ids(t, list); !slices.IsSortedFunc(got, func(x, y int64) int { return int(y - x) }) {
		t.Errorf("not newest first: %v", got)
	}
	broken, bad, get, post := list[0], list[1], list[2], list[3]
	if post["method"] != "POST" || post["path"] != "/v1/servers" || post["query"] != nil || post["status"] != 201.0 ||
		post["idempotency_key"] != "journal-1" || post["duration_ms"].(float64) < 0 {
		t.Errorf("order entry %v", post)
	}
	if rid := r.Header.Get("X-Request-Id"); post["request_id"] != nil && post["request_id"] != rid {
		t.Errorf("request_id %v, the answer's X-Request-Id %q", post["request_id"], rid)
	}
	body, ok := post["request_body"].(map[string]any)
	if !ok || body["root_password"] != "[redacted]" || body["display_name"] != "web" || body["plan_id"] != 1.0 {
		t.Errorf("order request_body %v", post["request_body"])
	}
	if resp, ok := post["response_body"].(map[string]any); !ok || resp["data"].(map[string]any)["name"] != created["name"] {
		t.Errorf("order response_body %v", post["response_body"])
	}
	if get["path"] != "/v1/servers" || get["query"] != "status=provisioning" || get["request_body"] != nil ||
		get["idempotency_key"] != nil || len(get["response_body"].(map[string]any)["data"].([]any)) != 1 {
		t.Errorf("list entry %v", get)
	}
	deep := bad["request_body"].(map[string]any)
	if deep["root_password"] != "[redacted]" || deep["extra"].(map[string]any)["list"].([]any)[0].(map[string]any)["ROOT_PASSWORD"] != "[redacted]" ||
		bad["status"] != 422.0 || bad["response_body"].(map[string]any)["code"] != "validation_failed" {
		t.Errorf("refused entry %v", bad)
	}
	if s, ok := broken["request_body"].(string); !ok || !strings.Contains(s, `root_password": "[redacted]"`) {
		t.Errorf("a body that is not JSON is kept as a string, redacted: %v", broken["request_body"])
	}
	if got := journalOf(t, b, ""); len(got) != 1 || got[0]["path"] != "/v1/me" {
		t.Errorf("b's journal %v", got)
	}

	// A faulted request is in it with the fault's answer.
	addFault(t, a, map[string]any{"method": "GET", "path": "/billing", "status": 503})
	a.Do("GET", "/billing", nil).Want(t, http.StatusServiceUnavailable)
	if got := journalOf(t, a, "?limit=1"); len(got) != 1 || got[0]["status"] != 503.0 || got[0]["response_body"].(map[string]any)["code"] != "unavailable" {
		t.Errorf("faulted entry %v", got)
	}

	// A body longer than 16 KiB is kept cut, as a string; a streamed list whole.
	script := "#!/bin/sh\n" + strings.Repeat("echo x\n", 3000)
	a.Do("POST", "/recipes", map[string]any{"name": "long", "script": script}).Want(t, http.StatusCreated)
	recipes := a.Do("GET", "/recipes", nil).Want(t, http.StatusOK)
	got := journalOf(t, a, "?limit=2")
	if s, ok := got[1]["request_body"].(string); !ok || !strings.HasSuffix(s, " … [truncated]") || len(s) > sandbox.MaxJournalBody+40 {
		t.Errorf("long request body kept as %.80v…", got[1]["request_body"])
	}
	if s, ok := got[0]["response_body"].(string); !ok || !strings.HasPrefix(string(recipes.Body), strings.TrimSuffix(s, " … [truncated]")) {
		t.Errorf("the streamed list's body is not what was sent: %.80v", got[0]["response_body"])
	}
}

// TestSandboxJournalLimits: the journal keeps the last 1,000 requests; limit is 1 to
// 1000 (default 50), given once.
func TestSandboxJournalLimits(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t)
	a := env.NewAccount("de", "", "")
	const n = sandbox.MaxJournal + 5
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				a.Do("GET", fmt.Sprintf("/me?i=%d", i), nil).Want(t, http.StatusOK)
			}
		}()
	}
	wg.Wait()
	if got := journalOf(t, a, ""); len(got) != 50 {
		t.Errorf("default: %d entries, want 50", len(got))
	}
	all := journalOf(t, a, "?limit=1000")
	if len(all) != sandbox.MaxJournal {
		t.Fatalf("%d entries, want %d", len(all), sandbox.MaxJournal)
	}
	// The 5 oldest are gone: the ids kept are the 1,000 newest.
	got := ids(t, all)
	if !slices.IsSortedFunc(got, func(x, y int64) int { return int(y - x) }) || got[0]-got[len(got)-1] != sandbox.MaxJournal-1 {
		t.Errorf("ids from %d to %d", got[0], got[len(got)-1])
	}
	if got := journalOf(t, a, "?limit=1"); len(got) != 1 || got[0]["id"] != all[0]["id"] {
		t.Errorf("limit=1: %v", got)
	}
	for _, q := range []string{"?limit=0", "?limit=1001", "?limit=-1", "?limit=abc", "?limit=", "?limit=1.5", "?limit=01",
		"?limit=9223372036854775808", "?limit=1&limit=2"} {
		e := wantInvalid(t, a.Sandbox("GET", "/requests"+q, nil), "limit")
		want := msg("de", "validation.int_range", "min", 1, "max", 1000)
		if q == "?limit=1&limit=2" {
			want = msg("de", "validation.query_repeated")
		}
		if e.Message != want {
			t.Errorf("%s: %q, want %q", q, e.Message, want)
		}
	}
}

// TestSandboxFreeOfRateLimit: sandbox calls are not counted against the token's
// rate limit, and answer even when its budget is spent; they show the budget as it
// stands. An unknown token on a sandbox path is 401.
func TestSandboxFreeOfRateLimit(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t, testenv.Options{RateLimit: 3})
	a := env.NewAccount("en", "", "read")
	for range 3 {
		a.Do("GET", "/me", nil).Want(t, http.StatusOK)
	}
	for range 5 {
		r := a.Sandbox("GET", "/faults", nil).Want(t, http.StatusOK)
		if limit, remaining, _ := limitHeaders(t, r); limit != 3 || remaining != 0 {
			t.Errorf("sandbox call shows limit %d remaining %d, want 3 and 0", limit, remaining)
		}
		if r.Header.Get("Retry-After") != "" {
			t.Errorf("a sandbox 200 with Retry-After")
		}
	}
	a.Sandbox("POST", "/faults", map[string]any{"status": 503}).Want(t, http.StatusCreated)
	wantError(t, a.Do("GET", "/me", nil), http.StatusTooManyRequests, "rate_limited")
	wantError(t, env.SandboxDo("berth_nonsense", "GET", "/faults", nil, nil), http.StatusUnauthorized, "unauthenticated")
	wantError(t, env.SandboxDo("", "GET", "/requests", nil, nil), http.StatusUnauthorized, "unauthenticated")

	// A blocked account's token is refused, as on /v1.
	b := env.NewAccount("en", "", "")
	if _, err := env.App.Service.SetAccountBlocked(context.Background(), b.ID, true); err != nil {
		t.Fatal(err)
	}
	wantError(t, b.Sandbox("GET", "/faults", nil), http.StatusForbidden, "account_blocked")
}
