package ops

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// Idempotency-Key (API-DECISIONS §9): the same key and request within 24 h answer the
// first response again without doing the work twice; the same key with another
// request is a validation error on Idempotency-Key.

const (
	// IdempotencyTTL is how long a key is remembered.
	IdempotencyTTL = 24 * time.Hour
	// IdempotencyWait is how long a request waits for another with the same key that
	// is still running, before answering busy.
	IdempotencyWait = 20 * time.Second
	// idempotencyStale: a pending key older than this belongs to a request that died
	// (the server's write timeout is far shorter), so a retry may run it afresh.
	idempotencyStale = 3 * time.Minute
	// IdempotencyKeyField names the header in validation errors.
	IdempotencyKeyField = "Idempotency-Key"
)

// Response is a rendered answer, as stored for replays.
type Response struct {
	Status      int
	ContentType string
	Body        []byte
}

// replayable reports whether an answer is final for its request: a busy or
// rate-limited request may succeed when retried, so it is not remembered.
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
// key: the first run's answer is stored and replayed (replayed true) to every repeat
// with the same fingerprint. The request's state change and the key's "applied" mark
// commit in one transaction, so a crash can never make a retry do the work twice.
// Errors: CodeValidationFailed on Idempotency-Key (malformed; reused for another
// request; or its request's change committed but the answer was lost in a crash, so
// the client must look the result up), CodeBusy while the first request still runs.
func (s *Service) Idempotent(ctx context.Context, p hosting.Principal, key string, hash []byte, run func(ctx context.Context) Response) (Response, bool, error) {
	if err := CheckIdempotencyKey(key); err != nil {
		return Response{}, false, err
	}
	deadline := time.Now().Add(IdempotencyWait)
	for {
		now := s.Now()
		var rec hosting.IdempotencyRecord
		var mine bool
		err := s.store.InTx(context.WithoutCancel(ctx), func(tx store.Tx) error {
			var err error
			rec, mine, err = tx.ClaimIdempotencyKey(ctx, hosting.IdempotencyRecord{AccountID: p.Account.ID, Key: key, RequestHash: hash,
				CreatedAt: now}, now.Add(-IdempotencyTTL))
			if err != nil || mine || !bytes.Equal(rec.RequestHash, hash) || rec.State != hosting.IdempotencyPending {
				return err
			}
			// A pending key of a request that died is run afresh: its change never committed.
			mine, err = tx.TakeOverIdempotencyKey(ctx, rec.ID, now.Add(-idempotencyStale), now)
			return err
		})
		if err != nil {
			return Response{}, false, internal("idempotency key", err)
		}
		if !bytes.Equal(rec.RequestHash, hash) {
			return Response{}, false, hosting.Invalid(IdempotencyKeyField, "validation.idempotency_key_reused")
		}
		if mine {
			return s.runIdempotent(ctx, rec, run)
		}
		switch rec.State {
		case hosting.IdempotencyDone:
			return Response{Status: rec.Status, ContentType: rec.ContentType, Body: rec.Body}, true, nil
		case hosting.IdempotencyApplied:
			if now.Sub(rec.CreatedAt) > idempotencyStale {
				// The change committed but the process died before storing its answer.
				return Response{}, false, hosting.Invalid(IdempotencyKeyField, "validation.idempotency_key_lost")
			}
		}
		if time.Now().After(deadline) {
			e := hosting.Errorf(hosting.CodeBusy, "error.idempotency_in_progress")
			e.RetryAfter = 1
			return Response{}, false, e
		}
		select {
		case <-ctx.Done():
			return Response{}, false, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *Service) runIdempotent(ctx context.Context, rec hosting.IdempotencyRecord, run func(ctx context.Context) Response) (Response, bool, error) {
	hooked := store.WithTxHook(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.MarkIdempotencyApplied(ctx, rec.ID)
	})
	resp := run(hooked)
	// The answer is recorded even if the client has gone: a retry must see it. An
	// answer that is not final is forgotten, unless the request's change committed
	// (the record then says applied): whatever it answered is what happened.
	bg := context.WithoutCancel(ctx)
	err := s.store.InTx(bg, func(tx store.Tx) error {
		cur, err := tx.IdempotencyKey(bg, rec.AccountID, rec.Key)
		if err != nil {
			return err
		}
		if cur.State == hosting.IdempotencyApplied || replayable(resp.Status) {
			return tx.CompleteIdempotencyKey(bg, rec.ID, resp.Status, resp.ContentType, resp.Body)
		}
		return tx.ReleaseIdempotencyKey(bg, rec.ID)
	})
	if err != nil {
		s.log.Error("idempotency key not recorded", "key", rec.Key, "account", rec.AccountID, "err", err)
	}
	return resp, false, nil
}

// ---- the audit log ----

// Audit appends an entry to the audit log. It never fails the request it records:
// a failure to write is logged.
func (s *Service) Audit(ctx context.Context, e hosting.AuditEntry) {
	if e.At.IsZero() {
		e.At = s.Now()
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

// HousekeepingArgs is the periodic job that forgets expired idempotency keys.
type HousekeepingArgs struct{}

// Kind implements river.JobArgs.
func (HousekeepingArgs) Kind() string { return "berth.housekeeping" }

// InsertOpts: the next run does what a failed one left.
func (HousekeepingArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 1} }

// HousekeepingWorker runs HousekeepingArgs.
type HousekeepingWorker struct {
	river.WorkerDefaults[HousekeepingArgs]
	svc *Service
}

// NewHousekeepingWorker returns the housekeeping worker.
func NewHousekeepingWorker(svc *Service) *HousekeepingWorker { return &HousekeepingWorker{svc: svc} }

// Work implements river.Worker.
func (w *HousekeepingWorker) Work(ctx context.Context, _ *river.Job[HousekeepingArgs]) error {
	var n int
	err := w.svc.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.PruneIdempotencyKeys(ctx, w.svc.Now().Add(-IdempotencyTTL))
		return err
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		w.svc.log.Error("housekeeping failed", "err", err)
		return err
	}
	if n > 0 {
		w.svc.log.Info("expired idempotency keys removed", "keys", n)
	}
	return nil
}
