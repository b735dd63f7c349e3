package ops

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/webhook"
)

// License hooks (docs/operating.md, Licenses): a license product provisioned by
// webhook has the operator's hook told of each change of a server's license of it:
// activate, suspend, unsuspend, cancel and address change. Each is a job enqueued in
// the transaction of the change (the outbox rule), attempting a POST signed as
// account webhooks' deliveries are (Standard Webhooks) on their retry schedule. A
// license held is pending until its activate is answered 2xx, then active; failed
// (and refunded) when the last attempt fails.

// LicenseHookKind is the kind of the job that delivers a change to a license hook.
const LicenseHookKind = "berth.license_hook"

// The types of a license hook's deliveries.
const (
	LicenseHookActivate      = "license.activate"
	LicenseHookSuspend       = "license.suspend"
	LicenseHookUnsuspend     = "license.unsuspend"
	LicenseHookCancel        = "license.cancel"
	LicenseHookAddressChange = "license.address_change"
)

// LicenseHookArgs are the job's: one delivery, its body's data written at the
// change. The hook's URL and secrets are read at each attempt (never in the queue).
type LicenseHookArgs struct {
	ID              string          `json:"id"` // webhook-id, the same at each attempt
	Type            string          `json:"type"`
	At              time.Time       `json:"at"`
	LicenseID       int64           `json:"license_id"`
	ServerID        int64           `json:"server_id"`
	ServerLicenseID int64           `json:"server_license_id"`
	Data            json.RawMessage `json:"data"`
}

// Kind implements river.JobArgs.
func (LicenseHookArgs) Kind() string { return LicenseHookKind }

// InsertOpts gives the job webhook.MaxAttempts attempts, retried on
// webhook.NextAttempt's schedule (the retry policy app gives River for this kind).
func (LicenseHookArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: webhook.MaxAttempts}
}

// LicenseHookData is the data of a delivery (docs/operating.md, Licenses).
type LicenseHookData struct {
	LicenseID       int64             `json:"license_id"`
	License         string            `json:"license"`
	ServerLicenseID int64             `json:"server_license_id"`
	Status          string            `json:"status"`
	AccountID       int64             `json:"account_id"`
	Server          LicenseHookServer `json:"server"`
	At              time.Time         `json:"at"`
}

// LicenseHookServer is the server a delivery is about.
type LicenseHookServer struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	Addresses []string `json:"addresses"`
	VCPUs     int      `json:"vcpus"`
	Suspended bool     `json:"suspended"`
}

func serverAddresses(srv hosting.Server) []string {
	out := []string{}
	for _, a := range []*string{srv.IPv4, srv.IPv6} {
		if a != nil && *a != "" {
			out = append(out, *a)
		}
	}
	return out
}

// licenseHook enqueues, in tx, the delivery of typ about sl, a license of a webhook
// product, on srv as it is now.
func (s *Service) licenseHook(ctx context.Context, tx store.Tx, typ string, sl hosting.ServerLicense, srv hosting.Server) error {
	id := make([]byte, 12)
	if _, err := rand.Read(id); err != nil {
		return internal("license hook id", err)
	}
	now := s.NowFor(sl.AccountID)
	data, err := json.Marshal(LicenseHookData{LicenseID: sl.LicenseID, License: sl.Name, ServerLicenseID: sl.ID, Status: string(sl.Status),
		AccountID: sl.AccountID, At: now.UTC(), Server: LicenseHookServer{ID: srv.ID, Name: srv.Name, Addresses: serverAddresses(srv),
			VCPUs: srv.VCPUs, Suspended: srv.Suspended}})
	if err != nil {
		return internal("license hook", err)
	}
	args := LicenseHookArgs{ID: "lh_" + hex.EncodeToString(id), Type: typ, At: now, LicenseID: sl.LicenseID, ServerID: sl.ServerID,
		ServerLicenseID: sl.ID, Data: data}
	return internal("enqueue license hook", s.enqueue(ctx, tx, args))
}

// licenseHookOnCancel tells the hook of sl's product, if it has one, that sl is
// cancelled; not when its activate was never sent (its server had no address yet).
func (s *Service) licenseHookOnCancel(ctx context.Context, tx store.Tx, sl hosting.ServerLicense, was hosting.LicenseStatus) error {
	hook, err := tx.LicenseHook(ctx, sl.LicenseID)
	if err != nil || hook == nil {
		return internal("license hook", err)
	}
	srv, err := tx.ServerAny(ctx, sl.ServerID)
	if err != nil {
		return internal("server", err)
	}
	if was == hosting.LicensePending && len(serverAddresses(srv)) == 0 {
		return nil
	}
	return s.licenseHook(ctx, tx, LicenseHookCancel, sl, srv)
}

// addressHooks tells the hooks of the server's webhook licenses hooked that its
// addresses changed from was's: those pending whose server had none are activated
// now (their activate waited for an address), the others get an address change.
func (s *Service) addressHooks(ctx context.Context, tx store.Tx, was hosting.Server, hooked []hosting.ServerLicense) error {
	if len(hooked) == 0 {
		return nil
	}
	srv, err := tx.ServerAny(ctx, was.ID)
	if err != nil {
		return internal("server", err)
	}
	before, after := serverAddresses(was), serverAddresses(srv)
	if fmt.Sprint(before) == fmt.Sprint(after) {
		return nil
	}
	for _, sl := range hooked {
		typ := LicenseHookAddressChange
		if sl.Status == hosting.LicensePending && len(before) == 0 {
			typ = LicenseHookActivate
		}
		if err := s.licenseHook(ctx, tx, typ, sl, srv); err != nil {
			return err
		}
	}
	return nil
}

// suspensionHooks runs change, a suspension or its lifting of an account's servers
// (serverID 0) or of one, and tells the hooks of the webhook licenses of each server
// whose suspension it changed: suspend or unsuspend.
func (s *Service) suspensionHooks(ctx context.Context, tx store.Tx, accountID, serverID int64, change func() error) error {
	hooked, err := tx.HookedLicenses(ctx, accountID, serverID)
	if err != nil {
		return internal("license hooks", err)
	}
	if len(hooked) == 0 {
		return change()
	}
	was := map[int64]bool{}
	for _, sl := range hooked {
		if _, ok := was[sl.ServerID]; ok {
			continue
		}
		srv, err := tx.ServerAny(ctx, sl.ServerID)
		if err != nil {
			return internal("server", err)
		}
		was[sl.ServerID] = srv.Suspended
	}
	if err := change(); err != nil {
		return err
	}
	now := map[int64]hosting.Server{}
	for _, sl := range hooked {
		srv, ok := now[sl.ServerID]
		if !ok {
			if srv, err = tx.ServerAny(ctx, sl.ServerID); err != nil {
				return internal("server", err)
			}
			now[sl.ServerID] = srv
		}
		if srv.Suspended == was[sl.ServerID] {
			continue
		}
		typ := LicenseHookUnsuspend
		if srv.Suspended {
			typ = LicenseHookSuspend
		}
		if err := s.licenseHook(ctx, tx, typ, sl, srv); err != nil {
			return err
		}
	}
	return nil
}

// LicenseHookWorker delivers license hooks' jobs: an attempt per run, 2xx delivered,
// anything else retried on the schedule of account webhooks (webhook.NextAttempt)
// until the last attempt. An activate answered 2xx makes its license active; its
// last attempt failed makes it failed and refunds it.
type LicenseHookWorker struct {
	river.WorkerDefaults[LicenseHookArgs]
	s    *Service
	opts webhook.Options
}

// NewLicenseHookWorker is the worker of s's license hooks; opts make each attempt's
// webhook.Client. The operator configures a hook's URL, not a client: its address
// may be private (an internal bridge to the vendor's API), so the address rules of
// account webhooks are lifted for it (docs/operating.md, Licenses); redirects are
// still not followed and each attempt is cut after opts.Timeout.
func NewLicenseHookWorker(s *Service, opts webhook.Options) *LicenseHookWorker {
	opts.AllowPrivate = true
	return &LicenseHookWorker{s: s, opts: opts}
}

// Work makes one attempt.
func (w *LicenseHookWorker) Work(ctx context.Context, job *river.Job[LicenseHookArgs]) error {
	a := job.Args
	s := w.s
	hook, err := s.store.LicenseHook(ctx, a.LicenseID)
	if err != nil {
		return err
	}
	if a.Type == LicenseHookActivate {
		sl, err := s.store.ServerLicense(ctx, a.ServerID, a.ServerLicenseID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && sl.Status != hosting.LicensePending) {
			return nil // cancelled (its cancel goes to the hook) or settled already
		}
		if err != nil {
			return err
		}
		if hook == nil {
			// No longer provisioned by webhook: nothing activates it but Berth.
			return w.settle(ctx, a, hosting.LicenseActive)
		}
	}
	if hook == nil {
		s.log.Warn("license hook not sent: the product has no hook any more", "license", a.LicenseID, "type", a.Type,
			"server_license", a.ServerLicenseID)
		return nil
	}
	att := webhook.New(w.opts).Deliver(ctx, webhook.Request{URL: hook.URL, ID: a.ID, Type: a.Type, Timestamp: a.At,
		Data: a.Data, Secrets: hook.Secrets})
	if att.Outcome == webhook.Delivered {
		if a.Type == LicenseHookActivate {
			return w.settle(ctx, a, hosting.LicenseActive)
		}
		return nil
	}
	_, more := webhook.NextAttempt(job.Attempt)
	if !more || job.Attempt >= job.MaxAttempts {
		s.log.Warn("license hook given up", "license", a.LicenseID, "type", a.Type, "server_license", a.ServerLicenseID,
			"attempts", job.Attempt, "last_error", att.Reason)
		if a.Type == LicenseHookActivate {
			return w.settle(ctx, a, hosting.LicenseFailed)
		}
		return nil
	}
	return fmt.Errorf("license hook %s (%s of server license %d), attempt %d of %d: %s", a.ID, a.Type, a.ServerLicenseID,
		job.Attempt, job.MaxAttempts, att.Reason)
}

// settle ends a pending license's activation: active, or failed and refunded what it
// was charged (the server never had it, as a failed provisioning's licenses).
func (w *LicenseHookWorker) settle(ctx context.Context, a LicenseHookArgs, to hosting.LicenseStatus) error {
	s := w.s
	return s.store.InTx(ctx, func(tx store.Tx) error {
		sl, err := tx.ServerLicense(ctx, a.ServerID, a.ServerLicenseID)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		ok, err := tx.SetServerLicenseStatus(ctx, sl.ID, hosting.LicensePending, to)
		if err != nil || !ok {
			return err // cancelled meanwhile, or settled by another attempt
		}
		sl.Status = to
		if to == hosting.LicenseFailed {
			if err := s.refundLicense(ctx, tx, sl); err != nil {
				return err
			}
		}
		typ := hosting.EventLicenseActivated
		if to == hosting.LicenseFailed {
			typ = hosting.EventLicenseFailed
		}
		return s.emitLicense(ctx, tx, typ, sl)
	})
}

// refundLicense gives back what a server's license was charged.
func (s *Service) refundLicense(ctx context.Context, tx store.Tx, sl hosting.ServerLicense) error {
	charged, err := tx.Charged(ctx, hosting.ResourceLicense, sl.ID)
	if err != nil || charged <= 0 {
		return internal("license charges", err)
	}
	start := billing.MonthStart(sl.StartedAt)
	t, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: sl.AccountID, Type: hosting.TxRefund, Amount: charged,
		ResourceType: hosting.ResourceLicense, ResourceID: &sl.ID, ResourceName: sl.Name, PeriodStart: &start, CreatedAt: s.NowFor(sl.AccountID)})
	if err != nil {
		return internal("refund license", err)
	}
	return s.afterCredit(ctx, tx, t)
}
