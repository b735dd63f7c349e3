package ops

import (
	"context"
	"errors"
	"strings"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// StaffService is the staff's side of support tickets (tickets.go), as the staff
// console (internal/webui/staff.go) uses it: every account's tickets, and beside a
// ticket its account's servers and billing, read only. It takes no principal: the
// console admits to it only a signed-in account with the staff flag, and writes
// every action to the audit log with that account as the actor.
type StaffService interface {
	StaffTickets(ctx context.Context, f store.TicketFilter, page int) ([]hosting.Ticket, int, error)
	StaffTicket(ctx context.Context, id int64) (hosting.Ticket, error)
	StaffReply(ctx context.Context, ticketID int64, author StaffAuthor, body string, attachmentIDs []int64) (hosting.TicketMessage, error)
	StaffNote(ctx context.Context, ticketID int64, author StaffAuthor, body string) (hosting.TicketMessage, error)
	Assign(ctx context.Context, ticketID int64, staffID *int64) (hosting.Ticket, error)
	StaffClose(ctx context.Context, ticketID int64) (hosting.Ticket, error)
	ListStaff(ctx context.Context) ([]hosting.Account, error)
	// StaffAccount is an account with its live servers and its billing figures
	// (CodeNotFound when there is none).
	StaffAccount(ctx context.Context, id int64) (StaffAccountView, error)
	// StaffAccountByEmail finds an account by its email (CodeNotFound).
	StaffAccountByEmail(ctx context.Context, email string) (hosting.Account, error)
	// StaffAccounts are the accounts of ids that exist, by id (the queue's emails).
	StaffAccounts(ctx context.Context, ids []int64) (map[int64]hosting.Account, error)
	// StaffAttachment finds any attachment with its data (CodeNotFound).
	StaffAttachment(ctx context.Context, id int64) (hosting.Attachment, error)
}

var _ StaffService = (*Service)(nil)

// StaffAccountView is what the staff see of a ticket's account beside it.
type StaffAccountView struct {
	Account hosting.Account
	Servers []hosting.Server
	Billing billing.Summary
}

func (s *Service) StaffAccount(ctx context.Context, id int64) (StaffAccountView, error) {
	acct, err := s.store.Account(ctx, id)
	if err != nil {
		return StaffAccountView{}, notFoundOr("account", err)
	}
	p := hosting.Principal{Account: acct}
	servers, err := s.Servers(ctx, p, store.ServerFilter{})
	if err != nil {
		return StaffAccountView{}, err
	}
	sum, err := s.Billing(ctx, p)
	return StaffAccountView{Account: acct, Servers: servers, Billing: sum}, err
}

func (s *Service) StaffAccountByEmail(ctx context.Context, email string) (hosting.Account, error) {
	a, err := s.store.AccountByEmail(ctx, strings.TrimSpace(email))
	return a, notFoundOr("account", err)
}

func (s *Service) StaffAttachment(ctx context.Context, id int64) (hosting.Attachment, error) {
	a, err := s.store.Attachment(ctx, 0, id)
	return a, notFoundOr("attachment", err)
}

func (s *Service) StaffAccounts(ctx context.Context, ids []int64) (map[int64]hosting.Account, error) {
	out := make(map[int64]hosting.Account, len(ids))
	for _, id := range ids {
		if _, ok := out[id]; ok {
			continue
		}
		a, err := s.store.Account(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, internal("account", err)
		}
		out[id] = a
	}
	return out, nil
}
