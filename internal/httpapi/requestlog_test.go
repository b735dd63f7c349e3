package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testlog"
)

// logBuffer is a log's output a test reads while the server writes it.
type logBuffer struct{ testlog.Buffer }

// requestLines returns the request log lines of the id, waiting up to a few
// seconds for at least one (a line is written once the answer is complete).
func (b *logBuffer) requestLines(t *testing.T, id string) []map[string]any {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var lines []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("log line %q: %v", l, err)
			}
			if m["msg"] == "request" && m["request_id"] == id {
				lines = append(lines, m)
			}
		}
		if len(lines) > 0 || time.Now().After(deadline) {
			return lines
		}
	}
}

// TestRequestLog: the server logs one line per request (issue 16): its request id,
// the route pattern ("unmatched" for none), method, status, duration and, once the
// token is known, the account; never the token, a body (root_password), the path or
// the query.
func TestRequestLog(t *testing.T) {
	t.Parallel()
	out := &logBuffer{}
	log := slog.New(slog.NewJSONHandler(out, nil))
	env := testenv.New(t, testenv.Options{Logger: log})
	a := env.NewAccount("en", "100", "")
	limited := testenv.New(t, testenv.Options{Logger: log, RateLimit: 1})
	b := limited.NewAccount("en", "100", "")
	b.Do("GET", "/me", nil).Want(t, 200)

	const password, secretQuery = "Hunter2-never-logged", "q-never-logged-7f3a"
	type req struct {
		env           *testenv.Env
		token, method string
		path          string
		body          any
		header        http.Header
		status        int
		route         string
		account       int64 // 0: none in the line
	}
	key := http.Header{"Idempotency-Key": {"log-replay"}}
	project := map[string]any{"name": uniqueName("log")}
	reqs := []req{
		{env, a.Token, "GET", "/me", nil, nil, 200, "GET /v1/me", a.ID},
		{env, a.Token, "GET", "/servers/999999", nil, nil, 404, "GET /v1/servers/{id}", a.ID},
		{env, a.Token, "GET", "/servers?status=" + secretQuery, nil, nil, 422, "GET /v1/servers", a.ID},
		{env, a.Token, "POST", "/servers", with(baseOrder(), "root_password", password, "plan_id", 999999), nil, 422, "POST /v1/servers", a.ID},
		{env, a.Token, "POST", "/projects", project, key, 201, "POST /v1/projects", a.ID},
		{env, a.Token, "POST", "/projects", project, key, 201, "POST /v1/projects", a.ID}, // the replay
		{env, a.Token, "GET", "/nowhere/" + secretQuery, nil, nil, 404, "unmatched", a.ID},
		{env, a.Token, "GET", "/servers//1", nil, nil, 404, "unmatched", a.ID},
		{env, a.Token, "BREW", "/me", nil, nil, 405, "unmatched", a.ID},
		{env, "", "GET", "/me", nil, nil, 401, "GET /v1/me", 0},
		{env, "berth_" + secretQuery, "GET", "/me", nil, nil, 401, "GET /v1/me", 0},
		{env, "", "OPTIONS", "/servers/1", nil, nil, 204, "OPTIONS /v1/servers/{id}", 0},
		{env, "", "GET", "/openapi.json", nil, nil, 200, "GET /v1/openapi.json", 0},
		{limited, b.Token, "GET", "/me", nil, nil, 429, "GET /v1/me", b.ID},
	}
	for i, rq := range reqs {
		id := fmt.Sprintf("log-test-%d", i)
		h := http.Header{"X-Request-Id": {id}}
		maps.Copy(h, rq.header)
		rq.env.Do(rq.token, rq.method, rq.path, rq.body, h).Want(t, rq.status)
		what := fmt.Sprintf("%s %s", rq.method, rq.path)
		lines := out.requestLines(t, id)
		if len(lines) != 1 {
			t.Errorf("%s: %d log lines, want 1: %v", what, len(lines), lines)
			continue
		}
		l := lines[0]
		fields := []string{"duration_ms", "level", "method", "msg", "request_id", "route", "status", "time"}
		if rq.account != 0 {
			fields = append(fields, "account_id")
			slices.Sort(fields)
		}
		if got := slices.Sorted(maps.Keys(l)); !slices.Equal(got, fields) {
			t.Errorf("%s: fields %v, want %v", what, got, fields)
		}
		method := rq.method
		if method == "BREW" {
			method = "other"
		}
		if l["level"] != "INFO" || l["route"] != rq.route || l["method"] != method || l["status"] != float64(rq.status) {
			t.Errorf("%s: line %v, want route %q method %s status %d", what, l, rq.route, method, rq.status)
		}
		if d, ok := l["duration_ms"].(float64); !ok || d < 0 || d > 60000 {
			t.Errorf("%s: duration_ms %v", what, l["duration_ms"])
		}
		if rq.account != 0 && l["account_id"] != float64(rq.account) {
			t.Errorf("%s: account_id %v, want %d", what, l["account_id"], rq.account)
		}
	}
	// A sandbox call's line names its account too.
	sbx := testenv.New(t, testenv.Options{Logger: log, Sandbox: true})
	c := sbx.NewAccount("en", "100", "")
	sbx.SandboxDo(c.Token, "GET", "/clock", nil, http.Header{"X-Request-Id": {"log-test-sandbox"}}).Want(t, 200)
	if lines := out.requestLines(t, "log-test-sandbox"); len(lines) != 1 || lines[0]["route"] != "GET /sandbox/v1/clock" || lines[0]["account_id"] != float64(c.ID) {
		t.Errorf("a sandbox call's log lines %v, want one naming its route and account %d", lines, c.ID)
	}
	// docs/operating.md shows an authenticated request's line as it is.
	doc, err := os.ReadFile("../../docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	var example map[string]any
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(l, "{") && strings.Contains(l, `"msg":"request"`) {
			if err := json.Unmarshal([]byte(l), &example); err != nil {
				t.Fatalf("docs/operating.md: %q: %v", l, err)
			}
		}
	}
	if got, want := slices.Sorted(maps.Keys(example)), slices.Sorted(maps.Keys(out.requestLines(t, "log-test-0")[0])); !slices.Equal(got, want) {
		t.Errorf("docs/operating.md shows a request line of %v, Berth writes %v", got, want)
	}
	all := out.String()
	for _, secret := range []string{a.Token, b.Token, password, secretQuery, "log-replay", "Bearer"} {
		if strings.Contains(all, secret) {
			t.Errorf("the log holds %q:\n%s", secret, all)
		}
	}
}

// TestRequestLogFailure: the error line of a 5xx names the request id too, so that
// it and the request's line meet.
func TestRequestLogFailure(t *testing.T) {
	t.Parallel()
	out := &logBuffer{}
	var unreachable atomic.Bool
	env := testenv.New(t, testenv.Options{Logger: slog.New(slog.NewJSONHandler(out, nil)),
		Unreachable: func(context.Context, string) bool { return unreachable.Load() }})
	a := env.NewAccount("en", "100", "")
	srv := runningServer(t, a)
	unreachable.Store(true)
	r := env.Do(a.Token, "POST", "/servers/"+srv["name"].(string)+"/power", map[string]any{"action": "off"}, nil).Want(t, 503)
	id := r.Header.Get("X-Request-Id")
	lines := out.requestLines(t, id)
	if len(lines) != 1 || lines[0]["status"] != float64(503) || lines[0]["route"] != "POST /v1/servers/{id}/power" {
		t.Errorf("request lines %v", lines)
	}
	var failed []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, `"level":"ERROR"`) {
			failed = append(failed, l)
		}
	}
	if len(failed) != 1 || !strings.Contains(failed[0], `"request_id":"`+id+`"`) {
		t.Errorf("error lines %q, want one naming request %s", failed, id)
	}
}

// TestRequestLogLevel: a logger that takes no Info line gets no request line.
func TestRequestLogLevel(t *testing.T) {
	t.Parallel()
	out := &logBuffer{}
	env := testenv.New(t, testenv.Options{Logger: slog.New(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	a := env.NewAccount("en", "100", "")
	a.Do("GET", "/me", nil).Want(t, 200)
	env.Do("", "GET", "/nowhere", nil, nil).Want(t, 404)
	env.Close() // every line written
	if got := out.String(); strings.Contains(got, `"msg":"request"`) {
		t.Errorf("request lines at level Warn:\n%s", got)
	}
}
