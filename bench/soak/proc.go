package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sample is berthd's state at one moment of the load, from /proc.
type sample struct {
	at       time.Duration // since the load started
	rssKB    int64         // VmRSS
	hwmKB    int64         // VmHWM: the peak so far
	anonKB   int64         // RssAnon: heap, stacks, SQLite's page caches
	fileKB   int64         // RssFile: the binary, mapped files
	shmemKB  int64         // RssShmem
	threads  int
	fds      int
	cpuTicks int64 // utime + stime of berthd
	busy     int64 // busy ticks of the whole machine
	self     time.Duration
	requests int64 // responses received by then, all clients
	gc       gcLine
	gcs      int // collections by then
	hasGC    bool
}

// clkTck is USER_HZ, 100 on every Linux that matters; /proc/PID/stat counts in it.
const clkTck = 100

func readSample(pid int) sample {
	var s sample
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			f := strings.Fields(v)
			if len(f) == 0 {
				continue
			}
			n, _ := strconv.ParseInt(f[0], 10, 64)
			switch k {
			case "VmRSS":
				s.rssKB = n
			case "VmHWM":
				s.hwmKB = n
			case "RssAnon":
				s.anonKB = n
			case "RssFile":
				s.fileKB = n
			case "RssShmem":
				s.shmemKB = n
			case "Threads":
				s.threads = int(n)
			}
		}
	}
	if es, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd"); err == nil {
		s.fds = len(es)
	}
	s.cpuTicks = procCPU(pid)
	s.busy = machineBusy()
	s.self = selfCPU()
	return s
}

// procCPU is utime + stime of a process in clock ticks.
func procCPU(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name may hold spaces: fields start after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

// machineBusy is the busy ticks of all CPUs (user, nice, system, irq, softirq, steal).
func machineBusy() int64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var n int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		n += v
	}
	return n
}

// selfCPU is this process's CPU time (user + system).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
