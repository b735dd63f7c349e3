package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/testdisk"
	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// The fault test (issue 6): a mixed workload of orders, power actions, snapshots,
// deletions and top-ups runs against `berthd serve` while the daemon is SIGKILLed at
// random moments and restarted on the same data directory, round after round. Then,
// with everything settled, the database must show that every accepted operation
// finished exactly once, no server was lost or duplicated, no machine is orphaned in
// the driver, and the ledger balances.
//
// BERTH_FAULT_SEED=N replays a run's random choices (the timing still varies);
// BERTH_FAULT_ROUNDS=N runs another number of kill rounds; BERTH_FAULT_KEEP=1 keeps
// the data directory and the daemon's log even when the test passes.
//
// Issue 12 added two kinds of round: now and then a burst of orders, each under its
// own Idempotency-Key, is cut by the kill and every key is sent again after the
// restart (fault_burst_test.go); and twice the data directory's disk fills up for a
// while with the workload running, and every operation in flight then must end by
// itself once space is back, without a restart.
//
// With BERTH_TEST_STORE=postgres (the second pass of scripts/test.sh) it runs on a
// PostgreSQL database of its own instead, with the same checks; there the next process
// takes over a killed one's operations (faultSweepEvery), and the disk rounds, which
// are about SQLite's own files, are skipped.
const (
	faultRounds     = 24     // kill/restart rounds
	faultMaxRounds  = 60     // more rounds only while fewer than faultMinOps were accepted
	faultMinOps     = 500    // accepted operations over the whole run
	faultClients    = 6      // concurrent API clients
	faultSimScale   = "0.02" // provisioning 600 ms, a snapshot 200 ms, a reboot 200 ms
	faultMinUptime  = 300 * time.Millisecond
	faultMaxUptime  = 1800 * time.Millisecond
	faultMaxDown    = 250 * time.Millisecond
	faultSettleTime = 90 * time.Second
	faultBurstEvery = 4                 // every 4th round kills a burst of idempotent orders
	faultDiskSize   = 256 << 20         // the data directory's own disk
	faultDiskFull   = 10 * time.Second  // how long it stays full (River gives up recording in ~7 s)
	faultDiskSettle = 120 * time.Second // for what was in flight to end after space is back
)

// faultSweepEvery is how often serve's sweep runs on PostgreSQL. There a killed
// process's jobs stay "running" until the next process's sweep has found the dead
// one's liveness lock free twice (internal/app/liveness.go): at the default 5 s that
// is about 10 s, longer than any round lives, so no operation would be taken over
// (and killed again, and taken over again) before the workload ends. At 250 ms they
// are taken over within about half a second of a restart, as SQLite's restart
// resumes them at once.
const faultSweepEvery = "250ms"

// faultDiskRounds are the rounds whose uptime fills the disk.
var faultDiskRounds = map[int]bool{5: true, 15: true}

// faultDaemon is `berthd serve` on one data directory (or, on PostgreSQL, the
// database that stands for it), started and killed many times.
type faultDaemon struct {
	bin, data, addr, logPath string
	store                    []string // the flags that point admin commands at its store (storeFlags)
	serve                    []string // serve's store flags, and on PostgreSQL its sweep (faultSweepEvery)
	cmd                      *exec.Cmd
	exited                   chan error
	logf                     *os.File
}

func (d *faultDaemon) base() string { return "http://" + d.addr + "/v1" }

// start runs the daemon and waits until it answers GET /v1/openapi.json.
func (d *faultDaemon) start() error {
	if err := d.spawn(); err != nil {
		return err
	}
	return d.waitUp()
}

// spawn runs the daemon without waiting for it.
func (d *faultDaemon) spawn() error {
	f, err := os.OpenFile(d.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "---- start %s\n", time.Now().Format(time.RFC3339Nano))
	args := append(append([]string{"serve"}, d.serve...), "--addr", d.addr, "--sim-time-scale", faultSimScale,
		"--rate-limit", "10000000", "--console-lease", faultConsoleLease)
	cmd := exec.Command(d.bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	d.cmd, d.exited, d.logf = cmd, exited, f
	return nil
}

// waitUp waits until the daemon answers GET /v1/openapi.json.
func (d *faultDaemon) waitUp() error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-d.exited:
			d.cmd = nil
			d.logf.Close()
			return fmt.Errorf("berthd exited at start: %v", err)
		default:
		}
		resp, err := client.Get(d.base() + "/openapi.json")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("berthd did not come up within 30 s: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kill SIGKILLs the daemon and reaps it.
func (d *faultDaemon) kill() {
	if d.cmd == nil {
		return
	}
	_ = d.cmd.Process.Kill()
	<-d.exited
	d.cmd = nil
	d.logf.Close()
}

// stop asks the daemon to shut down (SIGINT) and waits; it kills it after 30 s.
func (d *faultDaemon) stop() error {
	if d.cmd == nil {
		return nil
	}
	_ = d.cmd.Process.Signal(os.Interrupt)
	var err error
	select {
	case err = <-d.exited:
	case <-time.After(30 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
		err = errors.New("berthd did not stop within 30 s of SIGINT")
	}
	d.cmd = nil
	d.logf.Close()
	return err
}

// ---- what the clients saw ----

// An outcome is what a client knows of a request it sent.
type outcome int

const (
	accepted outcome = iota // a 2xx answer
	unknown                 // sent, but the answer was lost: it may or may not have been applied
	refused                 // the connection was refused: the daemon never saw it
	rejected                // a 4xx/5xx answer: not applied
)

var outcomeNames = [...]string{"accepted", "unknown outcome", "refused", "rejected"}

// faultReq is one state-changing request of the workload.
type faultReq struct {
	round    int64
	client   int
	kind     string // order, power, snapshot, snapshot-delete, delete, topup
	outcome  outcome
	code     int
	server   int64  // server id (not for orders unless accepted)
	name     string // order: display name; snapshot: snapshot name; topup: description
	action   string // power action
	snapshot int64  // snapshot id (snapshot when accepted, snapshot-delete)
	op       int64  // operation id the answer named
	result   string // snapshot-delete: deleted or scheduled
	amount   string // topup
	tx       int64  // topup: transaction id
	srvName  string // order: the server's name
}

func (r faultReq) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", r.kind)
	if r.action != "" {
		fmt.Fprintf(&b, "(%s)", r.action)
	}
	if r.server != 0 {
		fmt.Fprintf(&b, " server %d", r.server)
	}
	if r.name != "" {
		fmt.Fprintf(&b, " %q", r.name)
	}
	if r.snapshot != 0 {
		fmt.Fprintf(&b, " snapshot %d", r.snapshot)
	}
	if r.op != 0 {
		fmt.Fprintf(&b, " op %d", r.op)
	}
	fmt.Fprintf(&b, " [client %d, round %d, %s]", r.client, r.round, outcomeNames[r.outcome])
	return b.String()
}

type faultLog struct {
	mu       sync.Mutex
	reqs     []faultReq
	rejected map[string]int // "kind code" → count
}

func (l *faultLog) add(r faultReq) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.outcome == rejected {
		l.rejected[fmt.Sprintf("%s %d", r.kind, r.code)]++
		return
	}
	l.reqs = append(l.reqs, r)
}

func (l *faultLog) accepted() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.reqs {
		if r.outcome == accepted {
			n++
		}
	}
	return n
}

// ---- the workload ----

type faultClient struct {
	id     int
	token  string
	base   string
	rng    *rand.Rand
	http   *http.Client
	log    *faultLog
	round  *atomic.Int64
	stop   *atomic.Bool
	seq    int
	owned  []*ownedServer
	broken []string // protocol surprises (a 2xx without what it promises)
	// lastCode is the status of the last answer send got (0: none).
	lastCode int
}

type ownedServer struct {
	id    int64
	snaps []int64 // accepted snapshots not yet deleted
}

// call sends one request. err is nil when an answer came; isRefused tells a refused
// connection (the daemon is down: nothing was sent) from a lost answer.
func (c *faultClient) call(method, path string, body any) (int, map[string]any, error) {
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
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err // the answer was cut off: unknown
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, nil
}

func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// send makes a state-changing request and files its outcome; it returns the answer
// when accepted.
func (c *faultClient) send(r faultReq, method, path string, body any) (map[string]any, bool) {
	data, out := c.sendOutcome(r, method, path, body)
	return data, out == accepted
}

func (c *faultClient) sendOutcome(r faultReq, method, path string, body any) (map[string]any, outcome) {
	r.round, r.client = c.round.Load(), c.id
	code, m, err := c.call(method, path, body)
	switch {
	case err != nil && isRefused(err):
		r.outcome = refused
		time.Sleep(20 * time.Millisecond) // the daemon is down
	case err != nil:
		r.outcome = unknown
	case code >= 200 && code < 300:
		r.outcome = accepted
	default:
		r.outcome, r.code = rejected, code
		if code >= 500 && code != http.StatusServiceUnavailable {
			c.broken = append(c.broken, fmt.Sprintf("%s answered %d: %v", r, code, m))
		}
	}
	c.lastCode = code
	if r.outcome != accepted {
		c.log.add(r)
		return nil, r.outcome
	}
	data, _ := m["data"].(map[string]any)
	switch r.kind {
	case "order":
		id, _ := data["id"].(float64)
		name, _ := data["name"].(string)
		op, _ := data["operation"].(map[string]any)
		opID, _ := op["id"].(float64)
		if id == 0 || name == "" || opID == 0 {
			c.broken = append(c.broken, fmt.Sprintf("order %q answered %d without server id, name or operation: %v", r.name, code, m))
		}
		r.server, r.srvName, r.op = int64(id), name, int64(opID)
	case "power":
		op, _ := data["operation"].(map[string]any)
		opID, _ := op["id"].(float64)
		if opID == 0 {
			c.broken = append(c.broken, fmt.Sprintf("power %s on %d answered %d without an operation: %v", r.action, r.server, code, m))
		}
		r.op = int64(opID)
	case "snapshot":
		id, _ := data["id"].(float64)
		if id == 0 {
			c.broken = append(c.broken, fmt.Sprintf("snapshot %q of %d answered %d without an id: %v", r.name, r.server, code, m))
		}
		r.snapshot = int64(id)
	case "snapshot-delete":
		r.result, _ = data["result"].(string)
		if r.result != "deleted" && r.result != "scheduled" {
			c.broken = append(c.broken, fmt.Sprintf("deletion of snapshot %d answered %d with result %q", r.snapshot, code, r.result))
		}
	}
	c.log.add(r)
	return data, accepted
}

func (c *faultClient) run(done func()) {
	defer done()
	for !c.stop.Load() {
		c.step()
	}
}

func (c *faultClient) drop(s *ownedServer) {
	for i, o := range c.owned {
		if o == s {
			c.owned = append(c.owned[:i], c.owned[i+1:]...)
			return
		}
	}
}

func (c *faultClient) step() {
	if len(c.owned) < 2 || (len(c.owned) < 4 && c.rng.IntN(8) == 0) {
		c.seq++
		plan := 1 + c.rng.IntN(2)
		r := faultReq{kind: "order", name: fmt.Sprintf("fault-c%d-o%d", c.id, c.seq)}
		if data, ok := c.send(r, "POST", "/servers", map[string]any{"plan_id": plan, "location_id": 1, "image_id": 1 + c.rng.IntN(4),
			"display_name": r.name}); ok {
			id, _ := data["id"].(float64)
			c.owned = append(c.owned, &ownedServer{id: int64(id)})
		} else {
			time.Sleep(10 * time.Millisecond) // too little credit: wait for a top-up
		}
		return
	}
	s := c.owned[c.rng.IntN(len(c.owned))]
	code, m, err := c.call("GET", fmt.Sprintf("/servers/%d", s.id), nil)
	if err != nil {
		if isRefused(err) {
			time.Sleep(20 * time.Millisecond)
		}
		return
	}
	if code == 404 {
		c.drop(s) // deleted by a DELETE whose answer was lost
		return
	}
	if code != 200 {
		return
	}
	data, _ := m["data"].(map[string]any)
	status, _ := data["status"].(string)
	if op, _ := data["operation"].(map[string]any); op != nil {
		switch n := c.rng.IntN(8); {
		case n < 2 && len(s.snaps) > 0:
			c.deleteSnapshot(s) // scheduled for when the operation ends
			return
		case n == 2:
			// Busy: 409, and nothing may come of it.
			c.send(faultReq{kind: "power", server: s.id, action: "reset"}, "POST", fmt.Sprintf("/servers/%d/power", s.id),
				map[string]any{"action": "reset"})
			return
		case n == 3:
			c.send(faultReq{kind: "delete", server: s.id}, "DELETE", fmt.Sprintf("/servers/%d", s.id), nil)
			return
		}
		opID, _ := op["id"].(float64)
		_, _, _ = c.call("GET", fmt.Sprintf("/operations/%d?wait=1", int64(opID)), nil)
		return
	}
	type choice struct {
		weight int
		do     func()
	}
	power := func(action string) func() {
		return func() {
			c.send(faultReq{kind: "power", server: s.id, action: action}, "POST", fmt.Sprintf("/servers/%d/power", s.id),
				map[string]any{"action": action})
		}
	}
	snapshot := func() {
		c.seq++
		r := faultReq{kind: "snapshot", server: s.id, name: fmt.Sprintf("fault-c%d-s%d", c.id, c.seq)}
		memory := status == "running" && c.rng.IntN(3) == 0
		if data, ok := c.send(r, "POST", fmt.Sprintf("/servers/%d/snapshots", s.id), map[string]any{"name": r.name, "include_memory": memory}); ok {
			id, _ := data["id"].(float64)
			s.snaps = append(s.snaps, int64(id))
		}
	}
	del := func() {
		if _, ok := c.send(faultReq{kind: "delete", server: s.id}, "DELETE", fmt.Sprintf("/servers/%d", s.id), nil); ok {
			c.drop(s)
		}
	}
	var choices []choice
	snapWeight, snapDelWeight := 2, 1
	if len(s.snaps) >= 3 {
		snapWeight, snapDelWeight = 0, 3
	}
	if len(s.snaps) == 0 {
		snapDelWeight = 0
	}
	switch status {
	case "running":
		choices = []choice{{1, power("off")}, {1, power("shutdown")}, {1, power("reboot")}, {1, power("reset")},
			{snapWeight, snapshot}, {snapDelWeight, func() { c.deleteSnapshot(s) }}, {1, del}}
	case "stopped":
		choices = []choice{{3, power("on")}, {snapWeight, snapshot}, {snapDelWeight, func() { c.deleteSnapshot(s) }}, {1, del}}
	case "error":
		choices = []choice{{1, del}}
	default: // suspended, or a transient status seen between two reads
		time.Sleep(20 * time.Millisecond)
		return
	}
	total := 0
	for _, ch := range choices {
		total += ch.weight
	}
	n := c.rng.IntN(total)
	for _, ch := range choices {
		if n < ch.weight {
			ch.do()
			return
		}
		n -= ch.weight
	}
}

func (c *faultClient) deleteSnapshot(s *ownedServer) {
	i := c.rng.IntN(len(s.snaps))
	id := s.snaps[i]
	r := faultReq{kind: "snapshot-delete", server: s.id, snapshot: id}
	// Forget it once deleted, possibly deleted, or gone; keep it when refused, or
	// rejected otherwise (a suspended server: 403).
	if _, out := c.sendOutcome(r, "DELETE", fmt.Sprintf("/servers/%d/snapshots/%d", s.id, id), nil); out == accepted || out == unknown ||
		c.lastCode == 404 {
		s.snaps = append(s.snaps[:i], s.snaps[i+1:]...)
	}
}

// topups adds credit through `berthd admin credit add`, a process of its own that works
// whether or not serve runs.
func topups(bin string, store []string, account int64, rng *rand.Rand, log *faultLog, round *atomic.Int64, stop *atomic.Bool, done func()) {
	defer done()
	for n := 1; !stop.Load(); n++ {
		time.Sleep(time.Duration(200+rng.IntN(600)) * time.Millisecond)
		r := faultReq{kind: "topup", round: round.Load(), client: -1, name: fmt.Sprintf("fault-topup-%d", n),
			amount: fmt.Sprintf("0.%04d", 100+rng.IntN(400))}
		args := append([]string{"admin", "credit", "add", "--account", strconv.FormatInt(account, 10), "--amount", r.amount,
			"--description", r.name}, store...)
		out, err := exec.Command(bin, args...).Output()
		var res struct {
			TransactionID int64  `json:"transaction_id"`
			Amount        string `json:"amount"`
		}
		if err != nil || json.Unmarshal(out, &res) != nil || res.TransactionID == 0 {
			r.outcome = unknown // it may have failed after its commit
			r.result = fmt.Sprintf("%v: %s", err, out)
		} else {
			r.outcome, r.tx = accepted, res.TransactionID
		}
		log.add(r)
	}
}

// ---- the test ----

func envInt(t *testing.T, name string, def int64) int64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// TestFaultSIGKILL is the fault test: see the comment at the top of this file.
func TestFaultSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the daemon and kills it for a minute")
	}
	t.Parallel()
	seed := envInt(t, "BERTH_FAULT_SEED", time.Now().UnixNano())
	rounds := int(envInt(t, "BERTH_FAULT_ROUNDS", faultRounds))
	t.Logf("seed %d (replay the random choices with BERTH_FAULT_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))

	bin := testenv.BerthdBinary(t)
	dir, err := os.MkdirTemp("", "berth-fault-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("BERTH_FAULT_KEEP") != "" {
			t.Logf("kept the data directory and the daemon's log in %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	d := &faultDaemon{bin: bin, addr: testnet.FreeAddr(t), logPath: filepath.Join(dir, "serve.log")}
	var disk *testdisk.Disk
	if testenv.Postgres() {
		// The disk rounds fill the data directory's own disk, to see what SQLite's
		// writes failing with ENOSPC do; PostgreSQL keeps nothing there (its server's
		// disk is not the test's to fill), so on PostgreSQL they are skipped. The
		// directory's name stands for the test's database (storeFlags).
		t.Log("on PostgreSQL: the disk-full rounds are skipped (they fill the data directory's disk, which PostgreSQL does not use)")
		d.data = filepath.Join(dir, "data")
		d.store = storeFlags(t, d.data)
		d.serve = append(serveStoreFlags(t, d.data), "--sweep-every", faultSweepEvery)
		t.Cleanup(func() {
			if t.Failed() || os.Getenv("BERTH_FAULT_KEEP") != "" {
				dumpPostgres(t, d.store[1], filepath.Join(dir, "berth.sql")) // before the database is dropped
			}
		})
	} else {
		// The data directory sits on a disk of its own, which the disk rounds fill.
		disk = testdisk.Mount(t, faultDiskSize)
		d.data = filepath.Join(disk.Dir, "data")
		d.store, d.serve = storeFlags(t, d.data), serveStoreFlags(t, d.data)
		// The test clocks' load (fault_sandbox_test.go): serve refuses --sandbox on
		// PostgreSQL, whose database production processes may share.
		d.serve = append(d.serve, "--sandbox")
		t.Cleanup(func() {
			if t.Failed() || os.Getenv("BERTH_FAULT_KEEP") != "" {
				_ = exec.Command("cp", "-a", d.data, filepath.Join(dir, "data")).Run() // before the disk goes
			}
		})
	}
	t.Cleanup(d.kill)
	fatal := func(round int, format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d, round %d: %s\n%s", seed, round, fmt.Sprintf(format, args...), tail(d.logPath, 40))
	}
	admin := func(args ...string) map[string]any {
		t.Helper()
		return runJSON(t, bin, append(args, d.store...)...)
	}

	const startCredit = "0.0500"
	admin("migrate") // admin never creates a database
	acct := admin("admin", "account", "create", "--email", "fault@example.com", "--password", "long-enough-pw",
		"--credit", startCredit, "--quota-servers", "1000")
	account := int64(acct["id"].(float64))
	tok := admin("admin", "token", "create", "--account", fmt.Sprint(account), "--name", "fault",
		"--scopes", "servers,power,snapshots")
	token := tok["token"].(string)
	const burstCredit = "1000.0000"
	bacct := admin("admin", "account", "create", "--email", "burst@example.com", "--password", "long-enough-pw",
		"--credit", burstCredit, "--quota-servers", "1000")
	burstAccount := int64(bacct["id"].(float64))
	burstToken := admin("admin", "token", "create", "--account", fmt.Sprint(burstAccount), "--name", "burst",
		"--scopes", "servers")["token"].(string)
	const schedCredit = "1000.0000"
	sacct := admin("admin", "account", "create", "--email", "sched@example.com", "--password", "long-enough-pw",
		"--credit", schedCredit)
	schedAccount := int64(sacct["id"].(float64))
	schedToken := admin("admin", "token", "create", "--account", fmt.Sprint(schedAccount), "--name", "sched",
		"--scopes", "servers,snapshots,power")["token"].(string)
	// The test clocks' accounts (SQLite only, as --sandbox): nothing but a clock each.
	var clockTokens []string
	if !testenv.Postgres() {
		for i := range 2 {
			c := admin("admin", "account", "create", "--email", fmt.Sprintf("clock%d@example.com", i), "--password", "long-enough-pw")
			clockTokens = append(clockTokens, admin("admin", "token", "create", "--account", fmt.Sprint(int64(c["id"].(float64))),
				"--name", "clock", "--scopes", "read")["token"].(string))
		}
	} else {
		t.Log("on PostgreSQL: the test clocks' load is skipped (serve refuses --sandbox there)")
	}

	if err := d.start(); err != nil {
		fatal(0, "%v", err)
	}
	log := &faultLog{rejected: map[string]int{}}
	var round atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	clients := make([]*faultClient, faultClients)
	for i := range clients {
		clients[i] = &faultClient{id: i, token: token, base: d.base(), rng: rand.New(rand.NewPCG(uint64(seed), uint64(100+i))),
			http: &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
			log:  log, round: &round, stop: &stop}
		wg.Add(1)
		go clients[i].run(wg.Done)
	}
	wg.Add(1)
	go topups(bin, d.store, account, rand.New(rand.NewPCG(uint64(seed), 2)), log, &round, &stop, wg.Done)
	// The scheduled-deletion rounds' client, its account and its one server
	// (fault_sched_test.go).
	sched := &faultClient{id: -3, token: schedToken, base: d.base(), rng: rand.New(rand.NewPCG(uint64(seed), 3)),
		http: &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
		log:  log, round: &round, stop: &stop}
	schedServer, err := sched.orderAndWait()
	if err != nil {
		stop.Store(true)
		wg.Wait()
		fatal(0, "%v", err)
	}
	// The console floods' client (fault_sandbox_test.go), on the same server.
	consoles, err := client.New(client.WithBaseURL(d.base()), client.WithToken(schedToken), client.WithoutRetries(),
		client.WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var clocks []*clockRunner
	for _, tok := range clockTokens {
		c := newClockRunner("http://"+d.addr+"/sandbox/v1", tok)
		clocks = append(clocks, c)
		wg.Add(1)
		go c.run(&stop, wg.Done)
	}

	abort := func(round int, format string, args ...any) {
		t.Helper()
		stop.Store(true)
		wg.Wait()
		fatal(round, format, args...)
	}
	start := time.Now()
	var downtime time.Duration
	r := 0
	startupKills := 0
	var burstProblems []string
	bursts, burstLost, burstReplayed, diskRounds, schedRounds := 0, 0, 0, 0, 0
	floods, floodOpened, floodRefused := 0, 0, 0
	var floodProblems []string
	for r < rounds || (log.accepted() < faultMinOps && r < faultMaxRounds) {
		uptime := faultMinUptime + time.Duration(rng.Int64N(int64(faultMaxUptime-faultMinUptime)))
		if rng.IntN(4) == 0 {
			// Soon after the restart: the operations it resumed are in flight again.
			uptime = time.Duration(rng.Int64N(int64(faultMinUptime)))
		}
		if faultDiskRounds[r+1] && disk != nil { // SQLite's own disk: see above
			if err := fillDisk(t, disk, d.data, r+1); err != nil {
				abort(r+1, "%v", err)
			}
			diskRounds++
		}
		time.Sleep(uptime)
		r++
		round.Store(int64(r))
		var b *burst
		if r%faultBurstEvery == 2 {
			// A burst of idempotent orders, killed 30-100 ms in.
			b = startBurst(r, d.base(), burstToken)
			time.Sleep(time.Duration(30+rng.IntN(71)) * time.Millisecond)
		}
		var flood *consoleFlood
		if r%faultFloodEvery == 3 {
			// As many consoles as can be had of one server, held until the kill.
			flood = floodConsoles(consoles, schedServer.id)
		}
		if r%faultSchedEvery == 0 {
			// A deletion scheduled for the end of a snapshot being made, and the kill
			// about when that end comes.
			if sched.scheduledDeletion(schedServer) {
				schedRounds++
			}
			time.Sleep(time.Duration(rng.Int64N(int64(faultSchedKillWithin))))
		}
		d.kill() // SIGKILL
		down := time.Now()
		if flood != nil {
			flood.close()
			floodProblems = append(floodProblems, flood.problems...)
			floods, floodOpened, floodRefused = floods+1, floodOpened+flood.opened, floodRefused+flood.refused
		}
		if b != nil {
			b.wg.Wait()
		}
		time.Sleep(time.Duration(rng.Int64N(int64(faultMaxDown))))
		if rng.IntN(6) == 0 || r%6 == 3 {
			// Now and then, kill it again while it starts (migrating, resuming jobs).
			if err := d.spawn(); err != nil {
				abort(r, "restart: %v", err)
			}
			time.Sleep(time.Duration(rng.Int64N(int64(100 * time.Millisecond))))
			d.kill()
			startupKills++
		}
		if err := d.start(); err != nil {
			abort(r, "restart: %v", err)
		}
		downtime += time.Since(down)
		if b != nil {
			// Every key again, right after the restart, while it resumes its jobs.
			problems, lost, replayed := b.retry(d.base(), burstToken, log)
			burstProblems = append(burstProblems, problems...)
			bursts, burstLost, burstReplayed = bursts+1, burstLost+lost, burstReplayed+replayed
		}
	}
	// The last kill happened with the workload running; let it run a moment more, then
	// let everything accepted settle.
	time.Sleep(faultMinUptime)
	stop.Store(true)
	wg.Wait()
	workload := time.Since(start)
	for _, c := range append(clients, sched) {
		for _, b := range c.broken {
			t.Errorf("seed %d: %s", seed, b)
		}
	}
	for _, p := range append(burstProblems, floodProblems...) {
		t.Errorf("seed %d: %s", seed, p)
	}

	db, jsonInt, _ := storeDB(t, d.data)
	ctx := context.Background()
	if err := settle(ctx, db, faultSettleTime); err != nil {
		fatal(r, "%v", err)
	}
	views := map[int64]apiView{}
	for acct, tok := range map[int64]string{account: token, burstAccount: burstToken, schedAccount: schedToken} {
		if views[acct], err = readAPIView(d.base(), tok); err != nil {
			fatal(r, "reading the settled state of account %d through the API: %v", acct, err)
		}
	}
	clockMoves := 0
	for i, c := range clocks {
		for _, p := range c.finish() {
			t.Errorf("seed %d: test clock %d: %s", seed, i, p)
		}
		clockMoves += c.moved
	}
	if err := d.stop(); err != nil {
		fatal(r, "clean stop: %v", err)
	}
	// A fresh connection: the daemon checkpointed its WAL on the way out (SQLite).
	db.Close()
	db, _, _ = storeDB(t, d.data)

	log.mu.Lock()
	reqs := log.reqs
	rejectedByCode := log.rejected
	log.mu.Unlock()
	counts := map[string]int{}
	for _, q := range reqs {
		counts[q.kind+" "+outcomeNames[q.outcome]]++
	}
	w := loadWorld(ctx, t, db, jsonInt)
	lostAnswers := map[string]bool{}
	for _, q := range reqs {
		if q.kind == "order" && q.outcome == unknown {
			lostAnswers[q.name] = true
		}
	}
	landed, negative := 0, 0
	for _, s := range w.servers {
		if lostAnswers[s.display] {
			landed++
		}
	}
	for _, x := range w.txs {
		if x.balance < 0 {
			negative++
		}
	}
	t.Logf("%d kill/restart rounds (and %d kills while starting) in %s (%s down), %d accepted operations; requests: %s; rejected: %s; "+
		"%d operations resumed after a kill; %d orders whose answer was lost landed; %d servers, %d snapshots, "+
		"%d transactions (%d left the credit below zero); the API lists %d live servers; "+
		"%d bursts of %d idempotent orders killed mid-flight, %d first answers lost, of which %d retries answered the committed order again; "+
		"%d rounds with a full disk; %d kills about when a scheduled snapshot deletion ran; "+
		"%d console floods of %d (%d consoles opened, %d refused busy); %d test clocks moved %d times to their limit",
		r, startupKills, workload.Round(time.Millisecond), downtime.Round(time.Millisecond), log.accepted(), sortedCounts(counts),
		sortedCounts(rejectedByCode), w.resumed, landed, len(w.servers), len(w.snapshots), len(w.txs), negative,
		len(views[account].servers)+len(views[burstAccount].servers)+len(views[schedAccount].servers), bursts, burstSize, burstLost, burstReplayed, diskRounds, schedRounds,
		floods, faultFloodSize, floodOpened, floodRefused, len(clocks), clockMoves)
	if n := log.accepted(); n < faultMinOps {
		t.Errorf("seed %d: only %d operations were accepted, want at least %d", seed, n, faultMinOps)
	}
	for _, p := range checkFault(w, reqs, map[int64]string{account: startCredit, burstAccount: burstCredit, schedAccount: schedCredit}) {
		t.Errorf("seed %d: %s", seed, p)
	}
	for acct, view := range views {
		for _, p := range checkAPIView(w, acct, view) {
			t.Errorf("seed %d: %s", seed, p)
		}
	}
	// The sweep ends a scheduled deletion that no operation's end ran, and says so: a
	// safety net that must never have had to catch anything here.
	if logged, err := os.ReadFile(d.logPath); err == nil && bytes.Contains(logged, []byte("scheduled snapshot deletions without an operation run")) {
		t.Errorf("seed %d: the sweep ran scheduled snapshot deletions that no operation's end ran (see the daemon's log)", seed)
	}
	if t.Failed() {
		t.Logf("daemon log (%s), last lines:\n%s", d.logPath, tail(d.logPath, 60))
	}
}

// apiView is what the API shows once everything has settled.
type apiView struct {
	servers   map[int64]map[string]any // GET /servers, by id
	snapshots map[int64][]int64        // GET /servers/{id}/snapshots: ids
	credit    string                   // GET /billing
}

func readAPIView(base, token string) (apiView, error) {
	v := apiView{servers: map[int64]map[string]any{}, snapshots: map[int64][]int64{}}
	get := func(path string) (any, error) {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
			return nil, fmt.Errorf("GET %s: %d %v %v", path, resp.StatusCode, m, err)
		}
		return m["data"], nil
	}
	list, err := get("/servers")
	if err != nil {
		return v, err
	}
	for _, item := range list.([]any) {
		s := item.(map[string]any)
		id := int64(s["id"].(float64))
		v.servers[id] = s
		snaps, err := get(fmt.Sprintf("/servers/%d/snapshots", id))
		if err != nil {
			return v, err
		}
		for _, sn := range snaps.([]any) {
			v.snapshots[id] = append(v.snapshots[id], int64(sn.(map[string]any)["id"].(float64)))
		}
	}
	b, err := get("/billing")
	if err != nil {
		return v, err
	}
	v.credit, _ = b.(map[string]any)["credit"].(string)
	return v, nil
}

// checkAPIView compares what the API shows an account with the database: a read
// served from memory must not outlive a restart or a write.
func checkAPIView(w *faultWorld, acct int64, v apiView) []string {
	var out []string
	for _, s := range w.servers {
		if w.accountOf[s.id] != acct {
			continue
		}
		got, listed := v.servers[s.id]
		if s.deleted {
			if listed {
				out = append(out, fmt.Sprintf("API: deleted server %d (%s) is listed: %v", s.id, s.name, got))
			}
			continue
		}
		want := s.status
		if s.suspended != 0 {
			want = string(hosting.StatusSuspended)
		}
		switch {
		case !listed:
			out = append(out, fmt.Sprintf("API: server %d (%s) is not listed", s.id, s.name))
		case got["status"] != want || got["operation"] != nil:
			out = append(out, fmt.Sprintf("API: server %d (%s) shows status %v, operation %v; the database has %s, none",
				s.id, s.name, got["status"], got["operation"], want))
		}
		var live []int64
		for _, sn := range w.snapshots {
			if sn.server == s.id && !sn.deleted {
				live = append(live, sn.id)
			}
		}
		shown := slices.Clone(v.snapshots[s.id])
		slices.Sort(live)
		slices.Sort(shown)
		if !slices.Equal(live, shown) {
			out = append(out, fmt.Sprintf("API: server %d (%s) lists snapshots %v; the database has %v", s.id, s.name, shown, live))
		}
	}
	for id := range v.servers {
		if w.servers[id] == nil {
			out = append(out, fmt.Sprintf("API: lists server %d, which the database does not hold", id))
		}
	}
	if credit := w.credit[acct]; hosting.Money(credit).String() != v.credit {
		out = append(out, fmt.Sprintf("API: account %d shows credit %s; the database has %s", acct, v.credit, hosting.Money(credit)))
	}
	return out
}

// settle waits until no operation runs and no job of an operation or a snapshot
// deletion is left to do.
func settle(ctx context.Context, db *sql.DB, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var running, jobs int
		err := db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM operations WHERE status = 'running'),
			(SELECT COUNT(*) FROM river_job WHERE kind <> 'berth.meter' AND state NOT IN ('completed', 'cancelled', 'discarded'))`).
			Scan(&running, &jobs)
		if err == nil && running == 0 && jobs == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			var detail []string
			rows, qerr := db.QueryContext(ctx, `SELECT id, kind, state, attempt, `+asText("args")+`, `+asText("errors")+` FROM river_job
				WHERE kind <> 'berth.meter' AND state NOT IN ('completed', 'cancelled', 'discarded') ORDER BY id LIMIT 20`)
			if qerr == nil {
				for rows.Next() {
					var id, attempt int64
					var kind, state, args string
					var errs sql.NullString
					_ = rows.Scan(&id, &kind, &state, &attempt, &args, &errs)
					detail = append(detail, fmt.Sprintf("job %d %s %s attempt %d %s %s", id, kind, state, attempt, args, errs.String))
				}
				rows.Close()
			}
			return fmt.Errorf("not settled after %s: %d operations running, %d jobs left (%v)\n%s",
				timeout, running, jobs, err, strings.Join(detail, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// asText is a column of river_job as text: args is jsonb and errors jsonb[] on
// PostgreSQL, text on SQLite.
func asText(col string) string {
	if testenv.Postgres() {
		return col + "::text"
	}
	return col
}

// dumpPostgres writes the database at url to file with pg_dump, for a look at what a
// failed run left (testpg drops the database when the test ends).
func dumpPostgres(t *testing.T, url, file string) {
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_dump")
	bin := "pg_dump"
	if len(bins) > 0 {
		slices.Sort(bins)
		bin = bins[len(bins)-1]
	}
	if out, err := exec.Command(bin, "--file", file, url).CombinedOutput(); err != nil {
		t.Logf("pg_dump of the test's database: %v\n%s", err, out)
		return
	}
	t.Logf("dumped the test's database to %s", file)
}

func sortedCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// fillDisk fills the data directory's disk for faultDiskFull with the workload
// running (its writes answer 503), frees it, and waits until every operation that was
// running when space came back has ended: without a restart, which must not be needed.
func fillDisk(t *testing.T, disk *testdisk.Disk, data string, round int) error {
	t.Helper()
	disk.Fill(t)
	time.Sleep(faultDiskFull)
	disk.Free(t)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "berth.db")+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	ids := func() ([]int64, error) {
		rows, err := db.Query(`SELECT id FROM operations WHERE status = 'running' ORDER BY id`)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return nil, err
			}
			out = append(out, id)
		}
		return out, rows.Err()
	}
	inFlight, err := ids()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(faultDiskSettle)
	for {
		now, err := ids()
		if err != nil {
			return err
		}
		var left []int64
		for _, id := range inFlight {
			if slices.Contains(now, id) {
				left = append(left, id)
			}
		}
		if len(left) == 0 {
			t.Logf("round %d: the disk was full for %s; the %d operations in flight then ended by themselves", round, faultDiskFull, len(inFlight))
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("round %d: %s after the disk was freed, operations %v are still running: stranded", round, faultDiskSettle, left)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
