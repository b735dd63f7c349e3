package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
)

// The operator's side of support tickets (api/openapi.yaml, Support): staff accounts, and
// the tickets of every account for scripts (the staff console comes later).

// staffOut is a staff account, or one no longer.
type staffOut struct {
	Email string `json:"email"`
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Staff bool   `json:"staff"`
}

func (o staffOut) auditAccount() int64 { return o.ID }

type staffListOut struct {
	Staff []staffOut `json:"staff"`
}

func staffOf(a hosting.Account) staffOut {
	return staffOut{Email: a.Email, ID: a.ID, Name: a.Name, Staff: a.Staff}
}

func staffCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "staff", Short: "Make console users staff, who answer every account's support tickets"}
	set := func(use, short string, on bool) *cobra.Command {
		var email string
		c := &cobra.Command{
			Use:   use + " --email EMAIL",
			Short: short,
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
					a, err := s.SetStaff(ctx, email, on)
					return staffOf(a), err
				})
			},
		}
		c.Flags().StringVar(&email, "email", "", "the account's email (required)")
		_ = c.MarkFlagRequired("email")
		return c
	}
	list := &cobra.Command{
		Use:         "list",
		Short:       "List the staff accounts",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{"readonly": "true"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				list, err := s.ListStaff(ctx)
				return staffListOut{Staff: each(list, staffOf)}, err
			})
		},
	}
	cmd.AddCommand(set("add", "Make an account staff", true), set("remove", "Make a staff account a customer again", false), list)
	return cmd
}

// ticketOut is a ticket; Messages (notes included) in ticket show and after a
// change.
type ticketOut struct {
	AccountID  int64              `json:"account_id"`
	AssigneeID *int64             `json:"assignee_id"`
	ClosedAt   *time.Time         `json:"closed_at"`
	CreatedAt  time.Time          `json:"created_at"`
	ID         int64              `json:"id"`
	Messages   []ticketMessageOut `json:"messages,omitempty"`
	Priority   string             `json:"priority"`
	ServerID   *int64             `json:"server_id"`
	Status     string             `json:"status"`
	Subject    string             `json:"subject"`
	UpdatedAt  time.Time          `json:"updated_at"`
}

func (o ticketOut) auditAccount() int64 { return o.AccountID }

type ticketMessageOut struct {
	Attachments []attachmentOut `json:"attachments"`
	// Author is customer, staff or note (internal).
	Author     string    `json:"author"`
	AuthorID   *int64    `json:"author_id"`
	AuthorName string    `json:"author_name"`
	Body       string    `json:"body"`
	CreatedAt  time.Time `json:"created_at"`
	ID         int64     `json:"id"`
	TicketID   int64     `json:"ticket_id"`
}

type attachmentOut struct {
	ContentType string `json:"content_type"`
	Filename    string `json:"filename"`
	ID          int64  `json:"id"`
	Size        int64  `json:"size"`
}

type ticketListOut struct {
	Page    int         `json:"page"`
	Tickets []ticketOut `json:"tickets"`
	Total   int         `json:"total"`
}

func ticketOf(t hosting.Ticket) ticketOut {
	out := ticketOut{AccountID: t.AccountID, AssigneeID: t.AssigneeID, ClosedAt: t.ClosedAt, CreatedAt: t.CreatedAt, ID: t.ID,
		Priority: string(t.Priority), ServerID: t.ServerID, Status: string(t.Status), Subject: t.Subject, UpdatedAt: t.UpdatedAt}
	if t.Messages != nil {
		out.Messages = each(t.Messages, messageOf)
	}
	return out
}

func messageOf(m hosting.TicketMessage) ticketMessageOut {
	return ticketMessageOut{Author: string(m.Kind), AuthorID: m.AuthorID, AuthorName: m.AuthorName, Body: m.Body, CreatedAt: m.CreatedAt,
		ID: m.ID, TicketID: m.TicketID, Attachments: each(m.Attachments, func(a hosting.Attachment) attachmentOut {
			return attachmentOut{ContentType: a.ContentType, Filename: a.Filename, ID: a.ID, Size: a.Size}
		})}
}

// staffAuthorFlags adds --as NAME and --staff-email EMAIL to cmd: who a staff message
// is signed by.
func staffAuthorFlags(cmd *cobra.Command) *ops.StaffAuthor {
	var a ops.StaffAuthor
	cmd.Flags().StringVar(&a.Name, "as", "", `the name the customer sees ("Support" when none)`)
	cmd.Flags().StringVar(&a.Email, "staff-email", "", "the staff account writing it (its name is shown unless --as)")
	return &a
}

func ticketCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "ticket", Short: "Every account's support tickets: list, show, reply, note, assign, close"}
	var f store.TicketFilter
	var status, priority string
	var page int
	list := &cobra.Command{
		Use:         "list",
		Short:       "List tickets, latest activity first, 50 a page",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{"readonly": "true"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withService(cmd, func(ctx context.Context, s *ops.Service) (any, error) {
				st, ok := hosting.ParseTicketStatus(status)
				if !ok {
					return nil, fail("--status %q: want open, answered, customer_reply or closed", status)
				}
				if priority != "" && !hosting.ValidTicketPriority(priority) {
					return nil, fail("--priority %q: want low, normal, high or urgent", priority)
				}
				if page < 1 {
					return nil, fail("--page %d: want 1 or more", page)
				}
				f.Status, f.Priority = st, hosting.TicketPriority(priority)
				ts, total, err := s.StaffTickets(ctx, f, page)
				return ticketListOut{Page: page, Tickets: each(ts, ticketOf), Total: total}, err
			})
		},
	}
	list.Flags().StringVar(&status, "status", "", "only tickets in this status (open, answered, customer_reply, closed)")
	list.Flags().StringVar(&priority, "priority", "", "only tickets of this priority (low, normal, high, urgent)")
	list.Flags().Int64Var(&f.AccountID, "account", 0, "only this account's tickets")
	list.Flags().Int64Var(&f.Assignee, "assignee", 0, "only the tickets assigned to this staff account")
	list.Flags().BoolVar(&f.Unassigned, "unassigned", false, "only the tickets assigned to nobody")
	list.Flags().IntVar(&page, "page", 1, "the page, from 1")

	show := idCommand[*ops.Service, ticketOut]{use: "show", short: "Show a ticket with every message, internal notes included",
		run: func(ctx context.Context, s *ops.Service, id int64) (ticketOut, error) {
			t, err := s.StaffTicket(ctx, id)
			return ticketOf(t), err
		}}.command(g.withService)
	show.Annotations = map[string]string{"readonly": "true"}

	message := func(use, short string, note bool) *cobra.Command {
		var body string
		var author *ops.StaffAuthor
		c := idCommand[*ops.Service, ticketMessageOut]{use: use, short: short,
			run: func(ctx context.Context, s *ops.Service, id int64) (ticketMessageOut, error) {
				var m hosting.TicketMessage
				var err error
				if note {
					m, err = s.StaffNote(ctx, id, *author, body)
				} else {
					m, err = s.StaffReply(ctx, id, *author, body, nil)
				}
				return messageOf(m), err
			}}.command(g.withService)
		c.Flags().StringVar(&body, "body", "", "the message (required)")
		_ = c.MarkFlagRequired("body")
		author = staffAuthorFlags(c)
		return c
	}

	var assignee int64
	var none bool
	assign := idCommand[*ops.Service, ticketOut]{use: "assign", short: "Assign a ticket to a staff account (--staff ID) or to nobody (--none)",
		run: func(ctx context.Context, s *ops.Service, id int64) (ticketOut, error) {
			if (assignee == 0) == !none {
				return ticketOut{}, fail("give one of --staff ID and --none")
			}
			var to *int64
			if !none {
				to = &assignee
			}
			t, err := s.Assign(ctx, id, to)
			return ticketOf(t), err
		}}.command(g.withService)
	assign.Flags().Int64Var(&assignee, "staff", 0, "the staff account's id")
	assign.Flags().BoolVar(&none, "none", false, "assign it to nobody")

	closeCmd := idCommand[*ops.Service, ticketOut]{use: "close", short: "Close a ticket",
		run: func(ctx context.Context, s *ops.Service, id int64) (ticketOut, error) {
			t, err := s.StaffClose(ctx, id)
			return ticketOf(t), err
		}}.command(g.withService)

	cmd.AddCommand(list, show, message("reply", "Reply to a ticket as staff: the customer sees it (answered)", false),
		message("note", "Add an internal note: never shown to the customer, never mailed", true), assign, closeCmd)
	return cmd
}
