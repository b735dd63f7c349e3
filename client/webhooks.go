package client

import (
	"context"
	"net/http"

	"github.com/berthhq/berth/api"
)

// The account's webhooks (docs/webhooks.md). Reading them needs the scope read;
// changing them a token holding every scope.

// ListWebhooks returns the account's webhooks (without their secrets).
func (c *Client) ListWebhooks(ctx context.Context) ([]api.Webhook, error) {
	return list[api.Webhook](c, ctx, "/webhooks", nil)
}

// GetWebhook returns a webhook (without its secret). ErrNotFound.
func (c *Client) GetWebhook(ctx context.Context, id int64) (*api.Webhook, error) {
	return one[api.Webhook](c, ctx, http.MethodGet, idPath("/webhooks", id), nil, nil)
}

// CreateWebhook adds a webhook; the answer holds its secret, this once.
// ErrValidation (url, event_types, webhook_quota).
func (c *Client) CreateWebhook(ctx context.Context, req api.WebhookWrite) (*api.Webhook, error) {
	return one[api.Webhook](c, ctx, http.MethodPost, "/webhooks", nil, req)
}

// UpdateWebhook changes a webhook's url, event_types or enabled. ErrNotFound,
// ErrValidation.
func (c *Client) UpdateWebhook(ctx context.Context, id int64, req api.WebhookWrite) (*api.Webhook, error) {
	return one[api.Webhook](c, ctx, http.MethodPatch, idPath("/webhooks", id), nil, req)
}

// DeleteWebhook deletes a webhook and its delivery log. ErrNotFound.
func (c *Client) DeleteWebhook(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodDelete, idPath("/webhooks", id), nil, nil, nil)
}

// RotateWebhookSecret gives a webhook a new secret, in the answer this once; the old
// one signs too for 24 hours. ErrNotFound.
func (c *Client) RotateWebhookSecret(ctx context.Context, id int64) (*api.Webhook, error) {
	return one[api.Webhook](c, ctx, http.MethodPost, idPath("/webhooks", id)+"/rotate-secret", nil, struct{}{})
}
