package ops

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// Idempotency-Key (docs/api.md, Idempotency and operations): the same key and request within 24 h answer the
// first response again without doing the work twice; the same key with another
// request is a validation error on Idempotency-Key.
//
// A request's answer is stored in the same transaction as the change it made (see
// store.Hold), so after a crash at any moment either both are in the database — a
// retry gets the first answer — or neither is, and a retry runs afresh at once. No
// record marks a request as running: two requests with one key both run, and the one
// that commits second finds the key taken, rolls its change back and answers the
// first one's answer.

const (
	// IdempotencyTTL is how long a key is remembered.
	IdempotencyTTL = 24 * time.Hour
	// IdempotencyKeyField names the Idempotency-Key header in validation errors, as
	// docs/api.md, Shapes and small rules writes it.
	IdempotencyKeyField = "idempotency_key"
)

// Response is a rendered answer, as stored for replays.
type Response struct {
	Status      int
	ContentType string
	Body        []byte
}

// replayable reports whether an answer that changed nothing is final for its request:
// a busy, rate-limited or failed request may succeed when retried, so it is not
// remembered.
func replayable(status int) bool {
	return status < 500 && status != 409 && status != 429
}

// RequestHash is the fingerprint a key is bound to.
func RequestHash(method, path string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(method + " " + path + "\n"))
	h.Write(body)
	return h.Sum(nil)
}

// CheckIdempotencyKey validates a key: 1 to 255 visible ASCII characters.
func CheckIdempotencyKey(key string) error {
	if key == "" || len(key) > 255 {
		return hosting.Invalid(IdempotencyKeyField, "validation.idempotency_key")
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return hosting.Invalid(IdempotencyKeyField, "validation.idempotency_key")
		}
	}
	return nil
}

// Idempotent runs a request sent with an Idempotency-Key at most once per account and
// key: its answer is stored with its change and replayed (replayed true) to every
// repeat with the same fingerprint. run must make its change in one transaction under
// the context it is given (later ones join it).
// Errors: CodeValidationFailed on Idempotency-Key (malformed; reused for another
// request; recorded by an older Berth whose answer was lost); when the change could
// not be committed, the store's error (CodeUnavailable for a full disk), and nothing
// was done.
func (s *Service) Idempotent(ctx context.Context, p hosting.Principal, key string, hash []byte, run func(ctx context.Context) Response) (Response, bool, error) {
	if err := CheckIdempotencyKey(key); err != nil {
		return Response{}, false, err
	}
	now := s.Now()
	if resp, found, err := s.replay(ctx, p.Account.ID, key, hash, now); found || err != nil {
		return resp, found, err
	}
	held, hold := store.WithHold(ctx)
	defer hold.Release()
	resp := run(held)
	rec := hosting.IdempotencyRecord{AccountID: p.Account.ID, Key: key, RequestHash: hash, State: hosting.IdempotencyDone,
		Status: resp.Status, ContentType: resp.ContentType, Body: resp.Body, CreatedAt: now}
	bg := context.WithoutCancel(ctx)
	save := func(tx store.Tx) error { return tx.SaveIdempotencyKey(bg, rec, now.Add(-IdempotencyTTL)) }
	undone := false
	switch {
	case hold.Held():
		// The request changed state: its answer commits with the change, or neither
		// does (then the answer is not the client's to see).
		err := hold.Commit(save)
		if err == nil {
			return resp, false, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return Response{}, false, internal("commit", err)
		}
		undone = true
	case replayable(resp.Status):
		// It changed nothing, and its answer is final: remembered on its own.
		err := s.store.InTx(bg, save)
		if err == nil {
			return resp, false, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			s.log.Error("idempotency key not recorded", "key", key, "account", p.Account.ID, "err", err)
			return resp, false, nil
		}
	}
	// Another request with this key committed first (a change of ours was undone), or
	// ours was not final (its 409 may have come from that other request's change):
	// the key's answer is the one stored, if there is one.
	if stored, found, err := s.replay(bg, p.Account.ID, key, hash, now); found || err != nil {
		return stored, found, err
	}
	if undone {
		// The record that took the key is gone again (expired meanwhile): our answer
		// describes a change that was undone, so the client must ask again.
		e := hosting.Errorf(hosting.CodeBusy, "error.idempotency_in_progress")
		e.RetryAfter = 1
		return Response{}, false, e
	}
	return resp, false, nil
}

// replay finds the live record of an account's key: its answer, or the validation
// error for a key reused with another request.
func (s *Service) replay(ctx context.Context, accountID int64, key string, hash []byte, now time.Time) (Response, bool, error) {
	rec, err := s.store.IdempotencyKey(ctx, accountID, key)
	if errors.Is(err, store.ErrNotFound) || (err == nil && rec.CreatedAt.Before(now.Add(-IdempotencyTTL))) {
		return Response{}, false, nil
	}
	if err != nil {
		return Response{}, false, internal("idempotency key", err)
	}
	if !bytes.Equal(rec.RequestHash, hash) {
		return Response{}, false, hosting.Invalid(IdempotencyKeyField, "validation.idempotency_key_reused")
	}
	if rec.State == hosting.IdempotencyApplied {
		return Response{}, false, hosting.Invalid(IdempotencyKeyField, "validation.idempotency_key_lost")
	}
	return Response{Status: rec.Status, ContentType: rec.ContentType, Body: rec.Body}, true, nil
}

// ---- the audit log ----

// Audit appends an entry to the audit log. It never fails the request it records:
// a failure to write is logged.
func (s *Service) Audit(ctx context.Context, e hosting.AuditEntry) {
	if e.At.IsZero() {
		e.At = s.Now()
	}
	// What a request named is recorded as it came, where the store can keep it: a
	// path's %00 or %ff reaches Target, and PostgreSQL's text refuses both.
	for _, f := range []*string{&e.Actor, &e.Action, &e.Target, &e.Code, &e.Client, &e.IdempotencyKey} {
		*f = hosting.StorableText(*f)
	}
	ctx = context.WithoutCancel(ctx)
	if err := s.store.InTx(ctx, func(tx store.Tx) error { return tx.AddAuditEntry(ctx, e) }); err != nil {
		s.log.Error("audit entry not written", "action", e.Action, "target", e.Target, "err", err)
	}
}

// AuditLog reads the audit log, newest first (accountID 0: every account).
func (s *Service) AuditLog(ctx context.Context, accountID, before int64, limit int) ([]hosting.AuditEntry, error) {
	return s.store.AuditLog(ctx, accountID, before, limit)
}

// ---- housekeeping ----

// PruneIdempotencyKeys forgets the idempotency keys past IdempotencyTTL (the periodic
// housekeeping job), and reports how many.
func (s *Service) PruneIdempotencyKeys(ctx context.Context) (int, error) {
	var n int
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.PruneIdempotencyKeys(ctx, s.Now().Add(-IdempotencyTTL))
		return err
	})
	return n, err
}
