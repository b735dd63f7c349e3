package ops

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/riverqueue/river"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/webhook"
)

// WebhookDeliveryKind is the kind of the job that attempts a webhook delivery.
const WebhookDeliveryKind = "berth.webhook_delivery"

// WebhookDeliveryArgs are the job's: the delivery to attempt.
type WebhookDeliveryArgs struct {
	DeliveryID int64 `json:"delivery_id"`
}

// Kind implements river.JobArgs.
func (WebhookDeliveryArgs) Kind() string { return WebhookDeliveryKind }

// InsertOpts gives the job webhook.MaxAttempts attempts: River retries a failed one
// on webhook.NextAttempt's schedule (the retry policy app gives River for this kind).
func (WebhookDeliveryArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: webhook.MaxAttempts}
}

// WebhookDeliveryWorker attempts webhook deliveries (docs/webhooks.md): an attempt
// per run of the job, recorded in the delivery log. 2xx delivers; 410 disables the
// webhook at once; anything else fails the run, which River retries on the schedule
// until the last attempt, after which the webhook is disabled. A delivery whose
// webhook is disabled or gone ends without a request.
type WebhookDeliveryWorker struct {
	river.WorkerDefaults[WebhookDeliveryArgs]
	s    *Service
	opts webhook.Options
}

// NewWebhookDeliveryWorker is the worker of s's deliveries; opts make each attempt's
// webhook.Client (its AllowPrivate and OwnPools come from s's WebhookOptions).
func NewWebhookDeliveryWorker(s *Service, opts webhook.Options) *WebhookDeliveryWorker {
	opts.AllowPrivate = s.webhooks.AllowPrivate
	return &WebhookDeliveryWorker{s: s, opts: opts}
}

// Work makes one attempt.
func (w *WebhookDeliveryWorker) Work(ctx context.Context, job *river.Job[WebhookDeliveryArgs]) error {
	req, d, err := w.prepare(ctx, job.Args.DeliveryID)
	if errors.Is(err, errNoWebhook) {
		return nil
	}
	if err != nil {
		return err
	}
	// The pools at this attempt: an operator may have added one since.
	opts := w.opts
	if opts.OwnPools, err = w.s.ownPools(ctx); err != nil {
		return err
	}
	a := webhook.New(opts).Deliver(ctx, req)
	retry, err := w.record(ctx, job, d, a)
	if err != nil || !retry {
		return err
	}
	return fmt.Errorf("webhook delivery %d, attempt %d of %d: %s", d.ID, job.Attempt, job.MaxAttempts, a.Reason)
}

// prepare reads a pending delivery, its webhook and its event: errNoWebhook when
// there is nothing to send (the delivery ended, or its webhook is gone or disabled,
// which ends it).
func (w *WebhookDeliveryWorker) prepare(ctx context.Context, id int64) (webhook.Request, hosting.WebhookDelivery, error) {
	s := w.s
	d, err := s.store.WebhookDeliveryByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return webhook.Request{}, d, errNoWebhook // its webhook was deleted, or its account reset
	}
	if err != nil || d.State != hosting.DeliveryPending {
		return webhook.Request{}, d, firstOf(err, errNoWebhook)
	}
	hook, err := s.store.Webhook(ctx, d.AccountID, d.WebhookID)
	var ev hosting.Event
	if err == nil {
		ev, err = s.store.Event(ctx, d.AccountID, d.EventID)
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && !hook.Enabled) {
		return webhook.Request{}, d, firstOf(w.end(ctx, d), errNoWebhook)
	}
	if err != nil {
		return webhook.Request{}, d, err
	}
	return webhook.Request{URL: hook.URL, ID: strconv.FormatInt(ev.ID, 10), Type: string(ev.Type), Timestamp: ev.CreatedAt,
		Data: ev.Data, Secrets: hook.Secrets(s.NowFor(d.AccountID))}, d, nil
}

func firstOf(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// end gives a delivery up without an attempt.
func (w *WebhookDeliveryWorker) end(ctx context.Context, d hosting.WebhookDelivery) error {
	d.State, d.NextAttemptAt = hosting.DeliveryFailed, nil
	err := w.s.store.InTx(ctx, func(tx store.Tx) error { return tx.UpdateWebhookDelivery(ctx, d) })
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// record writes attempt a of delivery d in its log and what it means: delivered,
// another attempt to come (retry), or given up, disabling the webhook (410, or the
// last attempt).
func (w *WebhookDeliveryWorker) record(ctx context.Context, job *river.Job[WebhookDeliveryArgs], d hosting.WebhookDelivery, a webhook.Attempt) (retry bool, err error) {
	s := w.s
	now := s.NowFor(d.AccountID)
	var disabled string
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		retry, disabled = false, ""
		if _, err := tx.AddWebhookAttempt(ctx, hosting.WebhookAttempt{DeliveryID: d.ID, At: now, Status: a.Status, Latency: a.Latency,
			Answer: hosting.AnswerText(a.Answer), Reason: a.Reason}); err != nil {
			return err
		}
		d.Attempts++
		d.State, d.NextAttemptAt = hosting.DeliveryFailed, nil
		wait, more := webhook.NextAttempt(job.Attempt)
		switch {
		case a.Outcome == webhook.Delivered:
			d.State = hosting.DeliveryDelivered
		case a.Outcome == webhook.Gone:
			disabled = hosting.WebhookGone
		case !more || job.Attempt >= job.MaxAttempts:
			disabled = hosting.WebhookFailing
		default:
			next := now.Add(wait)
			d.State, d.NextAttemptAt, retry = hosting.DeliveryPending, &next, true
		}
		if err := tx.UpdateWebhookDelivery(ctx, d); err != nil {
			return err
		}
		if disabled == "" {
			return nil
		}
		return s.disableWebhook(ctx, tx, d, disabled)
	})
	if errors.Is(err, store.ErrNotFound) {
		return false, nil // the webhook went while the attempt ran
	}
	if err == nil && disabled != "" {
		s.log.Warn("webhook disabled", "account", d.AccountID, "webhook", d.WebhookID, "reason", disabled,
			"delivery", d.ID, "attempts", d.Attempts, "last_error", a.Reason)
	}
	return retry, err
}

// disableWebhook disables the webhook of d for reason, with its webhook.disabled
// event (delivered to the account's other webhooks that want it) and a mail to the
// account holder (docs/webhooks.md).
func (s *Service) disableWebhook(ctx context.Context, tx store.Tx, d hosting.WebhookDelivery, reason string) error {
	hook, err := tx.Webhook(ctx, d.AccountID, d.WebhookID)
	if err != nil || !hook.Enabled {
		return err
	}
	hook.Enabled, hook.DisabledReason = false, reason
	if err := tx.UpdateWebhook(ctx, hook); err != nil {
		return err
	}
	if err := s.emitWebhook(ctx, tx, hosting.EventWebhookDisabled, hook, nil, reason); err != nil {
		return err
	}
	return s.mailWebhookDisabled(ctx, tx, hook, reason)
}
