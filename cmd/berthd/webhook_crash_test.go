package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// allScopes is a token that may change webhooks (docs/api.md, Webhooks).
const allScopes = "read,power,servers,snapshots,ssh-keys,recipes,domains,storage,licenses,tickets"

// TestWebhookDeliveryAfterSIGKILL kills berthd twice while 200 events are being
// delivered to a receiver on 127.0.0.1 and restarts it on the same data directory
// each time (issue 28): every event is delivered at least once, none is lost, the
// receiver's dedupe on webhook-id handles each exactly once, and every request's
// signature verifies. A delivery cut off by the kill is attempted again after the
// restart, so the receiver may see an id twice; its dedupe is what makes that safe.
func TestWebhookDeliveryAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	const events = 200
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	runJSON(t, bin, append([]string{"migrate"}, storeFlags(t, data)...)...)
	acct := runJSON(t, bin, append([]string{"admin", "account", "create", "--email", "hooks@example.com", "--password", "long-enough-pw",
		"--credit", "500"}, storeFlags(t, data)...)...)
	token := runJSON(t, bin, append([]string{"admin", "token", "create", "--account", fmt.Sprint(acct["id"]), "--name", "hooks",
		"--scopes", allScopes}, storeFlags(t, data)...)...)["token"].(string)
	addr := testnet.FreeAddr(t)
	serve := func() *daemon {
		return startServe(t, bin, data, addr, "1", "--webhook-allow-private", "--rate-limit", "100000")
	}
	d := serve()

	// Each answer takes a second: deliveries are in flight when berthd is killed.
	rcv := newHookReceiver(t, time.Second)
	code, m := d.call(t, token, "POST", "/projects", map[string]any{"name": "crash-0"})
	if code != 201 {
		t.Fatalf("POST /projects: %d %v", code, m)
	}
	project := int64(m["data"].(map[string]any)["id"].(float64))
	code, m = d.call(t, token, "POST", "/webhooks", map[string]any{"url": rcv.url(), "event_types": []string{"project.updated"}})
	if code != 201 {
		t.Fatalf("POST /webhooks: %d %v", code, m)
	}
	secret := m["data"].(map[string]any)["secret"].(string)
	rcv.secret.Store(&secret)

	renamed := 0
	produce := func(n int) {
		for range n {
			renamed++
			code, m := d.call(t, token, "PATCH", fmt.Sprintf("/projects/%d", project), map[string]any{"name": fmt.Sprintf("crash-%d", renamed)})
			if code != 200 {
				t.Fatalf("rename %d: %d %v", renamed, code, m)
			}
		}
	}
	kill := func() {
		handled, requests := rcv.counts()
		inFlight := rcv.inFlight.Load()
		t.Logf("SIGKILL with %d webhook-ids handled, %d requests, %d in flight", handled, requests, inFlight)
		if inFlight == 0 {
			t.Fatal("no delivery in flight at the kill: the test would not test the crash it is about")
		}
		if err := d.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = d.cmd.Wait()
	}

	// Half the events, a kill once a fifth of them have reached the receiver; the
	// other half after the restart, a kill at two thirds of all; then the
	// receiver answers at once.
	produce(events / 2)
	rcv.waitHandled(t, events/5, 2*time.Minute)
	kill()
	d = serve()
	produce(events / 2)
	rcv.waitHandled(t, 2*events/3, 2*time.Minute)
	kill()
	rcv.delay.Store(int64(10 * time.Millisecond))
	d = serve()
	rcv.waitHandled(t, events, 3*time.Minute)

	// The store agrees: one delivery per event, each delivered.
	db, _, _ := storeDB(t, data)
	ctx := context.Background()
	var ids []int64
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		var total, delivered int
		err := db.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(CASE WHEN state = 'delivered' THEN 1 END) FROM webhook_deliveries`).
			Scan(&total, &delivered)
		if err != nil {
			t.Fatal(err)
		}
		if total == events && delivered == events {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries, %d delivered; want %d, all delivered\n%s", total, delivered, events, d.log)
		}
	}
	rows, err := db.QueryContext(ctx, `SELECT id FROM events WHERE type = 'project.updated' ORDER BY id`)
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
	requests := rcv.check(t, ids)
	total, again := 0, 0
	for _, n := range requests {
		total += n
		if n > 1 {
			again++
		}
	}
	t.Logf("%d events, %d requests; %d events sent again after a kill", events, total, again)
}
