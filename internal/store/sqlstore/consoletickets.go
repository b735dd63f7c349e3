package sqlstore

import (
	"context"
	"database/sql"
	"errors"
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
