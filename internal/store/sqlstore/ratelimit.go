package sqlstore

import (
	"context"
	"database/sql"
	"sync/atomic"
	"time"

	"github.com/berthhq/berth/internal/ratelimit"
)

// RateLimits is the ratelimit.Factory of limits kept in the database, which every
// process of a deployment shares (PostgreSQL only: on SQLite one process serves, and
// keeps its limits in memory).
func (db *DB) RateLimits(name string, limit int, window time.Duration) ratelimit.Counter {
	return &sharedLimit{db: db, name: name, limit: limit, window: window}
}

type sharedLimit struct {
	db     *DB
	name   string
	limit  int
	window time.Duration
	// swept is when this process last removed idle keys (Unix ns).
	swept atomic.Int64
}

func (l *sharedLimit) Allow(ctx context.Context, key string, now time.Time) (ratelimit.Result, error) {
	return l.take(ctx, key, now, true)
}

func (l *sharedLimit) Peek(ctx context.Context, key string, now time.Time) (ratelimit.Result, error) {
	return l.take(ctx, key, now, false)
}

func (l *sharedLimit) take(ctx context.Context, key string, now time.Time, count bool) (ratelimit.Result, error) {
	l.sweep(ctx, now)
	at, win := now.UnixMicro(), l.window.Microseconds()
	var allowed bool
	var n int
	var oldest, newest sql.NullInt64
	err := l.db.write.QueryRowContext(ctx, `SELECT allowed, n, oldest, newest FROM berth_rate_take($1, $2, $3, $4, $5)`,
		l.name+"|"+key, l.limit, win, at, count).Scan(&allowed, &n, &oldest, &newest)
	if err != nil {
		return ratelimit.Result{}, transient(err)
	}
	res := ratelimit.Result{Allowed: allowed, Limit: l.limit, Remaining: l.limit - n, Reset: now}
	if newest.Valid {
		res.Reset = time.UnixMicro(newest.Int64 + win)
	}
	if !allowed && oldest.Valid {
		res.RetryAfter = time.UnixMicro(oldest.Int64 + win).Sub(now)
	}
	return res, nil
}

// sweep removes, once a window, this limit's keys that counted nothing within it.
func (l *sharedLimit) sweep(ctx context.Context, now time.Time) {
	last := l.swept.Load()
	if now.UnixNano()-last < int64(l.window) || !l.swept.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	// Idle keys go with their events (all of them older than the window); a take of
	// such a key meanwhile finds no row and starts afresh, which is what it would count.
	floor := now.Add(-l.window).UnixMicro()
	_, _ = l.db.write.ExecContext(ctx, `WITH idle AS (DELETE FROM rate_limits WHERE touched < $1 AND key LIKE $2 RETURNING key)
		DELETE FROM rate_events e USING idle WHERE e.key = idle.key AND e.at < $1`, floor, l.name+"|%")
}
