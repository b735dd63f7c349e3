package sqlstore

import (
	"context"
	"time"

	"github.com/berthhq/berth/internal/hosting"
)

// The console's reads and writes (issue 7): an account's tokens, sessions, the
// language setting and the spend per day.

func (q queries) AccountTokens(ctx context.Context, accountID int64) ([]hosting.Token, error) {
	return q.tokens(ctx, `t.account_id = ? AND t.revoked_at IS NULL`, accountID)
}

func (q queries) SetAccountLanguage(ctx context.Context, id int64, language string) error {
	return q.execOne(ctx, `UPDATE accounts SET language = ? WHERE id = ?`, language, id)
}

func (q queries) SetAccountPassword(ctx context.Context, id int64, hash string) error {
	return q.execOne(ctx, `UPDATE accounts SET password_hash = ? WHERE id = ?`, hash, id)
}

func (q queries) DeleteSessionsOf(ctx context.Context, accountID int64, keep []byte) error {
	if keep == nil {
		keep = []byte{}
	}
	_, err := q.q.ExecContext(ctx, `DELETE FROM sessions WHERE account_id = ? AND hash <> ?`, accountID, keep)
	return err
}

func (q queries) CreateSession(ctx context.Context, s hosting.Session) (int64, error) {
	return q.insert(ctx, `INSERT INTO sessions (account_id, hash, created_at, expires_at) VALUES (?, ?, ?, ?)`,
		s.AccountID, s.Hash, ms(s.CreatedAt), ms(s.ExpiresAt))
}

func (q queries) SessionByHash(ctx context.Context, hash []byte) (hosting.Session, hosting.Account, error) {
	var s hosting.Session
	var created, expires int64
	a, err := scanAccount(q.q.QueryRowContext(ctx, `SELECT `+accountCols+`, s.id, s.account_id, s.hash, s.created_at, s.expires_at
		FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE s.hash = ?`, hash).Scan,
		&s.ID, &s.AccountID, &s.Hash, &created, &expires)
	if err != nil {
		return s, a, err
	}
	s.CreatedAt, s.ExpiresAt = fromMS(created), fromMS(expires)
	return s, a, nil
}

func (q queries) DeleteSession(ctx context.Context, hash []byte) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM sessions WHERE hash = ?`, hash)
	return err
}

func (q queries) DeleteExpiredSessions(ctx context.Context, at time.Time) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, ms(at))
	return err
}

const msPerDay = 24 * 60 * 60 * 1000

func (q queries) DailySpend(ctx context.Context, accountID int64, from time.Time) ([]hosting.DaySpend, error) {
	// account_spend (kept by a trigger on transactions) holds whole UTC days: from is
	// one's start.
	rows, err := q.q.QueryContext(ctx, `SELECT day, amount FROM account_spend
		WHERE account_id = ? AND day >= ? ORDER BY day`, accountID, ms(from)/msPerDay)
	return orEmpty(collect(rows, err, func(sc func(...any) error) (hosting.DaySpend, error) {
		var day, sum int64
		if err := sc(&day, &sum); err != nil {
			return hosting.DaySpend{}, err
		}
		return hosting.DaySpend{Day: fromMS(day * msPerDay), Spent: hosting.Money(-sum)}, nil
	}))
}
