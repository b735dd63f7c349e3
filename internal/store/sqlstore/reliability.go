package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/berthhq/berth/internal/hosting"
)

// ---- idempotency keys ----

const idemCols = `id, account_id, key, request_hash, state, status, content_type, body, created_at`

func scanIdem(sc func(...any) error) (hosting.IdempotencyRecord, error) {
	var r hosting.IdempotencyRecord
	var created int64
	if err := sc(&r.ID, &r.AccountID, &r.Key, &r.RequestHash, &r.State, &r.Status, &r.ContentType, &r.Body, &created); err != nil {
		return r, notFound(err)
	}
	r.CreatedAt = fromMS(created)
	return r, nil
}

func (q queries) IdempotencyKey(ctx context.Context, accountID int64, key string) (hosting.IdempotencyRecord, error) {
	return scanIdem(q.q.QueryRowContext(ctx, `SELECT `+idemCols+` FROM idempotency_keys WHERE account_id = ? AND key = ?`, accountID, key).Scan)
}

func (q queries) SaveIdempotencyKey(ctx context.Context, r hosting.IdempotencyRecord, expired time.Time) error {
	if _, err := q.q.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE account_id = ? AND key = ? AND created_at < ?`,
		r.AccountID, r.Key, ms(expired)); err != nil {
		return err
	}
	_, err := q.q.ExecContext(ctx, `INSERT INTO idempotency_keys (account_id, key, request_hash, state, status, content_type, body, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.AccountID, r.Key, r.RequestHash, string(hosting.IdempotencyDone), r.Status, r.ContentType,
		r.Body, ms(r.CreatedAt))
	return conflict(err)
}

func (q queries) PruneIdempotencyKeys(ctx context.Context, before time.Time) (int, error) {
	res, err := q.q.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < ?`, ms(before))
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// ---- the audit log ----

func (q queries) AddAuditEntry(ctx context.Context, e hosting.AuditEntry) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO audit_log (at, actor, account_id, token_id, action, target, status, code, client,
		idempotency_key, replayed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, ms(e.At), e.Actor, e.AccountID, e.TokenID, e.Action,
		e.Target, e.Status, e.Code, e.Client, e.IdempotencyKey, b2i(e.Replayed))
	return err
}

func scanAuditEntry(sc func(...any) error) (hosting.AuditEntry, error) {
	var e hosting.AuditEntry
	var at int64
	var acct, tok sql.NullInt64
	if err := sc(&e.ID, &at, &e.Actor, &acct, &tok, &e.Action, &e.Target, &e.Status, &e.Code, &e.Client,
		&e.IdempotencyKey, &e.Replayed); err != nil {
		return e, err
	}
	e.At, e.AccountID, e.TokenID = fromMS(at), nullInt(acct), nullInt(tok)
	return e, nil
}

func (q queries) AuditLog(ctx context.Context, accountID, before int64, limit int) ([]hosting.AuditEntry, error) {
	if limit <= 0 {
		limit = 100
	}
	if before <= 0 {
		before = 1 << 62
	}
	// The operator's filter: no account (0) lists all. Written as its own condition,
	// not "(? = 0 OR ...)", whose "? = 0" types the id as int4 on PostgreSQL.
	where, args := "", []any{before, limit}
	if accountID != 0 {
		where, args = "account_id = ? AND ", []any{accountID, before, limit}
	}
	rows, err := q.q.QueryContext(ctx, `SELECT id, at, actor, account_id, token_id, action, target, status, code, client,
		idempotency_key, replayed FROM audit_log WHERE `+where+`id < ? ORDER BY id DESC LIMIT ?`, args...)
	return orEmpty(collect(rows, err, scanAuditEntry))
}
