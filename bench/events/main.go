// Command events measures what events and webhooks cost (issue 28, bench/README.md
// "events.sh"): orders per second and a power action's API latency of one berthd on
// SQLite (run it on a berthd from before events, -berthd, for the comparison), and
// how many webhook deliveries a minute it sustains to a receiver that answers in
// -receiver-delay. Everything runs on 127.0.0.1; it reports figures and asserts none.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/berthhq/berth/bench/internal/berthdbin"
)

type config struct {
	root, berthd, addr string
	orders             time.Duration
	conns              int
	power              int
	deliveries         int
	deliveryConns      int
	receiverDelay      time.Duration
	hook               bool
}

func main() {
	var c config
	flag.StringVar(&c.root, "root", "", "repository root, where go build ./cmd/berthd runs (default: found from the working directory)")
	flag.StringVar(&c.berthd, "berthd", "", "a berthd binary to use instead of building one (one from before events, for the comparison)")
	flag.StringVar(&c.addr, "addr", "127.0.0.1:18400", "address berthd serves on (loopback only)")
	flag.DurationVar(&c.orders, "orders", 20*time.Second, "how long orders are sent (0: none)")
	flag.IntVar(&c.conns, "conns", 8, "clients sending orders at once")
	flag.IntVar(&c.power, "power", 300, "power actions timed, one after another (0: none)")
	flag.IntVar(&c.deliveries, "deliveries", 0, "events to deliver to the receiver (0: none; needs a berthd with webhooks)")
	flag.IntVar(&c.deliveryConns, "delivery-conns", 4, "clients writing the events to deliver")
	flag.DurationVar(&c.receiverDelay, "receiver-delay", 50*time.Millisecond, "how long the receiver takes to answer")
	flag.BoolVar(&c.hook, "hook", false, "a webhook of every event to the receiver during the orders and power actions too")
	flag.Parse()
	if err := run(context.Background(), c); err != nil {
		fmt.Fprintln(os.Stderr, "events:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "== "+format+"\n", args...) }

func run(ctx context.Context, c config) error {
	host, _, err := net.SplitHostPort(c.addr)
	if err != nil || host != "127.0.0.1" {
		return fmt.Errorf("-addr %s: benchmarks run on 127.0.0.1 only", c.addr)
	}
	work, err := os.MkdirTemp("", "bench-events-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bin, err := berthdbin.Resolve(ctx, c.berthd, c.root, work)
	if err != nil {
		return err
	}
	data := filepath.Join(work, "data")
	if err := berthdbin.Migrate(ctx, bin, data); err != nil {
		return err
	}
	var acct struct {
		ID int64 `json:"id"`
	}
	if err := berthdbin.Admin(ctx, bin, data, &acct, "account", "create", "--email", "bench@example.com", "--password", "long-enough-pw",
		"--credit", "10000000", "--quota-servers", "100000"); err != nil {
		return err
	}
	scopes := "servers,power"
	if c.hook || c.deliveries > 0 {
		scopes = "read,power,servers,snapshots,ssh-keys,recipes,domains,storage,licenses,tickets" // webhooks need every scope
	}
	var tok struct {
		Token string `json:"token"`
	}
	if err := berthdbin.Admin(ctx, bin, data, &tok, "token", "create", "--account", strconv.FormatInt(acct.ID, 10), "--name", "bench",
		"--scopes", scopes); err != nil {
		return err
	}
	args := []string{"--data", data, "serve", "--addr", c.addr, "--sim-time-scale", "0.001", "--rate-limit", "100000000"}
	if c.hook || c.deliveries > 0 {
		args = append(args, "--webhook-allow-private")
	}
	logPath := filepath.Join(work, "berthd.log")
	lf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer lf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	cpu = func() time.Duration { return procCPU(cmd.Process.Pid) }
	api := &client{base: "http://" + c.addr + "/v1", token: tok.Token, http: &http.Client{Timeout: time.Minute,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	if err := api.waitUp(30 * time.Second); err != nil {
		return err
	}
	rcv := newReceiver(c.receiverDelay)
	defer rcv.srv.Close()
	if c.hook {
		if err := api.webhook(rcv.srv.URL, "*"); err != nil {
			return err
		}
	}
	fmt.Printf("berthd %s on SQLite; webhook of every event during orders and power: %v\n", bin, c.hook)
	if c.power > 0 {
		if err := powerLatency(api, c.power); err != nil {
			return err
		}
	}
	if c.orders > 0 {
		if err := orders(api, c.orders, c.conns); err != nil {
			return err
		}
	}
	if c.deliveries > 0 {
		if err := deliveries(api, rcv, c); err != nil {
			return err
		}
	}
	return nil
}

// powerLatency times n reboots of a running server, each after the last has ended.
func powerLatency(api *client, n int) error {
	code, m, err := api.do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1})
	if err != nil || code != 201 {
		return fmt.Errorf("order: %d %v %v", code, m, err)
	}
	id := int64(m["data"].(map[string]any)["id"].(float64))
	if err := api.waitOp(m["data"].(map[string]any)["operation"]); err != nil {
		return err
	}
	var lat []time.Duration
	var cpu0 time.Duration
	for i := range n + 10 { // the first 10 warm up
		if i == 10 {
			cpu0 = cpu()
		}
		start := time.Now()
		code, m, err := api.do("POST", fmt.Sprintf("/servers/%d/power", id), map[string]any{"action": "reboot"})
		took := time.Since(start)
		if err != nil || code != 200 {
			return fmt.Errorf("power: %d %v %v", code, m, err)
		}
		lat = append(lat, took)
		if err := api.waitOp(m["data"].(map[string]any)["operation"]); err != nil {
			return err
		}
	}
	used := cpu() - cpu0
	lat = lat[10:]
	slices.Sort(lat)
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
	fmt.Printf("power (POST /servers/{id}/power reboot, %d one after another): mean %s  p50 %s  p90 %s  p99 %s; berthd CPU %s a reboot (its operation included)\n",
		len(lat), ms(sum/time.Duration(len(lat))), ms(lat[len(lat)/2]), ms(lat[len(lat)*9/10]), ms(lat[len(lat)*99/100]), ms(used/time.Duration(len(lat))))
	return nil
}

// orders sends orders from conns clients for d and reports the accepted ones a second.
func orders(api *client, d time.Duration, conns int) error {
	var created, other atomic.Int64
	var firstErr atomic.Value
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				code, _, err := api.do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1})
				switch {
				case err != nil:
					firstErr.CompareAndSwap(nil, err)
					return
				case code == 201:
					created.Add(1)
				default:
					other.Add(1)
				}
			}
		}()
	}
	start, cpu0 := time.Now(), cpu()
	wg.Wait()
	took, used := time.Since(start), cpu()-cpu0
	if err, _ := firstErr.Load().(error); err != nil {
		return err
	}
	fmt.Printf("orders (POST /servers, %d clients, %s): %.1f/s (created %d, other %d); berthd CPU %.2f ms an order (provisioning meanwhile included)\n",
		conns, d, float64(created.Load())/took.Seconds(), created.Load(), other.Load(), float64(used.Microseconds())/1000/float64(max(created.Load(), 1)))
	return nil
}

// deliveries writes c.deliveries events (project renames) with a webhook of them to
// the receiver and reports the rate they reached it.
func deliveries(api *client, rcv *receiver, c config) error {
	if err := api.webhook(rcv.srv.URL, "project.updated"); err != nil {
		return err
	}
	code, m, err := api.do("POST", "/projects", map[string]any{"name": "bench"})
	if err != nil || code != 201 {
		return fmt.Errorf("project: %d %v %v", code, m, err)
	}
	project := int64(m["data"].(map[string]any)["id"].(float64))
	rcv.reset()
	var next atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for range c.deliveryConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(c.deliveries); i = next.Add(1) {
				code, m, err := api.do("PATCH", fmt.Sprintf("/projects/%d", project), map[string]any{"name": fmt.Sprintf("bench-%d", i)})
				if err != nil || code != 200 {
					firstErr.CompareAndSwap(nil, fmt.Errorf("rename: %d %v %v", code, m, err))
					return
				}
			}
		}()
	}
	wg.Wait()
	written := time.Since(start)
	if err, _ := firstErr.Load().(error); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Minute)
	for rcv.count() < c.deliveries {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d deliveries after 10 minutes", rcv.count(), c.deliveries)
		}
		time.Sleep(20 * time.Millisecond)
	}
	first, last, n, requests := rcv.window()
	fmt.Printf("deliveries (receiver answers in %s): %d events written in %.1f s (%.0f/min); delivered from %.1f s to %.1f s after the first write: %.0f/min (%d requests)\n",
		c.receiverDelay, c.deliveries, written.Seconds(), float64(c.deliveries)/written.Minutes(), first.Sub(start).Seconds(), last.Sub(start).Seconds(),
		float64(n)/last.Sub(start).Minutes(), requests)
	return nil
}

// cpu is berthd's CPU time so far (user and system).
var cpu func() time.Duration

// procCPU reads a process's CPU time from /proc (clock ticks of 10 ms, Linux's
// USER_HZ).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

type client struct {
	base, token string
	http        *http.Client
}

func (c *client) do(method, path string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m, nil
}

func (c *client) waitUp(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(c.base + "/openapi.json"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("berthd did not come up")
}

// waitOp holds on the operation (an answer's "operation" object) until it ends.
func (c *client) waitOp(op any) error {
	id := int64(op.(map[string]any)["id"].(float64))
	for range 100 {
		code, m, err := c.do("GET", fmt.Sprintf("/operations/%d?wait=30", id), nil)
		if err != nil || code != 200 {
			return fmt.Errorf("operation %d: %d %v %v", id, code, m, err)
		}
		switch s := m["data"].(map[string]any)["status"]; s {
		case "running":
			continue
		case "success":
			return nil
		default:
			return fmt.Errorf("operation %d: %v", id, s)
		}
	}
	return fmt.Errorf("operation %d did not end", id)
}

func (c *client) webhook(url, types string) error {
	code, m, err := c.do("POST", "/webhooks", map[string]any{"url": url + "/hook", "event_types": []string{types}})
	if err != nil || code != 201 {
		return fmt.Errorf("webhook: %d %v %v", code, m, err)
	}
	return nil
}

// receiver answers every request 204 after delay, and keeps when each webhook-id
// first came.
type receiver struct {
	srv         *httptest.Server
	mu          sync.Mutex
	seen        map[string]time.Time
	requests    int
	first, last time.Time
}

func newReceiver(delay time.Duration) *receiver {
	r := &receiver{seen: map[string]time.Time{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		now := time.Now()
		r.mu.Lock()
		r.requests++
		if id := req.Header.Get("webhook-id"); r.seen[id].IsZero() {
			r.seen[id] = now
			if r.first.IsZero() {
				r.first = now
			}
			r.last = now
		}
		r.mu.Unlock()
		time.Sleep(delay)
		w.WriteHeader(http.StatusNoContent)
	}))
	return r
}

func (r *receiver) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen, r.requests, r.first, r.last = map[string]time.Time{}, 0, time.Time{}, time.Time{}
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

func (r *receiver) window() (first, last time.Time, n, requests int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first, r.last, len(r.seen), r.requests
}
