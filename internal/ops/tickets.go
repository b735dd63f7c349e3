package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/mail"
	"github.com/berthhq/berth/internal/store"
)

// Support tickets (issue 31; api/openapi.yaml, Support): the customer's side (TicketService,
// the API's) and the staff's (the Staff* methods, for berthd admin and the staff
// console). Every change writes its ticket.* event in its own transaction, on the
// clock of the ticket's account (a sandbox account's test clock).
//
// Each is mailed in the transaction of its change (ops/mail.go): a new ticket and a
// customer's message to --support-email, a staff reply to the account holder, all in
// the ticket's thread; an internal note never.

// TicketsPageSize is how many tickets a page of GET /tickets holds.
const TicketsPageSize = 50

// attachmentPruneBatch bounds the unattached attachments one statement removes.
const attachmentPruneBatch = 100

// TicketCreate is the body of POST /tickets.
type TicketCreate struct {
	Subject       *string
	Body          *string
	Priority      *string
	ServerID      *int64
	AttachmentIDs []int64
}

// TicketReply is the body of POST /tickets/{id}/messages.
type TicketReply struct {
	Body          *string
	AttachmentIDs []int64
}

// StaffAuthor is who writes a staff message: a staff account (AccountID; its name is
// shown unless Name is given, never its email), or staff acting from the command
// line (Name only); "Support" when there is no name to show.
type StaffAuthor struct {
	AccountID *int64
	// Email names the staff account instead of AccountID (berthd admin ticket reply
	// --staff-email).
	Email string
	Name  string
}

// TicketService is the principal's support tickets and attachments.
type TicketService interface {
	// Tickets is a page (from 1) of the account's tickets, latest activity first,
	// in status when it is not "", and how many there are.
	Tickets(ctx context.Context, p hosting.Principal, status hosting.TicketStatus, page int) ([]hosting.Ticket, int, error)
	// Ticket finds one with its messages, oldest first, notes left out.
	Ticket(ctx context.Context, p hosting.Principal, id int64) (hosting.Ticket, error)
	CreateTicket(ctx context.Context, p hosting.Principal, c TicketCreate) (hosting.Ticket, error)
	AddTicketMessage(ctx context.Context, p hosting.Principal, id int64, r TicketReply) (hosting.TicketMessage, error)
	CloseTicket(ctx context.Context, p hosting.Principal, id int64) (hosting.Ticket, error)
	// UploadAttachment stores a file for a later message (hosting.CheckAttachment's
	// rules; filename sanitised).
	UploadAttachment(ctx context.Context, p hosting.Principal, filename, contentType string, data []byte) (hosting.Attachment, error)
	// Attachment finds a file the principal may read, with its data.
	Attachment(ctx context.Context, p hosting.Principal, id int64) (hosting.Attachment, error)
}

var _ TicketService = (*Service)(nil)

func (s *Service) Tickets(ctx context.Context, p hosting.Principal, status hosting.TicketStatus, page int) ([]hosting.Ticket, int, error) {
	list, total, err := s.store.Tickets(ctx, store.TicketFilter{AccountID: p.Account.ID, Status: status}, TicketsPageSize,
		pageOffset(page, TicketsPageSize))
	return list, total, internal("tickets", err)
}

func (s *Service) Ticket(ctx context.Context, p hosting.Principal, id int64) (hosting.Ticket, error) {
	return s.readTicket(ctx, s.store, p.Account.ID, id, false)
}

// readTicket reads a ticket of account (0: any) with its messages, notes when notes.
func (s *Service) readTicket(ctx context.Context, r store.Reader, account, id int64, notes bool) (hosting.Ticket, error) {
	t, err := r.Ticket(ctx, account, id)
	if err != nil {
		return t, notFoundOr("ticket", err)
	}
	t.Messages, err = r.TicketMessages(ctx, t.ID, notes)
	return t, internal("ticket messages", err)
}

// authorName is what a customer's message is signed with: the account's name, or
// its email when it has none.
func authorName(a hosting.Account) string {
	if a.Name != "" {
		return a.Name
	}
	return a.Email
}

// checkAttachments adds to v what is wrong with attachment ids a message names:
// the list's rules (hosting.CheckAttachmentIDs), then each must be uploader's and
// named by no message yet.
func checkAttachments(ctx context.Context, tx store.Tx, v *hosting.Validation, uploader int64, ids []int64) error {
	hosting.CheckAttachmentIDs(v, ids)
	if len(ids) == 0 || v.Has("attachment_ids") {
		return nil
	}
	own, err := tx.AttachmentsOf(ctx, uploader, ids)
	if err != nil {
		return internal("attachments", err)
	}
	for _, id := range ids {
		i := slices.IndexFunc(own, func(a hosting.Attachment) bool { return a.ID == id })
		switch {
		case i < 0:
			v.Add("attachment_ids", "validation.attachment_unknown", "id", id)
		case own[i].MessageID != nil:
			v.Add("attachment_ids", "validation.attachment_used", "id", id)
		}
	}
	return nil
}

// addMessage writes m naming attachment ids of uploader: a conflict (one taken by
// another message meanwhile) is the 422 it would have been a moment later.
func addMessage(ctx context.Context, tx store.Tx, m *hosting.TicketMessage, uploader int64, ids []int64) error {
	id, err := tx.AddTicketMessage(ctx, *m, uploader, ids)
	if errors.Is(err, store.ErrConflict) {
		return hosting.Invalid("attachment_ids", "validation.attachment_used", "id", ids[0])
	}
	if err != nil {
		return internal("add ticket message", err)
	}
	m.ID = id
	return nil
}

// CreateTicket opens a ticket with its first message (ticket.created).
func (s *Service) CreateTicket(ctx context.Context, p hosting.Principal, c TicketCreate) (hosting.Ticket, error) {
	var v hosting.Validation
	hosting.CheckTicketSubject(&v, c.Subject)
	hosting.CheckTicketBody(&v, c.Body)
	priority := hosting.ParseTicketPriority(&v, c.Priority)
	var out hosting.Ticket
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if c.ServerID != nil {
			if _, err := tx.Server(ctx, p.Account.ID, hosting.ServerRef{ID: *c.ServerID}); errors.Is(err, store.ErrNotFound) {
				v.Add("server_id", "validation.server_unknown")
			} else if err != nil {
				return internal("server", err)
			}
		}
		if err := checkAttachments(ctx, tx, &v, p.Account.ID, c.AttachmentIDs); err != nil {
			return err
		}
		if err := s.checkQuota(ctx, tx, p.Account.ID, hosting.QuotaTickets, &v); err != nil {
			return err
		}
		if err := v.Err("subject", "body", "priority", "server_id", "attachment_ids"); err != nil {
			return err
		}
		acct, err := tx.Account(ctx, p.Account.ID)
		if err != nil {
			return internal("account", err)
		}
		now := s.NowFor(p.Account.ID)
		t := hosting.Ticket{AccountID: p.Account.ID, Subject: *c.Subject, Status: hosting.TicketOpen, Priority: priority,
			ServerID: c.ServerID, CreatedAt: now, UpdatedAt: now}
		if t.ID, err = tx.CreateTicket(ctx, t); err != nil {
			return internal("create ticket", err)
		}
		m := hosting.TicketMessage{TicketID: t.ID, Kind: hosting.MessageCustomer, AuthorID: &acct.ID, AuthorName: authorName(acct),
			Body: *c.Body, CreatedAt: now}
		if err := addMessage(ctx, tx, &m, p.Account.ID, c.AttachmentIDs); err != nil {
			return err
		}
		if _, err := s.mailSupport(ctx, tx, t.AccountID, mail.TicketToSupport{TicketID: t.ID, Subject: t.Subject,
			AccountID: t.AccountID, AccountEmail: acct.Email, Body: m.Body, New: true, URL: s.link(StaffTicketPath(t.ID))},
			s.ticketThread(t.ID, true)); err != nil {
			return err
		}
		if err := s.emitTicket(ctx, tx, hosting.EventTicketCreated, t, &m.ID); err != nil {
			return err
		}
		out, err = s.readTicket(ctx, tx, p.Account.ID, t.ID, false)
		return err
	})
	return out, err
}

// AddTicketMessage adds the customer's message: an open ticket stays open, an
// answered one becomes customer_reply, a closed one is reopened (customer_reply,
// ticket.reopened) when it was closed less than 30 days ago, else a 422 asks for a
// new ticket.
func (s *Service) AddTicketMessage(ctx context.Context, p hosting.Principal, id int64, r TicketReply) (hosting.TicketMessage, error) {
	var v hosting.Validation
	hosting.CheckTicketBody(&v, r.Body)
	var out hosting.TicketMessage
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		t, err := tx.Ticket(ctx, p.Account.ID, id)
		if err != nil {
			return notFoundOr("ticket", err)
		}
		if err := checkAttachments(ctx, tx, &v, p.Account.ID, r.AttachmentIDs); err != nil {
			return err
		}
		if err := v.Err("body", "attachment_ids"); err != nil {
			return err
		}
		now := s.NowFor(p.Account.ID)
		status, reopened, err := hosting.AfterCustomerMessage(t, now)
		if err != nil {
			return err
		}
		if reopened {
			if err := s.quotaLeft(ctx, tx, p.Account.ID, hosting.QuotaTickets); err != nil {
				return err
			}
		}
		acct, err := tx.Account(ctx, p.Account.ID)
		if err != nil {
			return internal("account", err)
		}
		out = hosting.TicketMessage{TicketID: t.ID, Kind: hosting.MessageCustomer, AuthorID: &acct.ID, AuthorName: authorName(acct),
			Body: *r.Body, CreatedAt: now}
		if err := addMessage(ctx, tx, &out, p.Account.ID, r.AttachmentIDs); err != nil {
			return err
		}
		t.Status, t.UpdatedAt = status, now
		if reopened {
			t.ClosedAt = nil
		}
		if err := tx.UpdateTicket(ctx, t); err != nil {
			return internal("update ticket", err)
		}
		if _, err := s.mailSupport(ctx, tx, t.AccountID, mail.TicketToSupport{TicketID: t.ID, Subject: t.Subject,
			AccountID: t.AccountID, AccountEmail: acct.Email, Body: out.Body, URL: s.link(StaffTicketPath(t.ID))},
			s.ticketThread(t.ID, false)); err != nil {
			return err
		}
		if reopened {
			if err := s.emitTicket(ctx, tx, hosting.EventTicketReopened, t, nil); err != nil {
				return err
			}
		}
		if err := s.emitTicket(ctx, tx, hosting.EventTicketCustomerReply, t, &out.ID); err != nil {
			return err
		}
		msgs, err := tx.TicketMessages(ctx, t.ID, false)
		if err != nil {
			return internal("ticket messages", err)
		}
		out = msgs[len(msgs)-1]
		return nil
	})
	return out, err
}

// CloseTicket closes the principal's ticket (ticket.closed); a closed one is
// answered as it is.
func (s *Service) CloseTicket(ctx context.Context, p hosting.Principal, id int64) (hosting.Ticket, error) {
	return s.closeTicket(ctx, p.Account.ID, id)
}

// closeTicket closes a ticket of account (0: any).
func (s *Service) closeTicket(ctx context.Context, account, id int64) (hosting.Ticket, error) {
	var out hosting.Ticket
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		t, err := tx.Ticket(ctx, account, id)
		if err != nil {
			return notFoundOr("ticket", err)
		}
		if t.Status != hosting.TicketClosed {
			now := s.NowFor(t.AccountID)
			t.Status, t.UpdatedAt, t.ClosedAt = hosting.TicketClosed, now, &now
			if err := tx.UpdateTicket(ctx, t); err != nil {
				return internal("update ticket", err)
			}
			if err := s.emitTicket(ctx, tx, hosting.EventTicketClosed, t, nil); err != nil {
				return err
			}
		}
		out, err = s.readTicket(ctx, tx, account, t.ID, account == 0)
		return err
	})
	return out, err
}

// UploadAttachment stores an upload, within the account's attachment quota (422 on
// body; staff accounts have none).
func (s *Service) UploadAttachment(ctx context.Context, p hosting.Principal, filename, contentType string, data []byte) (hosting.Attachment, error) {
	ct, err := hosting.CheckAttachment(contentType, data)
	if err != nil {
		return hosting.Attachment{}, err
	}
	return s.storeAttachment(ctx, p.Account.ID, hosting.SanitizeFilename(filename), ct, data)
}

func (s *Service) storeAttachment(ctx context.Context, account int64, filename, ct string, data []byte) (hosting.Attachment, error) {
	a := hosting.Attachment{AccountID: account, Filename: filename, ContentType: ct, Size: int64(len(data)), Data: data,
		CreatedAt: s.NowFor(account)}
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		acct, err := tx.LockAccount(ctx, account)
		if err != nil {
			return notFoundOr("account", err)
		}
		used, err := tx.AttachmentBytes(ctx, account)
		if err != nil {
			return internal("attachment bytes", err)
		}
		// Staff upload what they attach to every account's tickets: their files do
		// not count against a quota of their own account's, which a busy staff
		// member would run into.
		if quota := int64(acct.Quotas.AttachmentMB) << 20; !acct.Staff && used+a.Size > quota {
			return hosting.Invalid(hosting.QuotaAttachmentMB.Field, hosting.QuotaAttachmentMB.Message, "quota", acct.Quotas.AttachmentMB)
		}
		a.ID, err = tx.CreateAttachment(ctx, a)
		return internal("create attachment", err)
	})
	return a, err
}

func (s *Service) Attachment(ctx context.Context, p hosting.Principal, id int64) (hosting.Attachment, error) {
	a, err := s.store.Attachment(ctx, p.Account.ID, id)
	return a, notFoundOr("attachment", err)
}

// PruneAttachments removes the attachments no message named within
// hosting.UnattachedAttachmentTTL of their upload (the periodic housekeeping), in
// batches, and says how many.
func (s *Service) PruneAttachments(ctx context.Context) (int, error) {
	before := s.Now().Add(-hosting.UnattachedAttachmentTTL)
	total := 0
	for {
		var n int
		err := s.store.InTx(ctx, func(tx store.Tx) error {
			var err error
			n, err = tx.DeleteUnattachedAttachments(ctx, before, attachmentPruneBatch)
			return err
		})
		total += n
		if err != nil || n < attachmentPruneBatch {
			return total, err
		}
	}
}

func (s *Service) emitTicket(ctx context.Context, tx store.Tx, typ hosting.EventType, t hosting.Ticket, message *int64) error {
	return s.emit(ctx, tx, t.AccountID, typ, hosting.EventResource{Type: "ticket", ID: t.ID},
		hosting.TicketEventData{ID: t.ID, Subject: t.Subject, Status: t.Status, Priority: t.Priority, MessageID: message})
}

// ---- the staff's side (berthd admin ticket, the staff console) ----

// StaffTickets is a page (from 1) of every account's tickets that f admits, latest
// activity first, and how many match.
func (s *Service) StaffTickets(ctx context.Context, f store.TicketFilter, page int) ([]hosting.Ticket, int, error) {
	list, total, err := s.store.Tickets(ctx, f, TicketsPageSize, pageOffset(page, TicketsPageSize))
	return list, total, internal("tickets", err)
}

// StaffTicket reads any ticket with every message, notes included.
func (s *Service) StaffTicket(ctx context.Context, id int64) (hosting.Ticket, error) {
	return s.readTicket(ctx, s.store, 0, id, true)
}

// staffAuthor resolves who writes a staff message: the name given, else the staff
// account's name (not its email), else "Support".
func staffAuthor(ctx context.Context, tx store.Tx, a StaffAuthor) (id *int64, name string, err error) {
	name = a.Name
	if a.AccountID != nil || a.Email != "" {
		var acct hosting.Account
		var err error
		if a.AccountID != nil {
			acct, err = tx.Account(ctx, *a.AccountID)
		} else {
			acct, err = tx.AccountByEmail(ctx, a.Email)
		}
		if errors.Is(err, store.ErrNotFound) || (err == nil && !acct.Staff) {
			return nil, "", hosting.Invalid("author", "validation.not_staff")
		} else if err != nil {
			return nil, "", internal("account", err)
		}
		id = &acct.ID
		if name == "" && acct.Name != acct.Email {
			// An account made without a name is named by its email: a staff
			// member's address is not the customer's to see.
			name = acct.Name
		}
	}
	if name == "" {
		name = "Support"
	}
	return id, name, nil
}

// StaffReply answers a ticket as staff: it becomes answered (a closed one is
// reopened), ticket.replied tells the customer. Attachments are the staff account's
// uploads (none without an account).
func (s *Service) StaffReply(ctx context.Context, ticketID int64, author StaffAuthor, body string, attachmentIDs []int64) (hosting.TicketMessage, error) {
	return s.staffMessage(ctx, ticketID, author, hosting.MessageStaff, body, attachmentIDs)
}

// StaffNote adds an internal note: customers never see it (not in their API, no
// event, never mailed); the ticket's status and activity time stay as they are.
func (s *Service) StaffNote(ctx context.Context, ticketID int64, author StaffAuthor, body string) (hosting.TicketMessage, error) {
	return s.staffMessage(ctx, ticketID, author, hosting.MessageNote, body, nil)
}

func (s *Service) staffMessage(ctx context.Context, ticketID int64, author StaffAuthor, kind hosting.MessageKind, body string,
	attachmentIDs []int64) (hosting.TicketMessage, error) {
	var v hosting.Validation
	hosting.CheckTicketBody(&v, &body)
	var out hosting.TicketMessage
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		t, err := tx.Ticket(ctx, 0, ticketID)
		if err != nil {
			return notFoundOr("ticket", err)
		}
		authorID, name, err := staffAuthor(ctx, tx, author)
		if err != nil {
			return err
		}
		var uploader int64
		if authorID != nil {
			uploader = *authorID
		}
		if err := checkAttachments(ctx, tx, &v, uploader, attachmentIDs); err != nil {
			return err
		}
		if err := v.Err("body", "attachment_ids"); err != nil {
			return err
		}
		now := s.NowFor(t.AccountID)
		out = hosting.TicketMessage{TicketID: t.ID, Kind: kind, AuthorID: authorID, AuthorName: name, Body: body, CreatedAt: now}
		if err := addMessage(ctx, tx, &out, uploader, attachmentIDs); err != nil {
			return err
		}
		if kind == hosting.MessageNote {
			// No event, no mail, no change the customer could see.
			return nil
		}
		status, reopened := hosting.AfterStaffReply(t)
		t.Status, t.UpdatedAt, t.ClosedAt = status, now, nil
		if err := tx.UpdateTicket(ctx, t); err != nil {
			return internal("update ticket", err)
		}
		// The reply to the account holder, threaded on the ticket (a note never
		// comes here).
		if _, err := s.mailAccount(ctx, tx, t.AccountID, mail.TicketReply{TicketID: t.ID, Subject: t.Subject, Author: name,
			Body: out.Body, URL: s.link(TicketPath(t.ID))}, s.ticketThread(t.ID, false)); err != nil {
			return err
		}
		if reopened {
			if err := s.emitTicket(ctx, tx, hosting.EventTicketReopened, t, nil); err != nil {
				return err
			}
		}
		return s.emitTicket(ctx, tx, hosting.EventTicketReplied, t, &out.ID)
	})
	return out, err
}

// Assign gives a ticket to a staff account (nil: to nobody). Customers do not learn
// of it.
func (s *Service) Assign(ctx context.Context, ticketID int64, staffID *int64) (hosting.Ticket, error) {
	var out hosting.Ticket
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		t, err := tx.Ticket(ctx, 0, ticketID)
		if err != nil {
			return notFoundOr("ticket", err)
		}
		if staffID != nil {
			if _, _, err := staffAuthor(ctx, tx, StaffAuthor{AccountID: staffID}); err != nil {
				return hosting.Invalid("assignee_id", "validation.not_staff")
			}
		}
		t.AssigneeID = staffID
		if err := tx.UpdateTicket(ctx, t); err != nil {
			return internal("update ticket", err)
		}
		out, err = s.readTicket(ctx, tx, 0, t.ID, true)
		return err
	})
	return out, err
}

// StaffClose closes any ticket (ticket.closed).
func (s *Service) StaffClose(ctx context.Context, ticketID int64) (hosting.Ticket, error) {
	return s.closeTicket(ctx, 0, ticketID)
}

// SetStaff makes the account of email staff, or no longer (berthd admin staff
// add|remove).
func (s *Service) SetStaff(ctx context.Context, email string, staff bool) (hosting.Account, error) {
	var a hosting.Account
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if a, err = tx.AccountByEmail(ctx, email); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no account with email %q", email)
		} else if err != nil {
			return err
		}
		a.Staff = staff
		return tx.SetStaff(ctx, a.ID, staff)
	})
	return a, err
}

// ListStaff lists the staff accounts.
func (s *Service) ListStaff(ctx context.Context) ([]hosting.Account, error) {
	return s.store.Staff(ctx)
}

// TicketPath is a ticket's page in the customer console, StaffTicketPath in the staff
// console: the links of its mails.
func TicketPath(id int64) string { return fmt.Sprintf("/support/%d", id) }

// StaffTicketPath: see TicketPath.
func StaffTicketPath(id int64) string { return fmt.Sprintf("/staff/tickets/%d", id) }
