package httpapi_test

// The server console (issue 17): POST /servers/{id}/console answers a one-use ticket
// for a WebSocket that carries the serial console, here the simulated driver's login
// prompt.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/berthhq/berth/internal/apitest"
	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/computetest"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testenv"
)

// socketRoutes are the WebSocket routes of the server the env serves (outside the
// route table).
func socketRoutes(t testing.TB, env *testenv.Env) []struct{ Method, Path string } {
	t.Helper()
	h, err := env.App.Handler()
	if err != nil {
		t.Fatal(err)
	}
	return h.SocketRoutes()
}

// console is an open console WebSocket and what it printed.
type console struct {
	ws  *websocket.Conn
	out *computetest.Reader
	io.Writer
}

// dialConsole opens a console WebSocket: the console on success, else the refusal.
func dialConsole(t testing.TB, rawURL string, header http.Header) (*console, *testenv.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	hs, hcancel := context.WithTimeout(ctx, 20*time.Second)
	defer hcancel()
	// Every answer is checked against the document, a 101 by its status and headers.
	client := &http.Client{Transport: apitest.New(t).Transport(t, nil)}
	ws, resp, err := websocket.Dial(hs, rawURL, &websocket.DialOptions{HTTPClient: client, HTTPHeader: header})
	if err != nil {
		if resp == nil {
			t.Fatalf("dial %s: %v", rawURL, err)
		}
		body, _ := io.ReadAll(resp.Body)
		return nil, &testenv.Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
	}
	t.Cleanup(func() { ws.CloseNow() })
	nc := websocket.NetConn(ctx, ws, websocket.MessageBinary)
	return &console{ws: ws, out: computetest.Follow(nc), Writer: nc}, nil
}

var ticketURL = regexp.MustCompile(`^ws://127\.0\.0\.1:[0-9]+/v1/servers/([0-9]+)/console\?ticket=berthc_[A-Za-z0-9_-]{43}$`)

// ticket asks for a console ticket and checks its shape.
func ticket(t testing.TB, c caller, server string) (string, time.Time) {
	t.Helper()
	d := data(t, c.Do("POST", "/servers/"+server+"/console", nil).Want(t, http.StatusCreated))
	u, _ := d["url"].(string)
	if !ticketURL.MatchString(u) {
		t.Fatalf("ticket url %q", u)
	}
	exp, err := time.Parse(time.RFC3339Nano, d["expires_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return u, exp
}

// gatedStart holds every Start of a machine until open is closed: a server stays
// starting as long as a test needs.
type gatedStart struct {
	compute.Driver
	open chan struct{}
}

func (g *gatedStart) Start(ctx context.Context, key, name string) error {
	select {
	case <-g.open:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Driver.Start(ctx, key, name)
}

func TestConsole(t *testing.T) {
	t.Parallel()
	clock := testenv.NewFakeClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	gate := &gatedStart{open: make(chan struct{})}
	env := testenv.New(t, testenv.Options{Clock: clock.Now, WrapDriver: func(d compute.Driver) compute.Driver {
		gate.Driver = d
		return gate
	}})
	a := env.NewAccount("en", "100", "")
	srv := runningServer(t, a)
	name, id := srv["name"].(string), itoa(num(t, srv["id"]))
	prompt := name + " login: "

	t.Run("a ticket opens the console once", func(t *testing.T) {
		u, exp := ticket(t, a, name)
		if want := clock.Now().Add(60 * time.Second); !exp.Equal(want) {
			t.Errorf("expires_at %v, want %v", exp, want)
		}
		if got := ticketURL.FindStringSubmatch(u)[1]; got != id {
			t.Errorf("ticket of server %s for server %s", got, id)
		}
		con, refused := dialConsole(t, u, nil)
		if refused != nil {
			t.Fatalf("refused: %d %s", refused.Status, refused.Body)
		}
		at := con.out.Wait(t, 0, prompt, 10*time.Second)
		if !strings.Contains(con.out.Text(), "Linux version") {
			t.Errorf("no boot lines before the prompt: %q", con.out.Text())
		}
		// What is typed goes to the guest, and its echo comes back.
		if _, err := io.WriteString(con, "root"); err != nil {
			t.Fatal(err)
		}
		at = con.out.Wait(t, at, "root", 5*time.Second)
		if _, err := io.WriteString(con, "\r"); err != nil {
			t.Fatal(err)
		}
		con.out.Wait(t, at, "Password: ", 5*time.Second)
		// Text messages are typed too.
		if err := con.ws.Write(context.Background(), websocket.MessageText, []byte("x")); err != nil {
			t.Fatal(err)
		}

		// The second connection on the ticket is refused, the first one stays.
		_, again := dialConsole(t, u, nil)
		e := wantError(t, again, http.StatusUnauthorized, "unauthenticated")
		if e.Message != msg("en", "error.console_ticket_used") {
			t.Errorf("message %q", e.Message)
		}
		if _, err := io.WriteString(con, "\r"); err != nil {
			t.Fatal(err)
		}
		con.out.Wait(t, at, "Login incorrect", 5*time.Second)

		// The audit log says who attached to the console, and who was refused.
		log, err := env.App.Service.AuditLog(context.Background(), a.ID, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range log {
			if e.Action == "GET /v1/servers/{id}/console" {
				got = append(got, fmt.Sprintf("%s %d %s", e.Target, e.Status, e.Code))
			}
		}
		if want := []string{"id=" + id + " 401 unauthenticated", "id=" + id + " 101 "}; !slices.Equal(got, want) {
			t.Errorf("audit log of the console: %q, want %q (newest first)", got, want)
		}
	})

	t.Run("expiry", func(t *testing.T) {
		u, _ := ticket(t, a, name)
		clock.Advance(60 * time.Second)
		_, r := dialConsole(t, u, nil)
		e := wantError(t, r, http.StatusUnauthorized, "unauthenticated")
		if e.Message != msg("en", "error.console_ticket_expired") {
			t.Errorf("message %q", e.Message)
		}
		u, _ = ticket(t, a, name)
		clock.Advance(59 * time.Second)
		if con, r := dialConsole(t, u, nil); r != nil {
			t.Fatalf("59 s after it was issued: %d %s", r.Status, r.Body)
		} else {
			con.out.Wait(t, 0, prompt, 10*time.Second)
		}
	})

	t.Run("unknown or missing tickets count against the address", func(t *testing.T) {
		base := "ws" + strings.TrimPrefix(env.URL, "http") + "/servers/" + id + "/console"
		var remaining []string
		for _, q := range []string{"?ticket=berthc_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "?ticket=nope", ""} {
			_, r := dialConsole(t, base+q, http.Header{"Accept-Language": {"de"}})
			e := wantError(t, r, http.StatusUnauthorized, "unauthenticated")
			if e.Message != msg("de", "error.console_ticket_unknown") {
				t.Errorf("%q: message %q", q, e.Message)
			}
			remaining = append(remaining, r.Header.Get("X-RateLimit-Remaining"))
		}
		if remaining[0] == "" || remaining[0] == remaining[1] || remaining[1] == remaining[2] {
			t.Errorf("X-RateLimit-Remaining %v: failed tickets are not counted", remaining)
		}
	})

	t.Run("a plain request is 426 and leaves the ticket", func(t *testing.T) {
		u, _ := ticket(t, a, name)
		parsed, _ := url.Parse(u)
		r := env.Do("", "GET", strings.TrimPrefix(parsed.Path, "/v1")+"?"+parsed.RawQuery, nil, nil)
		wantError(t, r, http.StatusUpgradeRequired, "upgrade_required")
		if r.Header.Get("Upgrade") != "websocket" {
			t.Errorf("Upgrade %q", r.Header.Get("Upgrade"))
		}
		if _, r := dialConsole(t, u, nil); r != nil {
			t.Fatalf("the ticket after a plain request: %d %s", r.Status, r.Body)
		}
	})

	t.Run("another account", func(t *testing.T) {
		b := env.NewAccount("en", "100", "")
		wantNotFound(t, b.Do("POST", "/servers/"+name+"/console", nil))
		wantNotFound(t, b.Do("POST", "/servers/"+id+"/console", nil))
		// A's ticket on the path of B's server: not found (and spent).
		other := runningServer(t, b)
		u, _ := ticket(t, a, name)
		_, r := dialConsole(t, strings.Replace(u, "/servers/"+id+"/", "/servers/"+itoa(num(t, other["id"]))+"/", 1), nil)
		wantNotFound(t, r)
		_, r = dialConsole(t, u, nil)
		wantError(t, r, http.StatusUnauthorized, "unauthenticated")
		// By name works as by id.
		u, _ = ticket(t, a, name)
		if _, r := dialConsole(t, strings.Replace(u, "/servers/"+id+"/", "/servers/"+name+"/", 1), nil); r != nil {
			t.Fatalf("by name: %d %s", r.Status, r.Body)
		}
	})

	t.Run("scopes", func(t *testing.T) {
		for _, scopes := range []string{"read", allScopesBut("power")} {
			r := env.Do(a.NewToken(scopes), "POST", "/servers/"+name+"/console", nil, nil)
			wantError(t, r, http.StatusForbidden, "missing_scope")
		}
		if r := env.Do(a.NewToken("power"), "POST", "/servers/"+name+"/console", nil, nil); r.Status != http.StatusCreated {
			t.Fatalf("token with power: %d %s", r.Status, r.Body)
		}
		wantError(t, a.Do("POST", "/servers/"+name+"/console", `{"x": 1}`), http.StatusUnprocessableEntity, "validation_failed")
		a.Do("POST", "/servers/"+name+"/console", `{}`).Want(t, http.StatusCreated)
	})

	t.Run("not running", func(t *testing.T) {
		s := runningServer(t, a)
		n := s["name"].(string)
		// A ticket issued while it runs is refused once it has stopped.
		u, _ := ticket(t, a, n)
		a.Do("POST", "/servers/"+n+"/power", map[string]any{"action": "off"}).Want(t, 200)
		a.WaitStatus(t, n, "stopped", 10*time.Second)
		_, r := dialConsole(t, u, nil)
		e := wantError(t, r, http.StatusUnprocessableEntity, "validation_failed")
		if got := e.Errors["server"]; len(got) != 1 || got[0] != msg("en", "validation.console_not_running", "status", "stopped") {
			t.Errorf("errors %v", e.Errors)
		}
		e = wantError(t, a.Do("POST", "/servers/"+n+"/console", nil), http.StatusUnprocessableEntity, "validation_failed")
		if len(e.Errors["server"]) != 1 {
			t.Errorf("errors %v", e.Errors)
		}
		// While it starts: busy with the operation that will decide.
		a.Do("POST", "/servers/"+n+"/power", map[string]any{"action": "on"}).Want(t, 200)
		r = a.Do("POST", "/servers/"+n+"/console", nil)
		e = wantError(t, r, http.StatusConflict, "busy")
		if e.Operation == nil || e.Operation.Type != "power" || r.Header.Get("Retry-After") == "" {
			t.Errorf("409 without the operation: %s", r.Body)
		}
		close(gate.open)
		a.WaitStatus(t, n, "running", 10*time.Second)
		ticket(t, a, n)
	})

	t.Run("powering off ends the console", func(t *testing.T) {
		s := runningServer(t, a)
		n := s["name"].(string)
		u, _ := ticket(t, a, n)
		con, r := dialConsole(t, u, nil)
		if r != nil {
			t.Fatalf("refused: %d %s", r.Status, r.Body)
		}
		con.out.Wait(t, 0, "login: ", 10*time.Second)
		a.Do("POST", "/servers/"+n+"/power", map[string]any{"action": "off"}).Want(t, 200)
		if err := con.out.Ended(t, 10*time.Second); err != io.EOF {
			t.Errorf("console ended with %v, want a normal close (io.EOF)", err)
		}
		if !strings.Contains(con.out.Text(), "Power down") {
			t.Errorf("no power-down line: %q", con.out.Text())
		}
	})

	t.Run("blocked account and suspended server", func(t *testing.T) {
		ctx := context.Background()
		s := runningServer(t, a)
		n, sid := s["name"].(string), num(t, s["id"])
		u, _ := ticket(t, a, n)
		if _, err := env.App.Service.SetServerSuspended(ctx, sid, true); err != nil {
			t.Fatal(err)
		}
		_, r := dialConsole(t, u, nil)
		wantError(t, r, http.StatusForbidden, "server_suspended")
		wantError(t, a.Do("POST", "/servers/"+n+"/console", nil), http.StatusForbidden, "server_suspended")

		u, _ = ticket(t, a, name)
		if _, err := env.App.Service.SetAccountBlocked(ctx, a.ID, true); err != nil {
			t.Fatal(err)
		}
		_, r = dialConsole(t, u, nil)
		wantError(t, r, http.StatusForbidden, "account_blocked")
		if _, err := env.App.Service.SetAccountBlocked(ctx, a.ID, false); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("messages in the account's language", func(t *testing.T) {
		d := env.NewAccount("fr", "100", "")
		s := runningServer(t, d)
		u, _ := ticket(t, d, s["name"].(string))
		dialConsole(t, u, nil)
		_, r := dialConsole(t, u, http.Header{"Accept-Language": {"de"}})
		e := wantError(t, r, http.StatusUnauthorized, "unauthenticated")
		if e.Message != msg("fr", "error.console_ticket_used") {
			t.Errorf("message %q, want the account's French", e.Message)
		}
	})
}

// With --public-url the ticket's URL is on it: wss for https, ws for http, the
// public path kept.
func TestConsoleURLOnThePublicURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ public, want string }{
		{"https://api.example.com", "wss://api.example.com/v1/servers/"},
		{"https://example.com/berth/", "wss://example.com/berth/v1/servers/"},
		{"http://berth.internal:8080", "ws://berth.internal:8080/v1/servers/"},
	} {
		env := testenv.New(t, testenv.Options{PublicURL: tc.public})
		a := env.NewAccount("en", "100", "")
		srv := runningServer(t, a)
		u := data(t, a.Do("POST", "/servers/"+srv["name"].(string)+"/console", nil).Want(t, 201))["url"].(string)
		if want := tc.want + itoa(num(t, srv["id"])) + "/console?ticket=berthc_"; !strings.HasPrefix(u, want) {
			t.Errorf("--public-url %s: url %s, want it to start with %s", tc.public, u, want)
		}
	}
}

// Several berthd processes on one PostgreSQL database: a ticket one issued is spent
// through another, once, also when both are asked at the same moment.
func TestConsoleTicketsAcrossProcesses(t *testing.T) {
	t.Parallel()
	if !testenv.Postgres() {
		t.Skip("several processes share a database on PostgreSQL only (BERTH_TEST_STORE=postgres)")
	}
	dir := t.TempDir()
	caps := ops.ConsoleCaps{PerServer: 8} // the six consoles it opens stay open
	one := testenv.New(t, testenv.Options{DataDir: dir, Consoles: caps})
	two := testenv.New(t, testenv.Options{DataDir: dir, Consoles: caps})
	a := one.NewAccount("en", "100", "")
	srv := runningServer(t, a)
	name := srv["name"].(string)
	onTwo := func(u string) string {
		return strings.Replace(u, strings.TrimPrefix(one.Root, "http://"), strings.TrimPrefix(two.Root, "http://"), 1)
	}

	u, _ := ticket(t, a, name)
	con, r := dialConsole(t, onTwo(u), nil)
	if r != nil {
		t.Fatalf("the other process refused: %d %s", r.Status, r.Body)
	}
	con.out.Wait(t, 0, name+" login: ", 10*time.Second)
	_, r = dialConsole(t, u, nil)
	wantError(t, r, http.StatusUnauthorized, "unauthenticated")

	for round := range 5 {
		u, _ := ticket(t, a, name)
		var wg sync.WaitGroup
		var mu sync.Mutex
		opened := 0
		for _, target := range []string{u, onTwo(u), u, onTwo(u)} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, r := dialConsole(t, target, nil); r == nil {
					mu.Lock()
					opened++
					mu.Unlock()
				} else if r.Status != http.StatusUnauthorized {
					t.Errorf("round %d: %d %s", round, r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		if opened != 1 {
			t.Fatalf("round %d: %d connections opened on one ticket, want 1", round, opened)
		}
	}
}

// An open console is cut (1008, the reason) once its account is blocked, or its
// server deleted, without waiting for its client to leave: the operator's block
// reaches a session opened before it.
func TestConsoleCutWhenNoLongerAllowed(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	b := env.NewAccount("en", "100", "")
	srvA, srvB := runningServer(t, a), runningServer(t, b)
	ctx := context.Background()

	closed := func(t *testing.T, con *console, reason string) {
		t.Helper()
		err := con.out.Ended(t, 20*time.Second) // a recheck is every 5 s
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation || ce.Reason != reason {
			t.Fatalf("console ended with %v, want 1008 %s", err, reason)
		}
	}

	uA, _ := ticket(t, a, srvA["name"].(string))
	conA, refused := dialConsole(t, uA, nil)
	if refused != nil {
		t.Fatalf("refused: %d %s", refused.Status, refused.Body)
	}
	uB, _ := ticket(t, b, srvB["name"].(string))
	conB, refused := dialConsole(t, uB, nil)
	if refused != nil {
		t.Fatalf("refused: %d %s", refused.Status, refused.Body)
	}
	conA.out.Wait(t, 0, "login: ", 10*time.Second)
	if _, err := env.App.Service.SetAccountBlocked(ctx, a.ID, true); err != nil {
		t.Fatal(err)
	}
	closed(t, conA, "account_blocked")

	// The other account's console goes on until its server is deleted.
	at := conB.out.Wait(t, 0, "login: ", 10*time.Second)
	if _, err := io.WriteString(conB, "still-here"); err != nil {
		t.Fatal(err)
	}
	conB.out.Wait(t, at, "still-here", 5*time.Second)
	b.Do("DELETE", "/servers/"+srvB["name"].(string), nil).Want(t, http.StatusNoContent)
	// Deleting stops the machine too, which may end the console first (1000).
	err := conB.out.Ended(t, 20*time.Second)
	if code := websocket.CloseStatus(err); code != websocket.StatusPolicyViolation && err != io.EOF {
		t.Fatalf("console of a deleted server ended with %v", err)
	}
}
