package app

import (
	"runtime"
	"testing"
)

func TestSpareProcs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		env              string
		procs, cpus, out int
	}{
		{"one more than the CPUs", "", 2, 2, 3},
		{"a single CPU", "", 1, 1, 2},
		{"many CPUs", "", 64, 64, 65},
		{"the operator's GOMAXPROCS stands", "2", 2, 2, 2},
		{"the operator's GOMAXPROCS stands, above the CPUs", "8", 8, 2, 8},
		{"a CPU quota below the CPUs stands", "", 2, 8, 2},
		{"a quota of one CPU stands", "", 1, 4, 1},
		{"once is enough", "", 3, 2, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SpareProcs(tc.env, tc.procs, tc.cpus); got != tc.out {
				t.Errorf("SpareProcs(%q, %d, %d) = %d, want %d", tc.env, tc.procs, tc.cpus, got, tc.out)
			}
		})
	}
}

// TestUseSpareProcs sets the runtime's GOMAXPROCS: not parallel, and restored.
func TestUseSpareProcs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })

	t.Setenv("GOMAXPROCS", "")
	runtime.GOMAXPROCS(runtime.NumCPU())
	if got, want := UseSpareProcs(), runtime.NumCPU()+1; got != want || runtime.GOMAXPROCS(0) != want {
		t.Errorf("UseSpareProcs() = %d, GOMAXPROCS %d; want %d", got, runtime.GOMAXPROCS(0), want)
	}

	if got, want := UseSpareProcs(), runtime.NumCPU()+1; got != want {
		t.Errorf("UseSpareProcs() again = %d, want %d", got, want)
	}

	t.Setenv("GOMAXPROCS", "1")
	runtime.GOMAXPROCS(1)
	if got := UseSpareProcs(); got != 1 || runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("with GOMAXPROCS=1 set: UseSpareProcs() = %d, GOMAXPROCS %d; want 1", got, runtime.GOMAXPROCS(0))
	}
}
