package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// Server console tickets (issue 17): one-use, short-lived, stored hashed like tokens.

func (q queries) CreateConsoleTicket(ctx context.Context, t hosting.ConsoleTicket) (int64, error) {
	return q.insert(ctx, `INSERT INTO console_tickets (account_id, server_id, hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		t.AccountID, t.ServerID, t.Hash, ms(t.CreatedAt), ms(t.ExpiresAt))
}

const consoleTicketCols = `id, account_id, server_id, hash, created_at, expires_at, used_at`

func scanConsoleTicket(scan func(...any) error) (hosting.ConsoleTicket, error) {
	var t hosting.ConsoleTicket
	var created, expires int64
	var used sql.NullInt64
	err := scan(&t.ID, &t.AccountID, &t.ServerID, &t.Hash, &created, &expires, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return t, store.ErrNotFound
	}
	t.CreatedAt, t.ExpiresAt, t.UsedAt = fromMS(created), fromMS(expires), fromNullMS(used)
	return t, err
}

func (q queries) SpendConsoleTicket(ctx context.Context, hash []byte, at time.Time) (hosting.ConsoleTicket, bool, error) {
	t, err := scanConsoleTicket(q.q.QueryRowContext(ctx, `UPDATE console_tickets SET used_at = ?
		WHERE hash = ? AND used_at IS NULL AND expires_at > ? RETURNING `+consoleTicketCols, ms(at), hash, ms(at)).Scan)
	if err == nil {
		return t, true, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return t, false, err
	}
	t, err = scanConsoleTicket(q.q.QueryRowContext(ctx, `SELECT `+consoleTicketCols+` FROM console_tickets WHERE hash = ?`, hash).Scan)
	return t, false, err
}

func (q queries) DeleteConsoleTickets(ctx context.Context, before time.Time) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM console_tickets WHERE expires_at < ?`, ms(before))
	return err
}

// Open serial console sessions (issue 26), counted against the caps per server and
// per account while their lease runs.

func (q queries) CountConsoleSessions(ctx context.Context, accountID, serverID int64, at time.Time) (onServer, onAccount int, err error) {
	err = q.q.QueryRowContext(ctx, `SELECT COUNT(CASE WHEN server_id = ? THEN 1 END), COUNT(*) FROM console_sessions
		WHERE account_id = ? AND expires_at > ?`, serverID, accountID, ms(at)).Scan(&onServer, &onAccount)
	return onServer, onAccount, err
}

func (q queries) CreateConsoleSession(ctx context.Context, s hosting.ConsoleSession) (int64, error) {
	return q.insert(ctx, `INSERT INTO console_sessions (account_id, server_id, holder, started_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		s.AccountID, s.ServerID, s.Holder, ms(s.StartedAt), ms(s.ExpiresAt))
}

// consoleSessionBatch bounds the ids one statement names.
const consoleSessionBatch = 500

// inIDs runs query, whose last placeholder is "(%s)", on ids in batches, with args
// before them.
func (q queries) inIDs(ctx context.Context, query string, ids []int64, args ...any) error {
	for len(ids) > 0 {
		n := min(len(ids), consoleSessionBatch)
		all := append(append([]any(nil), args...), make([]any, n)...)
		for i, id := range ids[:n] {
			all[len(args)+i] = id
		}
		if _, err := q.q.ExecContext(ctx, strings.Replace(query, "(%s)", "("+strings.Repeat("?, ", n-1)+"?)", 1), all...); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

func (q queries) RenewConsoleSessions(ctx context.Context, ids []int64, until time.Time) error {
	return q.inIDs(ctx, `UPDATE console_sessions SET expires_at = ? WHERE id IN (%s)`, ids, ms(until))
}

func (q queries) DeleteConsoleSessions(ctx context.Context, ids []int64) error {
	return q.inIDs(ctx, `DELETE FROM console_sessions WHERE id IN (%s)`, ids)
}

func (q queries) DeleteConsoleSessionsOf(ctx context.Context, holder string) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM console_sessions WHERE holder = ?`, holder)
	return err
}

func (q queries) DeleteExpiredConsoleSessions(ctx context.Context, before time.Time) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM console_sessions WHERE expires_at < ?`, ms(before))
	return err
}
