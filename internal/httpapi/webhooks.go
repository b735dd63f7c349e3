package httpapi

import (
	"net/http"
	"net/url"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

// The webhooks (docs/webhooks.md): read with read, changed with a token holding every
// scope (hosting.ScopeAll, checked by the route table).

func (s *Server) listWebhooks(r *request) (int, any, error) {
	ws, err := s.svc.Webhooks.Webhooks(r.ctx, r.p)
	return http.StatusOK, list(ws, func(w hosting.Webhook) api.Webhook { return toWebhook(w, false) }), err
}

func (s *Server) getWebhook(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	w, err := s.svc.Webhooks.Webhook(r.ctx, r.p, id)
	return http.StatusOK, one(toWebhook(w, false)), err
}

func (s *Server) createWebhook(r *request) (int, any, error) {
	var b api.WebhookWrite
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	w, err := s.svc.Webhooks.CreateWebhook(r.ctx, r.p, webhookWrite(b))
	return http.StatusCreated, one(toWebhook(w, true)), err
}

func (s *Server) updateWebhook(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	if _, err := s.svc.Webhooks.Webhook(r.ctx, r.p, id); err != nil {
		return 0, nil, err // 404 before 422
	}
	var b api.WebhookWrite
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	w, err := s.svc.Webhooks.UpdateWebhook(r.ctx, r.p, id, webhookWrite(b))
	return http.StatusOK, one(toWebhook(w, false)), err
}

func (s *Server) deleteWebhook(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, s.svc.Webhooks.DeleteWebhook(r.ctx, r.p, id)
}

// webhookAction reads the webhook id of a POST without a body (an empty object, or
// none): 404 before 422.
func (s *Server) webhookAction(r *request) (int64, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, err
	}
	if _, err := s.svc.Webhooks.Webhook(r.ctx, r.p, id); err != nil {
		return 0, err
	}
	var b struct{}
	return id, decode(r.Request, &b)
}

func (s *Server) testWebhook(r *request) (int, any, error) {
	id, err := s.webhookAction(r)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, nil, s.svc.Webhooks.TestWebhook(r.ctx, r.p, id)
}

func (s *Server) rotateWebhookSecret(r *request) (int, any, error) {
	id, err := s.webhookAction(r)
	if err != nil {
		return 0, nil, err
	}
	w, err := s.svc.Webhooks.RotateWebhookSecret(r.ctx, r.p, id)
	return http.StatusOK, one(toWebhook(w, true)), err
}

func (s *Server) listWebhookDeliveries(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	if _, err := s.svc.Webhooks.Webhook(r.ctx, r.p, id); err != nil {
		return 0, nil, err // 404 before 422
	}
	var v hosting.Validation
	page := pageFromQuery(r.Request, &v)
	if err := v.Err("page"); err != nil {
		return 0, nil, err
	}
	ds, total, err := s.svc.Webhooks.WebhookDeliveries(r.ctx, r.p, id, page)
	if err != nil {
		return 0, nil, err
	}
	out := api.Page[api.WebhookDelivery]{Data: make([]api.WebhookDelivery, len(ds))}
	for i, d := range ds {
		out.Data[i] = toDelivery(d)
	}
	out.Links, out.Meta = s.pageOf(r.Request, url.Values{}, page, hosting.WebhookDeliveriesPageSize, len(ds), total)
	return http.StatusOK, out, nil
}

func (s *Server) redeliverWebhook(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	delivery, err := hosting.ParseID(r.PathValue("delivery"))
	if err != nil {
		return 0, nil, hosting.ErrNotFound()
	}
	if _, err := s.webhookAction(r); err != nil {
		return 0, nil, err
	}
	d, err := s.svc.Webhooks.Redeliver(r.ctx, r.p, id, delivery)
	return http.StatusAccepted, one(toDelivery(d)), err
}

func webhookWrite(b api.WebhookWrite) ops.WebhookWrite {
	return ops.WebhookWrite{URL: b.URL, EventTypes: b.EventTypes, Enabled: b.Enabled}
}

// toWebhook converts a webhook, its secret only when withSecret (its creation, a
// rotation).
func toWebhook(w hosting.Webhook, withSecret bool) api.Webhook {
	out := api.Webhook{ID: w.ID, URL: w.URL, EventTypes: make([]string, len(w.EventTypes)), Enabled: w.Enabled, CreatedAt: w.CreatedAt}
	for i, p := range w.EventTypes {
		out.EventTypes[i] = string(p)
	}
	if w.DisabledReason != "" {
		reason := w.DisabledReason
		out.DisabledReason = &reason
	}
	if withSecret {
		out.Secret = w.Secret
	}
	return out
}

func toDelivery(d hosting.WebhookDelivery) api.WebhookDelivery {
	out := api.WebhookDelivery{ID: d.ID, WebhookID: d.WebhookID, EventID: d.EventID, EventType: string(d.EventType), State: string(d.State),
		AttemptCount: d.Attempts, NextAttemptAt: d.NextAttemptAt, CreatedAt: d.CreatedAt, Attempts: make([]api.WebhookAttempt, len(d.Log))}
	for i, a := range d.Log {
		at := api.WebhookAttempt{At: a.At, LatencyMS: a.Latency.Milliseconds(), Answer: a.Answer}
		if a.Status != 0 {
			status := a.Status
			at.Status = &status
		}
		if a.Reason != "" {
			reason := a.Reason
			at.Reason = &reason
		}
		out.Attempts[i] = at
	}
	return out
}
