package ratelimit

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestRollingWindow(t *testing.T) {
	t.Parallel()
	l := New(3, time.Minute)
	t0 := time.Unix(1000, 0)
	steps := []struct {
		at        time.Duration
		allowed   bool
		remaining int
	}{
		{0, true, 2},
		{10 * time.Second, true, 1},
		{20 * time.Second, true, 0},
		{30 * time.Second, false, 0},                 // 3 in the last minute
		{60 * time.Second, true, 0},                  // the first left the window at exactly 60 s
		{69 * time.Second, false, 0},                 // second (t=10) still inside
		{70*time.Second + time.Millisecond, true, 0}, // second left
		{200 * time.Second, true, 2},                 // all old ones gone
	}
	for i, s := range steps {
		r := l.Allow("k", t0.Add(s.at))
		if r.Allowed != s.allowed || r.Remaining != s.remaining || r.Limit != 3 {
			t.Fatalf("step %d at %v: got allowed=%v remaining=%d, want %v %d", i, s.at, r.Allowed, r.Remaining, s.allowed, s.remaining)
		}
	}
}

func TestRetryAfterAndReset(t *testing.T) {
	t.Parallel()
	l := New(2, time.Minute)
	t0 := time.Unix(5000, 0)
	l.Allow("a", t0)
	l.Allow("a", t0.Add(15*time.Second))
	r := l.Allow("a", t0.Add(20*time.Second))
	// A slot frees when the oldest request leaves the window; the whole budget is
	// back when the newest does.
	if r.Allowed || r.RetryAfter != 40*time.Second || !r.Reset.Equal(t0.Add(75*time.Second)) {
		t.Fatalf("refused request: %+v", r)
	}
	if other := l.Allow("b", t0.Add(20*time.Second)); !other.Allowed {
		t.Fatal("keys must not share a window")
	}
}

// Never more than limit allowed in any window, under concurrency.
func TestConcurrentCap(t *testing.T) {
	t.Parallel()
	l := New(120, time.Minute)
	now := time.Now()
	var mu sync.Mutex
	allowed := 0
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if l.Allow(fmt.Sprint("tok", g%2), now).Allowed {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if allowed != 240 {
		t.Fatalf("allowed %d across two keys, want exactly 240", allowed)
	}
}

func TestSweepForgetsIdleKeys(t *testing.T) {
	t.Parallel()
	l := New(5, time.Second)
	t0 := time.Unix(100, 0)
	for i := range 1000 {
		l.Allow(fmt.Sprint("ip", i), t0)
	}
	l.Allow("late", t0.Add(3*time.Second))
	n := 0
	for i := range l.shards {
		n += len(l.shards[i].keys)
	}
	if n > 64 {
		t.Fatalf("%d keys kept after their window passed", n)
	}
}

func BenchmarkAllow(b *testing.B) {
	l := New(1<<30, time.Minute)
	now := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			l.Allow("token", now)
		}
	})
}

func TestPeekCountsNothing(t *testing.T) {
	t.Parallel()
	l := New(2, time.Minute)
	now := time.Unix(1, 0)
	for range 5 {
		if r := l.Peek("k", now); !r.Allowed || r.Remaining != 2 {
			t.Fatalf("peek on a fresh key: %+v", r)
		}
	}
	l.Allow("k", now)
	l.Allow("k", now)
	if r := l.Peek("k", now); r.Allowed || r.RetryAfter != time.Minute {
		t.Fatalf("peek on a full window: %+v", r)
	}
}
