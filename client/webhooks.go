package client

import (
	"context"
	"net/http"

	"github.com/berthhq/berth/api"
)

// Webhooks send the account's events to a URL as they happen, signed with the
// webhook's secret (docs/webhooks.md; a receiver checks them with
// client/webhook.Verify). Reading them needs a token with read; changing them
// (create, update, delete, test, rotate, redeliver) a token holding every scope, as
// a webhook is sent every kind of event: ErrMissingScope otherwise, naming each
// scope the token lacks.

// ListWebhooks returns the account's webhooks (at most 10), by id, without their
// secrets.
func (c *Client) ListWebhooks(ctx context.Context) ([]api.Webhook, error) {
	return list[api.Webhook](c, ctx, "/webhooks", nil)
}

// CreateWebhook makes a webhook for req.URL (required) and the event types
// req.EventTypes match (nil: every type, "*"). Its answer is the only one that holds
// the Secret: keep it. ErrValidation (Fields names each failed check: a URL that is
// not https, or whose host is a private address where the Berth refuses them; an
// unknown event type; the account's 10 webhooks, under "webhook_quota"),
// ErrMissingScope.
func (c *Client) CreateWebhook(ctx context.Context, req api.WebhookWrite) (*api.Webhook, error) {
	return one[api.Webhook](c, ctx, http.MethodPost, "/webhooks", nil, req)
}

// GetWebhook returns a webhook, without its secret. ErrNotFound.
func (c *Client) GetWebhook(ctx context.Context, id int64) (*api.Webhook, error) {
	return one[api.Webhook](c, ctx, http.MethodGet, idPath("/webhooks", id), nil, nil)
}

// UpdateWebhook changes what req sets of url, event_types and enabled (the rules of
// CreateWebhook); Enabled true enables again a webhook the Berth disabled and clears
// its DisabledReason. ErrNotFound, ErrValidation, ErrMissingScope.
func (c *Client) UpdateWebhook(ctx context.Context, id int64, req api.WebhookWrite) (*api.Webhook, error) {
	return one[api.Webhook](c, ctx, http.MethodPatch, idPath("/webhooks", id), nil, req)
}

// DeleteWebhook deletes a webhook with its delivery log; deliveries still to be
// attempted end without a request. ErrNotFound, ErrMissingScope.
func (c *Client) DeleteWebhook(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodDelete, idPath("/webhooks", id), nil, nil, nil)
}

// TestWebhook writes an event of type webhook.test and sends it to this webhook
// only; its delivery shows in ListWebhookDeliveries. ErrNotFound, ErrValidation (the
// webhook is disabled: "webhook"), ErrMissingScope.
func (c *Client) TestWebhook(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodPost, idPath("/webhooks", id)+"/test", nil, nil, nil)
}

// RotateWebhookSecret gives a webhook a new secret, in this answer only. For 24 hours
// the one it replaces signs each delivery too, so that receivers can change over.
// ErrNotFound, ErrMissingScope.
func (c *Client) RotateWebhookSecret(ctx context.Context, id int64) (*api.Webhook, error) {
	return one[api.Webhook](c, ctx, http.MethodPost, idPath("/webhooks", id)+"/rotate-secret", nil, nil)
}

// ListWebhookDeliveries returns one page of a webhook's delivery log, newest first,
// 50 a page, each delivery with its attempts; page 0 is the first.
// AllWebhookDeliveries walks every page. ErrNotFound, ErrValidation (a bad page).
func (c *Client) ListWebhookDeliveries(ctx context.Context, id int64, pageNo int) (*api.Page[api.WebhookDelivery], error) {
	return page[api.WebhookDelivery](c, ctx, idPath("/webhooks", id)+"/deliveries", pageQuery(nil, pageNo))
}

// RedeliverWebhookDelivery sends a delivery's event again (the same webhook-id), with
// attempts of its own; it answers the delivery, pending again. ErrNotFound (no such
// webhook or delivery), ErrValidation (the delivery is still pending: "delivery";
// the webhook is disabled: "webhook"), ErrMissingScope.
func (c *Client) RedeliverWebhookDelivery(ctx context.Context, id, delivery int64) (*api.WebhookDelivery, error) {
	return one[api.WebhookDelivery](c, ctx, http.MethodPost, idPath(idPath("/webhooks", id)+"/deliveries", delivery)+"/redeliver", nil, nil)
}
