package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// tick is a clock tick of /proc (USER_HZ, 100 on Linux).
const tick = 10 * time.Millisecond

// procCPU is a process's CPU time so far, from /proc.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * tick
}

// cpuBusy is the CPU time all cores have been busy so far (/proc/stat: user, nice,
// system, irq, softirq, steal), as bench/lib.sh's cpu_busy counts it.
func cpuBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	var sum int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		sum += v
	}
	return time.Duration(sum) * tick
}

// waitQuiet waits, at most limit, until the machine has been nearly idle (under 0.3
// cores busy) for one second, as bench/lib.sh's wait_quiet does, so that other
// people's builds and tests skew a run less.
func waitQuiet(limit time.Duration) {
	start := time.Now()
	for time.Since(start) < limit {
		b0 := cpuBusy()
		time.Sleep(time.Second)
		if cores := (cpuBusy() - b0).Seconds(); cores < 0.3 {
			if s := time.Since(start); s > 2*time.Second {
				logf("  machine quiet after %.0fs", s.Seconds())
			}
			return
		}
	}
	logf("  machine still busy after %s; measuring anyway", limit)
}

// runDelay is the time the threads of process pid have waited on a run queue for a
// CPU so far (the second field of /proc/PID/task/TID/schedstat), the kernel's
// measure of CPU starvation.
func runDelay(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) >= 2 {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			sum += v
		}
	}
	return time.Duration(sum)
}
