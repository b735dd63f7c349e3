package revert_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/berthhq/berth/internal/revert"
)

func TestReverter(t *testing.T) {
	t.Parallel()
	broken := errors.New("hypervisor away")
	for _, tc := range []struct {
		name string
		// steps are the undos registered, in order; failing[i] makes undo i fail on
		// its first run.
		steps   int
		failing map[int]bool
		// calls are Fail or Success, in order.
		calls []string
		// ran is the undos run, in order; errs whether each call returned an error.
		ran  []int
		errs []bool
	}{
		{name: "nothing registered", calls: []string{"Fail"}, errs: []bool{false}},
		{name: "newest first", steps: 3, calls: []string{"Fail"}, ran: []int{2, 1, 0}, errs: []bool{false}},
		{name: "once only", steps: 2, calls: []string{"Fail", "Fail"}, ran: []int{1, 0}, errs: []bool{false, false}},
		{name: "success forgets", steps: 2, calls: []string{"Success", "Fail"}, errs: []bool{false, false}},
		{name: "a failing undo stops and is kept with the older ones", steps: 3, failing: map[int]bool{1: true},
			calls: []string{"Fail", "Fail"}, ran: []int{2, 1, 1, 0}, errs: []bool{true, false}},
		{name: "success after a failed undo forgets the rest", steps: 2, failing: map[int]bool{0: true},
			calls: []string{"Fail", "Success", "Fail"}, ran: []int{1, 0}, errs: []bool{true, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ran []int
			failed := map[int]bool{}
			r := revert.New()
			for i := range tc.steps {
				r.Add(func() error {
					ran = append(ran, i)
					if tc.failing[i] && !failed[i] {
						failed[i] = true
						return broken
					}
					return nil
				})
			}
			var errs []bool
			for _, c := range tc.calls {
				switch c {
				case "Fail":
					err := r.Fail()
					if err != nil && !errors.Is(err, broken) {
						t.Errorf("Fail: %v, want it to wrap the undo's error", err)
					}
					errs = append(errs, err != nil)
				case "Success":
					r.Success()
					errs = append(errs, false)
				}
			}
			if !slices.Equal(ran, tc.ran) || !slices.Equal(errs, tc.errs) {
				t.Errorf("ran %v with errors %v; want %v with %v", ran, errs, tc.ran, tc.errs)
			}
		})
	}
}

// TestReverterZero: the zero value is ready to use.
func TestReverterZero(t *testing.T) {
	t.Parallel()
	var r revert.Reverter
	done := false
	r.Add(func() error { done = true; return nil })
	if err := r.Fail(); err != nil || !done {
		t.Errorf("Fail of a zero Reverter: %v, undo ran %v", err, done)
	}
}
