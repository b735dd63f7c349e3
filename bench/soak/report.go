package main

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
)

const window = int64(time.Minute)

// edges are the two tolerances for the rolling window's edge: [0] the request's own
// round trip only (berthd takes its timestamp between the client's send and
// receive, on the same clock); [1] that and 1 s more either way.
var edges = [2]int64{0, int64(time.Second)}

// limitCheck is one client's send log held against the rate limit.
type limitCheck struct {
	n429 int
	// 429s by the client's count of requests sent in the rolling minute up to and
	// including the refused one, per edge tolerance: within the limit (a bug),
	// ambiguous (the count is within the limit or past it depending on where in its
	// round trip berthd read the clock), past the limit.
	within, ambiguous, past [2]int
	// 429s while fewer than `limit` of the client's requests had been let through in
	// the minute before: the limiter's own rule (it counts requests it lets through).
	refusedUnder, refusedAmbig int
	// Requests let through although `limit` had surely been let through in the
	// minute before: more than the limit served.
	overServed, overAmbig int
	// X-RateLimit-Remaining / -Reset outside what the send log allows.
	remainingBad, resetBad int
	maxSent                int // most requests sent in any rolling minute
	examples               []string
}

func analyze(cl *client, limit int) limitCheck {
	var lc limitCheck
	L := cl.log
	served := make([]int, len(L)+1) // served[k]: requests let through among L[:k]
	for i, r := range L {
		served[i+1] = served[i]
		if r.served() {
			served[i+1]++
		}
	}
	example := func(format string, args ...any) {
		if len(lc.examples) < keepExamples {
			lc.examples = append(lc.examples, fmt.Sprintf("token %d: ", cl.tokenID)+fmt.Sprintf(format, args...))
		}
	}
	lastServed := -1
	lo := 0
	for j, rj := range L {
		for L[lo].s <= rj.s-window {
			lo++
		}
		lc.maxSent = max(lc.maxSent, j-lo+1)
		if rj.status == 0 {
			continue
		}
		var sureAll, maybeAll, sureServed, maybeServed [2]int
		for e, edge := range edges {
			// A client sends one request at a time, so s and r both grow with the index.
			// Surely in berthd's window: sent after the latest moment the window can start.
			sure := sort.Search(j, func(i int) bool { return L[i].s-edge > rj.r-window })
			// Perhaps in it: answered after the earliest moment it can start.
			maybe := sort.Search(j, func(i int) bool { return L[i].r+edge > rj.s-window })
			sureAll[e], maybeAll[e] = j-sure, j-maybe
			sureServed[e], maybeServed[e] = served[j]-served[sure], served[j]-served[maybe]
		}
		if rj.status == http.StatusTooManyRequests {
			lc.n429++
			for e := range edges {
				switch minC, maxC := sureAll[e]+1, maybeAll[e]+1; {
				case maxC <= limit:
					lc.within[e]++
					if e == 0 {
						example("429 for its request #%d (%s) at %s: at most %d requests sent in the minute up to it",
							j+1, kindName[rj.kind], clock(rj.s), maxC)
					}
				case minC <= limit:
					lc.ambiguous[e]++
				default:
					lc.past[e]++
				}
			}
			switch {
			case maybeServed[0] < limit:
				lc.refusedUnder++
				example("429 for its request #%d (%s) at %s: at most %d let through in the minute before",
					j+1, kindName[rj.kind], clock(rj.s), maybeServed[0])
			case sureServed[0] < limit:
				lc.refusedAmbig++
			}
			if rj.remaining != 0 {
				lc.remainingBad++
				example("429 at %s with X-RateLimit-Remaining %d", clock(rj.s), rj.remaining)
			}
			// Reset: when the newest request berthd counted leaves the window, that is the
			// last one it let through.
			if lastServed >= 0 {
				ls := L[lastServed]
				if rj.reset < ceilSec(ls.s+window) || rj.reset > ceilSec(ls.r+window) {
					lc.resetBad++
					example("429 at %s with X-RateLimit-Reset %d, want %d..%d", clock(rj.s), rj.reset,
						ceilSec(ls.s+window), ceilSec(ls.r+window))
				}
			}
			continue
		}
		switch {
		case sureServed[0] >= limit:
			lc.overServed++
			example("request #%d (%s) at %s let through with at least %d let through in the minute before",
				j+1, kindName[rj.kind], clock(rj.s), sureServed[0])
		case maybeServed[0] >= limit:
			lc.overAmbig++
		}
		// Remaining after counting this one: limit minus what lies in the window.
		if hi, loR := limit-(sureServed[0]+1), limit-(maybeServed[0]+1); rj.remaining < max(loR, 0) || rj.remaining > max(hi, 0) {
			lc.remainingBad++
			example("%s at %s: X-RateLimit-Remaining %d, want %d..%d", kindName[rj.kind], clock(rj.s), rj.remaining, max(loR, 0), max(hi, 0))
		}
		if rj.reset < ceilSec(rj.s+window) || rj.reset > ceilSec(rj.r+window) {
			lc.resetBad++
			example("%s at %s: X-RateLimit-Reset %d, want %d..%d", kindName[rj.kind], clock(rj.s), rj.reset,
				ceilSec(rj.s+window), ceilSec(rj.r+window))
		}
		lastServed = j
	}
	return lc
}

func ceilSec(ns int64) int64 { return (ns + int64(time.Second) - 1) / int64(time.Second) }

func clock(ns int64) string { return time.Unix(0, ns).UTC().Format("15:04:05.000") }

// class sums the clients of one kind.
type class struct {
	name                string
	tokens              int
	requests, burstReqs int
	n429, n429Burst     int
	maxSent             int
	bursts              int
}

// report prints the figures and the verdict; it reports whether every check passed.
func report(w io.Writer, c config, res *result, d *daemon) bool {
	st := newStats()
	var lc limitCheck
	classes := [2]class{{name: "at the limit"}, {name: "bursting"}}
	lat := make([][]float64, nKinds)
	var all []float64
	for _, cl := range res.clients {
		st.merge(cl.st)
		a := analyze(cl, c.limit)
		lc.n429 += a.n429
		for e := range edges {
			lc.within[e] += a.within[e]
			lc.ambiguous[e] += a.ambiguous[e]
			lc.past[e] += a.past[e]
		}
		lc.refusedUnder += a.refusedUnder
		lc.refusedAmbig += a.refusedAmbig
		lc.overServed += a.overServed
		lc.overAmbig += a.overAmbig
		lc.remainingBad += a.remainingBad
		lc.resetBad += a.resetBad
		lc.examples = append(lc.examples, a.examples...)
		k := &classes[0]
		if cl.burst {
			k = &classes[1]
		}
		k.tokens++
		k.requests += len(cl.log)
		k.maxSent = max(k.maxSent, a.maxSent)
		k.bursts += cl.bursts
		for _, r := range cl.log {
			if r.burst {
				k.burstReqs++
			}
			if r.status == http.StatusTooManyRequests {
				k.n429++
				if r.burst {
					k.n429Burst++
				}
			}
			if r.status != 0 {
				ms := float64(r.r-r.s) / 1e6
				lat[r.kind] = append(lat[r.kind], ms)
				all = append(all, ms)
			}
		}
	}
	total := classes[0].requests + classes[1].requests
	minutes := res.loadSeconds / 60

	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("Berth soak: %d tokens (%d accounts x %d) at %d requests/min each for %s — %s",
		len(res.clients), c.accounts, c.tokensPer, c.limit, c.duration, res.start.UTC().Format("2006-01-02 15:04:05 UTC"))
	p("machine: %d cores, %s; %s", runtime.NumCPU(), cpuModel(), runtime.Version())
	p("berthd: serve --rate-limit %d --sim-time-scale %g, GODEBUG=gctrace=1; setup (build, %d admin commands, start) %.1f s",
		c.limit, c.scale, c.accounts*(c.tokensPer+1), res.setupSeconds)
	p("clients: one per token, one request at a time on its own connection, on a %s pace that catches up after a",
		time.Minute/time.Duration(c.limit))
	p("  slow answer; %d at the limit (never sooner than 60 s after the answer to the request %d back arrived);",
		classes[0].tokens, c.limit)
	p("  %d bursting (the plain pace, plus %d-%d extra reads back-to-back every %s-%s); seed %d",
		classes[1].tokens, c.burstMin, c.burstMax, (c.burstEvery * 2 / 3).Round(time.Second), (c.burstEvery * 4 / 3).Round(time.Second), c.seed)
	p("")

	p("REQUESTS")
	p("  total %d in %.1f s (%.1f/s)", total, res.loadSeconds, float64(total)/res.loadSeconds)
	for _, k := range classes {
		if k.tokens == 0 {
			continue
		}
		p("  %-13s %2d tokens: %6d requests, %.1f per token per minute; %d bursts, %d requests in them; most sent in a rolling minute by one token: %d",
			k.name, k.tokens, k.requests, float64(k.requests)/float64(k.tokens)/minutes, k.bursts, k.burstReqs, k.maxSent)
	}
	p("  by status: %s", statusLine(st.byStatus))
	p("  5xx: %d   no response: %d   neither 2xx nor 4xx: %d   unreadable body: %d   deleted server answered 2xx: %d",
		st.n5xx, st.nTransport, st.nOther, st.nBadBody, st.nGoneServed)
	p("  4xx by status and code ([fields] of a 422):")
	var keys []string
	for k := range st.codes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	unexpected := 0
	for _, k := range keys {
		note := ""
		if !expected4xx(k) {
			note = "   <- not an answer this load should get"
			unexpected += st.codes[k]
		}
		p("    %-48s %7d%s", k, st.codes[k], note)
	}
	p("")

	p("LATENCY (ms, send to response headers)")
	p("  %-36s %7s  %7s %7s %7s %8s  %s", "request", "count", "p50", "p90", "p99", "max", "statuses")
	for k := range nKinds {
		if len(lat[k]) == 0 {
			continue
		}
		p("  %-36s %7d  %s  %s", kindName[k], len(lat[k]), pcts(lat[k]), statusLine(st.byKind[k]))
	}
	p("  %-36s %7d  %s", "all", len(all), pcts(all))
	p("")

	p("RATE LIMIT (%d per rolling 60 s per token; every 429 held against the client's own send log)", c.limit)
	p("  429s: %d — at-limit clients %d; bursting clients %d (%d of them to burst requests)",
		lc.n429, classes[0].n429, classes[1].n429, classes[1].n429Burst)
	p("  429s by the client's count of requests sent in the minute up to and including the refused one:")
	p("    %-44s %14s %10s %10s", "window edge known to within", "<= limit (bug)", "ambiguous", "> limit")
	p("    %-44s %14d %10d %10d", "the request's round trip", lc.within[0], lc.ambiguous[0], lc.past[0])
	p("    %-44s %14d %10d %10d", "the round trip and 1 s either way", lc.within[1], lc.ambiguous[1], lc.past[1])
	p("  429s while fewer than %d had been let through in the minute before (the limiter's own rule): %d (ambiguous %d)",
		c.limit, lc.refusedUnder, lc.refusedAmbig)
	p("  requests let through although %d had surely been let through in the minute before: %d (ambiguous %d)",
		c.limit, lc.overServed, lc.overAmbig)
	p("  limit headers missing or unequal under X-RateLimit-*/RateLimit-*: %d; Retry-After missing or out of range on 429/409: %d",
		st.hdrBad, st.retryAfterBad)
	p("  X-RateLimit-Remaining outside the send log's bounds: %d; X-RateLimit-Reset outside them: %d", lc.remainingBad, lc.resetBad)
	p("")

	memOK, memKnown := memoryReport(p, c, res)
	p("")

	cpuReport(p, res, total)
	p("  data dir at the end: %.1f MB", float64(res.dataBytes)/(1<<20))
	d.mu.Lock()
	p("  berthd log (%s): during the load %d ERROR and %d WARN lines; at the shutdown %d ERROR and %d WARN",
		d.logPath, d.during.errors, d.during.warns, d.after.errors, d.after.warns)
	for _, l := range d.during.first {
		p("    %s", clipStr(l, 300))
	}
	if len(d.after.first) > 0 {
		p("    first at the shutdown: %s", clipStr(d.after.first[0], 300))
	}
	d.mu.Unlock()
	exit := "exited 0"
	if res.exitErr != nil {
		exit = res.exitErr.Error()
	}
	p("  berthd after SIGTERM at the end: %s", exit)
	p("")

	fails := append(slices.Clone(st.fails), st.hdrEx...)
	fails = append(fails, lc.examples...)
	if len(fails) > 0 {
		p("FIRST PROBLEMS")
		for _, f := range fails[:min(len(fails), 3*keepExamples)] {
			p("  %s", f)
		}
		p("")
	}

	respOK := st.n5xx == 0 && st.nTransport == 0 && st.nOther == 0 && st.nBadBody == 0 && st.nGoneServed == 0 && unexpected == 0
	limitOK := lc.within[0] == 0 && classes[0].n429 == 0 && lc.refusedUnder == 0
	overOK := lc.overServed == 0
	hdrOK := st.hdrBad == 0 && st.retryAfterBad == 0 && lc.remainingBad == 0 && lc.resetBad == 0
	verdict := func(ok bool) string {
		if ok {
			return "PASS"
		}
		return "FAIL"
	}
	p("VERDICT")
	p("  %s  every response 2xx or a specified 4xx (no 5xx, no failed request)", verdict(respOK))
	p("  %s  429s only past %d a minute per token (none within the limit; none for the at-limit clients)", verdict(limitOK), c.limit)
	p("  %s  never more than %d let through in a rolling minute", verdict(overOK), c.limit)
	p("  %s  X-RateLimit-*, RateLimit-*, Retry-After present and consistent", verdict(hdrOK))
	if memKnown {
		p("  %s  resident memory at the end within 10%% of its value after the first minute", verdict(memOK))
	} else {
		p("  n/a   resident memory: the run is too short for a value after the first minute")
	}
	return respOK && limitOK && overOK && hdrOK && (memOK || !memKnown)
}

// expected4xx reports whether a "status code" key is an answer the API specifies
// for this load: 404 after a delete, 409 busy, 422 state or validation, 429.
func expected4xx(key string) bool {
	for _, p := range []string{"404 not_found", "409 busy", "422 validation_failed", "422 insufficient_credit", "429 rate_limited"} {
		if key == p || strings.HasPrefix(key, p+" ") {
			return true
		}
	}
	return false
}

func memoryReport(p func(string, ...any), c config, res *result) (ok, known bool) {
	p("MEMORY OF berthd (/proc/PID/status: VmRSS = RssAnon + RssFile + RssShmem, VmHWM the peak; Go heap live")
	p("after the last GC and its goal from gctrace; anon holds the Go heap and stacks and SQLite's page caches)")
	p("  %7s %8s %8s %8s %8s %9s %9s %7s %4s %9s %9s", "t", "RSS MB", "anon MB", "file MB", "peak MB", "heap live", "heap goal", "threads", "fds", "cpu cores", "requests")
	var at1, end *sample
	for i := range res.samples {
		s := &res.samples[i]
		cores := ""
		if i > 0 {
			prev := res.samples[i-1]
			if dt := (s.at - prev.at).Seconds(); dt > 0 {
				cores = fmt.Sprintf("%.2f", float64(s.cpuTicks-prev.cpuTicks)/clkTck/dt)
			}
		}
		live, goal := "-", "-"
		if s.hasGC {
			live, goal = fmt.Sprintf("%d MB", s.gc.liveMB), fmt.Sprintf("%d MB", s.gc.goalMB)
		}
		p("  %7s %8.1f %8.1f %8.1f %8.1f %9s %9s %7d %4d %9s %9d", s.at.Round(time.Second), mb(s.rssKB), mb(s.anonKB), mb(s.fileKB+s.shmemKB),
			mb(s.hwmKB), live, goal, s.threads, s.fds, cores, s.requests)
		if s.at == time.Minute {
			at1 = s
		}
		if s.at == c.duration {
			end = s
		}
	}
	if at1 == nil || end == nil || at1 == end || at1.rssKB == 0 {
		return false, false
	}
	ratio := float64(end.rssKB) / float64(at1.rssKB)
	ok = math.Abs(ratio-1) <= 0.10
	p("  RSS after 1 min: %.1f MB; at the end (%s): %.1f MB; end / 1 min = %.3f (%+.1f%%; target within 10%%)",
		float64(at1.rssKB)/1024, c.duration, float64(end.rssKB)/1024, ratio, (ratio-1)*100)
	var xs, ys []float64
	for _, s := range res.samples {
		if s.at >= time.Minute {
			xs = append(xs, s.at.Minutes())
			ys = append(ys, float64(s.rssKB)/1024)
		}
	}
	if len(xs) >= 3 {
		p("  RSS trend from 1 min to the end (least squares): %+.2f MB per minute", slope(xs, ys))
	}
	if at1.hasGC && end.hasGC {
		p("  live heap after GC: %d MB after 1 min (gc %d), %d MB at the end (gc %d); %d collections in all",
			at1.gc.liveMB, at1.gc.sequenceN, end.gc.liveMB, end.gc.sequenceN, end.gcs)
	}
	return ok, true
}

func cpuReport(p func(string, ...any), res *result, total int) {
	p("CPU")
	if len(res.samples) < 2 {
		return
	}
	a, b := res.samples[0], res.samples[len(res.samples)-1]
	secs := (b.at - a.at).Seconds()
	if secs <= 0 {
		return
	}
	berth := float64(b.cpuTicks-a.cpuTicks) / clkTck / secs
	self := (b.self - a.self).Seconds() / secs
	busy := float64(b.busy-a.busy) / clkTck / secs
	other := math.Max(busy-berth-self, 0)
	reqs := b.requests - a.requests
	per := 0.0
	if reqs > 0 {
		per = float64(b.cpuTicks-a.cpuTicks) / clkTck / float64(reqs) * 1e6
	}
	p("  over the load (%.0f s), in cores of %d: berthd %.3f (%.0f µs per request), this load generator %.3f, other processes %.3f",
		secs, runtime.NumCPU(), berth, per, self, other)
}

func mb(kb int64) float64 { return float64(kb) / 1024 }

func slope(xs, ys []float64) float64 {
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	n := float64(len(xs))
	mx, my = mx/n, my/n
	var num, den float64
	for i := range xs {
		num += (xs[i] - mx) * (ys[i] - my)
		den += (xs[i] - mx) * (xs[i] - mx)
	}
	if den == 0 {
		return 0
	}
	return num / den
}

func pcts(v []float64) string {
	slices.Sort(v)
	q := func(f float64) float64 { return v[min(len(v)-1, int(math.Ceil(f*float64(len(v))))-1)] }
	return fmt.Sprintf("%7.2f %7.2f %7.2f %8.1f", q(0.50), q(0.90), q(0.99), v[len(v)-1])
}

func statusLine(m map[int]int) string {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%d: %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "?"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func clipStr(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
