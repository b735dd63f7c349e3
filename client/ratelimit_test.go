package client_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/testenv"
)

// TestRateLimit: the client keeps the budget of the latest answer, counted down by
// each call, a 429's included, and shared with its sandbox calls.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 3, RateWindow: time.Minute})
	acct := env.NewAccount("en", "100", "")
	ctx := ctxFor(t)

	c := newClient(t, env, acct.Token, client.WithoutRetries())
	if rl, ok := c.RateLimit(); ok {
		t.Fatalf("before any call: %+v, true", rl)
	}
	for want := 2; want >= 0; want-- {
		start := time.Now().Truncate(time.Second)
		must[*api.Me](t)(c.GetMe(ctx))
		rl, ok := c.RateLimit()
		if !ok || rl.Limit != 3 || rl.Remaining != want {
			t.Fatalf("after a call: %+v, %v; want limit 3, remaining %d", rl, ok, want)
		}
		if rl.Reset.Before(start.Add(time.Minute)) || rl.Reset.After(time.Now().Add(time.Minute+time.Second)) {
			t.Errorf("reset %v, want a minute after the call (%v)", rl.Reset, start)
		}
	}
	_, err := c.GetMe(ctx)
	wantError(t, err, http.StatusTooManyRequests, "rate_limited", client.ErrRateLimited)
	if rl, ok := c.RateLimit(); !ok || rl.Limit != 3 || rl.Remaining != 0 {
		t.Errorf("after a 429: %+v, %v; want limit 3, remaining 0", rl, ok)
	}

	// A token that is not one: the address's budget for such attempts (60 a minute).
	bad := newClient(t, env, "berth_not_a_token", client.WithoutRetries())
	_, err = bad.GetMe(ctx)
	wantError(t, err, http.StatusUnauthorized, "unauthenticated", client.ErrUnauthenticated)
	if rl, ok := bad.RateLimit(); !ok || rl.Limit != 60 || rl.Remaining >= 60 {
		t.Errorf("after a 401: %+v, %v; want the address's limit of 60, one spent", rl, ok)
	}
}

// TestRateLimitSandbox: a sandbox call, which costs nothing, states the budget as it
// is, and the client that made it (through its sandbox copy) keeps it.
func TestRateLimitSandbox(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Sandbox: true, RateLimit: 5, RateWindow: time.Minute})
	acct := env.NewAccount("en", "100", "")
	ctx := ctxFor(t)

	c := newClient(t, env, acct.Token)
	must[*api.Me](t)(c.GetMe(ctx))
	must[[]api.SandboxFault](t)(c.ListSandboxFaults(ctx))
	if rl, ok := c.RateLimit(); !ok || rl.Limit != 5 || rl.Remaining != 4 {
		t.Errorf("after a call and a sandbox call: %+v, %v; want limit 5, remaining 4", rl, ok)
	}
	fresh := newClient(t, env, acct.Token)
	must[[]api.SandboxFault](t)(fresh.ListSandboxFaults(ctx))
	if rl, ok := fresh.RateLimit(); !ok || rl.Remaining != 4 {
		t.Errorf("a sandbox call first: %+v, %v; want remaining 4", rl, ok)
	}
}
