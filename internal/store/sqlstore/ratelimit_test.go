package sqlstore_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/testpg"
)

// The shared limit is exact across processes: three stores on one database (three
// berthd processes) asking at once let through exactly the limit, and it frees a
// slot when the oldest counted request leaves the window.
func TestPostgresRateLimitsAcrossProcesses(t *testing.T) {
	t.Parallel()
	dbs := openProcesses(t, 3)
	ctx := context.Background()
	start := time.Now()
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lim := dbs[i%3].RateLimits("api-token", 120, time.Minute)
			res, err := lim.Allow(ctx, "t:1", start.Add(time.Duration(i)*time.Millisecond))
			if err != nil {
				t.Error(err)
				return
			}
			if res.Allowed {
				allowed.Add(1)
			}
		}()
	}
	wg.Wait()
	if got := allowed.Load(); got != 120 {
		t.Fatalf("%d of 200 requests allowed across three processes, want exactly 120", got)
	}
	lim := dbs[0].RateLimits("api-token", 120, time.Minute)
	res, err := lim.Peek(ctx, "t:1", start.Add(time.Second))
	if err != nil || res.Allowed || res.Remaining != 0 || res.RetryAfter <= 0 || res.RetryAfter > time.Minute {
		t.Fatalf("peek while full: %+v, %v", res, err)
	}
	// Another name, another key: counted apart.
	if res, err := dbs[1].RateLimits("signin-email", 5, time.Minute).Allow(ctx, "t:1", start); err != nil || !res.Allowed || res.Remaining != 4 {
		t.Fatalf("another limit's key: %+v, %v", res, err)
	}
	// A minute after the first requests their slots are free again.
	res, err = lim.Allow(ctx, "t:1", start.Add(time.Minute+150*time.Millisecond))
	if err != nil || !res.Allowed {
		t.Fatalf("after the window: %+v, %v", res, err)
	}
}

// Far from its limit a key is counted in grants: a process serving many of its
// requests asks the database about a dozen times for a thousand requests, not a
// thousand times. Near the limit, grants shrink to one request each, and three
// processes together never let through more than the limit.
func TestPostgresRateLimitGrants(t *testing.T) {
	t.Parallel()
	dbs := openProcesses(t, 3)
	ctx := context.Background()
	start := time.Now()
	takes := func(key string) (rows, counted int) {
		t.Helper()
		err := dbs[0].WriteDB().QueryRowContext(ctx, `SELECT count(*), COALESCE(sum(n), 0) FROM rate_events WHERE key = $1`, key).Scan(&rows, &counted)
		if err != nil {
			t.Fatal(err)
		}
		return rows, counted
	}

	// One process, a thousand requests within its leases, far from a large limit.
	big := dbs[0].RateLimits("api-token", 1_000_000, time.Minute)
	for i := range 1000 {
		res, err := big.Allow(ctx, "t:big", start.Add(time.Duration(i)*time.Millisecond/2))
		if err != nil || !res.Allowed {
			t.Fatalf("request %d: %+v, %v", i, res, err)
		}
	}
	if rows, counted := takes("api-token|t:big"); rows > 20 || counted < 1000 || counted > 1500 {
		t.Errorf("1000 requests took %d grants counting %d requests, want at most 20 counting 1000-1500", rows, counted)
	}

	// Three processes, 3 x 2000 requests at once against a limit of 3000: never more
	// than the limit, and little of it left unused in grants.
	const limit = 3000
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for p := range 3 {
		lim := dbs[p].RateLimits("api-token", limit, time.Minute)
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 500 {
					res, err := lim.Allow(ctx, "t:mid", start.Add(time.Duration(g*500+i)*100*time.Microsecond))
					if err != nil {
						t.Error(err)
						return
					}
					if res.Allowed {
						allowed.Add(1)
					}
				}
			}()
		}
	}
	wg.Wait()
	if got := allowed.Load(); got > limit || got < limit*95/100 {
		t.Errorf("%d of 6000 requests allowed across three processes with a limit of %d, want at most the limit and at least 95%% of it", got, limit)
	}
	if _, counted := takes("api-token|t:mid"); counted != limit {
		t.Errorf("the window counts %d requests, want the limit %d", counted, limit)
	}
}

// openProcesses opens n stores on one new PostgreSQL database, as n berthd
// processes would, migrated by the first.
func openProcesses(t *testing.T, n int) []*sqlstore.DB {
	t.Helper()
	return openProcessesAt(t, testpg.NewDatabase(t), n)
}

// openProcessesAt is openProcesses on the database at u.
func openProcessesAt(t *testing.T, u string, n int) []*sqlstore.DB {
	t.Helper()
	dbs := make([]*sqlstore.DB, n)
	for i := range dbs {
		db, err := sqlstore.OpenPostgres(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := db.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return dbs
}
