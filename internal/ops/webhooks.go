package ops

import (
	"context"
	"errors"
	"net/netip"
	"slices"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/webhook"
)

// Webhooks (docs/webhooks.md, docs/api.md "Webhooks"): the account's receivers of its
// events. Each event a webhook's event_types match is a delivery, attempted by a job
// (webhook_delivery.go) enqueued in the event's own transaction (fanOut).

// WebhookOptions are the rules a webhook's url is held to.
type WebhookOptions struct {
	// AllowPrivate lifts the address rules (serve --webhook-allow-private, the
	// sandbox's default).
	AllowPrivate bool
	// OwnPools are the networks Berth gives its servers' addresses from (nil: none
	// known), refused like private ones.
	OwnPools func(ctx context.Context) ([]netip.Prefix, error)
}

// WebhookWrite is what a create or an update of a webhook sets; nil is "not given".
type WebhookWrite struct {
	URL        *string
	EventTypes *[]string
	Enabled    *bool
}

// ownPools are Berth's own address pools, as WebhookOptions.OwnPools finds them.
func (s *Service) ownPools(ctx context.Context) ([]netip.Prefix, error) {
	if s.webhooks.OwnPools == nil {
		return nil, nil
	}
	ps, err := s.webhooks.OwnPools(ctx)
	return ps, internal("address pools", err)
}

// Webhooks lists the account's webhooks.
func (s *Service) Webhooks(ctx context.Context, p hosting.Principal) ([]hosting.Webhook, error) {
	ws, err := s.store.Webhooks(ctx, p.Account.ID)
	return ws, internal("webhooks", err)
}

// Webhook finds one of the account's webhooks.
func (s *Service) Webhook(ctx context.Context, p hosting.Principal, id int64) (hosting.Webhook, error) {
	w, err := s.store.Webhook(ctx, p.Account.ID, id)
	return w, notFoundOr("webhook", err)
}

// checkWebhook applies u to w, recording on v what is wrong; it returns the fields
// that changed.
func (s *Service) checkWebhook(ctx context.Context, v *hosting.Validation, w *hosting.Webhook, u WebhookWrite) ([]string, error) {
	var changes []string
	if u.URL != nil {
		own, err := s.ownPools(ctx)
		if err != nil {
			return nil, err
		}
		hosting.CheckWebhookURL(v, "url", *u.URL, s.webhooks.AllowPrivate, own)
		if *u.URL != w.URL {
			changes = append(changes, "url")
		}
		w.URL = *u.URL
	}
	if u.EventTypes != nil {
		types := hosting.CheckWebhookEventTypes(v, "event_types", *u.EventTypes)
		if !slices.Equal(types, w.EventTypes) {
			changes = append(changes, "event_types")
		}
		w.EventTypes = types
	}
	if u.Enabled != nil {
		if *u.Enabled != w.Enabled {
			changes = append(changes, "enabled")
		}
		// Enabled again (or disabled by its owner): Berth's reason no longer holds.
		w.Enabled, w.DisabledReason = *u.Enabled, ""
	}
	return changes, nil
}

var webhookFields = []string{"url", "event_types", "enabled"}

// CreateWebhook creates a webhook with a new secret, returned in it this once.
// event_types default to every type; enabled to true.
func (s *Service) CreateWebhook(ctx context.Context, p hosting.Principal, u WebhookWrite) (hosting.Webhook, error) {
	w := hosting.Webhook{AccountID: p.Account.ID, EventTypes: []hosting.EventPattern{"*"}, Enabled: true, CreatedAt: s.NowFor(p.Account.ID)}
	var v hosting.Validation
	if u.URL == nil {
		v.Add("url", "validation.required")
	}
	if _, err := s.checkWebhook(ctx, &v, &w, u); err != nil {
		return w, err
	}
	if err := v.Err(webhookFields...); err != nil {
		return w, err
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return w, internal("webhook secret", err)
	}
	w.Secret = secret
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		if err := s.webhookQuotaLeft(ctx, tx, w.AccountID); err != nil {
			return err
		}
		id, err := tx.CreateWebhook(ctx, w)
		if err != nil {
			return internal("create webhook", err)
		}
		w.ID = id
		return s.emitWebhook(ctx, tx, hosting.EventWebhookCreated, w, nil, "")
	})
	return w, err
}

// webhookQuotaLeft refuses one more webhook than hosting.MaxWebhooks, counting under
// the account's lock as the quotas do (quota.go).
func (s *Service) webhookQuotaLeft(ctx context.Context, tx store.Tx, account int64) error {
	if _, err := tx.LockAccount(ctx, account); err != nil {
		return notFoundOr("account", err)
	}
	ws, err := tx.Webhooks(ctx, account)
	if err != nil {
		return internal("webhooks", err)
	}
	if len(ws) >= hosting.MaxWebhooks {
		return hosting.Invalid("webhook_quota", "validation.webhook_quota", "quota", hosting.MaxWebhooks)
	}
	return nil
}

// UpdateWebhook changes a webhook's url, event_types or enabled. Enabling one Berth
// disabled clears its disabled_reason.
func (s *Service) UpdateWebhook(ctx context.Context, p hosting.Principal, id int64, u WebhookWrite) (hosting.Webhook, error) {
	var w hosting.Webhook
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if w, err = tx.Webhook(ctx, p.Account.ID, id); err != nil {
			return notFoundOr("webhook", err)
		}
		var v hosting.Validation
		changes, err := s.checkWebhook(ctx, &v, &w, u)
		if err != nil {
			return err
		}
		if err := v.Err(webhookFields...); err != nil {
			return err
		}
		if err := tx.UpdateWebhook(ctx, w); err != nil {
			return internal("update webhook", err)
		}
		return s.emitWebhook(ctx, tx, hosting.EventWebhookUpdated, w, changes, "")
	})
	w.Secret = ""
	return w, err
}

// DeleteWebhook deletes a webhook; its deliveries go with it, and those still to be
// attempted end without a request.
func (s *Service) DeleteWebhook(ctx context.Context, p hosting.Principal, id int64) error {
	return s.store.InTx(ctx, func(tx store.Tx) error {
		w, err := tx.Webhook(ctx, p.Account.ID, id)
		if err == nil {
			err = tx.DeleteWebhook(ctx, p.Account.ID, id)
		}
		if err != nil {
			return notFoundOr("delete webhook", err)
		}
		return s.emitWebhook(ctx, tx, hosting.EventWebhookDeleted, w, nil, "")
	})
}

// RotateWebhookSecret gives a webhook a new secret, returned in it this once; the
// one it had signs too for hosting.SecretOverlap.
func (s *Service) RotateWebhookSecret(ctx context.Context, p hosting.Principal, id int64) (hosting.Webhook, error) {
	secret, err := webhook.NewSecret()
	if err != nil {
		return hosting.Webhook{}, internal("webhook secret", err)
	}
	var w hosting.Webhook
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if w, err = tx.Webhook(ctx, p.Account.ID, id); err != nil {
			return notFoundOr("webhook", err)
		}
		until := s.NowFor(p.Account.ID).Add(hosting.SecretOverlap)
		w.PreviousSecret, w.PreviousUntil, w.Secret = w.Secret, &until, secret
		return internal("rotate webhook secret", tx.UpdateWebhook(ctx, w))
	})
	return w, err
}

// TestWebhook has Berth send the webhook an event of type webhook.test, delivered
// to it alone (its delivery shows in its log once the request has committed). A
// disabled webhook is 422 on webhook.
func (s *Service) TestWebhook(ctx context.Context, p hosting.Principal, id int64) error {
	return s.store.InTx(ctx, func(tx store.Tx) error {
		w, err := tx.Webhook(ctx, p.Account.ID, id)
		if err != nil {
			return notFoundOr("webhook", err)
		}
		if !w.Enabled {
			return hosting.Invalid("webhook", "validation.webhook_disabled")
		}
		return s.emitWebhook(ctx, tx, hosting.EventWebhookTest, w, nil, "")
	})
}

// WebhookDeliveries is page (from 1) of a webhook's deliveries, newest first, with
// their attempts, and how many it has.
func (s *Service) WebhookDeliveries(ctx context.Context, p hosting.Principal, id int64, page int) ([]hosting.WebhookDelivery, int, error) {
	if _, err := s.Webhook(ctx, p, id); err != nil {
		return nil, 0, err
	}
	size := hosting.WebhookDeliveriesPageSize
	ds, total, err := s.store.WebhookDeliveries(ctx, p.Account.ID, id, size, pageOffset(page, size))
	return ds, total, internal("webhook deliveries", err)
}

// Redeliver sends a delivery again, on a schedule of its own (its attempts count on):
// 422 on delivery while it is still being attempted, on webhook while the webhook is
// disabled.
func (s *Service) Redeliver(ctx context.Context, p hosting.Principal, id, deliveryID int64) (hosting.WebhookDelivery, error) {
	var d hosting.WebhookDelivery
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		w, err := tx.Webhook(ctx, p.Account.ID, id)
		if err == nil {
			d, err = tx.WebhookDelivery(ctx, p.Account.ID, deliveryID)
		}
		if err == nil && d.WebhookID != w.ID {
			err = store.ErrNotFound
		}
		if err != nil {
			return notFoundOr("webhook delivery", err)
		}
		switch {
		case d.State == hosting.DeliveryPending:
			return hosting.Invalid("delivery", "validation.delivery_pending")
		case !w.Enabled:
			return hosting.Invalid("webhook", "validation.webhook_disabled")
		}
		now := s.NowFor(p.Account.ID)
		d.State, d.NextAttemptAt = hosting.DeliveryPending, &now
		if err := tx.UpdateWebhookDelivery(ctx, d); err != nil {
			return internal("redeliver", err)
		}
		return internal("enqueue delivery", s.enqueue(ctx, tx, WebhookDeliveryArgs{DeliveryID: d.ID}))
	})
	return d, err
}

// fanOut writes, in the transaction of event e (just written), a delivery of e to
// each webhook of its account that wants it, and the job that attempts it.
func (s *Service) fanOut(ctx context.Context, tx store.Tx, e hosting.Event) error {
	hooks, err := tx.Webhooks(ctx, e.AccountID)
	if err != nil {
		return internal("webhooks", err)
	}
	for _, w := range hooks {
		if !w.Wants(e) {
			continue
		}
		at := e.CreatedAt
		d := hosting.WebhookDelivery{AccountID: e.AccountID, WebhookID: w.ID, EventID: e.ID, EventType: e.Type,
			State: hosting.DeliveryPending, NextAttemptAt: &at, CreatedAt: e.CreatedAt}
		if d.ID, err = tx.AddWebhookDelivery(ctx, d); err != nil {
			return internal("webhook delivery", err)
		}
		if err := s.enqueue(ctx, tx, WebhookDeliveryArgs{DeliveryID: d.ID}); err != nil {
			return internal("enqueue delivery", err)
		}
	}
	return nil
}

func webhookData(w hosting.Webhook, changes []string, reason string) hosting.WebhookEventData {
	return hosting.WebhookEventData{ID: w.ID, URL: w.URL, Enabled: w.Enabled, Changes: changes, Reason: reason}
}

func (s *Service) emitWebhook(ctx context.Context, tx store.Tx, typ hosting.EventType, w hosting.Webhook, changes []string, reason string) error {
	return s.emit(ctx, tx, w.AccountID, typ, hosting.EventResource{Type: "webhook", ID: w.ID}, webhookData(w, changes, reason))
}

// errNoWebhook is a delivery whose webhook, or event, is gone: it ends.
var errNoWebhook = errors.New("webhook or event gone")
