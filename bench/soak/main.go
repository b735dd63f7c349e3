// Command soak is Berth's soak benchmark (issue 6): many tokens, each at the rate
// limit, for a long time, against a real `berthd serve`.
//
// Setup: it builds berthd (go build ./cmd/berthd, unless -berthd names a binary),
// makes a fresh data dir, creates -accounts accounts with -tokens-per tokens each
// (every scope) through `berthd admin`, and starts `berthd serve` on 127.0.0.1 with
// the default rate limit (-rate-limit, 120 a minute) and -sim-time-scale.
//
// Load: one client per token, each on its own keep-alive connection, one request at
// a time, with a realistic mix of reads and writes (orders and deletes within the
// account's quota, power actions, snapshots, operations, billing). Two kinds:
//
//   - at-limit clients send 120 requests in every rolling minute and never more: a
//     request goes out on a 500 ms pace (catching up after a slow answer) but never
//     before 60 s (+1 ms) after the response to the request 120 before it arrived.
//     Since berthd takes its timestamp between the client's send and receive, on the
//     same clock, it cannot see 121 in its window: any 429 for these clients is a bug.
//   - burst clients (-burst-tokens of them) send on the same pace without that
//     bound and, every -burst-every (randomized), a burst of -burst-min..-burst-max
//     extra reads back-to-back: past the limit on purpose.
//
// Checks, for every response: status 2xx or 4xx (a 5xx or transport error is a
// failure, printed with its body); 4xx counted by status and error code; the limit
// headers present and consistent; and from each client's own send log, every 429 is
// classified by the number of requests that client sent in the rolling minute up to
// and including it: within the limit (a failure), ambiguous (within the uncertainty
// of the window's edge), or past the limit. berthd's resident memory (VmRSS) is
// sampled every -sample; its live heap comes from GODEBUG=gctrace=1.
//
// It prints a report on stdout, progress on stderr, and exits 1 when a check fails.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/berthhq/berth/bench/internal/berthdbin"
)

// allScopes is every scope a token can have (docs/api.md, Tokens and scopes).
const allScopes = "read,power,servers,snapshots,ssh-keys,recipes,domains,storage,licenses,tickets"

type config struct {
	root, berthd, work string
	addr               string
	duration, sample   time.Duration
	accounts           int
	tokensPer          int
	burstTokens        int
	burstMin, burstMax int
	burstEvery         time.Duration
	limit              int
	scale              float64
	credit             string
	quota              int
	ownCap             int
	seed               uint64
	keep               bool
}

func main() {
	var c config
	flag.StringVar(&c.root, "root", "", "repository root, where go build ./cmd/berthd runs (default: found from the working directory)")
	flag.StringVar(&c.berthd, "berthd", "", "a berthd binary to use instead of building one")
	flag.StringVar(&c.work, "work", "", "work directory for the binary, data and logs (default: a new temp dir)")
	flag.StringVar(&c.addr, "addr", "127.0.0.1:18300", "address berthd serves on (loopback only)")
	flag.DurationVar(&c.duration, "duration", 10*time.Minute, "how long the load runs")
	flag.DurationVar(&c.sample, "sample", 10*time.Second, "how often berthd's memory is sampled")
	flag.IntVar(&c.accounts, "accounts", 10, "accounts")
	flag.IntVar(&c.tokensPer, "tokens-per", 5, "tokens (clients) per account")
	flag.IntVar(&c.burstTokens, "burst-tokens", 10, "clients that burst past the limit now and then (the rest stay at the limit)")
	flag.IntVar(&c.burstMin, "burst-min", 20, "smallest burst (extra requests sent back-to-back)")
	flag.IntVar(&c.burstMax, "burst-max", 100, "largest burst")
	flag.DurationVar(&c.burstEvery, "burst-every", 90*time.Second, "mean time between a burst client's bursts (uniform in 2/3..4/3 of it)")
	flag.IntVar(&c.limit, "rate-limit", 120, "requests per minute per token: berthd serve --rate-limit, and what the clients pace to")
	flag.Float64Var(&c.scale, "sim-time-scale", 0.05, "berthd serve --sim-time-scale")
	flag.StringVar(&c.credit, "credit", "10000", "opening credit of each account")
	flag.IntVar(&c.quota, "server-quota", 50, "server quota of each account")
	flag.IntVar(&c.ownCap, "own-servers", 5, "servers a client keeps at most (it deletes its oldest to order more)")
	flag.Uint64Var(&c.seed, "seed", 0, "random seed (0: from the clock)")
	flag.BoolVar(&c.keep, "keep", false, "keep the work directory")
	flag.Parse()
	if c.accounts < 1 || c.tokensPer < 1 || c.burstTokens < 0 || c.burstTokens > c.accounts*c.tokensPer ||
		c.burstMin < 1 || c.burstMax < c.burstMin || c.limit < 1 || c.duration <= 0 || c.sample <= 0 {
		flag.Usage()
		os.Exit(2)
	}
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ok, err := run(ctx, c)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "== "+format+"\n", args...)
}

func run(ctx context.Context, c config) (bool, error) {
	if err := loopbackFree(c.addr); err != nil {
		return false, err
	}
	work := c.work
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "berth-soak."); err != nil {
			return false, err
		}
		defer func() {
			if c.keep {
				logf("kept %s", work)
			} else {
				os.RemoveAll(work)
			}
		}()
	}
	bin, err := berthdbin.Resolve(ctx, c.berthd, c.root, work)
	if err != nil {
		return false, err
	}
	data := filepath.Join(work, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return false, err
	}

	setupStart := time.Now()
	clients, err := setup(ctx, c, bin, data)
	if err != nil {
		return false, err
	}
	logf("%d accounts, %d tokens created with berthd admin in %.1fs", c.accounts, len(clients), time.Since(setupStart).Seconds())

	d, err := startBerthd(c, bin, data, work)
	if err != nil {
		return false, err
	}
	defer d.stop()
	base := "http://" + c.addr
	if err := waitReady(ctx, base+"/v1/openapi.json", 30*time.Second); err != nil {
		return false, err
	}
	logf("berthd serving on %s (pid %d), rate limit %d/min, sim time scale %g", base, d.cmd.Process.Pid, c.limit, c.scale)

	res, err := soak(ctx, c, d, base, clients)
	if err != nil {
		return false, err
	}
	res.setupSeconds = time.Since(setupStart).Seconds() - res.loadSeconds
	res.dataBytes = dirSize(data)
	d.stop()
	res.exitErr = d.exitErr
	ok := report(os.Stdout, c, res, d)
	return ok, nil
}

// setup creates the accounts and tokens with berthd admin, as an operator would.
func setup(ctx context.Context, c config, bin, data string) ([]*client, error) {
	var clients []*client
	if err := berthdbin.Migrate(ctx, bin, data); err != nil {
		return nil, err
	}
	for a := range c.accounts {
		var acct struct {
			ID int64 `json:"id"`
		}
		if err := berthdbin.Admin(ctx, bin, data, &acct, "account", "create", "--email", fmt.Sprintf("soak%d@berth.local", a+1),
			"--password", "soak-password", "--name", fmt.Sprintf("Soak %d", a+1), "--credit", c.credit,
			"--server-quota", strconv.Itoa(c.quota)); err != nil {
			return nil, err
		}
		for t := range c.tokensPer {
			var tok struct {
				ID    int64  `json:"id"`
				Token string `json:"token"`
			}
			if err := berthdbin.Admin(ctx, bin, data, &tok, "token", "create", "--account", strconv.FormatInt(acct.ID, 10),
				"--name", fmt.Sprintf("soak-%d-%d", a+1, t+1), "--scopes", allScopes); err != nil {
				return nil, err
			}
			clients = append(clients, &client{id: len(clients), account: acct.ID, tokenID: tok.ID, token: tok.Token})
		}
	}
	// Burst clients spread over the accounts: every other client until there are enough.
	n := 0
	for step := 2; n < c.burstTokens; step = 1 {
		for i := 0; i < len(clients) && n < c.burstTokens; i += step {
			if !clients[i].burst {
				clients[i].burst = true
				n++
			}
		}
	}
	return clients, nil
}

// ---- berthd ----

type daemon struct {
	cmd     *exec.Cmd
	done    chan struct{}
	exitErr error
	once    sync.Once
	logPath string

	// loadEnd is when the load stopped (Unix ns; 0 before): log lines after it
	// belong to the shutdown.
	loadEnd atomic.Int64

	mu     sync.Mutex
	gc     []gcLine // GODEBUG=gctrace=1 lines
	during logCount // log lines while the load ran
	after  logCount // and after it (the shutdown)
}

// logCount counts berthd's log lines at level ERROR and WARN.
type logCount struct {
	errors, warns int
	first         []string
}

func (l *logCount) add(line string, isErr bool) {
	if isErr {
		l.errors++
	} else {
		l.warns++
	}
	if len(l.first) < 10 {
		l.first = append(l.first, line)
	}
}

// gcLine is one garbage collection: when, and the heap after it.
type gcLine struct {
	at        time.Time
	liveMB    int // heap live after marking
	goalMB    int
	stacksMB  int
	raw       string
	sequenceN int
}

func startBerthd(c config, bin, data, work string) (*daemon, error) {
	d := &daemon{done: make(chan struct{}), logPath: filepath.Join(work, "berthd.log")}
	lf, err := os.Create(d.logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--data", data, "serve", "--addr", c.addr, "--sim-time-scale", strconv.FormatFloat(c.scale, 'g', -1, 64),
		"--rate-limit", strconv.Itoa(c.limit))
	cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1")
	cmd.Stdout = lf
	// Killed with this process even when it dies without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		lf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, err
	}
	d.cmd = cmd
	go func() {
		d.scan(pipe, lf)
		d.exitErr = cmd.Wait()
		lf.Close()
		close(d.done)
	}()
	return d, nil
}

// scan copies berthd's stderr to its log file and picks out GC lines and errors.
func (d *daemon) scan(r io.Reader, w io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(w, line)
		now := time.Now()
		d.mu.Lock()
		switch {
		case strings.HasPrefix(line, "gc "):
			if g, ok := parseGC(line); ok {
				g.at = now
				d.gc = append(d.gc, g)
			}
		case strings.Contains(line, `"level":"ERROR"`), strings.Contains(line, `"level":"WARN"`):
			lc := &d.during
			if end := d.loadEnd.Load(); end != 0 && now.UnixNano() > end {
				lc = &d.after
			}
			lc.add(line, strings.Contains(line, `"level":"ERROR"`))
		}
		d.mu.Unlock()
	}
	_, _ = io.Copy(w, r)
}

// parseGC reads "gc 12 @3.4s 1%: ... 4->5->2 MB, 5 MB goal, 0 MB stacks, ...".
func parseGC(line string) (gcLine, bool) {
	g := gcLine{raw: line}
	f := strings.Fields(line)
	if len(f) < 2 {
		return g, false
	}
	g.sequenceN, _ = strconv.Atoi(f[1])
	found := false
	for i, w := range f {
		switch {
		case strings.Count(w, "->") == 2 && i+1 < len(f) && strings.HasPrefix(f[i+1], "MB"):
			parts := strings.Split(w, "->")
			g.liveMB, _ = strconv.Atoi(parts[2])
			found = true
		case w == "goal," && i >= 2:
			g.goalMB, _ = strconv.Atoi(f[i-2])
		case strings.HasPrefix(w, "stacks") && i >= 2:
			g.stacksMB, _ = strconv.Atoi(f[i-2])
		}
	}
	return g, found
}

// lastGC is the last collection that ended at or before t.
func (d *daemon) lastGC(t time.Time) (gcLine, int, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := len(d.gc) - 1; i >= 0; i-- {
		if !d.gc[i].at.After(t) {
			return d.gc[i], i + 1, true
		}
	}
	return gcLine{}, 0, false
}

// stop sends SIGTERM, waits up to 35 s (berthd finishes requests in flight for up
// to 30 s), then kills.
func (d *daemon) stop() {
	d.once.Do(func() {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(35 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.done
		}
	})
}

func waitReady(ctx context.Context, url string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not answer within %s", url, limit)
}

// loopbackFree refuses non-loopback addresses and addresses already in use.
func loopbackFree(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-addr %s: load tests run on 127.0.0.1 only", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s is in use: %w", addr, err)
	}
	return ln.Close()
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if info, err := e.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
