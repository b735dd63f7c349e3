package app

import (
	"os"
	"runtime"
)

// SpareProcs is the GOMAXPROCS berthd serve runs with, given the GOMAXPROCS
// environment variable, the runtime's default and the CPUs the process may run on:
// one more than the CPUs, so that a request waits less when the kernel preempts one
// of berthd's threads.
//
// berthd shares its machine with busy processes: guests on a hypervisor host, the
// database, a load generator. Each thread that runs Go code (one per GOMAXPROCS)
// holds a queue of goroutines ready to run; when the kernel preempts the thread to
// run another process, the requests in its queue wait for the thread to be scheduled
// again, several milliseconds, unless another thread takes them. A spare one does.
// Measured on 2 cores with the load generator beside berthd (bench/README.md):
// GOMAXPROCS 3 instead of 2 answered GET /v1/servers/{id} 6–8 % faster with p99
// 10 → 7 ms, for about 5 % more CPU per request.
//
// It leaves GOMAXPROCS as it is when the operator set it, when the runtime chose
// fewer than the CPUs (a CPU limit, a cgroup quota, made it so, and more threads than
// the quota are throttled, which costs far more than it saves), and when it is above
// the CPUs already (an earlier call: serve runs more than once in a test process).
func SpareProcs(env string, procs, cpus int) int {
	if env != "" || procs != cpus {
		return procs
	}
	return procs + 1
}

// UseSpareProcs sets GOMAXPROCS as SpareProcs says and returns it. Setting it stops
// the runtime following later changes of the process's CPU limit; the ones that
// count (a quota lower than the CPUs) leave it unset.
func UseSpareProcs() int {
	procs := runtime.GOMAXPROCS(0)
	n := SpareProcs(os.Getenv("GOMAXPROCS"), procs, runtime.NumCPU())
	if n != procs {
		runtime.GOMAXPROCS(n)
	}
	return n
}
