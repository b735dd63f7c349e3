package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// ---- support tickets (api/openapi.yaml, Support) ----

const ticketCols = `SELECT id, account_id, subject, status, priority, server_id, assignee_id, created_at, updated_at, closed_at FROM tickets`

func scanTicket(sc func(...any) error) (hosting.Ticket, error) {
	var t hosting.Ticket
	var server, assignee, closed sql.NullInt64
	var created, updated int64
	if err := sc(&t.ID, &t.AccountID, &t.Subject, &t.Status, &t.Priority, &server, &assignee, &created, &updated, &closed); err != nil {
		return t, notFound(err)
	}
	t.ServerID, t.AssigneeID = nullID(server), nullID(assignee)
	t.CreatedAt, t.UpdatedAt, t.ClosedAt = fromMS(created), fromMS(updated), fromNullMS(closed)
	return t, nil
}

func nullID(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

func idArg(id *int64) any {
	if id == nil {
		return nil
	}
	return *id
}

func (q queries) Tickets(ctx context.Context, f store.TicketFilter, limit, offset int) ([]hosting.Ticket, int, error) {
	where, args := " WHERE 1 = 1", []any{}
	if f.AccountID != 0 {
		where, args = where+" AND account_id = ?", append(args, f.AccountID)
	}
	if f.Status != "" {
		where, args = where+" AND status = ?", append(args, string(f.Status))
	}
	if f.Priority != "" {
		where, args = where+" AND priority = ?", append(args, string(f.Priority))
	}
	if f.Unassigned {
		where += " AND assignee_id IS NULL"
	} else if f.Assignee != 0 {
		where, args = where+" AND assignee_id = ?", append(args, f.Assignee)
	}
	var total int
	if err := q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM tickets`+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	if limit <= 0 {
		limit = 1 << 62 // all: PostgreSQL takes no negative LIMIT
	}
	rows, err := q.q.QueryContext(ctx, ticketCols+where+` ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?`, append(args, limit, offset)...)
	out, err := orEmpty(collect(rows, err, scanTicket))
	return out, total, err
}

func (q queries) Ticket(ctx context.Context, accountID, id int64) (hosting.Ticket, error) {
	if accountID == 0 {
		return scanTicket(q.q.QueryRowContext(ctx, ticketCols+` WHERE id = ?`, id).Scan)
	}
	return scanTicket(q.q.QueryRowContext(ctx, ticketCols+` WHERE id = ? AND account_id = ?`, id, accountID).Scan)
}

const attachmentMeta = `a.id, a.account_id, a.message_id, a.filename, a.content_type, a.size, a.created_at`

func scanAttachment(sc func(...any) error, extra ...any) (hosting.Attachment, error) {
	var a hosting.Attachment
	var msg sql.NullInt64
	var created int64
	if err := sc(append([]any{&a.ID, &a.AccountID, &msg, &a.Filename, &a.ContentType, &a.Size, &created}, extra...)...); err != nil {
		return a, notFound(err)
	}
	a.MessageID, a.CreatedAt = nullID(msg), fromMS(created)
	return a, nil
}

func (q queries) TicketMessages(ctx context.Context, ticketID int64, notes bool) ([]hosting.TicketMessage, error) {
	kinds := ` AND m.kind <> 'note'`
	if notes {
		kinds = ""
	}
	rows, err := q.q.QueryContext(ctx, `SELECT m.id, m.ticket_id, m.kind, m.author_id, m.author_name, m.body, m.created_at
		FROM ticket_messages m WHERE m.ticket_id = ?`+kinds+` ORDER BY m.id`, ticketID)
	msgs, err := orEmpty(collect(rows, err, func(sc func(...any) error) (hosting.TicketMessage, error) {
		var m hosting.TicketMessage
		var author sql.NullInt64
		var created int64
		err := sc(&m.ID, &m.TicketID, &m.Kind, &author, &m.AuthorName, &m.Body, &created)
		m.AuthorID, m.CreatedAt, m.Attachments = nullID(author), fromMS(created), []hosting.Attachment{}
		return m, err
	}))
	if err != nil || len(msgs) == 0 {
		return msgs, err
	}
	rows, err = q.q.QueryContext(ctx, `SELECT `+attachmentMeta+` FROM attachments a JOIN ticket_messages m ON m.id = a.message_id
		WHERE m.ticket_id = ?`+kinds+` ORDER BY a.id`, ticketID)
	atts, err := collect(rows, err, func(sc func(...any) error) (hosting.Attachment, error) { return scanAttachment(sc) })
	if err != nil {
		return nil, err
	}
	idx := make(map[int64]int, len(msgs))
	for i, m := range msgs {
		idx[m.ID] = i
	}
	for _, a := range atts {
		if i, ok := idx[*a.MessageID]; ok {
			msgs[i].Attachments = append(msgs[i].Attachments, a)
		}
	}
	return msgs, nil
}

func (q queries) Attachment(ctx context.Context, accountID, id int64) (hosting.Attachment, error) {
	var data []byte
	if accountID == 0 {
		a, err := scanAttachment(q.q.QueryRowContext(ctx, `SELECT `+attachmentMeta+`, a.data FROM attachments a WHERE a.id = ?`, id).Scan, &data)
		a.Data = data
		return a, err
	}
	a, err := scanAttachment(q.q.QueryRowContext(ctx, `SELECT `+attachmentMeta+`, a.data FROM attachments a WHERE a.id = ?
		AND (a.account_id = ? OR EXISTS (SELECT 1 FROM ticket_messages m JOIN tickets t ON t.id = m.ticket_id
			WHERE m.id = a.message_id AND m.kind <> 'note' AND t.account_id = ?))`, id, accountID, accountID).Scan, &data)
	a.Data = data
	return a, err
}

func (q queries) AttachmentsOf(ctx context.Context, accountID int64, ids []int64) ([]hosting.Attachment, error) {
	if len(ids) == 0 {
		return []hosting.Attachment{}, nil
	}
	args := []any{accountID}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := q.q.QueryContext(ctx, `SELECT `+attachmentMeta+` FROM attachments a WHERE a.account_id = ? AND a.id IN (`+
		placeholders(len(ids))+`) ORDER BY a.id`, args...)
	return orEmpty(collect(rows, err, func(sc func(...any) error) (hosting.Attachment, error) { return scanAttachment(sc) }))
}

func (q queries) AttachmentBytes(ctx context.Context, accountID int64) (int64, error) {
	var n int64
	err := q.q.QueryRowContext(ctx, `SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM attachments WHERE account_id = ?`, accountID).Scan(&n)
	return n, err
}

func (q queries) Staff(ctx context.Context) ([]hosting.Account, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+accountCols+` FROM accounts a WHERE a.staff = 1 ORDER BY a.id`)
	return orEmpty(collect(rows, err, func(sc func(...any) error) (hosting.Account, error) { return scanAccount(sc) }))
}

func (q queries) SetStaff(ctx context.Context, accountID int64, staff bool) error {
	return q.execOne(ctx, `UPDATE accounts SET staff = ? WHERE id = ?`, b2i(staff), accountID)
}

func (q queries) CreateTicket(ctx context.Context, t hosting.Ticket) (int64, error) {
	return q.insert(ctx, `INSERT INTO tickets (account_id, subject, status, priority, server_id, assignee_id, created_at, updated_at,
		closed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, t.AccountID, t.Subject, string(t.Status), string(t.Priority), idArg(t.ServerID),
		idArg(t.AssigneeID), ms(t.CreatedAt), ms(t.UpdatedAt), msPtr(t.ClosedAt))
}

func (q queries) UpdateTicket(ctx context.Context, t hosting.Ticket) error {
	return q.execOne(ctx, `UPDATE tickets SET status = ?, priority = ?, assignee_id = ?, updated_at = ?, closed_at = ? WHERE id = ?`,
		string(t.Status), string(t.Priority), idArg(t.AssigneeID), ms(t.UpdatedAt), msPtr(t.ClosedAt), t.ID)
}

func (q queries) AddTicketMessage(ctx context.Context, m hosting.TicketMessage, uploader int64, attachmentIDs []int64) (int64, error) {
	id, err := q.insert(ctx, `INSERT INTO ticket_messages (ticket_id, kind, author_id, author_name, body, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, m.TicketID, string(m.Kind), idArg(m.AuthorID), m.AuthorName, m.Body, ms(m.CreatedAt))
	if err != nil || len(attachmentIDs) == 0 {
		return id, err
	}
	// One statement takes them all, only those still free: of two messages naming
	// one attachment at once, the second finds it taken.
	args := []any{id, uploader}
	for _, a := range attachmentIDs {
		args = append(args, a)
	}
	res, err := q.q.ExecContext(ctx, `UPDATE attachments SET message_id = ? WHERE account_id = ? AND message_id IS NULL AND id IN (`+
		placeholders(len(attachmentIDs))+`)`, args...)
	if err != nil {
		return 0, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return 0, err
	} else if int(n) != len(attachmentIDs) {
		return 0, store.ErrConflict
	}
	return id, nil
}

func (q queries) CreateAttachment(ctx context.Context, a hosting.Attachment) (int64, error) {
	return q.insert(ctx, `INSERT INTO attachments (account_id, filename, content_type, size, data, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		a.AccountID, a.Filename, a.ContentType, int64(len(a.Data)), a.Data, ms(a.CreatedAt))
}

func (q queries) DeleteUnattachedAttachments(ctx context.Context, before time.Time, limit int) (int, error) {
	res, err := q.q.ExecContext(ctx, `DELETE FROM attachments WHERE id IN (SELECT id FROM attachments
		WHERE message_id IS NULL AND created_at < ? ORDER BY created_at LIMIT ?)`, ms(before), limit)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
