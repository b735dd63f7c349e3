package sqlstore

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"

	"github.com/berthhq/berth/internal/ratelimit"
)

// RateLimits is the ratelimit.Factory of limits kept in the database, which every
// process of a deployment shares (PostgreSQL only: on SQLite one process serves, and
// keeps its limits in memory).
//
// Counting every request in the database costs a write per request. A process that
// serves many requests of one key therefore asks for several at a time (a grant) and
// allows them from memory over the next leaseTime. The database gives a grant of more
// than one only while the key is far from its limit (at least 64 times the grant
// remains; berth_rate_take), so that near it every request is counted on its own and
// the limit holds exactly across processes; a grant is counted in the window from the
// end of its lease, so it never leaves the window before a request it allowed. What
// a grant leaves unused is counted all the same: a process asks for about twice what
// it used of its last grant, so little goes unused, and only far from the limit.
func (db *DB) RateLimits(name string, limit int, window time.Duration) ratelimit.Counter {
	return &sharedLimit{db: db, name: name, limit: limit, window: window, leases: map[string]*lease{}}
}

// leaseTime is how long a grant of several requests may be used; maxGrant the most
// one grant holds.
const (
	leaseTime = time.Second
	maxGrant  = 256
)

type sharedLimit struct {
	db     *DB
	name   string
	limit  int
	window time.Duration
	// swept is when this process last removed idle keys (Unix ns).
	swept atomic.Int64

	mu     sync.Mutex
	leases map[string]*lease
}

// lease is what this process holds of a key's grants.
type lease struct {
	mu sync.Mutex
	// left is how many requests the grant still allows, until until.
	left  int
	until time.Time
	// used is how many of the current grant were used; want is the size to ask next.
	used, want int
	// res is the database's answer for the grant (Remaining after all of it).
	res ratelimit.Result
	// peeked is the database's answer to the last Peek, answered again until
	// peekedUntil unless this process counts a request of the key meanwhile.
	peeked      ratelimit.Result
	peekedUntil time.Time
}

func (l *sharedLimit) Allow(ctx context.Context, key string, now time.Time) (ratelimit.Result, error) {
	ls := l.lease(key)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.peekedUntil = time.Time{}
	if ls.left > 0 && now.Before(ls.until) {
		ls.left--
		ls.used++
		res := ls.res
		res.Remaining += ls.left
		return res, nil
	}
	// The next grant: about twice what the last one served while it lasted, at least one.
	switch {
	case ls.want == 0:
		ls.want = 1
	case ls.left == 0 && ls.used > 0:
		ls.want = min(2*ls.used, maxGrant)
	default:
		ls.want = max(ls.used, 1)
	}
	res, granted, err := l.take(ctx, key, now, true, ls.want)
	if err != nil {
		return res, err
	}
	ls.res, ls.used, ls.left, ls.until = res, 0, 0, now.Add(leaseTime)
	if granted > 0 {
		ls.used, ls.left = 1, granted-1
		res.Remaining += ls.left
	}
	return res, nil
}

// Peek answers from memory while this process holds a grant of the key, and repeats
// an allowing answer of the database for up to leaseTime while this process counts
// nothing of the key: the API peeks at a client address's failed attempts before
// every request, and most addresses have none. Another process's counting may thus
// be seen by a peek up to leaseTime late; Allow, which counts, never is.
func (l *sharedLimit) Peek(ctx context.Context, key string, now time.Time) (ratelimit.Result, error) {
	ls := l.lease(key)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.left > 0 && now.Before(ls.until) {
		res := ls.res
		res.Remaining += ls.left
		return res, nil
	}
	if now.Before(ls.peekedUntil) && !now.Before(ls.peekedUntil.Add(-leaseTime)) {
		return ls.peeked, nil
	}
	res, _, err := l.take(ctx, key, now, false, 1)
	if err == nil && res.Allowed {
		ls.peeked, ls.peekedUntil = res, now.Add(leaseTime)
	}
	return res, err
}

// lease returns this process's lease of key, making it if need be.
func (l *sharedLimit) lease(key string) *lease {
	l.mu.Lock()
	defer l.mu.Unlock()
	ls, ok := l.leases[key]
	if !ok {
		ls = &lease{}
		l.leases[key] = ls
	}
	return ls
}

// take asks the database for up to want requests of key at now (count), or whether
// one would be allowed (!count), and returns what it answered and how many it granted.
func (l *sharedLimit) take(ctx context.Context, key string, now time.Time, count bool, want int) (ratelimit.Result, int, error) {
	l.sweep(ctx, now)
	at, win := now.UnixMicro(), l.window.Microseconds()
	var granted, n int
	var oldest, newest sql.NullInt64
	err := l.db.write.QueryRowContext(ctx, `SELECT granted, n, oldest, newest FROM berth_rate_take($1, $2, $3, $4, $5, $6, $7)`,
		l.name+"|"+key, l.limit, win, at, count, want, leaseTime.Microseconds()).Scan(&granted, &n, &oldest, &newest)
	if err != nil {
		return ratelimit.Result{}, 0, transient(err)
	}
	res := ratelimit.Result{Allowed: granted > 0, Limit: l.limit, Remaining: max(l.limit-n, 0), Reset: now}
	if newest.Valid {
		res.Reset = time.UnixMicro(newest.Int64 + win)
	}
	if !res.Allowed && oldest.Valid {
		res.RetryAfter = time.UnixMicro(oldest.Int64 + win).Sub(now)
	}
	if !count {
		granted = 0
	}
	return res, granted, nil
}

// sweep removes, once a window, this limit's keys that counted nothing within it, in
// the database and this process's leases.
func (l *sharedLimit) sweep(ctx context.Context, now time.Time) {
	last := l.swept.Load()
	if now.UnixNano()-last < int64(l.window) || !l.swept.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	l.mu.Lock()
	for k, ls := range l.leases {
		if ls.mu.TryLock() {
			if now.Sub(ls.until) > l.window && now.Sub(ls.peekedUntil) > l.window {
				delete(l.leases, k)
			}
			ls.mu.Unlock()
		}
	}
	l.mu.Unlock()
	// Idle keys go with their events (all of them older than the window); a take of
	// such a key meanwhile finds no row and starts afresh, which is what it would count.
	floor := now.Add(-l.window).UnixMicro()
	_, _ = l.db.write.ExecContext(ctx, `WITH idle AS (DELETE FROM rate_limits WHERE touched < $1 AND key LIKE $2 RETURNING key)
		DELETE FROM rate_events e USING idle WHERE e.key = idle.key AND e.at < $1`, floor, l.name+"|%")
}
