package client_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/testenv"
)

// silentClient is a client of a server that takes connections and never answers.
func silentClient(t *testing.T, opts ...client.Option) (*client.Client, *testenv.SilentServer) {
	t.Helper()
	s := testenv.NewSilentServer(t)
	c, err := client.New(append([]client.Option{client.WithBaseURL("http://" + s.Addr + "/v1"), client.WithToken("berth_x")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

// wantTimeout checks err is the client's timeout of d at s, named in its message.
func wantTimeout(t *testing.T, err error, s *testenv.SilentServer, d time.Duration) {
	t.Helper()
	var te *client.TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, client.ErrTimeout) || te.Timeout != d {
		t.Fatalf("error %v (%T), want a *client.TimeoutError of %s", err, err, d)
	}
	for _, want := range []string{"://" + s.Addr + " ", d.String(), "did not answer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

// TestTimeout: a server that takes the connection and never answers fails each call
// after the client's timeout (WithTimeout), with an error naming the server and the
// timeout, and the call is not sent again (each attempt would wait as long).
func TestTimeout(t *testing.T) {
	t.Parallel()
	const d = 300 * time.Millisecond
	for _, tt := range []struct {
		name string
		call func(context.Context, *client.Client) error
	}{
		{"GET", func(ctx context.Context, c *client.Client) error { _, err := c.GetMe(ctx); return err }},
		{"POST", func(ctx context.Context, c *client.Client) error {
			_, err := c.CreateProject(ctx, api.ProjectWrite{Name: client.Ptr("web")})
			return err
		}},
		{"console ticket", func(ctx context.Context, c *client.Client) error {
			_, err := c.RequestServerConsole(ctx, "server-abcdef")
			return err
		}},
		{"held GET", func(ctx context.Context, c *client.Client) error {
			_, err := c.GetOperationWait(ctx, 7, time.Second)
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, s := silentClient(t, client.WithTimeout(d))
			start := time.Now()
			err := tt.call(ctxFor(t), c)
			took := time.Since(start)
			want := d
			if tt.name == "held GET" {
				want = d + time.Second // its ?wait=1 on top
			}
			wantTimeout(t, err, s, want)
			if took < want || took > want+10*time.Second {
				t.Errorf("failed after %s, want %s", took, want)
			}
			if n := s.Accepted(); n != 1 {
				t.Errorf("%d connections, want 1: a call that timed out is not sent again", n)
			}
		})
	}

	t.Run("console", func(t *testing.T) {
		t.Parallel()
		c, s := silentClient(t, client.WithTimeout(d))
		_, err := c.ConnectServerConsole(ctxFor(t), "ws://"+s.Addr+"/v1/servers/1/console?ticket=berthc_secret")
		wantTimeout(t, err, s, d)
		if strings.Contains(err.Error(), "berthc_secret") {
			t.Errorf("%q shows the ticket", err)
		}
	})
}

// TestTimeoutDefault: without WithTimeout a silent server is given DefaultTimeout,
// longer than the 60 s the API may hold a request.
func TestTimeoutDefault(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits DefaultTimeout (90 s)")
	}
	if client.DefaultTimeout <= 60*time.Second {
		t.Fatalf("DefaultTimeout %s: a request held 60 s (?wait=60) would be cut", client.DefaultTimeout)
	}
	c, s := silentClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), client.DefaultTimeout+time.Minute)
	defer cancel()
	start := time.Now()
	_, err := c.GetMe(ctx)
	wantTimeout(t, err, s, client.DefaultTimeout)
	if took := time.Since(start); took < client.DefaultTimeout {
		t.Errorf("failed after %s, before DefaultTimeout", took)
	}
}

// TestTimeoutOwnHTTPClient: an HTTP client given with WithHTTPClient keeps its own
// Timeout; the client's timeout applies to it too, and WithTimeout(0) lifts that.
func TestTimeoutOwnHTTPClient(t *testing.T) {
	t.Parallel()
	const short, long = 300 * time.Millisecond, time.Minute

	c, s := silentClient(t, client.WithHTTPClient(&http.Client{Timeout: short}), client.WithTimeout(0), client.WithoutRetries())
	start := time.Now()
	_, err := c.GetMe(ctxFor(t))
	if err == nil || errors.Is(err, client.ErrTimeout) || time.Since(start) > 10*time.Second {
		t.Errorf("the HTTP client's own Timeout of %s: %v after %s, want its error at once", short, err, time.Since(start))
	}

	c, s = silentClient(t, client.WithHTTPClient(&http.Client{Timeout: long}), client.WithTimeout(short))
	_, err = c.GetMe(ctxFor(t))
	wantTimeout(t, err, s, short)

	c, _ = silentClient(t, client.WithTimeout(0))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err = c.GetMe(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WithTimeout(0): %v, want only ctx's deadline to end the call", err)
	}

	if _, err := client.New(client.WithTimeout(-time.Second)); err == nil {
		t.Error("WithTimeout(-1s) accepted")
	}
}

// TestTimeoutSparesHeldRequests: a held request (?wait=N) gets the timeout on top of
// its wait, so waiting for an operation longer than the timeout succeeds.
func TestTimeoutSparesHeldRequests(t *testing.T) {
	t.Parallel()
	// A provisioning takes about 15 s, a timeout of 2 s leaves room for a plain
	// request on a loaded machine (CI saw one take over a second).
	env := testenv.New(t, testenv.Options{SimTimeScale: 0.5})
	acct := env.NewAccount("en", "100", "")
	const d = 2 * time.Second
	c, short := newClient(t, env, acct.Token), newClient(t, env, acct.Token, client.WithTimeout(d))
	ctx := ctxFor(t)
	req, _ := order(t, ctx, c)
	for _, wait := range []func(id int64) (*api.Operation, error){
		func(id int64) (*api.Operation, error) { return short.WaitOperation(ctx, id) },
		func(id int64) (*api.Operation, error) { return short.GetOperationWait(ctx, id, time.Minute) },
	} {
		srv := must[*api.Server](t)(c.CreateServer(ctx, req))
		start := time.Now()
		op, err := wait(srv.Operation.ID)
		if err != nil || op.Status != client.OperationStatusSuccess {
			t.Fatalf("waiting for the provisioning with a timeout of %s: %+v, %v after %s", d, op, err, time.Since(start))
		}
		if took := time.Since(start); took < 2*d {
			t.Errorf("the provisioning took %s: too short to show a held request outlives the timeout of %s", took, d)
		}
	}
}
