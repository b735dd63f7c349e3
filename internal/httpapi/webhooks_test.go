package httpapi_test

// Webhooks through the real API (docs/webhooks.md, docs/api.md "Webhooks"): the
// record and its rules, the scopes, deliveries to a receiver on 127.0.0.1 signed as
// Standard Webhooks has it, test, rotation, redelivery, 410, the retry schedule and
// the cut of a receiver that hangs. No test sends a packet beyond 127.0.0.1: testenv's
// webhook client resolves no name but localhost and dials only loopback.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientwebhook "github.com/berthhq/berth/client/webhook"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/webhook"
)

// receiver is a webhook receiver on 127.0.0.1 that answers status and keeps what it
// was sent.
type receiver struct {
	*httptest.Server
	status atomic.Int32
	hang   atomic.Bool
	mu     sync.Mutex
	got    []received
}

type received struct {
	path   string
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, status int) *receiver {
	r := &receiver{}
	r.status.Store(int32(status))
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{req.URL.Path, req.Header.Clone(), body})
		r.mu.Unlock()
		if r.hang.Load() {
			<-req.Context().Done()
			return
		}
		w.WriteHeader(int(r.status.Load()))
		_, _ = w.Write([]byte("answer \x00\xff"))
	}))
	t.Cleanup(r.Close)
	return r
}

// wait returns what the receiver got once it got n requests.
func (r *receiver) wait(t *testing.T, n int) []received {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r.mu.Lock()
		got := append([]received(nil), r.got...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver got %d requests, want %d", len(got), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// hmacSignatures computes, independently of Berth and of client/webhook, the v1
// signature of a delivery under secret.
func hmacSignature(t *testing.T, secret string, got received) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(got.header.Get("webhook-id") + "." + got.header.Get("webhook-timestamp") + "." + string(got.body)))
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// deliveries are a webhook's delivery log, newest first.
func deliveries(t *testing.T, c caller, hook string) []map[string]any {
	t.Helper()
	return items(t, c.Do("GET", "/webhooks/"+hook+"/deliveries", nil).Want(t, 200))
}

// waitDelivery waits until the webhook's newest delivery is in state.
func waitDelivery(t *testing.T, c caller, hook, state string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ds := deliveries(t, c, hook)
		if len(ds) > 0 && ds[0]["state"] == state {
			return ds[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook %s's deliveries %v: none %s", hook, ds, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func createHook(t *testing.T, c caller, body map[string]any) (id, secret string) {
	t.Helper()
	w := data(t, c.Do("POST", "/webhooks", body).Want(t, 201))
	return itoa(num(t, w["id"])), w["secret"].(string)
}

func TestWebhookRecord(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	c := as(env, a, "")
	w := data(t, c.Do("POST", "/webhooks", map[string]any{"url": "https://hooks.example.com/berth"}).Want(t, 201))
	id := itoa(num(t, w["id"]))
	secret, _ := w["secret"].(string)
	if raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_")); !strings.HasPrefix(secret, "whsec_") || err != nil || len(raw) != 32 {
		t.Errorf("secret %q: not whsec_ and the base64 of 32 bytes", secret)
	}
	if w["enabled"] != true || w["disabled_reason"] != nil || len(w["event_types"].([]any)) != 1 || w["event_types"].([]any)[0] != "*" {
		t.Errorf("created %v: want enabled, every type", w)
	}
	// The secret is shown at creation only.
	for _, r := range []map[string]any{data(t, c.Do("GET", "/webhooks/"+id, nil).Want(t, 200)), items(t, c.Do("GET", "/webhooks", nil).Want(t, 200))[0]} {
		if _, ok := r["secret"]; ok {
			t.Errorf("a read shows the secret: %v", r)
		}
	}
	// A read-only token reads; it changes nothing.
	ro := as(env, a, "read")
	ro.Do("GET", "/webhooks", nil).Want(t, 200)
	ro.Do("GET", "/webhooks/"+id, nil).Want(t, 200)
	ro.Do("GET", "/webhooks/"+id+"/deliveries", nil).Want(t, 200)
	e := wantError(t, ro.Do("PATCH", "/webhooks/"+id, map[string]any{"enabled": false}), 403, "missing_scope")
	if e.Message != msg("en", "error.missing_scopes", "scopes", allScopesBut("read")) {
		t.Errorf("read-only PATCH: %q", e.Message)
	}
	u := data(t, c.Do("PATCH", "/webhooks/"+id, map[string]any{"event_types": []string{"server.*", "operation.failed"}, "enabled": false}).Want(t, 200))
	if u["enabled"] != false || len(u["event_types"].([]any)) != 2 || u["secret"] != nil {
		t.Errorf("patched %v", u)
	}
	evs := items(t, c.Do("GET", "/events?types=webhook.*", nil).Want(t, 200))
	if len(evs) != 2 || evs[0]["type"] != "webhook.created" || evs[1]["type"] != "webhook.updated" ||
		strings.Join(toStrings(evs[1]["data"].(map[string]any)["changes"]), ",") != "event_types,enabled" {
		t.Errorf("events %v", evs)
	}
	// Another account sees none of it.
	other := as(env, env.NewAccount("en", "100", ""), "")
	for _, rq := range []struct{ method, path string }{
		{"GET", "/webhooks/" + id}, {"PATCH", "/webhooks/" + id}, {"DELETE", "/webhooks/" + id},
		{"POST", "/webhooks/" + id + "/test"}, {"POST", "/webhooks/" + id + "/rotate-secret"},
		{"GET", "/webhooks/" + id + "/deliveries"}, {"POST", "/webhooks/" + id + "/deliveries/1/redeliver"},
	} {
		var body any
		if rq.method == "PATCH" {
			body = map[string]any{"enabled": true}
		}
		wantError(t, other.Do(rq.method, rq.path, body), 404, "not_found")
	}
	if got := items(t, other.Do("GET", "/webhooks", nil).Want(t, 200)); len(got) != 0 {
		t.Errorf("another account lists %v", got)
	}
	c.Do("DELETE", "/webhooks/"+id, nil).Want(t, 204)
	wantError(t, c.Do("GET", "/webhooks/"+id, nil), 404, "not_found")
	if evs := items(t, c.Do("GET", "/events?types=webhook.deleted", nil).Want(t, 200)); len(evs) != 1 {
		t.Errorf("webhook.deleted events %v", evs)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestWebhookRules(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	c := as(env, a, "")
	// Each refused class of literal address, and plain http, is 422 on url.
	for _, tc := range []struct{ url, addr string }{
		{"https://127.0.0.1/h", "127.0.0.1"}, {"https://[::1]/h", "::1"}, {"https://10.0.0.1/h", "10.0.0.1"},
		{"https://172.16.5.4/h", "172.16.5.4"}, {"https://192.168.0.1/h", "192.168.0.1"}, {"https://[fc00::1]/h", "fc00::1"},
		{"https://169.254.169.254/latest", "169.254.169.254"}, {"https://100.64.0.1/h", "100.64.0.1"},
	} {
		e := wantError(t, c.Do("POST", "/webhooks", map[string]any{"url": tc.url}), 422, "validation_failed")
		if len(e.Errors["url"]) != 1 || !strings.Contains(e.Errors["url"][0], tc.addr) || len(e.Errors) != 1 {
			t.Errorf("%s: %v", tc.url, e.Errors)
		}
	}
	for _, tc := range []struct {
		body  map[string]any
		field string
		msgID string
	}{
		{map[string]any{"url": "http://hooks.example.com/"}, "url", "validation.webhook_url_scheme"},
		{map[string]any{"url": "https://u:p@hooks.example.com/"}, "url", "validation.webhook_url_userinfo"},
		{map[string]any{"url": "https://127.1/"}, "url", "validation.webhook_url_host"},
		{map[string]any{"url": "https://hooks.example.com:65536/"}, "url", "validation.webhook_url_port"},
		{map[string]any{"url": "https://hooks.example.com:0/"}, "url", "validation.webhook_url_port"},
		{map[string]any{}, "url", "validation.required"},
		{map[string]any{"url": "https://hooks.example.com/", "event_types": []string{}}, "event_types", "validation.required"},
		{map[string]any{"url": "https://hooks.example.com/", "event_types": []string{"server.crated"}}, "event_types", "validation.webhook_event_types"},
		{map[string]any{"url": "https://hooks.example.com/", "event_types": []string{"server.*", "server.*"}}, "event_types", "validation.webhook_event_types"},
	} {
		e := wantError(t, c.Do("POST", "/webhooks", tc.body), 422, "validation_failed")
		if len(e.Errors[tc.field]) != 1 || e.Errors[tc.field][0] != msg("en", tc.msgID) {
			t.Errorf("%v: %v, want %s on %s", tc.body, e.Errors, tc.msgID, tc.field)
		}
	}
	// Translated.
	de := as(env, env.NewAccount("de", "100", ""), "")
	e := wantError(t, de.Do("POST", "/webhooks", map[string]any{"url": "http://hooks.example.com/"}), 422, "validation_failed")
	if e.Errors["url"][0] != msg("de", "validation.webhook_url_scheme") {
		t.Errorf("German: %v", e.Errors)
	}
	// At most hosting.MaxWebhooks.
	for i := range hosting.MaxWebhooks {
		c.Do("POST", "/webhooks", map[string]any{"url": "https://hooks.example.com/" + itoa(int64(i)), "event_types": []string{"project.*"}}).Want(t, 201)
	}
	e = wantError(t, c.Do("POST", "/webhooks", map[string]any{"url": "https://hooks.example.com/x"}), 422, "validation_failed")
	if e.Errors["webhook_quota"][0] != msg("en", "validation.webhook_quota", "quota", hosting.MaxWebhooks) {
		t.Errorf("quota: %v", e.Errors)
	}
}

func TestWebhookDeliverySigned(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{WebhookAllowPrivate: true})
	a := env.NewAccount("en", "100", "")
	c := as(env, a, "")
	rcv := newReceiver(t, 200)
	hook, secret := createHook(t, c, map[string]any{"url": rcv.URL + "/hook", "event_types": []string{"ssh_key.*", "project.created"}})
	other, _ := createHook(t, c, map[string]any{"url": rcv.URL + "/other", "event_types": []string{"*"}})
	c.Do("POST", "/ssh-keys", map[string]any{"name": "k", "public_key": testenv.PublicKey(t)}).Want(t, 201)
	d := waitDelivery(t, c, hook, "delivered")
	var got received
	for _, g := range rcv.wait(t, 1) {
		if g.path == "/hook" && g.header.Get("webhook-id") == itoa(num(t, d["event_id"])) {
			got = g
		}
	}
	if got.body == nil {
		t.Fatalf("the receiver never got event %v", d["event_id"])
	}
	if err := clientwebhook.Verify(secret, got.header, got.body); err != nil {
		t.Errorf("client/webhook.Verify: %v", err)
	}
	if sig := got.header.Get("webhook-signature"); sig != hmacSignature(t, secret, got) {
		t.Errorf("webhook-signature %q, want the HMAC %q", sig, hmacSignature(t, secret, got))
	}
	if !strings.Contains(string(got.body), `"type":"ssh_key.created"`) || got.header.Get("Content-Type") != "application/json" {
		t.Errorf("delivered %s %v", got.body, got.header)
	}
	ev := items(t, c.Do("GET", "/events?types=ssh_key.created", nil).Want(t, 200))[0]
	if itoa(num(t, ev["id"])) != got.header.Get("webhook-id") {
		t.Errorf("webhook-id %s, event %v", got.header.Get("webhook-id"), ev["id"])
	}
	att := d["attempts"].([]any)[0].(map[string]any)
	if num(t, d["attempt_count"]) != 1 || num(t, att["status"]) != 200 || att["reason"] != nil || att["answer"] != "answer \uFFFD\uFFFD" {
		t.Errorf("delivery %v", d)
	}
	// A test goes to its webhook only, even where another's patterns match.
	before := len(deliveries(t, c, other))
	c.Do("POST", "/webhooks/"+hook+"/test", nil).Want(t, 202)
	if td := waitDelivery(t, c, hook, "delivered"); td["event_type"] != "webhook.test" {
		t.Errorf("test delivery %v", td)
	}
	if after := deliveries(t, c, other); len(after) != before {
		t.Errorf("the other webhook got the test: %v", after[0])
	}
	// Redeliver sends the same event again.
	rd := data(t, c.Do("POST", "/webhooks/"+hook+"/deliveries/"+itoa(num(t, d["id"]))+"/redeliver", nil).Want(t, 202))
	if rd["state"] != "pending" {
		t.Errorf("redelivered %v", rd)
	}
	id := got.header.Get("webhook-id")
	deadline := time.Now().Add(30 * time.Second)
	for count := 0; count < 2; {
		count = 0
		for _, g := range rcv.wait(t, 0) {
			if g.path == "/hook" && g.header.Get("webhook-id") == id {
				count++
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("event %s was sent %d times, want 2 after the redelivery", id, count)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWebhookRotateSignsWithBothFor24Hours(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Sandbox: true}) // test clocks; private addresses allowed
	a := env.NewAccount("en", "100", "")
	c := as(env, a, "")
	rcv := newReceiver(t, 200)
	hook, old := createHook(t, c, map[string]any{"url": rcv.URL, "event_types": []string{"project.*"}})
	rot := data(t, c.Do("POST", "/webhooks/"+hook+"/rotate-secret", nil).Want(t, 200))
	secret, _ := rot["secret"].(string)
	if secret == "" || secret == old {
		t.Fatalf("rotated: %v", rot)
	}
	c.Do("POST", "/webhooks/"+hook+"/test", nil).Want(t, 202)
	got := rcv.wait(t, 1)[0]
	sigs := strings.Fields(got.header.Get("webhook-signature"))
	if len(sigs) != 2 || sigs[0] != hmacSignature(t, secret, got) || sigs[1] != hmacSignature(t, old, got) {
		t.Errorf("during the overlap: %v, want the new secret's then the old one's", sigs)
	}
	for _, s := range []string{secret, old} {
		if err := clientwebhook.Verify(s, got.header, got.body); err != nil {
			t.Errorf("Verify during the overlap: %v", err)
		}
	}
	a.Sandbox("POST", "/clock", map[string]any{"advance": "24h1s"}).Want(t, 200)
	c.Do("POST", "/webhooks/"+hook+"/test", nil).Want(t, 202)
	got = rcv.wait(t, 2)[1]
	if sigs := strings.Fields(got.header.Get("webhook-signature")); len(sigs) != 1 || sigs[0] != hmacSignature(t, secret, got) {
		t.Errorf("after 24 h: %v, want only the new secret's", sigs)
	}
	if clientwebhook.Verify(old, got.header, got.body) == nil {
		t.Error("the old secret still verifies after 24 h")
	}
}

func TestWebhookGoneDisablesAtOnce(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{WebhookAllowPrivate: true})
	a := env.NewAccount("en", "100", "")
	c := as(env, a, "")
	rcv := newReceiver(t, 410)
	hook, _ := createHook(t, c, map[string]any{"url": rcv.URL, "event_types": []string{"project.*"}})
	c.Do("POST", "/projects", map[string]any{"name": "p"}).Want(t, 201)
	d := waitDelivery(t, c, hook, "failed")
	if num(t, d["attempt_count"]) != 1 || d["next_attempt_at"] != nil {
		t.Errorf("delivery %v: one attempt, no next", d)
	}
	w := data(t, c.Do("GET", "/webhooks/"+hook, nil).Want(t, 200))
	if w["enabled"] != false || w["disabled_reason"] != "gone" {
		t.Errorf("after a 410: %v", w)
	}
	evs := items(t, c.Do("GET", "/events?types=webhook.disabled", nil).Want(t, 200))
	if len(evs) != 1 || evs[0]["data"].(map[string]any)["reason"] != "gone" {
		t.Errorf("webhook.disabled events %v", evs)
	}
	// Disabled: no test, no redelivery, until enabled again.
	wantError(t, c.Do("POST", "/webhooks/"+hook+"/test", nil), 422, "validation_failed")
	redeliver := "/webhooks/" + hook + "/deliveries/" + itoa(num(t, d["id"])) + "/redeliver"
	wantError(t, c.Do("POST", redeliver, nil), 422, "validation_failed")
	rcv.status.Store(200)
	w = data(t, c.Do("PATCH", "/webhooks/"+hook, map[string]any{"enabled": true}).Want(t, 200))
	if w["enabled"] != true || w["disabled_reason"] != nil {
		t.Errorf("enabled again: %v", w)
	}
	c.Do("POST", redeliver, nil).Want(t, 202)
	if d := waitDelivery(t, c, hook, "delivered"); num(t, d["attempt_count"]) != 2 {
		t.Errorf("redelivered %v", d)
	}
}

// TestWebhookRetrySchedule fails every attempt: River schedules each next one on the
// documented schedule after the one before (its scheduled_at, read from the queue;
// the test then makes the job run at once instead of waiting hours), and after the
// tenth the webhook is disabled.
func TestWebhookRetrySchedule(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{WebhookAllowPrivate: true})
	a := env.NewAccount("en", "100", "")
	c := as(env, a, "")
	rcv := newReceiver(t, 500)
	hook, _ := createHook(t, c, map[string]any{"url": rcv.URL, "event_types": []string{"project.*"}})
	c.Do("POST", "/projects", map[string]any{"name": "p"}).Want(t, 201)
	for attempt := 1; attempt < webhook.MaxAttempts; attempt++ {
		retryOnSchedule(t, env, ops.WebhookDeliveryKind, attempt, 30*time.Second)
	}
	d := waitDelivery(t, c, hook, "failed")
	if num(t, d["attempt_count"]) != int64(webhook.MaxAttempts) || len(d["attempts"].([]any)) != webhook.MaxAttempts {
		t.Errorf("delivery %v: want %d attempts", d, webhook.MaxAttempts)
	}
	if got := len(rcv.wait(t, webhook.MaxAttempts)); got != webhook.MaxAttempts {
		t.Errorf("the receiver got %d requests", got)
	}
	w := data(t, c.Do("GET", "/webhooks/"+hook, nil).Want(t, 200))
	if w["enabled"] != false || w["disabled_reason"] != "failing" {
		t.Errorf("after the last attempt: %v", w)
	}
	evs := items(t, c.Do("GET", "/events?types=webhook.disabled", nil).Want(t, 200))
	if len(evs) != 1 || evs[0]["data"].(map[string]any)["reason"] != "failing" {
		t.Errorf("webhook.disabled events %v", evs)
	}
}

func TestWebhookHangingReceiverIsCut(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	env := testenv.New(t, testenv.Options{WebhookAllowPrivate: true, Webhook: webhook.Options{Timeout: timeout}})
	c := as(env, env.NewAccount("en", "100", ""), "")
	rcv := newReceiver(t, 200)
	rcv.hang.Store(true)
	hook, _ := createHook(t, c, map[string]any{"url": rcv.URL, "event_types": []string{"project.*"}})
	start := time.Now()
	c.Do("POST", "/projects", map[string]any{"name": "p"}).Want(t, 201)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ds := deliveries(t, c, hook)
		if len(ds) == 1 && len(ds[0]["attempts"].([]any)) > 0 {
			att := ds[0]["attempts"].([]any)[0].(map[string]any)
			if att["status"] != nil || !strings.Contains(att["reason"].(string), "no answer within "+timeout.String()) ||
				num(t, att["latency_ms"]) > (5*time.Second).Milliseconds() {
				t.Errorf("attempt %v: want cut after %s", att, timeout)
			}
			if ds[0]["state"] != "pending" || ds[0]["next_attempt_at"] == nil {
				t.Errorf("delivery %v: want another attempt to come", ds[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no attempt after %s", time.Since(start))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWebhookRefusedAddressNeverConnects: a name resolving to 127.0.0.1, without
// --webhook-allow-private, is refused at the attempt and no connection is made.
func TestWebhookRefusedAddressNeverConnects(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int32
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conn.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	env := testenv.New(t, testenv.Options{Webhook: webhook.Options{Resolver: fixedResolver{"rebind.example.com": "127.0.0.1"}}})
	c := as(env, env.NewAccount("en", "100", ""), "")
	hook, _ := createHook(t, c, map[string]any{"url": "https://rebind.example.com:" + itoa(int64(port)) + "/h", "event_types": []string{"project.*"}})
	c.Do("POST", "/projects", map[string]any{"name": "p"}).Want(t, 201)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ds := deliveries(t, c, hook)
		if len(ds) == 1 && len(ds[0]["attempts"].([]any)) > 0 {
			att := ds[0]["attempts"].([]any)[0].(map[string]any)
			if att["status"] != nil || !strings.Contains(att["reason"].(string), "127.0.0.1") {
				t.Errorf("attempt %v: want refused naming 127.0.0.1", att)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no attempt")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the refused address got %d connections", n)
	}
}

type fixedResolver map[string]string

func (r fixedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}
