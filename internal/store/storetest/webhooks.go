package storetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// webhooks checks an account's webhooks, their deliveries and attempts: read back as
// written, hidden from other accounts, paged newest first, gone with their webhook,
// their event, and a sandbox reset.
func webhooks(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	setup := func(t *testing.T) (store.Store, int64, int64) { return twoAccounts(t, open, "wh", now) }
	do := func(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
		t.Helper()
		if err := s.InTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	until := now.Add(hosting.SecretOverlap)
	hook := func(account int64) hosting.Webhook {
		return hosting.Webhook{AccountID: account, URL: "https://hooks.example.com/a", EventTypes: []hosting.EventPattern{"server.*", "operation.failed"},
			Enabled: true, Secret: "whsec_bmV3", PreviousSecret: "whsec_b2xk", PreviousUntil: &until, CreatedAt: now}
	}
	// deliver writes an event of account and a delivery of it to webhook w, with
	// attempts attempts; it returns the event's and the delivery's ids.
	deliver := func(t *testing.T, s store.Store, account, w int64, attempts int) (int64, int64) {
		t.Helper()
		var ev, d int64
		do(t, s, func(tx store.Tx) error {
			es, err := tx.AddEvents(ctx, []hosting.Event{{AccountID: account, Type: hosting.EventServerCreated,
				Resource: hosting.EventResource{Type: "server", ID: 1}, Data: []byte(`{}`), CreatedAt: now}})
			if err != nil {
				return err
			}
			ev = es[0].ID
			next := now.Add(5 * time.Second)
			if d, err = tx.AddWebhookDelivery(ctx, hosting.WebhookDelivery{AccountID: account, WebhookID: w, EventID: ev,
				EventType: hosting.EventServerCreated, State: hosting.DeliveryPending, NextAttemptAt: &next, CreatedAt: now}); err != nil {
				return err
			}
			for i := range attempts {
				if _, err := tx.AddWebhookAttempt(ctx, hosting.WebhookAttempt{DeliveryID: d, At: now.Add(time.Duration(i) * time.Minute),
					Status: 500 + i, Latency: 1234 * time.Millisecond, Answer: "é\uFFFD", Reason: "status 500"}); err != nil {
					return err
				}
			}
			return nil
		})
		return ev, d
	}

	t.Run("ReadBackAndOtherAccounts", func(t *testing.T) {
		s, a, b := setup(t)
		var id int64
		do(t, s, func(tx store.Tx) error {
			var err error
			id, err = tx.CreateWebhook(ctx, hook(a))
			return err
		})
		w, err := s.Webhook(ctx, a, id)
		want := hook(a)
		want.ID = id
		if err != nil || w.URL != want.URL || !slices.Equal(w.EventTypes, want.EventTypes) || !w.Enabled || w.Secret != want.Secret ||
			w.PreviousSecret != want.PreviousSecret || w.PreviousUntil == nil || !w.PreviousUntil.Equal(until) || !w.CreatedAt.Equal(now) {
			t.Fatalf("read back %+v, %v; want %+v", w, err, want)
		}
		if _, err := s.Webhook(ctx, b, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account's webhook: %v, want not found", err)
		}
		if ws, err := s.Webhooks(ctx, b); err != nil || len(ws) != 0 {
			t.Errorf("another account lists %v, %v", ws, err)
		}
		err = s.InTx(ctx, func(tx store.Tx) error { return tx.DeleteWebhook(ctx, b, id) })
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account deletes it: %v", err)
		}
		// An update writes every field; the previous secret can be dropped.
		w.URL, w.EventTypes, w.Enabled, w.DisabledReason, w.PreviousSecret, w.PreviousUntil =
			"https://other.example.com/", []hosting.EventPattern{"*"}, false, hosting.WebhookGone, "", nil
		do(t, s, func(tx store.Tx) error { return tx.UpdateWebhook(ctx, w) })
		got, _ := s.Webhook(ctx, a, id)
		if got.URL != w.URL || !slices.Equal(got.EventTypes, w.EventTypes) || got.Enabled || got.DisabledReason != hosting.WebhookGone ||
			got.PreviousSecret != "" || got.PreviousUntil != nil {
			t.Errorf("after the update %+v", got)
		}
		other := w
		other.AccountID = b
		if err := s.InTx(ctx, func(tx store.Tx) error { return tx.UpdateWebhook(ctx, other) }); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account updates it: %v", err)
		}
	})

	t.Run("DeliveriesPagedWithTheirAttempts", func(t *testing.T) {
		s, a, b := setup(t)
		var w int64
		do(t, s, func(tx store.Tx) error {
			var err error
			w, err = tx.CreateWebhook(ctx, hook(a))
			return err
		})
		var ids []int64
		for i := range 3 {
			_, d := deliver(t, s, a, w, i)
			ids = append(ids, d)
		}
		page, total, err := s.WebhookDeliveries(ctx, a, w, 2, 0)
		if err != nil || total != 3 || len(page) != 2 || page[0].ID != ids[2] || page[1].ID != ids[1] {
			t.Fatalf("first page %+v, total %d, %v", page, total, err)
		}
		if len(page[0].Log) != 2 || page[0].Log[0].Status != 500 || page[0].Log[1].Status != 501 ||
			page[0].Log[0].Latency != 1234*time.Millisecond || page[0].Log[0].Answer != "é\uFFFD" || !page[0].Log[1].At.Equal(now.Add(time.Minute)) {
			t.Errorf("attempts %+v", page[0].Log)
		}
		if d := page[1]; d.State != hosting.DeliveryPending || d.EventType != hosting.EventServerCreated || d.NextAttemptAt == nil ||
			!d.NextAttemptAt.Equal(now.Add(5*time.Second)) || len(d.Log) != 1 {
			t.Errorf("delivery %+v", d)
		}
		if page, total, _ := s.WebhookDeliveries(ctx, a, w, 2, 2); total != 3 || len(page) != 1 || page[0].ID != ids[0] || len(page[0].Log) != 0 {
			t.Errorf("second page %+v", page)
		}
		// Redelivered again and again: only the latest attempts are shown.
		_, many := deliver(t, s, a, w, hosting.MaxAttemptsShown+5)
		if d, err := s.WebhookDelivery(ctx, a, many); err != nil || len(d.Log) != hosting.MaxAttemptsShown ||
			d.Log[0].Status != 505 || d.Log[len(d.Log)-1].Status != 500+hosting.MaxAttemptsShown+4 {
			t.Errorf("a delivery of %d attempts shows %d (%v)", hosting.MaxAttemptsShown+5, len(d.Log), err)
		}
		if page, total, _ := s.WebhookDeliveries(ctx, b, w, 2, 0); total != 0 || len(page) != 0 {
			t.Errorf("another account's page %+v, %d", page, total)
		}
		if _, err := s.WebhookDelivery(ctx, b, ids[0]); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account's delivery: %v", err)
		}
		// The job's lookup knows no account; it has no log.
		d, err := s.WebhookDeliveryByID(ctx, ids[2])
		if err != nil || d.AccountID != a || d.WebhookID != w || d.Log != nil {
			t.Errorf("by id: %+v, %v", d, err)
		}
		d.State, d.Attempts, d.NextAttemptAt = hosting.DeliveryDelivered, 3, nil
		do(t, s, func(tx store.Tx) error { return tx.UpdateWebhookDelivery(ctx, d) })
		if got, _ := s.WebhookDelivery(ctx, a, d.ID); got.State != hosting.DeliveryDelivered || got.Attempts != 3 || got.NextAttemptAt != nil {
			t.Errorf("after the update %+v", got)
		}
	})

	t.Run("GoWithTheirWebhookAndTheirEvent", func(t *testing.T) {
		s, a, _ := setup(t)
		var w1, w2 int64
		do(t, s, func(tx store.Tx) error {
			var err error
			if w1, err = tx.CreateWebhook(ctx, hook(a)); err != nil {
				return err
			}
			w2, err = tx.CreateWebhook(ctx, hook(a))
			return err
		})
		_, d1 := deliver(t, s, a, w1, 1)
		_, d2 := deliver(t, s, a, w2, 1)
		do(t, s, func(tx store.Tx) error { return tx.DeleteWebhook(ctx, a, w1) })
		if _, err := s.WebhookDeliveryByID(ctx, d1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a deleted webhook's delivery: %v", err)
		}
		// Pruning the events takes their deliveries along.
		do(t, s, func(tx store.Tx) error { _, err := tx.PruneEvents(ctx, now.Add(time.Hour), 100); return err })
		if _, err := s.WebhookDeliveryByID(ctx, d2); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a pruned event's delivery: %v", err)
		}
	})

	t.Run("ResetClearsThemOfOneAccount", func(t *testing.T) {
		s, a, b := setup(t)
		var wa, wb int64
		do(t, s, func(tx store.Tx) error {
			var err error
			if wa, err = tx.CreateWebhook(ctx, hook(a)); err != nil {
				return err
			}
			wb, err = tx.CreateWebhook(ctx, hook(b))
			return err
		})
		deliver(t, s, a, wa, 2)
		_, db := deliver(t, s, b, wb, 2)
		do(t, s, func(tx store.Tx) error { _, err := tx.ResetAccount(ctx, a, now); return err })
		if ws, _ := s.Webhooks(ctx, a); len(ws) != 0 {
			t.Errorf("after a reset: %v", ws)
		}
		if ws, _ := s.Webhooks(ctx, b); len(ws) != 1 {
			t.Errorf("the other account's webhooks: %v", ws)
		}
		if d, err := s.WebhookDelivery(ctx, b, db); err != nil || len(d.Log) != 2 {
			t.Errorf("the other account's delivery: %+v, %v", d, err)
		}
	})

	t.Run("EventByID", func(t *testing.T) {
		s, a, b := setup(t)
		var w int64
		do(t, s, func(tx store.Tx) error {
			var err error
			w, err = tx.CreateWebhook(ctx, hook(a))
			return err
		})
		ev, _ := deliver(t, s, a, w, 0)
		if e, err := s.Event(ctx, a, ev); err != nil || e.Type != hosting.EventServerCreated || !strings.Contains(string(e.Data), "{") {
			t.Errorf("event %+v, %v", e, err)
		}
		if _, err := s.Event(ctx, b, ev); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account's event: %v", err)
		}
	})
}
