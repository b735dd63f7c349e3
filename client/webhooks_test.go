package client_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/client/webhook"
	"github.com/berthhq/berth/internal/testenv"
)

// waitDelivered waits until the webhook's newest delivery is delivered.
func waitDelivered(t *testing.T, ctx context.Context, c *client.Client, hook int64) api.WebhookDelivery {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		p := must[*api.Page[api.WebhookDelivery]](t)(c.ListWebhookDeliveries(ctx, hook, 1))
		if len(p.Data) > 0 && p.Data[0].State == "delivered" {
			return p.Data[0]
		}
	}
	t.Fatalf("webhook %d: no delivery delivered", hook)
	return api.WebhookDelivery{}
}

// TestWebhooks: a webhook made with the SDK gets the account's events on a receiver,
// signed so that client/webhook.Verify accepts them with the secret of the creation
// (and no other); a test event, the delivery log (a page and every page), a
// redelivery of the same event, and a rotated secret that signs what follows.
func TestWebhooks(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 20, WebhookAllowPrivate: true})
	acct := env.NewAccount("en", "100", "")
	c := newClient(t, env, acct.Token)
	ctx := ctxFor(t)
	rcv := testenv.NewHookReceiver(t)
	hook := must[*api.Webhook](t)(c.CreateWebhook(ctx, api.WebhookWrite{URL: client.Ptr(rcv.URL + "/hook"), EventTypes: &[]string{"project.*"}}))
	if !strings.HasPrefix(hook.Secret, "whsec_") || !hook.Enabled || hook.URL != rcv.URL+"/hook" {
		t.Fatalf("CreateWebhook: %+v", hook)
	}
	if got := must[*api.Webhook](t)(c.GetWebhook(ctx, hook.ID)); got.Secret != "" || got.ID != hook.ID {
		t.Errorf("GetWebhook shows %+v", got)
	}
	if l := must[[]api.Webhook](t)(c.ListWebhooks(ctx)); len(l) != 1 || l[0].ID != hook.ID || l[0].Secret != "" {
		t.Errorf("ListWebhooks: %+v", l)
	}

	must[*api.Project](t)(c.CreateProject(ctx, api.ProjectWrite{Name: client.Ptr("web")}))
	got := rcv.WaitType(t, "project.created", 1)[0]
	if err := webhook.Verify(hook.Secret, got.Header, got.Body); err != nil {
		t.Errorf("webhook.Verify with the creation's secret: %v", err)
	}
	other := must[*api.Webhook](t)(c.CreateWebhook(ctx, api.WebhookWrite{URL: client.Ptr(rcv.URL + "/other"), EventTypes: &[]string{"ssh_key.*"}}))
	if err := webhook.Verify(other.Secret, got.Header, got.Body); err == nil {
		t.Error("webhook.Verify accepted another webhook's secret")
	}
	first := waitDelivered(t, ctx, c, hook.ID)
	if first.EventType != "project.created" || first.AttemptCount != 1 || len(first.Attempts) != 1 ||
		first.Attempts[0].Status == nil || *first.Attempts[0].Status != 200 {
		t.Errorf("the delivery: %+v", first)
	}

	if err := c.TestWebhook(ctx, hook.ID); err != nil {
		t.Fatalf("TestWebhook: %v", err)
	}
	rcv.WaitType(t, "webhook.test", 1)
	if d := waitDelivered(t, ctx, c, hook.ID); d.EventType != "webhook.test" {
		t.Errorf("the newest delivery after TestWebhook: %+v", d)
	}
	var walked []string
	for d, err := range c.AllWebhookDeliveries(ctx, hook.ID) {
		if err != nil {
			t.Fatal(err)
		}
		walked = append(walked, d.EventType)
	}
	if strings.Join(walked, " ") != "webhook.test project.created" {
		t.Errorf("AllWebhookDeliveries: %v", walked)
	}
	redeliverAndRotate(t, ctx, c, rcv, hook, first)
}

// redeliverAndRotate: a redelivery sends the same event (webhook-id) again; after a
// rotation what is sent verifies with the new secret.
func redeliverAndRotate(t *testing.T, ctx context.Context, c *client.Client, rcv *testenv.HookReceiver, hook *api.Webhook, first api.WebhookDelivery) {
	t.Helper()
	id := i64(first.EventID)
	if d := must[*api.WebhookDelivery](t)(c.RedeliverWebhookDelivery(ctx, hook.ID, first.ID)); d.ID != first.ID || d.State != "pending" {
		t.Errorf("RedeliverWebhookDelivery: %+v", d)
	}
	for deadline := time.Now().Add(30 * time.Second); rcv.Count(id) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("event %s was sent %d times, want 2 after the redelivery", id, rcv.Count(id))
		}
	}
	rot := must[*api.Webhook](t)(c.RotateWebhookSecret(ctx, hook.ID))
	if !strings.HasPrefix(rot.Secret, "whsec_") || rot.Secret == hook.Secret {
		t.Fatalf("RotateWebhookSecret: %+v", rot)
	}
	must[*api.Project](t)(c.CreateProject(ctx, api.ProjectWrite{Name: client.Ptr("db")}))
	got := rcv.Wait(t, "the second project.created", 1, func(d testenv.HookRequest) bool {
		return d.Type() == "project.created" && d.ID() != id
	})[0]
	if err := webhook.Verify(rot.Secret, got.Header, got.Body); err != nil {
		t.Errorf("webhook.Verify with the rotated secret: %v", err)
	}
}

// TestWebhookErrors: the errors the doc comments name: ErrValidation naming the
// field, ErrMissingScope for a token without every scope (which may still read),
// ErrNotFound, and a disabled webhook that cannot be tested.
func TestWebhookErrors(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 20, WebhookAllowPrivate: true})
	acct := env.NewAccount("en", "100", "")
	c := newClient(t, env, acct.Token)
	ctx := ctxFor(t)
	rcv := testenv.NewHookReceiver(t)
	_, err := c.CreateWebhook(ctx, api.WebhookWrite{URL: client.Ptr(rcv.URL), EventTypes: &[]string{"project.renamed"}})
	if e := wantError(t, err, 422, "validation_failed", client.ErrValidation); len(e.Fields["event_types"]) == 0 {
		t.Errorf("an unknown event type: %v", e.Fields)
	}
	hook := must[*api.Webhook](t)(c.CreateWebhook(ctx, api.WebhookWrite{URL: client.Ptr(rcv.URL)}))

	reader := newClient(t, env, acct.NewToken("read"))
	_, err = reader.CreateWebhook(ctx, api.WebhookWrite{URL: client.Ptr(rcv.URL)})
	wantError(t, err, 403, "missing_scope", client.ErrMissingScope)
	wantError(t, reader.TestWebhook(ctx, hook.ID), 403, "missing_scope", client.ErrMissingScope)
	if l := must[[]api.Webhook](t)(reader.ListWebhooks(ctx)); len(l) != 1 {
		t.Errorf("ListWebhooks with read: %+v", l)
	}

	if h := must[*api.Webhook](t)(c.UpdateWebhook(ctx, hook.ID, api.WebhookWrite{Enabled: client.Ptr(false)})); h.Enabled {
		t.Errorf("UpdateWebhook enabled=false: %+v", h)
	}
	if e := wantError(t, c.TestWebhook(ctx, hook.ID), 422, "validation_failed", client.ErrValidation); len(e.Fields["webhook"]) == 0 {
		t.Errorf("testing a disabled webhook: %v", e.Fields)
	}
	if err := c.DeleteWebhook(ctx, hook.ID); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetWebhook(ctx, hook.ID)
	wantError(t, err, 404, "not_found", client.ErrNotFound)
	_, err = c.ListWebhookDeliveries(ctx, hook.ID, 1)
	wantError(t, err, 404, "not_found", client.ErrNotFound)
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

// everyWebhookEndpoint calls each webhook method once with success, for
// TestEveryEndpoint (a Berth with --sandbox, where a receiver on 127.0.0.1 is allowed).
func everyWebhookEndpoint(t *testing.T, ctx context.Context, c *client.Client) {
	t.Helper()
	rcv := testenv.NewHookReceiver(t)
	hook := must[*api.Webhook](t)(c.CreateWebhook(ctx, api.WebhookWrite{URL: client.Ptr(rcv.URL), EventTypes: &[]string{"project.*"}}))
	must[*api.Webhook](t)(c.UpdateWebhook(ctx, hook.ID, api.WebhookWrite{EventTypes: &[]string{"*"}}))
	if l := must[[]api.Webhook](t)(c.ListWebhooks(ctx)); len(l) != 1 {
		t.Errorf("ListWebhooks: %+v", l)
	}
	must[*api.Webhook](t)(c.GetWebhook(ctx, hook.ID))
	if err := c.TestWebhook(ctx, hook.ID); err != nil {
		t.Errorf("TestWebhook: %v", err)
	}
	d := waitDelivered(t, ctx, c, hook.ID)
	must[*api.WebhookDelivery](t)(c.RedeliverWebhookDelivery(ctx, hook.ID, d.ID))
	must[*api.Webhook](t)(c.RotateWebhookSecret(ctx, hook.ID))
	if err := c.DeleteWebhook(ctx, hook.ID); err != nil {
		t.Errorf("DeleteWebhook: %v", err)
	}
}
