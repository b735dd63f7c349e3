package client

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RateLimit is a token's budget as an answer stated it (docs/api.md, Rate limits): Limit
// requests per rolling minute, Remaining of them left, and Reset, when the whole
// budget is back.
type RateLimit struct {
	Limit     int
	Remaining int
	Reset     time.Time
}

// RateLimit returns the budget the latest answer stated, and false before any
// answer stated one. Every answer of /v1 does, errors and 429 included; an answer to
// a missing or unknown token states the budget of the client's address for such
// attempts instead. Shared by the calls of all goroutines: the latest to arrive wins.
func (c *Client) RateLimit() (RateLimit, bool) {
	c.rate.mu.Lock()
	defer c.rate.mu.Unlock()
	return c.rate.last, c.rate.seen
}

// rateState is the latest budget seen, shared by a client and its copies (the
// sandbox API's).
type rateState struct {
	mu   sync.Mutex
	last RateLimit
	seen bool
}

// note keeps the budget h states, if it states a whole one.
func (r *rateState) note(h http.Header) {
	rl, ok := parseRateLimit(h)
	if !ok {
		return
	}
	r.mu.Lock()
	r.last, r.seen = rl, true
	r.mu.Unlock()
}

// parseRateLimit reads RateLimit-Limit, -Remaining and -Reset (Unix seconds), or
// their X- forms; false unless all three are there, whole and not negative.
func parseRateLimit(h http.Header) (RateLimit, bool) {
	var v [3]int64
	for i, name := range [3]string{"Limit", "Remaining", "Reset"} {
		s := h.Get("Ratelimit-" + name)
		if s == "" {
			s = h.Get("X-Ratelimit-" + name)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || n < 0 {
			return RateLimit{}, false
		}
		v[i] = n
	}
	if v[0] > int64(^uint(0)>>1) || v[1] > v[0] {
		return RateLimit{}, false
	}
	return RateLimit{Limit: int(v[0]), Remaining: int(v[1]), Reset: time.Unix(v[2], 0)}, true
}
