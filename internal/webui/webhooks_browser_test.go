package webui_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/internal/testenv"
)

// TestBrowserWebhooks: in the browser, a webhook to a receiver on 127.0.0.1 is added
// from Settings → Webhooks, its secret shown; a test event sent from its page is
// listed as delivered. The pages work by keyboard and 375 px wide.
func TestBrowserWebhooks(t *testing.T) {
	ctx := browserTab(t)
	dir := artifactDir(t)
	env := testenv.New(t, testenv.Options{WebhookAllowPrivate: true})
	_, email := newAccount(t, env, "en")
	rcv, got := receiver(t)
	root := env.Root

	run(t, ctx, "sign in", chromedp.Navigate(root+"/signin"), chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), email), chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Submit(chromedp.CSS("#email")), chromedp.WaitVisible(chromedp.CSS(`a[href="/servers"][aria-current="page"]`)))
	run(t, ctx, "the Webhooks page", chromedp.Click(chromedp.CSS(`header nav a[href="/settings/webhooks"]`)),
		chromedp.WaitVisible(chromedp.CSS("#webhook_url")))
	run(t, ctx, "add a webhook", chromedp.SendKeys(chromedp.CSS("#webhook_url"), rcv.URL+"/hook"),
		chromedp.Submit(chromedp.CSS("#webhook_url")), chromedp.WaitVisible(chromedp.CSS("#webhook-secret")))
	secret := get(t, ctx, "the secret", chromedp.Evaluate[string](`document.querySelector('#webhook-secret').value`))
	if len(secret) < 40 || secret[:6] != "whsec_" {
		t.Fatalf("secret %q", secret)
	}
	shot(t, ctx, dir, "webhooks")
	checkKeyboard(t, ctx, "webhooks")

	run(t, ctx, "open the webhook", chromedp.Click(chromedp.CSS(`tr[data-webhook] a`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action$="/test"] button`)))
	run(t, ctx, "send a test", chromedp.Click(chromedp.CSS(`form[action$="/test"] button`)),
		chromedp.WaitVisible(chromedp.CSS(".notice.ok")))
	// The page shows no live status: reload until the delivery is listed as delivered.
	loc := get(t, ctx, "location", chromedp.Location())
	for i := 0; ; i++ {
		found := get(t, ctx, "look for the delivery", chromedp.Evaluate[bool](
			`!!document.querySelector('tr[data-event="webhook.test"][data-state="delivered"]')`))
		if found {
			break
		}
		if i == 40 {
			failed(t, ctx, "see it delivered", errors.New("no delivered test event after 20 s"))
		}
		time.Sleep(500 * time.Millisecond)
		run(t, ctx, "reload", chromedp.Navigate(loc), chromedp.WaitVisible(chromedp.CSS("h1")))
	}
	row := get(t, ctx, "the delivery", chromedp.Evaluate[string](
		`document.querySelector('tr[data-event="webhook.test"]').innerText.replace(/\s+/g, ' ')`))
	if got.Load() == 0 {
		t.Fatal("the receiver got no signed delivery")
	}
	for _, want := range []string{"delivered", "HTTP 204"} {
		if !strings.Contains(row, want) {
			t.Errorf("delivery row %q lacks %q", row, want)
		}
	}
	shot(t, ctx, dir, "webhook")
	checkKeyboard(t, ctx, "webhook")
	checkNarrow(t, ctx, dir, loc, "webhook")
}
