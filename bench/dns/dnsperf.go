package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// perf is what dnsperf reported about one run, and the CPU each side used.
type perf struct {
	sent, completed, lost int64
	qps                   float64
	avgMs, minMs, maxMs   float64
	stdMs                 float64
	rcodes                string // "NOERROR 80 (80.00%), NXDOMAIN ..."
	// lat are the answered queries' latencies, sorted, when dnsperf ran with -v.
	lat                   []time.Duration
	raw                   string
	server, client, other float64 // cores used during the run
	load                  string  // /proc/loadavg's 1, 5 and 15 minutes before the run
}

// perfArgs are dnsperf's settings shared by every run of one invocation.
type perfArgs struct {
	file                         string
	clients, outstanding, thread int
}

var (
	reInt   = func(label string) *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*` + label + `:\s+(\d+)`) }
	reSent  = reInt("Queries sent")
	reDone  = reInt("Queries completed")
	reLost  = reInt("Queries lost")
	reQPS   = regexp.MustCompile(`(?m)^\s*Queries per second:\s+([0-9.]+)`)
	reLat   = regexp.MustCompile(`(?m)^\s*Average Latency \(s\):\s+([0-9.]+) \(min ([0-9.]+), max ([0-9.]+)\)`)
	reStd   = regexp.MustCompile(`(?m)^\s*Latency StdDev \(s\):\s+([0-9.]+)`)
	reCodes = regexp.MustCompile(`(?m)^\s*Response codes:\s+(.*)$`)
)

// runPerf runs dnsperf against 127.0.0.1:port for d (at most rate queries a second
// when rate > 0) and measures the CPU serverPID, dnsperf and everything else used.
// With verbose, dnsperf reports each query (-v), which gives the percentiles of
// latency it does not compute itself, for more of its own CPU.
func runPerf(ctx context.Context, a perfArgs, port string, serverPID int, d time.Duration, rate int, verbose bool) (perf, error) {
	args := []string{"-s", "127.0.0.1", "-p", port, "-d", a.file, "-l", strconv.Itoa(int(d.Seconds())),
		"-c", strconv.Itoa(a.clients), "-q", strconv.Itoa(a.outstanding), "-T", strconv.Itoa(a.thread)}
	if rate > 0 {
		args = append(args, "-Q", strconv.Itoa(rate))
	}
	if verbose {
		args = append(args, "-v")
	}
	p := perf{load: loadavg()}
	cmd := exec.CommandContext(ctx, "dnsperf", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	busy0, srv0, t0 := cpuBusy(), procCPU(serverPID), time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	busy, srv := cpuBusy()-busy0, procCPU(serverPID)-srv0
	var kept strings.Builder
	for line := range strings.Lines(out.String()) {
		// "> NOERROR www.example.com A 0.000123": one query's answer and latency in seconds.
		if f := strings.Fields(line); len(f) == 5 && f[0] == ">" {
			if v, err := strconv.ParseFloat(f[4], 64); err == nil {
				p.lat = append(p.lat, time.Duration(v*float64(time.Second)))
			}
			continue
		}
		if !strings.HasPrefix(line, "[Status]") && !strings.HasPrefix(line, "[Timeout]") {
			kept.WriteString(line)
		}
	}
	slices.Sort(p.lat)
	p.raw = "dnsperf " + strings.Join(args, " ") + "\n" + kept.String()
	if err != nil {
		return p, fmt.Errorf("dnsperf: %w\n%s", err, p.raw)
	}
	cli := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	p.server, p.client = srv.Seconds()/wall.Seconds(), cli.Seconds()/wall.Seconds()
	p.other = max(0, (busy-srv-cli).Seconds()/wall.Seconds())
	s := out.String()
	num := func(re *regexp.Regexp, i int) string {
		if m := re.FindStringSubmatch(s); m != nil {
			return m[i]
		}
		return ""
	}
	p.sent, _ = strconv.ParseInt(num(reSent, 1), 10, 64)
	p.completed, _ = strconv.ParseInt(num(reDone, 1), 10, 64)
	p.lost, _ = strconv.ParseInt(num(reLost, 1), 10, 64)
	p.qps, _ = strconv.ParseFloat(num(reQPS, 1), 64)
	ms := func(v string) float64 { f, _ := strconv.ParseFloat(v, 64); return f * 1000 }
	p.avgMs, p.minMs, p.maxMs, p.stdMs = ms(num(reLat, 1)), ms(num(reLat, 2)), ms(num(reLat, 3)), ms(num(reStd, 1))
	p.rcodes = num(reCodes, 1)
	if p.sent == 0 || p.qps == 0 {
		return p, fmt.Errorf("dnsperf's output not understood:\n%s", p.raw)
	}
	return p, nil
}

// pct is the latency at quantile q (0.99) in ms of a verbose run, or -1.
func (p perf) pct(q float64) float64 {
	if len(p.lat) == 0 {
		return -1
	}
	return float64(p.lat[min(len(p.lat)-1, int(float64(len(p.lat))*q))].Microseconds()) / 1000
}

// loadavg is /proc/loadavg's first three fields.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
