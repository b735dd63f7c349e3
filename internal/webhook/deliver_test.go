package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// received is what a test receiver was sent.
type received struct {
	method, path string
	header       http.Header
	body         []byte
}

// receiver is a local TLS server (its certificate is good for example.com) that
// records each request and answers status and answer.
func receiver(t *testing.T, status int, answer string) (*httptest.Server, func() []received) {
	var mu sync.Mutex
	var got []received
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, received{r.Method, r.URL.Path, r.Header.Clone(), body})
		mu.Unlock()
		w.WriteHeader(status)
		io.WriteString(w, answer)
	}))
	t.Cleanup(s.Close)
	return s, func() []received {
		mu.Lock()
		defer mu.Unlock()
		return append([]received(nil), got...)
	}
}

func TestDeliver(t *testing.T) {
	t.Parallel()
	s, got := receiver(t, http.StatusOK, "thanks")
	fn := newFakeNet(t)
	fn.resolve("example.com", "203.0.113.5")
	fn.route("203.0.113.5:443", s)
	now := time.Unix(1700000000, 0)
	c := fn.client(s, Options{OwnPools: ownPools, Now: func() time.Time { return now }})
	current, _ := NewSecret()
	old, _ := NewSecret()

	a := c.Deliver(context.Background(), Request{
		URL: "https://example.com/berth", ID: "evt_42", Type: "server.created",
		Timestamp: time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600)),
		Data:      json.RawMessage(`{"id": 12}`), Secrets: []string{current, old},
	})

	if a.Status != 200 || a.Outcome != Delivered || a.Reason != "" || string(a.Answer) != "thanks" || !a.At.Equal(now) || a.Latency <= 0 {
		t.Errorf("Attempt = %+v, want delivered with status 200, answer thanks, at %v", a, now)
	}
	reqs := got()
	if len(reqs) != 1 {
		t.Fatalf("the receiver got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	wantBody := `{"type":"server.created","timestamp":"2026-03-01T11:00:00Z","data":{"id":12}}`
	if r.method != "POST" || r.path != "/berth" || string(r.body) != wantBody {
		t.Errorf("got %s %s %s, want POST /berth %s", r.method, r.path, r.body, wantBody)
	}
	wantSig := hmacSignature(t, current, "evt_42", now.Unix(), wantBody) + " " + hmacSignature(t, old, "evt_42", now.Unix(), wantBody)
	for h, want := range map[string]string{
		"Content-Type": "application/json", "User-Agent": "Berth-Webhooks/1",
		"Webhook-Id": "evt_42", "Webhook-Timestamp": "1700000000", "Webhook-Signature": wantSig,
	} {
		if v := r.header.Get(h); v != want {
			t.Errorf("header %s = %q, want %q", h, v, want)
		}
	}
	if d := fn.dialed(); !slices.Equal(d, []string{"203.0.113.5:443"}) {
		t.Errorf("dialed %q, want the vetted address alone", d)
	}
}

// The address classes a delivery never connects to (docs/SECURITY.md, API7), each
// written into the url and behind a name.
var refusedClasses = []struct{ addr, url, reason string }{
	{"127.0.0.1", "127.0.0.1", "loopback"},
	{"::1", "[::1]", "loopback"},
	{"10.1.2.3", "10.1.2.3", "private"},
	{"172.16.0.1", "172.16.0.1", "private"},
	{"172.31.255.254", "172.31.255.254", "private"},
	{"192.168.1.1", "192.168.1.1", "private"},
	{"fd00::1", "[fd00::1]", "unique-local"},
	{"169.254.169.254", "169.254.169.254", "link-local"},
	{"fe80::1", "[fe80::1]", "link-local"},
	{"100.64.0.1", "100.64.0.1", "cgnat"},
	{"224.0.0.251", "224.0.0.251", "multicast"},
	{"0.0.0.0", "0.0.0.0", "unspecified"},
	{"::", "[::]", "unspecified"},
	{"::ffff:169.254.169.254", "[::ffff:169.254.169.254]", "link-local"},
	{"::ffff:10.0.0.1", "[::ffff:10.0.0.1]", "private"},
	{"198.51.100.7", "198.51.100.7", "own pool"},
}

func TestDeliverRefused(t *testing.T) {
	t.Parallel()
	for _, rc := range refusedClasses {
		for _, viaName := range []bool{false, true} {
			fn := newFakeNet(t)
			url := "https://" + rc.url + "/hook"
			want := fmt.Sprintf("url's address %s is refused: %s", rc.addr, rc.reason)
			if viaName {
				fn.resolve("hooks.example.com", rc.addr)
				url = "https://hooks.example.com/hook"
				want = fmt.Sprintf("address %s refused: %s", rc.addr, rc.reason)
			}
			a := deliverSome(fn.client(nil, Options{OwnPools: ownPools}), url)
			if a.Status != 0 || a.Outcome != Retry || a.Reason != want {
				t.Errorf("%s: Attempt = %+v, want a failed attempt: %s", url, a, want)
			}
			if d := fn.dialed(); len(d) != 0 {
				t.Errorf("%s (%s): dialed %q, want no connection", url, rc.addr, d)
			}
		}
	}
}

// deliverSome delivers a small event to url with a fresh secret.
func deliverSome(c *Client, url string) Attempt {
	secret, _ := NewSecret()
	return c.Deliver(context.Background(), Request{
		URL: url, ID: "evt_1", Type: "webhook.test", Timestamp: time.Now(), Secrets: []string{secret},
	})
}

func TestDeliverRefusesMixedAnswers(t *testing.T) {
	t.Parallel()
	s, got := receiver(t, http.StatusOK, "")
	fn := newFakeNet(t)
	fn.resolve("example.com", "203.0.113.5", "10.0.0.1")
	fn.route("203.0.113.5:443", s)
	a := deliverSome(fn.client(s, Options{}), "https://example.com/hook")
	if a.Outcome != Retry || a.Reason != "address 10.0.0.1 refused: private" {
		t.Errorf("Attempt = %+v, want the host refused for its private address", a)
	}
	if len(fn.dialed()) != 0 || len(got()) != 0 {
		t.Errorf("dialed %q, want no connection", fn.dialed())
	}
}

// A name is resolved again at each attempt: once it turns to a refused address
// (DNS rebinding), the attempt fails without a connection.
func TestDeliverResolvesEachAttempt(t *testing.T) {
	t.Parallel()
	s, got := receiver(t, http.StatusNoContent, "")
	fn := newFakeNet(t)
	fn.resolve("example.com", "203.0.113.5")
	fn.resolve("example.com", "169.254.169.254")
	fn.route("203.0.113.5:443", s)
	c := fn.client(s, Options{})
	if a := deliverSome(c, "https://example.com/hook"); a.Outcome != Delivered {
		t.Fatalf("first attempt = %+v, want delivered", a)
	}
	a := deliverSome(c, "https://example.com/hook")
	if a.Outcome != Retry || a.Reason != "address 169.254.169.254 refused: link-local" {
		t.Errorf("second attempt = %+v, want refused: link-local", a)
	}
	if len(fn.lookups) != 2 || len(fn.dialed()) != 1 || len(got()) != 1 {
		t.Errorf("lookups %q, dials %q, requests %d; want 2, 1, 1", fn.lookups, fn.dialed(), len(got()))
	}
}

// A redirect is the answer, a failed attempt: it is not followed, whether it points
// into the provider's network or anywhere else.
func TestDeliverRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status   int
		location string
	}{
		{http.StatusFound, "http://169.254.169.254/latest/meta-data/"},
		{http.StatusTemporaryRedirect, "https://10.0.0.1/hook"},
		{http.StatusPermanentRedirect, "https://[::1]/hook"},
		{http.StatusMovedPermanently, "https://rebound.example.com/hook"}, // would resolve to 127.0.0.1
		{http.StatusSeeOther, "/elsewhere"},
	} {
		s := httptest.NewTLSServer(http.RedirectHandler(tc.location, tc.status))
		fn := newFakeNet(t)
		fn.resolve("example.com", "203.0.113.5")
		fn.resolve("rebound.example.com", "127.0.0.1")
		fn.route("203.0.113.5:443", s)
		a := deliverSome(fn.client(s, Options{}), "https://example.com/hook")
		s.Close()
		want := fmt.Sprintf("status %d: redirects are not followed", tc.status)
		if a.Status != tc.status || a.Outcome != Retry || a.Reason != want {
			t.Errorf("redirect to %s: Attempt = %+v, want a failed attempt: %s", tc.location, a, want)
		}
		if !slices.Equal(fn.lookups, []string{"example.com"}) || !slices.Equal(fn.dialed(), []string{"203.0.113.5:443"}) {
			t.Errorf("redirect to %s: lookups %q, dials %q; want the first hop alone", tc.location, fn.lookups, fn.dialed())
		}
	}
}

// Where private addresses are allowed (the sandbox), a redirect is not followed either.
func TestDeliverRedirectNotFollowedAllowPrivate(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	second := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer second.Close()
	first := httptest.NewServer(http.RedirectHandler(second.URL+"/hook", http.StatusFound))
	defer first.Close()
	fn := newFakeNet(t)
	a := deliverSome(fn.client(nil, Options{AllowPrivate: true}), first.URL+"/hook")
	if a.Status != http.StatusFound || a.Outcome != Retry {
		t.Errorf("Attempt = %+v, want a failed attempt with status 302", a)
	}
	if d := fn.dialed(); !slices.Equal(d, []string{first.Listener.Addr().String()}) || hits.Load() != 0 {
		t.Errorf("dialed %q, the second server got %d requests; want the first server alone", d, hits.Load())
	}
}

// A receiver that hangs is cut at the timeout: one that never answers, and one that
// answers its status and then nothing (the status counts).
func TestDeliverHangingReceiver(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	release := make(chan struct{})
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/status-then-silence" {
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer s.Close()
	defer close(release)
	fn := newFakeNet(t)
	fn.resolve("example.com", "203.0.113.5")
	fn.route("203.0.113.5:443", s)
	c := fn.client(s, Options{Timeout: timeout})
	for _, tc := range []struct {
		path    string
		status  int
		outcome Outcome
		reason  string
		answer  string
	}{
		{"/silence", 0, Retry, "no answer within 300ms", ""},
		{"/status-then-silence", 200, Delivered, "", "partial"},
	} {
		a := deliverSome(c, "https://example.com"+tc.path)
		if a.Status != tc.status || a.Outcome != tc.outcome || a.Reason != tc.reason || string(a.Answer) != tc.answer {
			t.Errorf("%s: Attempt = %+v, want status %d, %v, %q, answer %q", tc.path, a, tc.status, tc.outcome, tc.reason, tc.answer)
		}
		if a.Latency < timeout || a.Latency > timeout+2*time.Second {
			t.Errorf("%s: latency %v, want the timeout %v", tc.path, a.Latency, timeout)
		}
	}
}

func TestDefaultTimeout(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	if DefaultTimeout != 15*time.Second || c.http.Timeout != 15*time.Second || c.timeout != 15*time.Second {
		t.Errorf("timeouts %v, %v, %v; want 15s", DefaultTimeout, c.http.Timeout, c.timeout)
	}
}

// Of an answer of any length the first KiB is kept and the connection closed: the
// receiver's writes fail long before it has written it all.
func TestDeliverAnswerCapped(t *testing.T) {
	t.Parallel()
	const huge = 64 << 20
	written := make(chan int, 1)
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		chunk := []byte(strings.Repeat("0123456789abcdef", 4096))
		n := 0
		for n < huge {
			k, err := w.Write(chunk)
			n += k
			if err != nil {
				break
			}
		}
		written <- n
	}))
	defer s.Close()
	fn := newFakeNet(t)
	fn.resolve("example.com", "203.0.113.5")
	fn.route("203.0.113.5:443", s)
	a := deliverSome(fn.client(s, Options{}), "https://example.com/hook")
	want := strings.Repeat("0123456789abcdef", 64)
	if a.Outcome != Delivered || string(a.Answer) != want {
		t.Errorf("Attempt: %v, %q, answer of %d bytes; want delivered with the first 1024 bytes of the answer", a.Outcome, a.Reason, len(a.Answer))
	}
	select {
	case n := <-written:
		if n >= huge {
			t.Errorf("the receiver wrote all %d bytes: the answer was read whole", n)
		}
	case <-time.After(10 * time.Second):
		t.Error("the receiver is still writing 10 s after the attempt: its connection stayed open")
	}
}

// Statuses, through the default dialer to a local receiver where private addresses
// are allowed.
func TestDeliverStatuses(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var status int
		fmt.Sscanf(r.URL.Path, "/%d", &status)
		w.WriteHeader(status)
	}))
	defer s.Close()
	c := New(Options{AllowPrivate: true})
	for _, tc := range []struct {
		status  int
		outcome Outcome
		reason  string
	}{
		{200, Delivered, ""},
		{202, Delivered, ""},
		{204, Delivered, ""},
		{410, Gone, "status 410: the receiver is gone"},
		{404, Retry, "status 404"},
		{429, Retry, "status 429"},
		{500, Retry, "status 500"},
		{503, Retry, "status 503"},
	} {
		a := deliverSome(c, fmt.Sprintf("%s/%d", s.URL, tc.status))
		if a.Status != tc.status || a.Outcome != tc.outcome || a.Reason != tc.reason {
			t.Errorf("status %d: Attempt = %+v, want %v, %q", tc.status, a, tc.outcome, tc.reason)
		}
	}
}

// Attempts that fail before an answer: each a Retry with its reason, none connecting
// where it should not.
func TestDeliverFailures(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	secret, _ := NewSecret()
	for _, tc := range []struct {
		name   string
		setup  func(*fakeNet)
		opts   Options
		req    Request
		reason string // a prefix of the reason
	}{
		{"nothing listens", nil, Options{AllowPrivate: true},
			Request{URL: "http://" + closed + "/", Secrets: []string{secret}}, "dial tcp " + closed + ": connect: connection refused"},
		{"resolver fails", func(f *fakeNet) {
			f.dnsErr = &net.DNSError{Err: "server misbehaving", Name: "hooks.example.com", Server: "10.0.0.53:53"}
		}, Options{}, Request{URL: "https://hooks.example.com/", Secrets: []string{secret}},
			"host hooks.example.com does not resolve: server misbehaving"},
		{"no such host", nil, Options{}, Request{URL: "https://hooks.example.com/", Secrets: []string{secret}},
			"host hooks.example.com does not resolve: no such host"},
		{"no address", func(f *fakeNet) { f.resolve("hooks.example.com") }, Options{},
			Request{URL: "https://hooks.example.com/", Secrets: []string{secret}}, "host hooks.example.com has no address"},
		{"plain http", nil, Options{}, Request{URL: "http://hooks.example.com/", Secrets: []string{secret}}, "url must use https"},
		{"bad secret", nil, Options{}, Request{URL: "https://hooks.example.com/", Secrets: []string{"whsec_"}}, "webhook secret is not"},
		{"no secret", nil, Options{}, Request{URL: "https://hooks.example.com/"}, "webhook secret is not"},
		{"bad data", nil, Options{}, Request{URL: "https://hooks.example.com/", Data: json.RawMessage(`{`), Secrets: []string{secret}}, "event data: "},
	} {
		fn := newFakeNet(t)
		if tc.setup != nil {
			tc.setup(fn)
		}
		fn.routes[closed] = closed
		a := fn.client(nil, tc.opts).Deliver(context.Background(), tc.req)
		if a.Status != 0 || a.Outcome != Retry || !strings.HasPrefix(a.Reason, tc.reason) || strings.Contains(a.Reason, "10.0.0.53") {
			t.Errorf("%s: Attempt = %+v, want a failed attempt: %s...", tc.name, a, tc.reason)
		}
	}
}

func TestControl(t *testing.T) {
	t.Parallel()
	g := &guard{own: ownPools}
	for _, tc := range []struct {
		address string
		ok      bool
	}{
		{"203.0.113.5:443", true},
		{"[2001:4860:4860::8888]:443", true},
		{"10.0.0.1:443", false},
		{"127.0.0.1:80", false},
		{"[::ffff:127.0.0.1]:80", false},
		{"[fe80::1%eth0]:443", false},
		{"169.254.169.254:80", false},
		{"198.51.100.7:443", false},
		{"not-an-address:443", false},
	} {
		if err := g.control("tcp4", tc.address, nil); (err == nil) != tc.ok {
			t.Errorf("control(%s) = %v, want allowed %v", tc.address, err, tc.ok)
		}
	}
	open := &guard{allowPrivate: true}
	if err := open.control("tcp4", "10.0.0.1:443", nil); err != nil {
		t.Errorf("control with private addresses allowed = %v", err)
	}
}
