package webhook

import (
	"testing"
	"time"
)

func TestNextAttempt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		attempt int
		wait    time.Duration
		again   bool
	}{
		{0, 5 * time.Second, true}, // below 1: the first
		{1, 5 * time.Second, true},
		{2, 5 * time.Minute, true},
		{3, 30 * time.Minute, true},
		{4, 2 * time.Hour, true},
		{5, 5 * time.Hour, true},
		{6, 10 * time.Hour, true},
		{7, 14 * time.Hour, true},
		{8, 20 * time.Hour, true},
		{9, 24 * time.Hour, true},
		{10, 0, false}, // the tenth attempt is the last
		{11, 0, false},
	} {
		wait, again := NextAttempt(tc.attempt)
		if wait != tc.wait || again != tc.again {
			t.Errorf("NextAttempt(%d) = %v, %v; want %v, %v", tc.attempt, wait, again, tc.wait, tc.again)
		}
	}
	if MaxAttempts != 10 {
		t.Errorf("MaxAttempts = %d, want 10", MaxAttempts)
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		want   Outcome
	}{
		{0, Retry}, {100, Retry}, {199, Retry},
		{200, Delivered}, {201, Delivered}, {204, Delivered}, {299, Delivered},
		{301, Retry}, {302, Retry}, {307, Retry},
		{400, Retry}, {404, Retry}, {409, Retry}, {429, Retry},
		{410, Gone},
		{500, Retry}, {503, Retry},
	} {
		if got := Classify(tc.status); got != tc.want {
			t.Errorf("Classify(%d) = %v, want %v", tc.status, got, tc.want)
		}
	}
}
