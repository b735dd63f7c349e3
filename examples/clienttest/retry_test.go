package clienttest

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestRetriesUnavailableAndRateLimited: the client sends a request answered 503
// or 429 again after the answer's Retry-After, until it gets the real answer. The
// sandbox answers the first two attempts with the fault (the very body and headers
// a real 503 or 429 has), the journal shows what the client sent.
func TestRetriesUnavailableAndRateLimited(t *testing.T) {
	for _, tc := range []struct {
		status     int
		retryAfter time.Duration // what the API's answer says
	}{
		{http.StatusServiceUnavailable, 5 * time.Second},
		{http.StatusTooManyRequests, time.Second},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			c, sb := startTest(t)
			sb.fault(map[string]any{"method": "GET", "path": "/servers", "status": tc.status, "times": 2})

			var servers []Server
			if err := c.Do(testContext(t), "GET", "/servers", nil, &servers); err != nil {
				t.Fatalf("GET /servers through two %ds: %v", tc.status, err)
			}

			// Three attempts: two faults, then the real answer, each retry sent no
			// sooner than the Retry-After of the answer before it.
			reqs := sb.requests(3)
			want := []int{200, tc.status, tc.status} // newest first
			if len(reqs) != len(want) {
				t.Fatalf("the journal holds %d requests of the test, want %d", len(reqs), len(want))
			}
			for i, r := range reqs {
				if r.Method != "GET" || r.Path != "/v1/servers" || r.Status != want[i] {
					t.Fatalf("request %d from the last: %s %s → %d, want GET /v1/servers → %d", i, r.Method, r.Path, r.Status, want[i])
				}
			}
			for i := 0; i+1 < len(reqs); i++ {
				// The journal's times are to the millisecond.
				if waited := reqs[i].Time.Sub(reqs[i+1].Time); waited < tc.retryAfter-time.Millisecond {
					t.Errorf("a retry came %s after a %d, want at least its Retry-After %s", waited, tc.status, tc.retryAfter)
				}
			}
		})
	}
}

// TestRetriedOrderMakesOneServer: an order answered 429 twice is sent again with the
// same Idempotency-Key each time, and makes one server.
func TestRetriedOrderMakesOneServer(t *testing.T) {
	c, sb := startTest(t)
	sb.fault(map[string]any{"method": "POST", "path": "/servers", "status": 429, "times": 2})

	srv, err := c.CreateServer(testContext(t), order("retried"))
	if err != nil {
		t.Fatal(err)
	}
	if srv.Status != "running" {
		t.Errorf("server %s is %s, want running", srv.Name, srv.Status)
	}

	var orders []journalEntry // oldest first
	for _, r := range sb.requests(50) {
		if r.Method == "POST" && r.Path == "/v1/servers" {
			orders = append([]journalEntry{r}, orders...)
		}
	}
	if len(orders) != 3 || orders[0].Status != 429 || orders[1].Status != 429 || orders[2].Status != 201 {
		t.Fatalf("want the order sent three times (429, 429, 201), got %d", len(orders))
	}
	for _, o := range orders {
		if o.IdempotencyKey == nil || *o.IdempotencyKey != *orders[0].IdempotencyKey {
			t.Errorf("attempts of one order carry Idempotency-Keys %v and %v, want one key", o.IdempotencyKey, orders[0].IdempotencyKey)
		}
	}
	var servers []Server
	if err := c.Do(testContext(t), "GET", "/servers", nil, &servers); err != nil || len(servers) != 1 {
		t.Errorf("the account has %d servers (%v), want 1", len(servers), err)
	}
}
