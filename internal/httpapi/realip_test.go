package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

func forwardedFor(addr string) http.Header { return http.Header{"X-Forwarded-For": {addr}} }

// Behind a trusted load balancer (serve --trusted-proxy) each client has its own
// per-address budget: one address that guesses tokens is refused, the others are
// served, and the audit log names each client. Without it, X-Forwarded-For is
// nobody's word: everything from the balancer is one client.
func TestTrustedProxy(t *testing.T) {
	t.Parallel()
	guess := func(t *testing.T, env *testenv.Env, from string) {
		t.Helper()
		for i := 0; ; i++ {
			r := env.Do("berth_guess", "GET", "/servers", nil, forwardedFor(from))
			if r.Status == http.StatusTooManyRequests {
				return
			}
			r.Want(t, http.StatusUnauthorized)
			if i > 100 {
				t.Fatal("no 429 after 100 guesses")
			}
		}
	}

	t.Run("trusted", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t, testenv.Options{TrustedProxies: []string{"127.0.0.1", "10.0.0.0/8"}})
		a := env.NewAccount("en", "10", "")
		guess(t, env, "198.51.100.7")
		env.Do(a.Token, "GET", "/servers", nil, forwardedFor("198.51.100.8")).Want(t, http.StatusOK)
		// Through a second proxy of ours: still the client it names.
		env.Do(a.Token, "GET", "/servers", nil, forwardedFor("198.51.100.8, 10.1.2.3")).Want(t, http.StatusOK)
		env.Do(a.Token, "GET", "/servers", nil, forwardedFor("198.51.100.7")).Want(t, http.StatusTooManyRequests)
		// A client cannot escape by writing an address of its own in front.
		env.Do(a.Token, "GET", "/servers", nil, forwardedFor("203.0.113.1, 198.51.100.7")).Want(t, http.StatusTooManyRequests)

		env.Do(a.Token, "POST", "/projects", `{"name": "behind-a-balancer"}`, forwardedFor("198.51.100.8")).Want(t, http.StatusCreated)
		log, err := env.App.Service.AuditLog(context.Background(), a.ID, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 1 || log[0].Client != "198.51.100.8" {
			t.Errorf("audit entry %+v, want the client 198.51.100.8", log)
		}
	})

	t.Run("untrusted", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t)
		a := env.NewAccount("en", "10", "")
		// The header is the client's own word: the address is the connection's.
		env.Do(a.Token, "POST", "/projects", `{"name": "spoofed"}`, forwardedFor("198.51.100.8")).Want(t, http.StatusCreated)
		log, err := env.App.Service.AuditLog(context.Background(), a.ID, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 1 || log[0].Client != "127.0.0.1" {
			t.Errorf("audit entry %+v, want the connection's 127.0.0.1", log)
		}
		guess(t, env, "198.51.100.7")
		env.Do(a.Token, "GET", "/servers", nil, forwardedFor("198.51.100.8")).Want(t, http.StatusTooManyRequests)
	})
}
