package webui

import (
	"net/http"
	"strings"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

// The webhooks page (Settings → Webhooks, docs/webhooks.md): the account's webhooks,
// a form to add one, and each one's page with its recent deliveries. The console's
// signed-in account holder may change them (the API asks a token holding every
// scope). A secret is shown once, in the page that answers its creation or rotation.

// webhookChoices are the add form's event type checkboxes: every type, then each
// family's types (server.*, ...).
var webhookChoices = func() []string {
	out := []string{"*"}
	for _, f := range eventFamilies {
		out = append(out, f+".*")
	}
	return out
}()

// webhookList is the webhooks page: the list, the add form and, once, a new secret.
type webhookList struct {
	Webhooks []hosting.Webhook
	Choices  []string
	// What was entered, and what went wrong.
	URL      string
	Checked  map[string]bool
	Errors   map[string][]string
	Messages []string
	// The webhook just created, its secret shown once.
	New *hosting.Webhook
}

func (c *Console) webhookList(r *req) (*webhookList, error) {
	ws, err := c.svc.Webhooks.Webhooks(r.ctx(), r.p)
	if err != nil {
		return nil, err
	}
	return &webhookList{Webhooks: ws, Choices: webhookChoices, Checked: map[string]bool{"*": true}}, nil
}

func (c *Console) webhooksPage(r *req) error {
	l, err := c.webhookList(r)
	if err != nil {
		return err
	}
	c.render(r, http.StatusOK, "webhooks", "console.webhooks.title", "webhooks", l)
	return nil
}

// createWebhook answers with the page itself rather than a redirect: the secret is
// shown this once.
func (c *Console) createWebhook(r *req) error {
	u, types := r.FormValue("url"), r.Form["event_types"]
	w, err := c.svc.Webhooks.CreateWebhook(r.ctx(), r.p, ops.WebhookWrite{URL: &u, EventTypes: &types})
	if err != nil && hosting.ErrorCode(err) != hosting.CodeValidationFailed {
		return err
	}
	l, lerr := c.webhookList(r)
	if lerr != nil {
		return lerr
	}
	status := http.StatusOK
	if err != nil {
		status = http.StatusUnprocessableEntity
		l.URL, l.Checked = u, map[string]bool{}
		for _, t := range types {
			l.Checked[t] = true
		}
		l.Errors, l.Messages = c.fieldErrors(r.lang, err), c.messages(r.lang, err)
	} else {
		l.New = &w
	}
	c.render(r, status, "webhooks", "console.webhooks.title", "webhooks", l)
	return nil
}

// webhookPage is one webhook: its settings, actions and a page of its deliveries.
type webhookPage struct {
	Webhook    hosting.Webhook
	Deliveries []hosting.WebhookDelivery
	Pager
	// Secret is the new secret of a rotation, shown once.
	Secret string
}

func (c *Console) webhook(r *req) (*webhookPage, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return nil, err
	}
	w, err := c.svc.Webhooks.Webhook(r.ctx(), r.p, id)
	if err != nil {
		return nil, err
	}
	page, err := pageParam(r)
	if err != nil {
		return nil, err
	}
	ds, total, err := c.svc.Webhooks.WebhookDeliveries(r.ctx(), r.p, id, page)
	if err != nil {
		return nil, err
	}
	p := newPager(r, "/settings/webhooks/"+itoa(id), page, lastPage(total, hosting.WebhookDeliveriesPageSize), "")
	return &webhookPage{Webhook: w, Deliveries: ds, Pager: p}, nil
}

func (c *Console) webhookPage(r *req) error {
	p, err := c.webhook(r)
	if err != nil {
		return err
	}
	c.render(r, http.StatusOK, "webhook", "console.webhooks.one", "webhooks", p)
	return nil
}

func webhookURL(id int64) string { return "/settings/webhooks/" + itoa(id) }

func (c *Console) setWebhookEnabled(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	on := r.FormValue("enabled") == "true"
	_, err = c.svc.Webhooks.UpdateWebhook(r.ctx(), r.p, id, ops.WebhookWrite{Enabled: &on})
	msg := "console.webhooks.disabled_ok"
	if on {
		msg = "console.webhooks.enabled_ok"
	}
	return r.done(err, webhookURL(id), msg)
}

func (c *Console) testWebhook(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return r.done(c.svc.Webhooks.TestWebhook(r.ctx(), r.p, id), webhookURL(id), "console.webhooks.test_sent")
}

// rotateWebhookSecret answers with the webhook's page, its new secret shown once.
func (c *Console) rotateWebhookSecret(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	w, err := c.svc.Webhooks.RotateWebhookSecret(r.ctx(), r.p, id)
	if err != nil {
		return err
	}
	p, err := c.webhook(r)
	if err != nil {
		return err
	}
	p.Secret = w.Secret
	c.render(r, http.StatusOK, "webhook", "console.webhooks.one", "webhooks", p)
	return nil
}

func (c *Console) deleteWebhookPage(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	w, err := c.svc.Webhooks.Webhook(r.ctx(), r.p, id)
	if err != nil {
		return err
	}
	c.render(r, http.StatusOK, "webhookdelete", "console.webhooks.delete_title", "webhooks", w)
	return nil
}

func (c *Console) deleteWebhook(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return r.done(c.svc.Webhooks.DeleteWebhook(r.ctx(), r.p, id), "/settings/webhooks", "console.deleted")
}

func (c *Console) redeliver(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	delivery, err := pathID(r, "delivery")
	if err != nil {
		return err
	}
	_, err = c.svc.Webhooks.Redeliver(r.ctx(), r.p, id, delivery)
	return r.done(err, webhookURL(id), "console.webhooks.redelivered")
}

// LastAttempt is a delivery's latest attempt, or nil before the first.
func (v *view) LastAttempt(d hosting.WebhookDelivery) *hosting.WebhookAttempt {
	if len(d.Log) == 0 {
		return nil
	}
	return &d.Log[len(d.Log)-1]
}

// Patterns shows a webhook's event types.
func (v *view) Patterns(ps []hosting.EventPattern) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return strings.Join(out, ", ")
}

// WebhookState is whether a webhook is enabled, or why it is disabled.
func (v *view) WebhookState(w hosting.Webhook) string {
	switch {
	case w.Enabled:
		return v.T("console.webhooks.enabled")
	case w.DisabledReason != "":
		return v.T("console.webhooks.disabled_by_berth", "reason", v.T("console.webhooks.reason."+w.DisabledReason))
	}
	return v.T("console.webhooks.disabled")
}

// Family names an event type choice of the add form: every type, or a family's.
func (v *view) Family(choice string) string {
	if choice == "*" {
		return v.T("console.webhooks.all_types")
	}
	f := strings.TrimSuffix(choice, ".*")
	return v.T("console.activity.family."+f) + " (" + choice + ")"
}
