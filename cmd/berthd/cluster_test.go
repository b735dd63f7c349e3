package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
	"github.com/berthhq/berth/internal/testpg"
)

// TestCluster runs three berthd processes on one PostgreSQL database behind a client
// that spreads mixed operations over them, SIGKILLs one process and restarts it, twice,
// mid-run, and then checks that the three behaved as one Berth: every accepted
// operation ended exactly once, no server is left in a transitional status, every
// server was charged exactly once for each started hour, the ledger balances, and a
// token's rate limit held across the three together.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three daemons")
	}
	testpg.Require(t)
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	db := testpg.NewDatabase(t)
	store := []string{"--database", db}
	runJSON(t, bin, append([]string{"migrate"}, store...)...)
	acct := runJSON(t, bin, append([]string{"admin", "account", "create", "--email", "cluster@example.com", "--password", "long-enough-pw",
		"--credit", "5000", "--quota-servers", "1000", "--quota-snapshots", "1000", "--quota-tokens", "50"}, store...)...)
	acctID := fmt.Sprint(acct["id"])
	token := func(name string) string {
		return runJSON(t, bin, append([]string{"admin", "token", "create", "--account", acctID, "--name", name,
			"--scopes", "servers,power,snapshots"}, store...)...)["token"].(string)
	}
	// Scale 0.02: provisioning 600 ms, a graceful shutdown 100 ms. The jobs of a
	// killed process are taken over by another once the leader's sweep has found its
	// liveness lock free twice (about 10 s).
	serveArgs := append([]string{"--sim-time-scale", "0.02"}, store...)
	nodes := make([]*clusterNode, 3)
	for i := range nodes {
		nodes[i] = &clusterNode{bin: bin, addr: testnet.FreeAddr(t), args: serveArgs}
		nodes[i].start(t)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.stop()
		}
	})

	// The workload: six clients, each with a token of its own (the limit is per
	// token), 300 accepted operations in all.
	const want = 300
	w := &workload{nodes: nodes, client: &http.Client{Timeout: 90 * time.Second}}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var tokens []string
	for i := range 6 {
		wg.Add(1)
		tokens = append(tokens, token(fmt.Sprintf("client-%d", i)))
		c := &clusterClient{w: w, token: tokens[i], rnd: mrand.New(mrand.NewPCG(uint64(i), 7))}
		go func() {
			defer wg.Done()
			c.run(ctx, t, want)
		}()
	}
	// Two kills, each of another process, each restarted a moment later.
	for k, at := range []int64{want / 3, 2 * want / 3} {
		for w.accepted.Load() < at && ctx.Err() == nil && !t.Failed() {
			time.Sleep(20 * time.Millisecond)
		}
		n := nodes[k]
		t.Logf("SIGKILL node %d (%s) after %d accepted operations", k, n.addr, w.accepted.Load())
		n.kill()
		time.Sleep(time.Second)
		n.start(t)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	ops := w.ops()
	t.Logf("%d operations accepted (%v)", len(ops), w.byType())

	// Every accepted operation ends (those of the killed processes once River's
	// rescuer gives them to another): ?wait on any process sees it end.
	for i, op := range ops {
		if op.id == 0 {
			continue
		}
		waiter := &clusterClient{w: w, token: tokens[i%len(tokens)]} // 120 requests a minute each
		deadline := time.Now().Add(3 * time.Minute)
		for {
			got := waiter.get(t, fmt.Sprintf("/operations/%d?wait=30", op.id))
			if got["status"] != "running" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("operation %d (%s) still running after 3 minutes", op.id, op.typ)
			}
		}
	}
	sqlDB, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	// Those the client saw no id of (snapshots, deletions) too.
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(250 * time.Millisecond) {
		var running int
		if err := sqlDB.QueryRow(`SELECT COUNT(*) FROM operations WHERE status = 'running'`).Scan(&running); err != nil {
			t.Fatal(err)
		}
		if running == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d operations still running after 3 minutes", running)
		}
	}
	for _, n := range nodes {
		n.stop()
	}
	for _, p := range clusterChecks(t, sqlDB, ops) {
		t.Error(p)
	}

	// The rate limit holds for the deployment: 200 requests of one token within a
	// minute, spread over the three, get exactly 120 answers that are not 429.
	for _, n := range nodes {
		n.start(t)
	}
	limited := token("limited")
	var ok429, okOther atomic.Int64
	var lwg sync.WaitGroup
	for i := range 200 {
		lwg.Add(1)
		go func() {
			defer lwg.Done()
			req, _ := http.NewRequest("GET", nodes[i%3].base()+"/me", nil)
			req.Header.Set("Authorization", "Bearer "+limited)
			resp, err := w.client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusTooManyRequests {
				ok429.Add(1)
			} else {
				okOther.Add(1)
			}
		}()
	}
	lwg.Wait()
	if okOther.Load() != 120 || ok429.Load() != 80 {
		t.Errorf("200 requests of one token over three processes: %d answered, %d 429; want 120 and 80", okOther.Load(), ok429.Load())
	}
}

// clusterNode is one berthd serve process of the cluster.
type clusterNode struct {
	bin, addr string
	args      []string
	mu        sync.Mutex
	cmd       *exec.Cmd
	log       *bytes.Buffer
}

func (n *clusterNode) base() string { return "http://" + n.addr + "/v1" }

func (n *clusterNode) start(t *testing.T) {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.log = &bytes.Buffer{}
	n.cmd = exec.Command(n.bin, append([]string{"serve", "--addr", n.addr}, n.args...)...)
	n.cmd.Stdout, n.cmd.Stderr = n.log, n.log
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(n.base() + "/openapi.json")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("berthd on %s did not come up: %v\n%s", n.addr, err, n.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (n *clusterNode) kill() {
	n.mu.Lock()
	defer n.mu.Unlock()
	_ = n.cmd.Process.Kill() // SIGKILL
	_ = n.cmd.Wait()
}

func (n *clusterNode) stop() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd.ProcessState != nil {
		return
	}
	_ = n.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = n.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = n.cmd.Process.Kill()
		<-done
	}
}

type acceptedOp struct {
	id       int64
	typ      string
	serverID int64
}

// workload is what the clients share: the processes and what was accepted.
type workload struct {
	nodes    []*clusterNode
	client   *http.Client
	accepted atomic.Int64
	mu       sync.Mutex
	accepts  []acceptedOp
}

func (w *workload) accept(op acceptedOp) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if op.id != 0 && slices.ContainsFunc(w.accepts, func(o acceptedOp) bool { return o.id == op.id }) {
		return // a retry answered with the first answer again
	}
	w.accepts = append(w.accepts, op)
	w.accepted.Add(1)
}

func (w *workload) ops() []acceptedOp {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.accepts)
}

func (w *workload) byType() map[string]int {
	out := map[string]int{}
	for _, o := range w.ops() {
		out[o.typ]++
	}
	return out
}

// clusterClient is one client: its own servers, a token, and a random mix.
type clusterClient struct {
	w       *workload
	token   string
	rnd     *mrand.Rand
	servers []int64
}

// do sends one request to a random process. A POST carries an Idempotency-Key and is
// sent again (to any process) while the process it went to dies before answering;
// a 429 waits for its Retry-After.
func (c *clusterClient) do(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	key := ""
	if method == "POST" {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		key = hex.EncodeToString(b)
	}
	for attempt := 0; ; attempt++ {
		n := c.w.nodes[mrand.IntN(len(c.w.nodes))]
		req, _ := http.NewRequest(method, n.base()+path, bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := c.w.client.Do(req)
		if err != nil {
			if attempt > 200 {
				t.Errorf("%s %s: %v (and 200 retries)", method, path, err)
				return 0, nil
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		switch resp.StatusCode {
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			time.Sleep(time.Duration(max(secs, 1)) * time.Second)
			continue
		case http.StatusConflict:
			if _, busy := m["operation"]; busy {
				return resp.StatusCode, m
			}
			// The first request with this key has not answered yet (its process
			// may have died: its transaction then rolled back, and the key is free).
			time.Sleep(200 * time.Millisecond)
			continue
		case http.StatusInternalServerError:
			t.Errorf("%s %s: 500 %s", method, path, b)
		}
		return resp.StatusCode, m
	}
}

func (c *clusterClient) get(t *testing.T, path string) map[string]any {
	t.Helper()
	code, m := c.do(t, "GET", path, nil)
	if code != 200 {
		t.Fatalf("GET %s: %d %v", path, code, m)
	}
	return m["data"].(map[string]any)
}

// run sends a random mix until want operations were accepted in all.
func (c *clusterClient) run(ctx context.Context, t *testing.T, want int64) {
	for c.w.accepted.Load() < want && ctx.Err() == nil && !t.Failed() {
		if len(c.servers) < 3 || c.rnd.IntN(8) == 0 {
			c.order(t)
			continue
		}
		id := c.servers[c.rnd.IntN(len(c.servers))]
		path := fmt.Sprintf("/servers/%d", id)
		code, m := c.do(t, "GET", path, nil)
		if code == 404 {
			c.servers = slices.DeleteFunc(c.servers, func(s int64) bool { return s == id })
			continue
		}
		srv, _ := m["data"].(map[string]any)
		if srv == nil || srv["operation"] != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		switch status := srv["status"]; {
		case status == "error":
			c.delete(t, id)
		case c.rnd.IntN(12) == 0:
			c.delete(t, id)
		case status == "running" && c.rnd.IntN(4) == 0:
			c.post(t, path+"/snapshots", map[string]any{"name": fmt.Sprintf("s%d", c.rnd.IntN(1_000_000))}, "snapshot", id, http.StatusCreated)
		case status == "running":
			action := []string{"shutdown", "off", "reboot", "reset"}[c.rnd.IntN(4)]
			c.post(t, path+"/power", map[string]any{"action": action}, "power", id, http.StatusOK)
		case status == "stopped" && c.rnd.IntN(3) == 0:
			plan := 2.0
			if srv["plan_id"] == 2.0 {
				plan = 1
			}
			c.post(t, path+"/rescale", map[string]any{"plan_id": plan, "upgrade_disk": false}, "rescale", id, http.StatusOK)
		case status == "stopped":
			c.post(t, path+"/power", map[string]any{"action": "on"}, "power", id, http.StatusOK)
		}
	}
}

func (c *clusterClient) order(t *testing.T) {
	code, m := c.do(t, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1})
	if code != http.StatusCreated {
		t.Errorf("order: %d %v", code, m)
		return
	}
	s := m["data"].(map[string]any)
	id := int64(s["id"].(float64))
	c.servers = append(c.servers, id)
	c.w.accept(acceptedOp{id: int64(s["operation"].(map[string]any)["id"].(float64)), typ: "provision", serverID: id})
}

// post sends an operation; a 409 (another client's operation came first) or a 422
// (the state changed meanwhile) is not an accepted operation.
func (c *clusterClient) post(t *testing.T, path string, body any, typ string, serverID int64, ok int) {
	code, m := c.do(t, "POST", path, body)
	switch {
	case code == ok:
	case code == http.StatusConflict || code == http.StatusUnprocessableEntity:
		return
	default:
		t.Errorf("POST %s: %d %v", path, code, m)
		return
	}
	if typ == "snapshot" {
		// The answer is the snapshot; its operation is in the database.
		c.w.accept(acceptedOp{typ: typ, serverID: serverID})
		return
	}
	s, _ := m["data"].(map[string]any)
	op, _ := s["operation"].(map[string]any)
	if op == nil {
		t.Errorf("POST %s answered %d without an operation: %v", path, code, m)
		return
	}
	c.w.accept(acceptedOp{id: int64(op["id"].(float64)), typ: typ, serverID: serverID})
}

func (c *clusterClient) delete(t *testing.T, id int64) {
	path := fmt.Sprintf("/servers/%d", id)
	code, m := c.do(t, "DELETE", path, nil)
	switch code {
	case http.StatusNoContent, http.StatusNotFound:
		c.servers = slices.DeleteFunc(c.servers, func(s int64) bool { return s == id })
		if code == http.StatusNoContent {
			c.w.accept(acceptedOp{typ: "delete", serverID: id})
		}
	case http.StatusConflict, http.StatusUnprocessableEntity:
	default:
		t.Errorf("DELETE %s: %d %v", path, code, m)
	}
}

// clusterChecks reads the database after the run and returns every problem found.
func clusterChecks(t *testing.T, db *sql.DB, accepted []acceptedOp) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	q := func(query string, args ...any) *sql.Rows {
		rows, err := db.QueryContext(ctx, query, args...)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return rows
	}
	// Every operation ended, once: finished, and its job (one) completed.
	rows := q(`SELECT o.id, o.type, o.status, o.finished_at IS NOT NULL,
		(SELECT COUNT(*) FROM river_job j WHERE j.kind = 'berth.operation' AND (j.args->>'operation_id')::bigint = o.id),
		(SELECT COUNT(*) FROM river_job j WHERE j.kind = 'berth.operation' AND (j.args->>'operation_id')::bigint = o.id AND j.state = 'completed')
		FROM operations o ORDER BY o.id`)
	seen := map[int64]bool{}
	types := map[string]int{}
	for rows.Next() {
		var id int64
		var typ, status string
		var finished bool
		var jobs, completed int
		if err := rows.Scan(&id, &typ, &status, &finished, &jobs, &completed); err != nil {
			t.Fatal(err)
		}
		seen[id] = true
		types[typ]++
		if status == "running" || !finished {
			out = append(out, fmt.Sprintf("operation %d (%s) did not end: %s", id, typ, status))
		}
		if jobs != 1 || completed != 1 {
			out = append(out, fmt.Sprintf("operation %d (%s): %d jobs, %d completed; want exactly one, completed", id, typ, jobs, completed))
		}
	}
	rows.Close()
	for _, op := range accepted {
		if op.id > 0 && !seen[op.id] {
			out = append(out, fmt.Sprintf("accepted operation %d (%s) is not in the database", op.id, op.typ))
		}
	}
	if types["delete"] == 0 || types["provision"] == 0 || types["power"] == 0 || types["snapshot"] == 0 || types["rescale"] == 0 {
		out = append(out, fmt.Sprintf("the mix lacks a kind of operation: %v", types))
	}
	// No server is left between states, or busy.
	rows = q(`SELECT id, status, operation_id FROM servers WHERE deleted_at IS NULL`)
	for rows.Next() {
		var id int64
		var status string
		var op sql.NullInt64
		if err := rows.Scan(&id, &status, &op); err != nil {
			t.Fatal(err)
		}
		if (status != "running" && status != "stopped" && status != "error") || op.Valid {
			out = append(out, fmt.Sprintf("server %d left %s (operation %v)", id, status, op))
		}
	}
	rows.Close()
	// Each server was charged exactly once for each hour that started: the run is
	// shorter than an hour, so once (and refunded when its provisioning failed).
	rows = q(`SELECT s.id, s.status, s.created_at, COALESCE(s.deleted_at, (EXTRACT(EPOCH FROM now()) * 1000)::bigint),
		(SELECT COUNT(*) FROM transactions t WHERE t.type = 'charge' AND t.resource_type = 'server' AND t.resource_id = s.id)
		FROM servers s`)
	for rows.Next() {
		var id, created, until int64
		var status string
		var charges int
		if err := rows.Scan(&id, &status, &created, &until, &charges); err != nil {
			t.Fatal(err)
		}
		if hours := int((until-created)/3_600_000) + 1; charges != hours {
			out = append(out, fmt.Sprintf("server %d (%s): %d charges, want %d (one per started hour)", id, status, charges, hours))
		}
	}
	rows.Close()
	// The ledger balances: credit is the sum of the account's entries, each entry's
	// balance the running sum, and no hour charged twice.
	var bad int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM accounts a
		WHERE a.credit <> (SELECT COALESCE(SUM(amount), 0) FROM transactions t WHERE t.account_id = a.id)`).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		out = append(out, fmt.Sprintf("%d accounts whose credit is not the sum of their ledger", bad))
	}
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT balance_after,
		SUM(amount) OVER (PARTITION BY account_id ORDER BY id) AS running FROM transactions) AS l
		WHERE balance_after <> running`).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		out = append(out, fmt.Sprintf("%d ledger entries whose balance is not the running sum", bad))
	}
	// The simulated machines saw each server created once.
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT machine FROM sim_events WHERE event = 'create'
		GROUP BY machine HAVING COUNT(*) > 1) AS d`).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		out = append(out, fmt.Sprintf("%d machines created more than once", bad))
	}
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("... and %d more", len(out)-20))
	}
	return out
}
