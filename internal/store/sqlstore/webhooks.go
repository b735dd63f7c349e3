package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/hosting"
)

// Webhooks, their deliveries and the deliveries' attempts (docs/webhooks.md).

func (q queries) Event(ctx context.Context, accountID, id int64) (hosting.Event, error) {
	return scanEventOne(q.q.QueryRowContext(ctx, `SELECT `+eventCols+` FROM events WHERE account_id = ? AND id = ?`, accountID, id).Scan)
}

func scanEventOne(sc func(...any) error) (hosting.Event, error) {
	e, err := scanEvent(sc)
	return e, notFound(err)
}

const webhookCols = `SELECT id, account_id, url, event_types, enabled, disabled_reason, secret, previous_secret, previous_until,
	created_at FROM webhooks WHERE account_id = ?`

func scanWebhook(sc func(...any) error) (hosting.Webhook, error) {
	var w hosting.Webhook
	var types string
	var until sql.NullInt64
	var created int64
	if err := sc(&w.ID, &w.AccountID, &w.URL, &types, &w.Enabled, &w.DisabledReason, &w.Secret, &w.PreviousSecret, &until, &created); err != nil {
		return w, err
	}
	for t := range strings.SplitSeq(types, ",") {
		w.EventTypes = append(w.EventTypes, hosting.EventPattern(t))
	}
	w.PreviousUntil, w.CreatedAt = fromNullMS(until), fromMS(created)
	return w, nil
}

func joinPatterns(ps []hosting.EventPattern) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = string(p)
	}
	return strings.Join(parts, ",")
}

func (q queries) Webhooks(ctx context.Context, accountID int64) ([]hosting.Webhook, error) {
	rows, err := q.q.QueryContext(ctx, webhookCols+` ORDER BY id`, accountID)
	return orEmpty(collect(rows, err, scanWebhook))
}

func (q queries) Webhook(ctx context.Context, accountID, id int64) (hosting.Webhook, error) {
	rows, err := q.q.QueryContext(ctx, webhookCols+` AND id = ?`, accountID, id)
	ws, err := collect(rows, err, scanWebhook)
	if err != nil || len(ws) == 0 {
		return hosting.Webhook{}, orNotFound(err)
	}
	return ws[0], nil
}

func (q queries) CreateWebhook(ctx context.Context, w hosting.Webhook) (int64, error) {
	return q.insert(ctx, `INSERT INTO webhooks (account_id, url, event_types, enabled, disabled_reason, secret, previous_secret,
		previous_until, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, w.AccountID, w.URL, joinPatterns(w.EventTypes), b2i(w.Enabled),
		w.DisabledReason, w.Secret, w.PreviousSecret, msPtr(w.PreviousUntil), ms(w.CreatedAt))
}

func (q queries) UpdateWebhook(ctx context.Context, w hosting.Webhook) error {
	return q.execOne(ctx, `UPDATE webhooks SET url = ?, event_types = ?, enabled = ?, disabled_reason = ?, secret = ?,
		previous_secret = ?, previous_until = ? WHERE id = ? AND account_id = ?`, w.URL, joinPatterns(w.EventTypes), b2i(w.Enabled),
		w.DisabledReason, w.Secret, w.PreviousSecret, msPtr(w.PreviousUntil), w.ID, w.AccountID)
}

// DeleteWebhook implements store.Writer; the deliveries and attempts go by their
// references' ON DELETE CASCADE.
func (q queries) DeleteWebhook(ctx context.Context, accountID, id int64) error {
	if err := q.execOne(ctx, `DELETE FROM webhooks WHERE id = ? AND account_id = ?`, id, accountID); err != nil {
		return err
	}
	// Its deliveries have no foreign key to it (the migration says why); their
	// attempts go with them.
	_, err := q.q.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE webhook_id = ? AND account_id = ?`, id, accountID)
	return err
}

const deliveryCols = `SELECT id, account_id, webhook_id, event_id, event_type, state, attempts, next_attempt_at, created_at
	FROM webhook_deliveries`

func scanDelivery(sc func(...any) error) (hosting.WebhookDelivery, error) {
	var d hosting.WebhookDelivery
	var next sql.NullInt64
	var created int64
	if err := sc(&d.ID, &d.AccountID, &d.WebhookID, &d.EventID, &d.EventType, &d.State, &d.Attempts, &next, &created); err != nil {
		return d, err
	}
	d.NextAttemptAt, d.CreatedAt = fromNullMS(next), fromMS(created)
	return d, nil
}

func scanAttempt(sc func(...any) error) (hosting.WebhookAttempt, error) {
	var a hosting.WebhookAttempt
	var at, latency int64
	if err := sc(&a.ID, &a.DeliveryID, &at, &a.Status, &latency, &a.Answer, &a.Reason); err != nil {
		return a, err
	}
	a.At, a.Latency = fromMS(at), time.Duration(latency)*time.Millisecond
	return a, nil
}

func (q queries) WebhookDeliveries(ctx context.Context, accountID, webhookID int64, limit, offset int) ([]hosting.WebhookDelivery, int, error) {
	var total int
	err := q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhook_deliveries WHERE account_id = ? AND webhook_id = ?`,
		accountID, webhookID).Scan(&total)
	if err != nil {
		return nil, 0, err
	}
	rows, err := q.q.QueryContext(ctx, deliveryCols+` WHERE account_id = ? AND webhook_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`,
		accountID, webhookID, limit, offset)
	ds, err := orEmpty(collect(rows, err, scanDelivery))
	if err != nil || len(ds) == 0 {
		return ds, total, err
	}
	return ds, total, q.attemptsOf(ctx, ds)
}

// attemptsOf fills the Log of each of ds with its latest hosting.MaxAttemptsShown
// attempts, oldest first: redeliveries add attempts without end, and a page of 50
// deliveries must stay bounded.
func (q queries) attemptsOf(ctx context.Context, ds []hosting.WebhookDelivery) error {
	ids := make([]any, len(ds))
	at := map[int64]int{}
	for i, d := range ds {
		ids[i], at[d.ID] = d.ID, i
	}
	rows, err := q.q.QueryContext(ctx, `SELECT id, delivery_id, at, status, latency_ms, answer, reason FROM (
		SELECT *, ROW_NUMBER() OVER (PARTITION BY delivery_id ORDER BY id DESC) AS newest FROM webhook_attempts
		WHERE delivery_id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)) latest WHERE newest <= `+strconv.Itoa(hosting.MaxAttemptsShown)+` ORDER BY id`,
		ids...)
	as, err := collect(rows, err, scanAttempt)
	for _, a := range as {
		ds[at[a.DeliveryID]].Log = append(ds[at[a.DeliveryID]].Log, a)
	}
	return err
}

func (q queries) WebhookDelivery(ctx context.Context, accountID, id int64) (hosting.WebhookDelivery, error) {
	rows, err := q.q.QueryContext(ctx, deliveryCols+` WHERE account_id = ? AND id = ?`, accountID, id)
	ds, err := collect(rows, err, scanDelivery)
	if err != nil || len(ds) == 0 {
		return hosting.WebhookDelivery{}, orNotFound(err)
	}
	return ds[0], q.attemptsOf(ctx, ds)
}

func (q queries) WebhookDeliveryByID(ctx context.Context, id int64) (hosting.WebhookDelivery, error) {
	rows, err := q.q.QueryContext(ctx, deliveryCols+` WHERE id = ?`, id)
	ds, err := collect(rows, err, scanDelivery)
	if err != nil || len(ds) == 0 {
		return hosting.WebhookDelivery{}, orNotFound(err)
	}
	return ds[0], nil
}

func (q queries) AddWebhookDelivery(ctx context.Context, d hosting.WebhookDelivery) (int64, error) {
	return q.insert(ctx, `INSERT INTO webhook_deliveries (account_id, webhook_id, event_id, event_type, state, attempts,
		next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, d.AccountID, d.WebhookID, d.EventID, string(d.EventType),
		string(d.State), d.Attempts, msPtr(d.NextAttemptAt), ms(d.CreatedAt))
}

func (q queries) UpdateWebhookDelivery(ctx context.Context, d hosting.WebhookDelivery) error {
	return q.execOne(ctx, `UPDATE webhook_deliveries SET state = ?, attempts = ?, next_attempt_at = ? WHERE id = ? AND account_id = ?`,
		string(d.State), d.Attempts, msPtr(d.NextAttemptAt), d.ID, d.AccountID)
}

func (q queries) AddWebhookAttempt(ctx context.Context, a hosting.WebhookAttempt) (int64, error) {
	return q.insert(ctx, `INSERT INTO webhook_attempts (delivery_id, at, status, latency_ms, answer, reason) VALUES (?, ?, ?, ?, ?, ?)`,
		a.DeliveryID, ms(a.At), a.Status, a.Latency.Milliseconds(), a.Answer, a.Reason)
}
