package testenv

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// HookReceiver is a webhook receiver on 127.0.0.1 (httptest) that keeps every request
// it is sent and answers 200. Berth's webhook client in tests dials loopback only.
type HookReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []HookRequest
}

// HookRequest is one request a HookReceiver got.
type HookRequest struct {
	Header http.Header
	Body   []byte
}

// Type is the type of the event the request carries ("" for none).
func (r HookRequest) Type() string {
	var e struct{ Type string }
	_ = json.Unmarshal(r.Body, &e)
	return e.Type
}

// ID is the request's webhook-id.
func (r HookRequest) ID() string { return r.Header.Get("webhook-id") }

// NewHookReceiver starts a receiver, closed when t ends.
func NewHookReceiver(t testing.TB) *HookReceiver {
	r := &HookReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, HookRequest{req.Header.Clone(), body})
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

// Requests is what the receiver got so far, in order.
func (r *HookReceiver) Requests() []HookRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]HookRequest(nil), r.got...)
}

// Wait returns the requests that match once there are n of them; it fails t after
// 30 s, naming what.
func (r *HookReceiver) Wait(t testing.TB, what string, n int, match func(HookRequest) bool) []HookRequest {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var of []HookRequest
		for _, g := range r.Requests() {
			if match(g) {
				of = append(of, g)
			}
		}
		if len(of) >= n {
			return of
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver got %d of %s, want %d", len(of), what, n)
		}
	}
}

// WaitType returns the requests carrying an event of typ once there are n of them.
func (r *HookReceiver) WaitType(t testing.TB, typ string, n int) []HookRequest {
	t.Helper()
	return r.Wait(t, typ+" events", n, func(g HookRequest) bool { return g.Type() == typ })
}

// Count is how many requests the receiver got with webhook-id id.
func (r *HookReceiver) Count(id string) int {
	n := 0
	for _, g := range r.Requests() {
		if g.ID() == id {
			n++
		}
	}
	return n
}
