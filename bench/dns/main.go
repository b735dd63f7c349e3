// Command dns measures berthd's embedded nameserver (issue 30, bench/README.md
// "dns.sh"): queries a second under dnsperf next to PowerDNS Authoritative serving
// the same zones in the same run, and the API's latency while the nameserver takes
// a query flood. It seeds customer zones through the API (POST /domains with a zone
// file), starts `berthd serve --dns-addr`, publishes the same zones, read from the
// store as the embedded server reads them, to a pdns_server through Berth's PowerDNS
// driver, checks both answer the query file alike, then runs dnsperf against each in
// turn. Everything runs on 127.0.0.1; it reports figures and asserts none.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/berthhq/berth/bench/internal/berthdbin"
	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/store/sqlstore"
)

type config struct {
	root, berthd                 string
	addr, dnsAddr, pdnsAddr, api string
	zones, queries, rounds       int
	duration                     time.Duration
	perf                         perfArgs
	compare                      int
	qps                          bool
	floodRate                    int
	flood                        time.Duration
	apiRate                      int
	latencyQPS                   int
	floodKind                    string
	floodRounds                  int
	quietWait                    time.Duration
	// profileBin is bench/profile, run in berthd's place to profile the embedded
	// server; pprofAddr its pprof address, profileOut where the CPU profile goes.
	profileBin, pprofAddr, profileOut string
}

// nameservers are the zones' NS, given to berthd and to PowerDNS alike.
var nameservers = []string{"ns1.example.net", "ns2.example.net"}

func main() {
	var c config
	flag.StringVar(&c.root, "root", "", "repository root, where go build ./cmd/berthd runs (default: found from the working directory)")
	flag.StringVar(&c.berthd, "berthd", "", "a berthd binary to use instead of building one")
	flag.StringVar(&c.addr, "addr", "127.0.0.1:18500", "berthd's API address")
	flag.StringVar(&c.dnsAddr, "dns-addr", "127.0.0.1:18553", "berthd's DNS address (serve --dns-addr)")
	flag.StringVar(&c.pdnsAddr, "pdns-addr", "127.0.0.1:18554", "PowerDNS's DNS address")
	flag.StringVar(&c.api, "pdns-api", "127.0.0.1:18581", "PowerDNS's HTTP API address")
	flag.IntVar(&c.zones, "zones", 100, "customer zones to seed (302 RRsets each)")
	flag.IntVar(&c.queries, "queries", 100000, "lines of the query file")
	flag.IntVar(&c.rounds, "rounds", 3, "dnsperf runs of each server, alternating which goes first")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "each dnsperf run's length (-l)")
	flag.IntVar(&c.perf.clients, "c", 4, "dnsperf -c: clients (sockets)")
	flag.IntVar(&c.perf.outstanding, "q", 100, "dnsperf -q: queries outstanding at most")
	flag.IntVar(&c.perf.thread, "T", 1, "dnsperf -T: threads")
	flag.IntVar(&c.compare, "compare", 3000, "distinct queries of the file asked of both servers and compared before the runs")
	flag.BoolVar(&c.qps, "qps", true, "run the queries-per-second comparison")
	flag.IntVar(&c.floodRate, "flood-qps", 10000, "the flood's queries a second (dnsperf -Q)")
	flag.DurationVar(&c.flood, "flood", 10*time.Second, "the flood's length (0: no flood)")
	flag.IntVar(&c.latencyQPS, "latency-qps", 10000, "after the rounds, one run of each server at this rate with dnsperf -v, for latency percentiles (0: none)")
	flag.StringVar(&c.floodKind, "flood-kind", "mix", "the floods, comma-separated, one after another: mix (the query file), outside (distinct names in no zone: REFUSED), "+
		"servers (distinct names under the default domain of servers' names: NXDOMAIN)")
	flag.IntVar(&c.floodRounds, "flood-rounds", 3, "rounds of each flood (the API without, then during it)")
	flag.IntVar(&c.apiRate, "api-rate", 50, "API requests a second during the flood and without it")
	flag.DurationVar(&c.quietWait, "quiet-wait", 60*time.Second, "how long to wait for the machine to idle before each run")
	flag.StringVar(&c.profileBin, "profile-bin", "", "bench/profile's binary: run it in berthd serve's place and take a CPU profile during the first round of the embedded server")
	flag.StringVar(&c.pprofAddr, "pprof", "127.0.0.1:18582", "bench/profile's pprof address (with -profile-bin)")
	flag.StringVar(&c.profileOut, "profile-out", "dns.pprof", "where the CPU profile is written (with -profile-bin); the flood's to the same name with .flood added")
	flag.Parse()
	if err := run(context.Background(), c); err != nil {
		fmt.Fprintln(os.Stderr, "dns:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "== "+format+"\n", args...) }

func run(ctx context.Context, c config) error {
	for _, a := range []string{c.addr, c.dnsAddr, c.pdnsAddr, c.api} {
		if host, _, err := net.SplitHostPort(a); err != nil || host != "127.0.0.1" {
			return fmt.Errorf("%s: benchmarks run on 127.0.0.1 only", a)
		}
	}
	for _, kind := range strings.Split(c.floodKind, ",") {
		if kind != "mix" && kind != "outside" && kind != "servers" {
			return fmt.Errorf("-flood-kind %s: mix, outside or servers", kind)
		}
	}
	if _, err := exec.LookPath("dnsperf"); err != nil {
		return fmt.Errorf("no dnsperf: apt-get install -y dnsperf")
	}
	work, err := os.MkdirTemp("", "bench-dns-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bin, err := berthdbin.Resolve(ctx, c.berthd, c.root, work)
	if err != nil {
		return err
	}

	// berthd: an account, a token, serve with DNS.
	data := filepath.Join(work, "data")
	if err := berthdbin.Migrate(ctx, bin, data); err != nil {
		return err
	}
	var acct struct {
		ID int64 `json:"id"`
	}
	if err := berthdbin.Admin(ctx, bin, data, &acct, "account", "create", "--email", "bench@example.com", "--password", "long-enough-pw",
		"--credit", "1000000", "--quota-servers", "10", "--quota-zones", strconv.Itoa(c.zones)); err != nil {
		return err
	}
	var tok struct {
		Token string `json:"token"`
	}
	if err := berthdbin.Admin(ctx, bin, data, &tok, "token", "create", "--account", strconv.FormatInt(acct.ID, 10), "--name", "bench",
		"--scopes", "servers,domains"); err != nil {
		return err
	}
	lf, err := os.Create(filepath.Join(work, "berthd.log"))
	if err != nil {
		return err
	}
	defer lf.Close()
	cmd := exec.Command(bin, "--data", data, "serve", "--addr", c.addr, "--dns-addr", c.dnsAddr,
		"--dns-nameservers", strings.Join(nameservers, ","), "--sim-time-scale", "0.01", "--rate-limit", "100000000")
	if c.profileBin != "" {
		cmd = exec.Command(c.profileBin, "-data", data, "-addr", c.addr, "-pprof", c.pprofAddr, "-dns-addr", c.dnsAddr,
			"-dns-nameservers", strings.Join(nameservers, ","), "-sim-time-scale", "0.01", "-rate-limit", "100000000")
	}
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	api := newClient(c.addr, tok.Token)
	if err := api.waitUp(30 * time.Second); err != nil {
		return err
	}

	// The zones, through the API; one server for the API's reads.
	logf("seeding %d zones through POST /domains", c.zones)
	t0 := time.Now()
	var ids []int64
	for i := 1; i <= c.zones; i++ {
		code, m, err := api.do("POST", "/domains", map[string]any{"name": zoneName(i), "zone_file": zoneFile(i)})
		if err != nil || code != 201 {
			return fmt.Errorf("POST /domains %s: %d %v %v", zoneName(i), code, m, err)
		}
		ids = append(ids, int64(m["data"].(map[string]any)["id"].(float64)))
	}
	seeded := time.Since(t0)
	code, m, err := api.do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1})
	if err != nil || code != 201 {
		return fmt.Errorf("order: %d %v %v", code, m, err)
	}
	serverID := int64(m["data"].(map[string]any)["id"].(float64))
	if err := api.waitOp(m["data"].(map[string]any)["operation"]); err != nil {
		return err
	}

	// The same zones, as the embedded server reads them, to PowerDNS.
	db, err := sqlstore.OpenSQLite(ctx, data)
	if err != nil {
		return err
	}
	var zones []nameserver.Zone
	rrsets := 0
	for _, id := range ids {
		z, err := db.ServedZone(ctx, id)
		if err != nil {
			db.Close()
			return fmt.Errorf("zone %d from the store: %w", id, err)
		}
		z.Nameservers = nameservers
		zones = append(zones, z)
		rrsets += len(z.RRsets)
	}
	db.Close()
	pd, err := startPDNS(ctx, work, c.pdnsAddr, c.api)
	if err != nil {
		return err
	}
	defer pd.stop()
	t0 = time.Now()
	if err := pd.publish(ctx, zones); err != nil {
		return err
	}
	published := time.Since(t0)

	qs := queries(c.zones, c.queries)
	c.perf.file = filepath.Join(work, "queries.txt")
	var b strings.Builder
	for _, q := range qs {
		fmt.Fprintf(&b, "%s %s\n", q.name, q.qtype)
	}
	if err := os.WriteFile(c.perf.file, []byte(b.String()), 0o600); err != nil {
		return err
	}
	fmt.Printf("zones: %d (%d RRsets besides SOA and apex NS), seeded through POST /domains in %.1f s, published to PowerDNS in %.1f s; query file: %d lines\n",
		len(zones), rrsets, seeded.Seconds(), published.Seconds(), len(qs))
	served := "berthd serve"
	if c.profileBin != "" {
		served = "bench/profile (berthd serve in-process, with pprof)"
	}
	fmt.Printf("%s --dns-addr %s (pid %d); pdns_server %s, gsqlite3, default threads and caches (pid %d)\n",
		served, c.dnsAddr, cmd.Process.Pid, pdnsVersion(), pd.cmd.Process.Pid)
	same, differ, extra, examples, err := compare(qs, c.compare, c.dnsAddr, c.pdnsAddr)
	if err != nil {
		return err
	}
	fmt.Printf("answers compared (rcode, AA, answer and authority sections): %d distinct queries alike, %d differ; additional sections differ in %d\n",
		same, differ, extra)
	for _, e := range examples {
		fmt.Println("  " + e)
	}

	if c.qps {
		if err := qpsRounds(ctx, c, cmd.Process.Pid, pd.cmd.Process.Pid); err != nil {
			return err
		}
	}
	if c.flood > 0 {
		pd.stop() // idle, but out of the way
		paths := []string{fmt.Sprintf("/servers/%d", serverID), fmt.Sprintf("/domains/%d", ids[0])}
		for _, kind := range strings.Split(c.floodKind, ",") {
			fc := c
			fc.floodKind = kind
			if err := flood(ctx, fc, api, paths, cmd.Process.Pid); err != nil {
				return err
			}
		}
	}
	return nil
}

// qpsRounds runs dnsperf against each server c.rounds times, alternating which goes
// first, and prints each run and the medians.
func qpsRounds(ctx context.Context, c config, berthdPID, pdnsPID int) error {
	_, ePort, _ := net.SplitHostPort(c.dnsAddr)
	_, pPort, _ := net.SplitHostPort(c.pdnsAddr)
	type side struct {
		name, port string
		pid        int
		runs       []perf
	}
	emb := &side{name: "embedded", port: ePort, pid: berthdPID}
	pdn := &side{name: "PowerDNS", port: pPort, pid: pdnsPID}
	fmt.Printf("\ndnsperf -l %d -c %d -q %d -T %d, %d rounds; cores: the server's, dnsperf's, other processes'\n",
		int(c.duration.Seconds()), c.perf.clients, c.perf.outstanding, c.perf.thread, c.rounds)
	fmt.Printf("%-5s %-9s %9s %9s %6s %8s %8s %8s  %-6s %-6s %-6s  %s\n", "round", "server", "qps", "completed", "lost", "avg ms", "max ms",
		"std ms", "server", "dnsperf", "other", "load average")
	// A warm-up of each: the first pass over the file fills both servers' caches.
	for _, s := range []*side{emb, pdn} {
		if _, err := runPerf(ctx, c.perf, s.port, s.pid, 3*time.Second, 0, false); err != nil {
			return err
		}
	}
	for r := 1; r <= c.rounds; r++ {
		order := []*side{emb, pdn}
		if r%2 == 0 {
			order = []*side{pdn, emb}
		}
		for _, s := range order {
			waitQuiet(c.quietWait)
			var prof chan error
			if c.profileBin != "" && r == 1 && s == emb {
				prof = make(chan error, 1)
				go func() { prof <- cpuProfile(c.pprofAddr, c.duration-2*time.Second, c.profileOut) }()
			}
			p, err := runPerf(ctx, c.perf, s.port, s.pid, c.duration, 0, false)
			if err != nil {
				return err
			}
			if prof != nil {
				if err := <-prof; err != nil {
					return err
				}
			}
			s.runs = append(s.runs, p)
			fmt.Printf("%-5d %-9s %9.0f %9d %6d %8.3f %8.3f %8.3f  %-6.2f %-6.2f %-6.2f  %s\n", r, s.name, p.qps, p.completed, p.lost,
				p.avgMs, p.maxMs, p.stdMs, p.server, p.client, p.other, p.load)
		}
	}
	med := func(s *side, f func(perf) float64) float64 {
		v := make([]float64, len(s.runs))
		for i, p := range s.runs {
			v[i] = f(p)
		}
		return median(v)
	}
	qps := func(p perf) float64 { return p.qps }
	perQuery := func(p perf) float64 { return p.server * 1e6 / p.qps }
	avg := func(p perf) float64 { return p.avgMs }
	e, pq := med(emb, qps), med(pdn, qps)
	fmt.Printf("medians: embedded %.0f qps (avg %.3f ms, %.1f µs CPU a query), PowerDNS %.0f qps (avg %.3f ms, %.1f µs CPU a query); ratio embedded/PowerDNS %.3f\n",
		e, med(emb, avg), med(emb, perQuery), pq, med(pdn, avg), med(pdn, perQuery), e/pq)
	if c.latencyQPS > 0 {
		fmt.Printf("\nlatency at a fixed rate: dnsperf -Q %d -l %d -v (each query's latency reported, so dnsperf takes more CPU), each server once\n",
			c.latencyQPS, int(c.duration.Seconds()))
		for _, s := range []*side{emb, pdn} {
			waitQuiet(c.quietWait)
			p, err := runPerf(ctx, c.perf, s.port, s.pid, c.duration, c.latencyQPS, true)
			if err != nil {
				return err
			}
			fmt.Printf("%-9s %6.0f qps, %d lost; latency ms: avg %.3f, p50 %.3f, p90 %.3f, p99 %.3f, p99.9 %.3f, max %.3f; cores: server %.2f, dnsperf %.2f, other %.2f; load average %s\n",
				s.name, p.qps, p.lost, p.avgMs, p.pct(0.5), p.pct(0.9), p.pct(0.99), p.pct(0.999), p.maxMs, p.server, p.client, p.other, p.load)
		}
	}
	fmt.Printf("response codes, embedded: %s\n", emb.runs[len(emb.runs)-1].rcodes)
	fmt.Printf("response codes, PowerDNS: %s\n", pdn.runs[len(pdn.runs)-1].rcodes)
	fmt.Println("\ndnsperf's output, the last round of each:")
	for _, s := range []*side{emb, pdn} {
		fmt.Printf("--- %s\n%s", s.name, s.runs[len(s.runs)-1].raw)
	}
	return nil
}

// flood measures the API's latency at c.apiRate for c.flood without DNS load, then
// again while dnsperf sends c.floodRate queries a second to the embedded server.
func flood(ctx context.Context, c config, api *client, paths []string, berthdPID int) error {
	fmt.Printf("\nflood (%s): GET %s in turn at %d a second (open loop, latency from each request's due time), for %s without DNS load, then during dnsperf -Q %d -l %d against the embedded server\n",
		c.floodKind, strings.Join(paths, " and "), c.apiRate, c.flood, c.floodRate, int(c.flood.Seconds()))
	api.paced(paths, c.apiRate, time.Second) // warm-up: connections, caches
	waitQuiet(c.quietWait)
	var without, with []float64
	for r := 1; r <= c.floodRounds; r++ {
		fmt.Printf("round %d of %d\n", r, c.floodRounds)
		q, d, err := floodRound(ctx, c, api, paths, berthdPID, r == c.floodRounds)
		if err != nil {
			return err
		}
		without, with = append(without, q), append(with, d)
	}
	fmt.Printf("API p99 (%s), median of %d rounds: without flood %.2f ms, during flood %.2f ms\n", c.floodKind, c.floodRounds, median(without), median(with))
	return nil
}

// floodRound is one round of flood: the API's reads without DNS load, then during
// the flood; it returns both p99s in ms.
func floodRound(ctx context.Context, c config, api *client, paths []string, berthdPID int, raw bool) (without, with float64, err error) {
	_, ePort, _ := net.SplitHostPort(c.dnsAddr)
	load := loadavg()
	cpu0, busy0, wait0, t0 := procCPU(berthdPID), cpuBusy(), runDelay(berthdPID), time.Now()
	quiet := api.paced(paths, c.apiRate, c.flood)
	wall := time.Since(t0).Seconds()
	srv := (procCPU(berthdPID) - cpu0).Seconds() / wall
	fmt.Printf("API without flood: %s; berthd %.2f cores, its threads waited %.0f ms a second for a CPU; the rest (this program and other processes) %.2f cores; load average %s\n",
		quiet, srv, (runDelay(berthdPID)-wait0).Seconds()*1000/wall, max(0, (cpuBusy()-busy0).Seconds()/wall-srv), load)

	load = loadavg()
	type result struct {
		p   perf
		err error
	}
	done := make(chan result, 1)
	fa := c.perf
	if c.floodKind != "mix" {
		fa.file = c.perf.file + "." + c.floodKind
		if err := os.WriteFile(fa.file, floodQueries(c.floodKind, c.flood, c.floodRate), 0o600); err != nil {
			return 0, 0, err
		}
	}
	wait0, t0 = runDelay(berthdPID), time.Now()
	go func() {
		p, err := runPerf(ctx, fa, ePort, berthdPID, c.flood, c.floodRate, true)
		done <- result{p, err}
	}()
	var prof chan error
	if c.profileBin != "" {
		prof = make(chan error, 1)
		go func() { prof <- cpuProfile(c.pprofAddr, c.flood-2*time.Second, c.profileOut+".flood") }()
	}
	time.Sleep(100 * time.Millisecond) // dnsperf started
	during := api.paced(paths, c.apiRate, c.flood-500*time.Millisecond)
	r := <-done
	waited := (runDelay(berthdPID) - wait0).Seconds() * 1000 / time.Since(t0).Seconds()
	if r.err != nil {
		return 0, 0, r.err
	}
	if prof != nil {
		if err := <-prof; err != nil {
			return 0, 0, err
		}
	}
	fmt.Printf("API during flood: %s; berthd's threads waited %.0f ms a second for a CPU; load average %s\n", during, waited, load)
	fmt.Printf("DNS during flood: %d sent, %d answered, %d lost, %.0f qps; latency ms: avg %.3f, p50 %.3f, p99 %.3f, max %.3f; berthd %.2f cores, dnsperf %.2f, the rest (this program and other processes) %.2f\n",
		r.p.sent, r.p.completed, r.p.lost, r.p.qps, r.p.avgMs, r.p.pct(0.5), r.p.pct(0.99), r.p.maxMs, r.p.server, r.p.client, r.p.other)
	fmt.Printf("p99 without flood %.2f ms, during flood %.2f ms\n", float64(quiet.pct(0.99).Microseconds())/1000,
		float64(during.pct(0.99).Microseconds())/1000)
	if raw {
		fmt.Printf("--- dnsperf's output\n%s", r.p.raw)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(quiet.pct(0.99)), ms(during.pct(0.99)), nil
}

// cpuProfile takes a CPU profile of d from bench/profile's pprof at addr into out,
// starting a second from now (dnsperf under way).
func cpuProfile(addr string, d time.Duration, out string) error {
	time.Sleep(time.Second)
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds())))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func pdnsVersion() string {
	out, _ := exec.Command("dpkg-query", "-W", "-f", "${Version}", "pdns-server").Output()
	if len(out) == 0 {
		return "(version unknown)"
	}
	return string(out)
}
