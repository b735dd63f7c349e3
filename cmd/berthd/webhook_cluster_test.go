package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
	"github.com/berthhq/berth/internal/testpg"
)

// TestWebhookCluster runs three berthd processes on one PostgreSQL database, each
// writing a third of 500 events, with one webhook to a receiver on 127.0.0.1 that
// answers 2xx at once (issue 28): every event is delivered, and exactly once, by
// one process's one attempt, though all three work the queue. Then a GET /events
// held on the first process wakes when the second writes an event (LISTEN/NOTIFY).
func TestWebhookCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three daemons")
	}
	testpg.Require(t)
	t.Parallel()
	const events = 500
	bin := testenv.BerthdBinary(t)
	db := testpg.NewDatabase(t)
	store := []string{"--database", db}
	runJSON(t, bin, append([]string{"migrate"}, store...)...)
	acct := runJSON(t, bin, append([]string{"admin", "account", "create", "--email", "hooks@example.com", "--password", "long-enough-pw",
		"--credit", "500"}, store...)...)
	token := runJSON(t, bin, append([]string{"admin", "token", "create", "--account", fmt.Sprint(acct["id"]), "--name", "hooks",
		"--scopes", allScopes}, store...)...)["token"].(string)
	args := append([]string{"--webhook-allow-private", "--rate-limit", "100000"}, store...)
	nodes := make([]*clusterNode, 3)
	for i := range nodes {
		nodes[i] = &clusterNode{bin: bin, addr: testnet.FreeAddr(t), args: args}
		nodes[i].start(t)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.stop()
		}
	})
	client := &http.Client{Timeout: 90 * time.Second}
	call := func(n *clusterNode, method, path string, body any) (int, map[string]any, error) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, n.base()+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return resp.StatusCode, m, nil
	}

	rcv := newHookReceiver(t, 0)
	code, m, err := call(nodes[0], "POST", "/webhooks", map[string]any{"url": rcv.url(), "event_types": []string{"project.updated"}})
	if err != nil || code != 201 {
		t.Fatalf("POST /webhooks: %d %v %v", code, m, err)
	}
	secret := m["data"].(map[string]any)["secret"].(string)
	rcv.secret.Store(&secret)

	// Each process renames a project of its own, a third of the events each.
	var wg sync.WaitGroup
	for i, n := range nodes {
		code, m, err := call(n, "POST", "/projects", map[string]any{"name": fmt.Sprintf("node-%d", i)})
		if err != nil || code != 201 {
			t.Fatalf("POST /projects: %d %v %v", code, m, err)
		}
		project := int64(m["data"].(map[string]any)["id"].(float64))
		share := events / len(nodes)
		if i == 0 {
			share += events % len(nodes)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range share {
				code, m, err := call(n, "PATCH", fmt.Sprintf("/projects/%d", project), map[string]any{"name": fmt.Sprintf("node-%d-%d", i, k)})
				if err != nil || code != 200 {
					t.Errorf("rename on node %d: %d %v %v", i, code, m, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	rcv.waitHandled(t, events, 3*time.Minute)

	sqlDB, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	// The deliveries' ends are recorded after the answers: wait for them.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		var total, delivered, attempts int
		err := sqlDB.QueryRow(`SELECT COUNT(*), COUNT(CASE WHEN state = 'delivered' THEN 1 END), COALESCE(SUM(attempts), 0)
			FROM webhook_deliveries`).Scan(&total, &delivered, &attempts)
		if err != nil {
			t.Fatal(err)
		}
		if total == events && delivered == events {
			if attempts != events {
				t.Errorf("%d attempts recorded for %d deliveries, want one each", attempts, events)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries, %d delivered; want %d, all delivered", total, delivered, events)
		}
	}
	var ids []int64
	rows, err := sqlDB.Query(`SELECT id FROM events WHERE type = 'project.updated' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if len(ids) != events {
		t.Fatalf("%d project.updated events, want %d", len(ids), events)
	}
	for id, n := range rcv.check(t, ids) {
		if n != 1 {
			t.Errorf("webhook-id %s: %d requests, want 1 (the receiver answered 2xx at once)", id, n)
		}
	}

	// A GET /events?wait=60 held on the first process wakes when the second writes.
	type answer struct {
		code int
		m    map[string]any
		err  error
		at   time.Time
	}
	got := make(chan answer, 1)
	go func() {
		code, m, err := call(nodes[0], "GET", fmt.Sprintf("/events?after=%d&types=project.created&wait=60", ids[len(ids)-1]), nil)
		got <- answer{code, m, err, time.Now()}
	}()
	time.Sleep(2 * time.Second) // let it be held
	select {
	case a := <-got:
		t.Fatalf("GET /events?wait=60 answered before any event: %d %v %v", a.code, a.m, a.err)
	default:
	}
	written := time.Now()
	if code, m, err := call(nodes[1], "POST", "/projects", map[string]any{"name": "woken"}); err != nil || code != 201 {
		t.Fatalf("POST /projects on node 1: %d %v %v", code, m, err)
	}
	select {
	case a := <-got:
		if a.err != nil || a.code != 200 {
			t.Fatalf("GET /events?wait=60: %d %v %v", a.code, a.m, a.err)
		}
		list, _ := a.m["data"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["type"] != "project.created" {
			t.Fatalf("GET /events?wait=60 answered %v, want the project.created of node 1", a.m)
		}
		t.Logf("woken %v after node 1's write", a.at.Sub(written))
	case <-time.After(10 * time.Second):
		t.Fatal("GET /events?wait=60 on node 0 not woken 10 s after node 1 wrote an event")
	}
}
