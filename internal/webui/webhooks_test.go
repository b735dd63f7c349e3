package webui_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
)

// The webhooks page (Settings → Webhooks) through the real console: the receivers
// are httptest servers on 127.0.0.1, which testenv's webhook client alone may reach.

var (
	webhookIDRE = regexp.MustCompile(`data-webhook="(\d+)"`)
	secretRE    = regexp.MustCompile(`id="webhook-secret" class="mono" readonly value="(whsec_[^"]+)"`)
	deliveryRE  = regexp.MustCompile(`data-delivery="(\d+)" data-event="webhook.test" data-state="delivered"`)
)

// receiver is a webhook receiver on 127.0.0.1 that counts what it was sent.
func receiver(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("webhook-signature") != "" {
			got.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

// addWebhook adds a webhook through the form and answers its id and secret.
func addWebhook(t *testing.T, v *visitor, u string, types ...string) (string, string) {
	t.Helper()
	v.get("/settings/webhooks")
	p := v.post("/settings/webhooks", url.Values{"url": {u}, "event_types": types})
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, "it is shown only this once")
	id, secret := webhookIDRE.FindStringSubmatch(p.body), secretRE.FindStringSubmatch(p.body)
	if id == nil || secret == nil {
		t.Fatalf("the answer lacks the webhook or its secret: %.2000s", p.body)
	}
	return id[1], secret[1]
}

// waitDelivered reloads the webhook's page until a webhook.test delivery shows as
// delivered, and answers the page and the delivery's id.
func waitDelivered(t *testing.T, v *visitor, path string) (page, string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		p := v.get(path)
		if m := deliveryRE.FindStringSubmatch(p.body); m != nil {
			return p, m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no delivered test event on %s: %.3000s", path, p.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConsoleWebhooks: a webhook is added with its secret shown once, tested (the
// delivery listed as delivered, with its answer), disabled and enabled, its secret
// rotated, a delivery sent again, and deleted after the confirmation page.
func TestConsoleWebhooks(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{WebhookAllowPrivate: true})
	v, _ := signedIn(t, env, "en")
	rcv, got := receiver(t)
	wantText(t, v.get("/settings/webhooks"), "No webhooks yet.")

	id, secret := addWebhook(t, v, rcv.URL+"/hook", "server.*", "webhook.*")
	list := v.get("/settings/webhooks")
	wantText(t, list, rcv.URL+"/hook", "server.*, webhook.*", "enabled")
	if strings.Contains(list.body, secret) {
		t.Fatal("the list shows the secret again")
	}
	path := "/settings/webhooks/" + id
	p := v.follow(v.post(path+"/test", nil))
	wantText(t, p, "A test event is on its way")
	p, delivery := waitDelivered(t, v, path)
	wantText(t, p, "HTTP 204")
	if got.Load() == 0 {
		t.Fatal("the receiver got no signed delivery")
	}

	p = v.post(path+"/rotate-secret", nil)
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, "The secret was changed")
	if m := secretRE.FindStringSubmatch(p.body); m == nil || m[1] == secret {
		t.Fatalf("rotation shows no new secret: %v", m)
	}

	p = v.follow(v.post(path+"/enabled", url.Values{"enabled": {"false"}}))
	wantText(t, p, "The webhook is disabled.")
	if strings.Contains(p.body, path+"/test") || strings.Contains(p.body, "/redeliver") {
		t.Error("a disabled webhook offers a test or a redelivery")
	}
	p = v.follow(v.post(path+"/enabled", url.Values{"enabled": {"true"}}))
	wantText(t, p, "The webhook is enabled.")
	p = v.follow(v.post(path+"/deliveries/"+delivery+"/redeliver", nil))
	wantText(t, p, "The delivery is sent again.")

	wantText(t, v.get(path+"/delete"), "Delete the webhook for "+rcv.URL+"/hook?")
	p = v.follow(v.post(path+"/delete", nil))
	wantText(t, p, "Deleted.", "No webhooks yet.")
	wantStatus(t, v.get(path), http.StatusNotFound)
}

// TestConsoleWebhooksRefused: another account's webhook is not found, a form without
// the CSRF token is refused, and what the rules refuse is said in the account's
// language (testenv refuses private addresses by default).
func TestConsoleWebhooksRefused(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	owner, _ := signedIn(t, env, "en")
	id, _ := addWebhook(t, owner, "https://hooks.example.com/berth", "*")
	path := "/settings/webhooks/" + id

	other, _ := signedIn(t, env, "de")
	other.get("/settings/webhooks")
	wantStatus(t, other.get(path), http.StatusNotFound)
	wantStatus(t, other.get(path+"/delete"), http.StatusNotFound)
	for _, action := range []string{"/test", "/rotate-secret", "/enabled", "/delete", "/deliveries/1/redeliver"} {
		wantStatus(t, other.post(path+action, nil), http.StatusNotFound)
	}
	wantText(t, owner.get(path), "https://hooks.example.com/berth")

	p := owner.post("/settings/webhooks", url.Values{"url": {"https://a.example.com/x"}, "event_types": {"*"}, "csrf": {"forged"}})
	wantStatus(t, p, http.StatusForbidden)
	wantStatus(t, owner.post(path+"/delete", url.Values{"csrf": {"forged"}}), http.StatusForbidden)
	if strings.Contains(owner.get("/settings/webhooks").body, "a.example.com") {
		t.Error("a forged form added a webhook")
	}
	wantText(t, owner.get(path), "https://hooks.example.com/berth")

	cases := []struct {
		url, types, want string
	}{
		{"https://127.0.0.1/hook", "*", "Die Adresse 127.0.0.1 ist nicht erlaubt"},
		{"http://hooks.example.com/x", "*", "https://"},
		{"https://hooks.example.com/x", "nope", "Ereignistyp (server.created)"},
		{"https://hooks.example.com/x", "", "erforderlich"},
	}
	for _, c := range cases {
		form := url.Values{"url": {c.url}}
		if c.types != "" {
			form.Set("event_types", c.types)
		}
		p := other.post("/settings/webhooks", form)
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantText(t, p, c.want, c.url, `lang="de"`)
	}
}
