package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// Password resets (issue 31): one-use, an hour long, stored hashed like tokens.

func (q queries) CreatePasswordReset(ctx context.Context, r hosting.PasswordReset) (int64, error) {
	return q.insert(ctx, `INSERT INTO password_resets (account_id, hash, created_at, expires_at) VALUES (?, ?, ?, ?)`,
		r.AccountID, r.Hash, ms(r.CreatedAt), ms(r.ExpiresAt))
}

const passwordResetCols = `id, account_id, hash, created_at, expires_at, used_at`

func scanPasswordReset(scan func(...any) error) (hosting.PasswordReset, error) {
	var r hosting.PasswordReset
	var created, expires int64
	var used sql.NullInt64
	err := scan(&r.ID, &r.AccountID, &r.Hash, &created, &expires, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return r, store.ErrNotFound
	}
	r.CreatedAt, r.ExpiresAt, r.UsedAt = fromMS(created), fromMS(expires), fromNullMS(used)
	return r, err
}

func (q queries) PasswordReset(ctx context.Context, hash []byte) (hosting.PasswordReset, error) {
	return scanPasswordReset(q.q.QueryRowContext(ctx, `SELECT `+passwordResetCols+` FROM password_resets WHERE hash = ?`, hash).Scan)
}

func (q queries) SpendPasswordReset(ctx context.Context, hash []byte, at time.Time) (hosting.PasswordReset, bool, error) {
	r, err := scanPasswordReset(q.q.QueryRowContext(ctx, `UPDATE password_resets SET used_at = ?
		WHERE hash = ? AND used_at IS NULL AND expires_at > ? RETURNING `+passwordResetCols, ms(at), hash, ms(at)).Scan)
	if errors.Is(err, store.ErrNotFound) {
		r, err = q.PasswordReset(ctx, hash)
		return r, false, err
	}
	if err != nil {
		return r, false, err
	}
	_, err = q.q.ExecContext(ctx, `UPDATE password_resets SET used_at = ? WHERE account_id = ? AND used_at IS NULL`, ms(at), r.AccountID)
	return r, err == nil, err
}

func (q queries) DeletePasswordResets(ctx context.Context, before time.Time) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM password_resets WHERE expires_at < ?`, ms(before))
	return err
}
