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
	u := testpg.NewDatabase(t)
	dbs := make([]*sqlstore.DB, 3)
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
