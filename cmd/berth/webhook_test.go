package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/client/webhook"
	"github.com/berthhq/berth/internal/testenv"
)

// newestDelivery waits until berth webhook deliveries shows the newest delivery of
// hook delivered, and returns it as JSON.
func newestDelivery(t *testing.T, c *cli, hook string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var ds []map[string]any
		if err := json.Unmarshal([]byte(c.ok("webhook", "deliveries", hook, "-o", "json")), &ds); err != nil {
			t.Fatal(err)
		}
		if len(ds) > 0 && ds[0]["state"] == "delivered" {
			return ds[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook %s: no delivery delivered in %v", hook, ds)
		}
	}
}

// TestWebhookCommands: create prints the secret once (stdout; a note on stderr) and
// nothing shows it again; list and describe (by id and by a URL one webhook has);
// update --disable (a test is then refused: exit 4) and --enable; test reaches a
// receiver on 127.0.0.1 signed with that secret; deliveries lists it; redeliver sends
// the same event again; rotate-secret prints a secret that signs what follows; delete.
func TestWebhookCommands(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 20, WebhookAllowPrivate: true})
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	rcv := testenv.NewHookReceiver(t)
	url := rcv.URL + "/hook"
	r := c.run("webhook", "create", "--url", url, "--event-type", "project.*")
	secret := strings.TrimSpace(r.stdout)
	if r.code != 0 || !strings.HasPrefix(secret, "whsec_") || strings.Count(r.stdout, "\n") != 1 ||
		!strings.Contains(r.stderr, "Webhook 1 created") || !strings.Contains(r.stderr, "shown only now") {
		t.Fatalf("webhook create: exit %d\n%s[stderr]\n%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"webhook", "list"}, {"webhook", "list", "-o", "json"}, {"webhook", "describe", "1", "-o", "yaml"}} {
		if out := c.ok(args...); !strings.Contains(out, url) || strings.Contains(out, "whsec_") {
			t.Errorf("berth %q shows no URL or a secret:\n%s", args, out)
		}
	}
	if got := c.ok("webhook", "describe", url, "-o", "columns=id,event_types,enabled"); got != "id:           1\nevent_types:  project.*\nenabled:      true\n" {
		t.Errorf("describe by URL:\n%s", got)
	}
	if got := c.ok("webhook", "update", url, "--disable", "-o", "columns=enabled"); !strings.Contains(got, "false") {
		t.Errorf("update --disable:\n%s", got)
	}
	if r := c.run("webhook", "test", "1"); r.code != 4 || !strings.Contains(r.stderr, "webhook:") {
		t.Errorf("test of a disabled webhook: exit %d, %s", r.code, r.stderr)
	}
	if got := c.ok("webhook", "update", "1", "--enable", "-o", "columns=enabled"); !strings.Contains(got, "true") {
		t.Errorf("update --enable:\n%s", got)
	}

	if r := c.run("webhook", "test", "1"); r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "Test event sent to webhook 1") {
		t.Fatalf("webhook test: exit %d\n%s[stderr]\n%s", r.code, r.stdout, r.stderr)
	}
	got := rcv.WaitType(t, "webhook.test", 1)[0]
	if err := webhook.Verify(secret, got.Header, got.Body); err != nil {
		t.Errorf("the test event does not verify with the printed secret: %v", err)
	}
	d := newestDelivery(t, c, "1")
	if d["event_type"] != "webhook.test" || jsonID(d["event_id"]) != got.ID() {
		t.Errorf("deliveries: %v, webhook-id %s", d, got.ID())
	}
	if table := c.ok("webhook", "deliveries", "1"); !strings.Contains(table, "webhook.test") || !strings.Contains(table, "delivered") || !strings.Contains(table, "200") {
		t.Errorf("deliveries:\n%s", table)
	}
	webhookRedeliverRotateDelete(t, c, rcv, jsonID(d["id"]), secret)
}

// jsonID is a number of decoded JSON as the decimal id it is.
func jsonID(v any) string {
	f, _ := v.(float64)
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// webhookRedeliverRotateDelete: redeliver sends webhook 1's delivery again (its
// event, the same webhook-id); rotate-secret prints a new secret that verifies the
// next test event; delete leaves no webhook.
func webhookRedeliverRotateDelete(t *testing.T, c *cli, rcv *testenv.HookReceiver, delivery, secret string) {
	t.Helper()
	if got := c.ok("webhook", "redeliver", "1", delivery, "-o", "columns=id,state"); got != "id:     "+delivery+"\nstate:  pending\n" {
		t.Errorf("redeliver:\n%s", got)
	}
	sent := rcv.WaitType(t, "webhook.test", 2)
	if a, b := sent[0].ID(), sent[1].ID(); a != b {
		t.Errorf("redelivered webhook-id %s, first sent as %s", b, a)
	}
	if r := c.run("webhook", "redeliver", "1", "x"); r.code == 0 || !strings.Contains(r.stderr, "want a numeric id") {
		t.Errorf("redeliver 1 x: exit %d, %s", r.code, r.stderr)
	}

	r := c.run("webhook", "rotate-secret", "1")
	rotated := strings.TrimSpace(r.stdout)
	if r.code != 0 || !strings.HasPrefix(rotated, "whsec_") || rotated == secret || !strings.Contains(r.stderr, "shown only now") {
		t.Fatalf("rotate-secret: exit %d\n%s[stderr]\n%s", r.code, r.stdout, r.stderr)
	}
	c.ok("webhook", "test", "1")
	got := rcv.WaitType(t, "webhook.test", 3)[2]
	if err := webhook.Verify(rotated, got.Header, got.Body); err != nil {
		t.Errorf("a delivery after rotate-secret does not verify with the new secret: %v", err)
	}

	// Two webhooks of one URL: the URL names neither; ids name each.
	var w2 struct{ ID int64 }
	if err := json.Unmarshal([]byte(c.ok("webhook", "create", "--url", rcv.URL+"/hook", "-o", "json")), &w2); err != nil || w2.ID != 2 {
		t.Fatalf("create -o json: %+v %v", w2, err)
	}
	if r := c.run("webhook", "describe", rcv.URL+"/hook"); r.code != 1 || !strings.Contains(r.stderr, "names 2 webhooks") {
		t.Errorf("describe by a URL of two: exit %d, %s", r.code, r.stderr)
	}
	if r := c.run("webhook", "delete", "1", "2"); r.code != 0 || r.stderr != "Webhook 1 deleted\nWebhook 2 deleted\n" {
		t.Errorf("delete 1 2: exit %d, %s", r.code, r.stderr)
	}
	if got := c.ok("webhook", "list", "-q"); got != "" {
		t.Errorf("list after delete: %q", got)
	}
	if r := c.run("webhook", "describe", "1"); r.code != 3 {
		t.Errorf("describe of a deleted webhook: exit %d, %s", r.code, r.stderr)
	}
}

// TestWebhookCreateRefused: a Berth that refuses private addresses (serve without
// --webhook-allow-private) answers create with a 422 naming url: exit 4; an
// unknown event type likewise names event_types.
func TestWebhookCreateRefused(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	for _, tt := range []struct {
		args  []string
		field string
	}{
		{[]string{"--url", "https://127.0.0.1/hook"}, "url"},
		{[]string{"--url", "https://10.0.0.1/hook"}, "url"},
		{[]string{"--url", "https://hooks.example.com/", "--event-type", "project.renamed"}, "event_types"},
	} {
		r := c.run(append([]string{"webhook", "create"}, tt.args...)...)
		if r.code != 4 || r.stdout != "" || !strings.Contains(r.stderr, "(422 validation_failed)") || !strings.Contains(r.stderr, "  "+tt.field+": ") {
			t.Errorf("webhook create %q: exit %d\n%s[stderr]\n%s", tt.args, r.code, r.stdout, r.stderr)
		}
	}
	if got := c.ok("webhook", "list", "-q"); got != "" {
		t.Errorf("webhooks made: %q", got)
	}
}
