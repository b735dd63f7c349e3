package ops

import (
	"testing"
	"time"
)

// TestTouchDue: a token's use is recorded at most once a minute, and the records kept
// for that are about the tokens used in the last minute, not every token ever used.
func TestTouchDue(t *testing.T) {
	t.Parallel()
	s := New(Deps{})
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	if !s.touchDue(1, t0) {
		t.Fatal("first use of token 1: not due")
	}
	if s.touchDue(1, t0.Add(59*time.Second)) {
		t.Fatal("token 1 again within the minute: due")
	}
	if !s.touchDue(1, t0.Add(time.Minute)) {
		t.Fatal("token 1 a minute later: not due")
	}

	// 100,000 tokens used once each, 100 a second: only about the last minute's stay.
	for i := range int64(100_000) {
		now := t0.Add(2*time.Minute + time.Duration(i)*10*time.Millisecond)
		if !s.touchDue(1000+i, now) {
			t.Fatalf("first use of token %d: not due", 1000+i)
		}
	}
	if n, most := len(s.touched), 2*6_000+touchSweepMin; n > most {
		t.Errorf("%d tokens remembered after 100,000 single uses at 100 a second, want at most %d", n, most)
	}
}
