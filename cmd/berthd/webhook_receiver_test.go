package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/client/webhook"
)

// hookReceiver is a webhook receiver on 127.0.0.1 as docs/webhooks.md asks one to be:
// it checks each request's signature with the SDK's webhook.Verify and handles each
// webhook-id once (its dedupe), counting every request it gets.
type hookReceiver struct {
	srv    *httptest.Server
	secret atomic.Pointer[string]
	delay  atomic.Int64 // how long each answer takes, in nanoseconds

	inFlight atomic.Int64
	mu       sync.Mutex
	requests map[string]int // webhook-id: requests
	handled  []string       // the dedupe's: each webhook-id the first time
	bad      []string       // what failed its check
}

func newHookReceiver(t *testing.T, delay time.Duration) *hookReceiver {
	t.Helper()
	r := &hookReceiver{requests: map[string]int{}}
	r.delay.Store(int64(delay))
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve)) // 127.0.0.1
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) url() string { return r.srv.URL + "/hook" }

func (r *hookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	r.inFlight.Add(1)
	defer r.inFlight.Add(-1)
	body, err := io.ReadAll(req.Body)
	id := req.Header.Get(webhook.HeaderID)
	var problem string
	var ev struct {
		Type string `json:"type"`
	}
	switch secret := r.secret.Load(); {
	case err != nil:
		problem = err.Error()
	case secret == nil:
		problem = "a delivery before the webhook's secret was known"
	default:
		if err := webhook.Verify(*secret, req.Header, body); err != nil {
			problem = "signature: " + err.Error()
		} else if err := json.Unmarshal(body, &ev); err != nil || ev.Type == "" {
			problem = fmt.Sprintf("body %q", body)
		}
	}
	r.mu.Lock()
	r.requests[id]++
	if problem != "" {
		r.bad = append(r.bad, id+": "+problem)
	} else if r.requests[id] == 1 {
		r.handled = append(r.handled, id)
	}
	r.mu.Unlock()
	time.Sleep(time.Duration(r.delay.Load()))
	w.WriteHeader(http.StatusNoContent)
}

// counts says how many webhook-ids were handled and how many requests came in all.
func (r *hookReceiver) counts() (handled, requests int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.requests {
		requests += n
	}
	return len(r.handled), requests
}

// waitHandled waits until n webhook-ids have been handled, at most timeout.
func (r *hookReceiver) waitHandled(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got, _ := r.counts()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver handled %d webhook-ids after %v, want %d", got, timeout, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// check compares what the receiver saw with the events that were to be delivered:
// each handled once, none missing, none unknown, every signature good. It returns
// the requests per webhook-id.
func (r *hookReceiver) check(t *testing.T, events []int64) map[string]int {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.bad {
		t.Errorf("receiver: %s", b)
	}
	want := map[string]bool{}
	for _, e := range events {
		want[strconv.FormatInt(e, 10)] = true
	}
	handled := map[string]int{}
	for _, id := range r.handled {
		handled[id]++
		if !want[id] {
			t.Errorf("webhook-id %s was no event to deliver", id)
		}
	}
	var lost []string
	for id := range want {
		if n := handled[id]; n != 1 {
			lost = append(lost, fmt.Sprintf("%s (handled %d times)", id, n))
		}
	}
	sort.Strings(lost)
	if len(lost) > 0 {
		t.Errorf("%d of %d events not handled exactly once: %v", len(lost), len(events), lost)
	}
	out := map[string]int{}
	for id, n := range r.requests {
		out[id] = n
	}
	return out
}
