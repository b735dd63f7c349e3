// Package ratelimit enforces "N requests per rolling window" per key, exactly: a key
// is allowed a request when fewer than N of its allowed requests lie in the last
// window. Each key keeps the times of its last N allowed requests (a ring), so memory
// is bounded by N per active key, and idle keys are swept.
//
// This is stricter than GCRA, which lets a client burst N and then continue at the
// steady rate, reaching about 2N in one window; docs/api.md, Rate limits promises 120 per
// rolling minute, and clients may rely on the cap not being exceeded.
package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// Result is the outcome of one Allow call.
type Result struct {
	Allowed   bool
	Limit     int
	Remaining int
	// Reset is when the newest counted request leaves the window: from then on the
	// whole budget is available again.
	Reset time.Time
	// RetryAfter is how long a refused client should wait: until the oldest counted
	// request leaves the window and frees a slot.
	RetryAfter time.Duration
}

// Limiter is safe for concurrent use.
type Limiter struct {
	limit  int
	window time.Duration
	seed   maphash.Seed
	shards [64]shard
	// lastSweep is when idle keys were last forgotten (Unix ns).
	lastSweep atomic.Int64
}

type shard struct {
	mu   sync.Mutex
	keys map[string]*ring
}

type ring struct {
	times []int64 // Unix nanoseconds, oldest at start
	start int
	n     int
}

// New returns a limiter allowing limit requests per window per key.
func New(limit int, window time.Duration) *Limiter {
	l := &Limiter{limit: limit, window: window, seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].keys = map[string]*ring{}
	}
	return l
}

// Limit returns the number of requests allowed per window.
func (l *Limiter) Limit() int { return l.limit }

// Allow counts a request for key at now, if the window has room for it.
func (l *Limiter) Allow(key string, now time.Time) Result { return l.take(key, now, true) }

// Peek answers what Allow would, without counting anything.
func (l *Limiter) Peek(key string, now time.Time) Result { return l.take(key, now, false) }

func (l *Limiter) take(key string, now time.Time, count bool) Result {
	sh := &l.shards[maphash.String(l.seed, key)%uint64(len(l.shards))]
	t := now.UnixNano()
	floor := t - int64(l.window)
	if last := l.lastSweep.Load(); t-last > int64(l.window) && l.lastSweep.CompareAndSwap(last, t) {
		for i := range l.shards {
			l.shards[i].sweep(floor)
		}
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	r := sh.keys[key]
	if r == nil {
		if !count {
			return Result{Allowed: true, Limit: l.limit, Remaining: l.limit, Reset: now}
		}
		r = &ring{times: make([]int64, min(l.limit, 8))}
		sh.keys[key] = r
	}
	for r.n > 0 && r.times[r.start] <= floor {
		r.start = (r.start + 1) % len(r.times)
		r.n--
	}
	res := Result{Limit: l.limit}
	if r.n < l.limit && !count {
		res.Allowed = true
	} else if r.n < l.limit {
		if r.n == len(r.times) {
			r.grow(l.limit)
		}
		r.times[(r.start+r.n)%len(r.times)] = t
		r.n++
		res.Allowed = true
	}
	res.Remaining = l.limit - r.n
	res.Reset = now
	if r.n > 0 {
		res.Reset = time.Unix(0, r.times[(r.start+r.n-1)%len(r.times)]+int64(l.window))
		if !res.Allowed {
			res.RetryAfter = time.Unix(0, r.times[r.start]+int64(l.window)).Sub(now)
		}
	}
	return res
}

// grow doubles the ring (up to limit), keeping the times in order.
func (r *ring) grow(limit int) {
	times := make([]int64, min(2*len(r.times), limit))
	for i := range r.n {
		times[i] = r.times[(r.start+i)%len(r.times)]
	}
	r.times, r.start = times, 0
}

// sweep forgets keys with nothing in the window.
func (sh *shard) sweep(floor int64) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for k, r := range sh.keys {
		if r.n == 0 || r.times[(r.start+r.n-1)%len(r.times)] <= floor {
			delete(sh.keys, k)
		}
	}
}

// Counter is a rate limit wherever it is kept: in this process (a Limiter), or in a
// store every process of a deployment shares, so that the limit holds for the
// deployment as a whole (docs/api.md, Rate limits). A shared one can fail to answer: the
// error says why, and the request is then not served.
type Counter interface {
	// Allow counts a request for key at now, if the window has room for it.
	Allow(ctx context.Context, key string, now time.Time) (Result, error)
	// Peek answers what Allow would, without counting anything.
	Peek(ctx context.Context, key string, now time.Time) (Result, error)
}

// Factory makes the Counter named name (each name counts its own keys) allowing limit
// requests per window per key.
type Factory func(name string, limit int, window time.Duration) Counter

// InMemory is the Factory of Limiters: limits of one process.
func InMemory(_ string, limit int, window time.Duration) Counter { return local{New(limit, window)} }

type local struct{ l *Limiter }

func (c local) Allow(_ context.Context, key string, now time.Time) (Result, error) {
	return c.l.Allow(key, now), nil
}

func (c local) Peek(_ context.Context, key string, now time.Time) (Result, error) {
	return c.l.Peek(key, now), nil
}
