package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
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

// guessFrom sends a wrong token from each address in turn and returns the statuses.
func guessFrom(t *testing.T, env *testenv.Env, addrs []string) []int {
	t.Helper()
	statuses := make([]int, len(addrs))
	for i, from := range addrs {
		statuses[i] = env.Do("berth_guess", "GET", "/servers", nil, forwardedFor(from)).Status
	}
	return statuses
}

// wantLimitedAfter fails unless statuses are limit 401s, then only 429s.
func wantLimitedAfter(t *testing.T, statuses []int, limit int) {
	t.Helper()
	for i, s := range statuses {
		want := http.StatusUnauthorized
		if i >= limit {
			want = http.StatusTooManyRequests
		}
		if s != want {
			t.Fatalf("guess %d of %d: status %d, want %d (%d a minute per client)", i+1, len(statuses), s, want, limit)
		}
	}
}

// inNetwork is n addresses of the IPv6 network prefix (written as "2001:db8:1:2:"),
// prefix::1 to prefix::<n in hex>.
func inNetwork(prefix string, n int) []string {
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("%s:%x", prefix, i+1)
	}
	return addrs
}

// Anyone with IPv6 holds a /64 and may use each of its addresses: the per-address
// limits count an IPv6 client by its /64 (serve --ipv6-limit-prefix changes the
// length), an IPv4 address alone, also when written IPv4-mapped. Issue 26 found 200
// wrong tokens from 200 addresses of one /64 all answered 401.
func TestIPv6LimitPrefix(t *testing.T) {
	t.Parallel()
	proxy := []string{"127.0.0.1"}

	t.Run("a /64 is one client", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t, testenv.Options{TrustedProxies: proxy})
		a := env.NewAccount("en", "10", "")
		wantLimitedAfter(t, guessFrom(t, env, inNetwork("2001:db8:1:2:", 200)), 60)
		// The next /64 is another client, and so is the same /64 of another /48.
		env.Do("berth_guess", "GET", "/servers", nil, forwardedFor("2001:db8:1:3::1")).Want(t, http.StatusUnauthorized)
		env.Do(a.Token, "GET", "/servers", nil, forwardedFor("2001:db8:2:2::1")).Want(t, http.StatusOK)
		// A limited /64 is refused before its token is looked at, whichever address.
		env.Do(a.Token, "GET", "/servers", nil, forwardedFor("2001:db8:1:2:ffff:ffff:ffff:ffff")).Want(t, http.StatusTooManyRequests)
		// The server console's tickets count the same way.
		ws := "ws" + strings.TrimPrefix(env.URL, "http") + "/servers/1/console?ticket=nope"
		if _, r := dialConsole(t, ws, forwardedFor("2001:db8:1:2::abcd")); r == nil || r.Status != http.StatusTooManyRequests {
			t.Errorf("console ticket from the limited /64: %+v, want 429", r)
		}
		if _, r := dialConsole(t, ws, forwardedFor("2001:db8:1:3::abcd")); r == nil || r.Status != http.StatusUnauthorized {
			t.Errorf("console ticket from another /64: %+v, want 401", r)
		}
		// The audit log still names the full address.
		env.Do(a.Token, "POST", "/projects", `{"name": "from-v6"}`, forwardedFor("2001:db8:2:2::7")).Want(t, http.StatusCreated)
		log, err := env.App.Service.AuditLog(context.Background(), a.ID, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 1 || log[0].Client != "2001:db8:2:2::7" {
			t.Errorf("audit entry %+v, want the client 2001:db8:2:2::7", log)
		}
	})

	t.Run("128: each address alone", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t, testenv.Options{TrustedProxies: proxy, IPv6LimitPrefix: 128})
		wantLimitedAfter(t, guessFrom(t, env, inNetwork("2001:db8:1:2:", 200)), 200)
		// ::1 guessed once above.
		wantLimitedAfter(t, guessFrom(t, env, slices.Repeat([]string{"2001:db8:1:2::1"}, 60)), 60-1)
	})

	t.Run("48: a /48 is one client", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t, testenv.Options{TrustedProxies: proxy, IPv6LimitPrefix: 48})
		addrs := make([]string, 61)
		for i := range addrs {
			addrs[i] = fmt.Sprintf("2001:db8:1:%x::1", i)
		}
		wantLimitedAfter(t, guessFrom(t, env, addrs), 60)
		env.Do("berth_guess", "GET", "/servers", nil, forwardedFor("2001:db8:2::1")).Want(t, http.StatusUnauthorized)
	})

	t.Run("IPv4 alone, mapped or not", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t, testenv.Options{TrustedProxies: proxy})
		addrs := make([]string, 61)
		for i := range addrs {
			addrs[i] = "198.51.100.7"
			if i%2 == 1 {
				addrs[i] = "::ffff:198.51.100.7"
			}
		}
		wantLimitedAfter(t, guessFrom(t, env, addrs), 60)
		// Its neighbour is another client: IPv4 is not grouped.
		env.Do("berth_guess", "GET", "/servers", nil, forwardedFor("198.51.100.8")).Want(t, http.StatusUnauthorized)
		env.Do("berth_guess", "GET", "/servers", nil, forwardedFor("::ffff:198.51.100.9")).Want(t, http.StatusUnauthorized)
	})
}
