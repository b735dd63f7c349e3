package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/testenv"
)

// wantError checks err is an *client.Error of status and code matching the
// sentinels.
func wantError(t *testing.T, err error, status int, code string, sentinels ...error) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want a *client.Error %d %s", err, err, status, code)
	}
	if e.StatusCode != status || e.Code != code || e.Message == "" {
		t.Errorf("error %d %q %q, want %d %s with a message", e.StatusCode, e.Code, e.Message, status, code)
	}
	// Berth's own id of the request (the client sends none), for the operator's logs.
	if len(e.RequestID) != 32 || strings.Trim(e.RequestID, "0123456789abcdef") != "" {
		t.Errorf("error %d %s: RequestID %q, want the answer's X-Request-Id", e.StatusCode, e.Code, e.RequestID)
	}
	for _, s := range sentinels {
		if !errors.Is(err, s) {
			t.Errorf("%v is not %v", err, s)
		}
	}
	for _, other := range []error{client.ErrNotFound, client.ErrBusy, client.ErrRateLimited, client.ErrUnavailable, client.ErrUnauthenticated} {
		if errors.Is(err, other) && !contains(sentinels, other) {
			t.Errorf("%v is also %v", err, other)
		}
	}
	return e
}

func contains(list []error, e error) bool {
	for _, x := range list {
		if x == e {
			return true
		}
	}
	return false
}

// TestErrors: each error answer comes back as a typed *client.Error.
func TestErrors(t *testing.T) {
	t.Parallel()
	// A provisioning takes about 9 s: long beside a plain request even on a loaded
	// CI machine, where one 3 s provisioning had ended before the test's next call.
	env := testenv.New(t, testenv.Options{SimTimeScale: 0.3, RateLimit: 1 << 20})
	acct := env.NewAccount("en", "100", "")
	c := newClient(t, env, acct.Token)
	// Each subtest's context starts when it runs: parallel subtests wait for a free
	// slot (-parallel is the number of cores), on a loaded machine for minutes, and
	// a context made before that wait once ran out before they began (CI).

	t.Run("401 in the client's language", func(t *testing.T) {
		t.Parallel()
		ctx := ctxFor(t)
		_, err := newClient(t, env, "berth_not-a-token", client.WithLanguage("de")).GetMe(ctx)
		de := wantError(t, err, 401, "unauthenticated", client.ErrUnauthenticated)
		_, err = newClient(t, env, "").GetMe(ctx)
		en := wantError(t, err, 401, "unauthenticated", client.ErrUnauthenticated)
		if de.Message == en.Message {
			t.Errorf("the 401 message is %q with Accept-Language: de too", de.Message)
		}
	})
	t.Run("403", func(t *testing.T) {
		t.Parallel()
		ctx := ctxFor(t)
		_, err := newClient(t, env, acct.NewToken("read")).CreateProject(ctx, api.ProjectWrite{Name: client.Ptr("x")})
		wantError(t, err, 403, "missing_scope", client.ErrForbidden, client.ErrMissingScope)
		if errors.Is(err, client.ErrAccountBlocked) {
			t.Errorf("%v is ErrAccountBlocked", err)
		}
	})
	t.Run("404", func(t *testing.T) {
		t.Parallel()
		ctx := ctxFor(t)
		_, err := c.GetServer(ctx, "999999")
		wantError(t, err, 404, "not_found", client.ErrNotFound)
		_, err = c.WaitOperation(ctx, 999999)
		wantError(t, err, 404, "not_found", client.ErrNotFound)
	})
	t.Run("422 with fields", func(t *testing.T) {
		t.Parallel()
		ctx := ctxFor(t)
		_, err := c.CreateServer(ctx, api.ServerCreate{RootPassword: client.Ptr("short")})
		e := wantError(t, err, 422, "validation_failed", client.ErrValidation)
		for _, f := range []string{"plan_id", "location_id", "root_password"} {
			if len(e.Fields[f]) == 0 {
				t.Errorf("no message for %s: %v", f, e.Fields)
			}
		}
		if errors.Is(err, client.ErrInsufficientCredit) {
			t.Errorf("%v is ErrInsufficientCredit", err)
		}
		poor := env.NewAccount("en", "0", "")
		req, _ := order(t, ctx, c)
		_, err = newClient(t, env, poor.Token).CreateServer(ctx, req)
		e = wantError(t, err, 422, "insufficient_credit", client.ErrValidation, client.ErrInsufficientCredit)
		if len(e.Fields["plan_id"]) == 0 {
			t.Errorf("insufficient credit not under plan_id: %v", e.Fields)
		}
	})
	t.Run("409 with its operation", func(t *testing.T) {
		t.Parallel()
		ctx := ctxFor(t)
		req, _ := order(t, ctx, c)
		srv := must[*api.Server](t)(c.CreateServer(ctx, req)) // provisioning takes ~9 s at this scale
		err := c.DeleteServer(ctx, srv.Name)
		e := wantError(t, err, 409, "busy", client.ErrBusy)
		if e.Operation == nil || e.Operation.ID != srv.Operation.ID || e.Operation.Type != "provision" || e.RetryAfter <= 0 {
			t.Fatalf("409: operation %+v, Retry-After %v; want the provisioning %d", e.Operation, e.RetryAfter, srv.Operation.ID)
		}
		if op := must[*api.Operation](t)(c.WaitOperation(ctx, e.Operation.ID)); op.Status != "success" {
			t.Errorf("the provisioning ended %s", op.Status)
		}
		if err := c.DeleteServer(ctx, srv.Name); err != nil {
			t.Errorf("delete once the operation ended: %v", err)
		}
	})
	t.Run("WaitServer for a status no operation brings", func(t *testing.T) {
		t.Parallel()
		ctx := ctxFor(t)
		req, _ := order(t, ctx, c)
		srv := must[*api.Server](t)(c.CreateServer(ctx, req))
		got, err := c.WaitServer(ctx, srv.Name, "stopped")
		if err == nil || got == nil || got.Status != "running" {
			t.Errorf("WaitServer(stopped) of a running server: %+v, %v", got, err)
		}
	})
	t.Run("WaitOperation ends with its context", func(t *testing.T) {
		t.Parallel()
		ctx := ctxFor(t)
		req, _ := order(t, ctx, c)
		srv := must[*api.Server](t)(c.CreateServer(ctx, req))
		held := time.Now()
		op := must[*api.Operation](t)(c.GetOperationWait(ctx, srv.Operation.ID, time.Second))
		if op.Status != "running" || time.Since(held) < 900*time.Millisecond {
			t.Errorf("GetOperationWait(1s) of a 9 s provisioning: %s after %v", op.Status, time.Since(held))
		}
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.WaitOperation(short, srv.Operation.ID)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
			t.Errorf("WaitOperation past its deadline: %v after %v", err, time.Since(start))
		}
	})
}

// TestRateLimitedRetry: a 429 is retried after the Retry-After it carried, and
// without retries it comes back at once as ErrRateLimited.
func TestRateLimitedRetry(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 2, RateWindow: 2 * time.Second})
	acct := env.NewAccount("en", "100", "")
	ctx := ctxFor(t)

	rec := &seen{base: env.Client.Transport}
	c := newClientVia(t, env, rec, acct.Token)
	for range 2 {
		must[*api.Me](t)(c.GetMe(ctx))
	}
	start := time.Now()
	me := must[*api.Me](t)(c.GetMe(ctx))
	took := time.Since(start)
	if me.ID != acct.ID {
		t.Errorf("GetMe after the retry: %+v", me)
	}
	log := rec.all()
	if len(log) != 4 || log[2].status != http.StatusTooManyRequests || log[3].status != http.StatusOK {
		t.Fatalf("want 200, 200, 429, 200; got %v", statuses(log))
	}
	retry, err := strconv.Atoi(log[2].header.Get("Retry-After"))
	if err != nil || retry < 1 {
		t.Fatalf("429 with Retry-After %q", log[2].header.Get("Retry-After"))
	}
	if waited := log[3].at.Sub(log[2].at); waited < time.Duration(retry)*time.Second {
		t.Errorf("retried %v after the 429, which said Retry-After: %d", waited, retry)
	}
	if took < time.Duration(retry)*time.Second || took > time.Duration(retry)*time.Second+10*time.Second {
		t.Errorf("the call took %v with Retry-After: %d", took, retry)
	}
	t.Logf("429 with Retry-After %d s; the call took %v", retry, took)

	// Without retries, or when Retry-After passes the policy's MaxWait, the 429
	// comes back at once.
	for name, opt := range map[string]client.Option{"WithoutRetries": client.WithoutRetries(),
		"MaxWait below Retry-After": client.WithRetryPolicy(client.RetryPolicy{MaxRetries: 3, MaxWait: 500 * time.Millisecond})} {
		quick := newClient(t, env, acct.NewToken(""), opt)
		for range 2 {
			must[*api.Me](t)(quick.GetMe(ctx))
		}
		start := time.Now()
		_, err := quick.GetMe(ctx)
		e := wantError(t, err, 429, "rate_limited", client.ErrRateLimited)
		if e.RetryAfter < time.Second || time.Since(start) > time.Second {
			t.Errorf("%s: Retry-After %v, returned after %v", name, e.RetryAfter, time.Since(start))
		}
	}
}

func statuses(log []exchange) []int {
	var s []int
	for _, x := range log {
		s = append(s, x.status)
	}
	return s
}

// TestUnavailable: a 503 comes back as ErrUnavailable with its Retry-After, without
// the client waiting longer than its policy allows.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	var down sync.Map
	env := testenv.New(t, testenv.Options{Unreachable: func(_ context.Context, name string) bool {
		_, ok := down.Load(name)
		return ok
	}})
	acct := env.NewAccount("en", "100", "")
	c := newClient(t, env, acct.Token, client.WithRetryPolicy(client.RetryPolicy{MaxRetries: 5, MaxWait: 5 * time.Second}))
	ctx := ctxFor(t)
	req, _ := order(t, ctx, c)
	srv := must[*api.Server](t)(c.CreateServer(ctx, req))
	must[*api.Server](t)(c.WaitServer(ctx, srv.Name, "running"))
	down.Store(srv.Name, true)
	start := time.Now()
	_, err := c.PowerServer(ctx, srv.Name, client.PowerOff)
	e := wantError(t, err, 503, "unavailable", client.ErrUnavailable)
	if e.RetryAfter < 5*time.Second || time.Since(start) > 3*time.Second {
		t.Errorf("503: Retry-After %v; returned after %v", e.RetryAfter, time.Since(start))
	}
	down.Delete(srv.Name)
	must[*api.Server](t)(c.PowerServer(ctx, srv.Name, client.PowerOff))
}

// TestIdempotentRetry: an order whose answer was lost is sent again with the same
// Idempotency-Key and answers the first server; no second one is made.
func TestIdempotentRetry(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	drop := &dropFirstAnswer{base: env.Client.Transport}
	rec := &seen{base: drop}
	c := newClientVia(t, env, rec, acct.Token,
		client.WithRetryPolicy(client.RetryPolicy{MaxRetries: 2, MaxWait: 5 * time.Second, Backoff: func(int) time.Duration { return 10 * time.Millisecond }}))
	ctx := ctxFor(t)
	req, _ := order(t, ctx, c)
	srv := must[*api.Server](t)(c.CreateServer(ctx, req))

	var first api.One[api.Server]
	if err := json.Unmarshal(drop.dropped, &first); err != nil {
		t.Fatalf("the dropped answer: %v (%s)", err, drop.dropped)
	}
	if srv.ID != first.Data.ID || srv.Name != first.Data.Name {
		t.Errorf("the retry answered server %d %s; the lost answer was %d %s", srv.ID, srv.Name, first.Data.ID, first.Data.Name)
	}
	if len(drop.keys) != 2 || drop.keys[0] == "" || drop.keys[0] != drop.keys[1] {
		t.Errorf("Idempotency-Keys of the two attempts: %q", drop.keys)
	}
	log := rec.all()
	if last := log[len(log)-1]; last.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the retry was not a replay: %d %v", last.status, last.header)
	}
	if l := must[[]api.Server](t)(c.ListServers(ctx, client.ServerListOptions{})); len(l) != 1 {
		t.Errorf("%d servers after one order retried, want 1", len(l))
	}

	// Another call is another order, with a key of its own.
	second := must[*api.Server](t)(c.CreateServer(ctx, req))
	if second.ID == srv.ID || drop.keys[2] == drop.keys[0] {
		t.Errorf("a second call replayed the first: server %d, keys %q", second.ID, drop.keys)
	}
	// A caller's own key replays across calls.
	keyed := client.WithIdempotencyKey(ctx, "order-42")
	a := must[*api.Server](t)(c.CreateServer(keyed, req))
	b := must[*api.Server](t)(c.CreateServer(keyed, req))
	if a.ID != b.ID {
		t.Errorf("one caller key made servers %d and %d", a.ID, b.ID)
	}
}

// failingCreate makes every machine creation fail for good.
type failingCreate struct{ compute.Driver }

func (f *failingCreate) Create(context.Context, string, compute.Spec) (compute.Machine, error) {
	return compute.Machine{}, fmt.Errorf("%w: no host has room", compute.ErrFailed)
}

// TestOperationFailed: an awaited operation that ends in error is an
// *OperationError, and WaitServer answers the server as the failure left it.
func TestOperationFailed(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver { return &failingCreate{d} }})
	acct := env.NewAccount("en", "100", "")
	c := newClient(t, env, acct.Token)
	ctx := ctxFor(t)
	req, _ := order(t, ctx, c)
	srv := must[*api.Server](t)(c.CreateServer(ctx, req))

	got, err := c.WaitServer(ctx, srv.Name, "running")
	var failed *client.OperationError
	if !errors.Is(err, client.ErrOperationFailed) || !errors.As(err, &failed) || failed.Operation.ID != srv.Operation.ID ||
		failed.Operation.Status != "error" || failed.Operation.Error == nil {
		t.Fatalf("WaitServer of a failing provisioning: %v", err)
	}
	if got == nil || got.Status != "error" {
		t.Errorf("WaitServer answered the server %+v, want it in error", got)
	}
	op, err := c.WaitOperation(ctx, srv.Operation.ID)
	if !errors.Is(err, client.ErrOperationFailed) || op == nil || op.Status != "error" {
		t.Errorf("WaitOperation of the failed provisioning: %+v, %v", op, err)
	}
	if errors.Is(err, client.ErrNotFound) {
		t.Errorf("%v is ErrNotFound", err)
	}
	// Asked once the failure is over (as when it fails before WaitServer first
	// looks): the same failure, not "will not become running".
	got, err = c.WaitServer(ctx, srv.Name, "running")
	if !errors.As(err, &failed) || failed.Operation.ID != srv.Operation.ID || got == nil || got.Status != "error" {
		t.Errorf("WaitServer after the failure: %+v, %v", got, err)
	}
}

// dropAnswers loses the answer of every request of one method, counting them.
type dropAnswers struct {
	base   http.RoundTripper
	method string
	n      atomic.Int32
}

func (d *dropAnswers) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := d.base.RoundTrip(req)
	if err != nil || req.Method != d.method {
		return resp, err
	}
	d.n.Add(1)
	resp.Body.Close()
	return nil, errors.New("connection reset by peer (the test dropped the answer)")
}

// TestLostAnswers: a GET whose answer is lost is sent again within the policy; a
// DELETE is not (its second try could only say 404), and its error says what
// happened.
func TestLostAnswers(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	ctx := ctxFor(t)
	policy := client.WithRetryPolicy(client.RetryPolicy{MaxRetries: 3, MaxWait: time.Second, Backoff: func(int) time.Duration { return 10 * time.Millisecond }})

	gets := &dropAnswers{base: env.Client.Transport, method: http.MethodGet}
	_, err := newClientVia(t, env, gets, acct.Token, policy).GetMe(ctx)
	if err == nil || gets.n.Load() != 4 {
		t.Errorf("GetMe with every answer lost: %v after %d attempts, want an error after 4", err, gets.n.Load())
	}

	c := newClient(t, env, acct.Token)
	p := must[*api.Project](t)(c.CreateProject(ctx, api.ProjectWrite{Name: client.Ptr("doomed")}))
	deletes := &dropAnswers{base: env.Client.Transport, method: http.MethodDelete}
	err = newClientVia(t, env, deletes, acct.Token, policy).DeleteProject(ctx, p.ID)
	if err == nil || deletes.n.Load() != 1 {
		t.Errorf("DeleteProject with its answer lost: %v after %d attempts, want an error after 1", err, deletes.n.Load())
	}
	if ps := must[[]api.Project](t)(c.ListProjects(ctx)); len(ps) != 0 {
		t.Errorf("the project is still there: %+v", ps)
	}
}
