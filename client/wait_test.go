package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/testenv"
)

// TestRetryBusy: a change met by a 409 waits for the operation the 409 names and is
// sent again once it has ended; other errors come back at once, and the context
// bounds the wait.
func TestRetryBusy(t *testing.T) {
	t.Parallel()
	// A provisioning takes about 9 s: a loaded CI machine took over 1.5 s to answer
	// the order and the power call between them.
	env := testenv.New(t, testenv.Options{SimTimeScale: 0.3})
	acct := env.NewAccount("en", "100", "")
	rec := &seen{base: env.Client.Transport}
	c := newClientVia(t, env, rec, acct.Token)
	ctx := ctxFor(t)
	req, _ := order(t, ctx, c)

	t.Run("waits for the operation named", func(t *testing.T) {
		srv := must[*api.Server](t)(c.CreateServer(ctx, req))
		calls := 0
		var got *api.Server
		err := c.RetryBusy(ctx, func() error {
			calls++
			var err error
			got, err = c.PowerServer(ctx, srv.Name, client.PowerOff)
			return err
		})
		if err != nil || calls != 2 || got == nil || got.Status != "stopping" {
			t.Fatalf("RetryBusy(power off) during the provisioning: %v after %d calls, server %+v", err, calls, got)
		}
		provision := must[*api.Operation](t)(c.GetOperation(ctx, srv.Operation.ID))
		var powers []exchange
		for _, x := range rec.all() {
			if x.req.Method == http.MethodPost && x.req.URL.Path == "/v1/servers/"+srv.Name+"/power" {
				powers = append(powers, x)
			}
		}
		if len(powers) != 2 || powers[0].status != http.StatusConflict || powers[1].status != http.StatusOK {
			t.Fatalf("power calls: %d, want a 409 then a 200", len(powers))
		}
		if provision.FinishedAt == nil || powers[1].at.Before(*provision.FinishedAt) {
			t.Errorf("the second call went at %v, before the provisioning ended (%v)", powers[1].at, provision.FinishedAt)
		}
	})

	t.Run("other errors at once", func(t *testing.T) {
		srv := must[*api.Server](t)(c.CreateServer(ctx, req))
		must[*api.Server](t)(c.WaitServer(ctx, srv.Name, "running"))
		calls := 0
		err := c.RetryBusy(ctx, func() error {
			calls++
			_, err := c.PowerServer(ctx, srv.Name, client.PowerOn)
			return err
		})
		if !errors.Is(err, client.ErrValidation) || calls != 1 {
			t.Errorf("RetryBusy(power on) of a running server: %v after %d calls, want the 422 after 1", err, calls)
		}
	})

	t.Run("bounded by its context", func(t *testing.T) {
		srv := must[*api.Server](t)(c.CreateServer(ctx, req))
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := c.RetryBusy(short, func() error {
			_, err := c.PowerServer(ctx, srv.Name, client.PowerOff)
			return err
		})
		if !errors.Is(err, client.ErrBusy) || time.Since(start) > 5*time.Second {
			t.Errorf("RetryBusy past its deadline: %v after %v, want the 409", err, time.Since(start))
		}
	})
}
