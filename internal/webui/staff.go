package webui

import (
	"net/http"
	"slices"
	"strings"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/httpapi"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
)

// The staff console (docs/operating.md, Support tickets) under /staff/: a queue of every
// account's tickets with filters, and a ticket's page with its whole thread (internal
// notes marked as such), the account's servers and billing read only beside it, and
// forms to reply (signed with the staff account's name), add a note, assign and
// close. Only a signed-in account with the staff flag (berthd admin staff add) sees
// it; any other gets 404 for every /staff/ path. A staff member's own customer
// pages stay their own account's: nothing here acts on another account's servers or
// settings, only on tickets (ops.StaffService). Every staff POST, and every read of a
// ticket or a file of another account, goes to the audit log with actor "staff" and
// the staff account (Console.audit).

func (c *Console) staffRoutes() []route {
	return []route{
		{"GET /staff", c.staff(func(r *req) error { return r.redirect("/staff/tickets") })},
		{"GET /staff/{$}", c.staff(func(r *req) error { return r.redirect("/staff/tickets") })},
		{"GET /staff/tickets", c.staff(c.staffQueue)},
		{"GET /staff/tickets/{id}", c.staff(c.audited(c.staffTicketPage))},
		{"POST /staff/tickets/{id}/reply", c.staff(c.staffReply)},
		{"POST /staff/tickets/{id}/note", c.staff(c.staffNote)},
		{"POST /staff/tickets/{id}/assign", c.staff(c.staffAssign)},
		{"GET /staff/tickets/{id}/close", c.staff(c.staffClosePage)},
		{"POST /staff/tickets/{id}/close", c.staff(c.staffClose)},
		{"GET /staff/attachments/{id}", c.staff(c.audited(c.staffDownload))},
	}
}

// staff admits only a staff account: any other is answered 404, as for a page that
// does not exist.
func (c *Console) staff(h handler) handler {
	return func(r *req) error {
		if !r.p.Account.Staff {
			return hosting.ErrNotFound()
		}
		return h(r)
	}
}

// audited writes a staff read to the audit log (as every POST is).
func (c *Console) audited(h handler) handler {
	return func(r *req) error {
		r.auditRead = true
		return h(r)
	}
}

// ---- the queue ----

type queueRow struct {
	hosting.Ticket
	Email    string
	Assignee string
}

type staffQueue struct {
	Rows []queueRow
	// The filters as given.
	Status, Priority, Assignee, Email string
	Statuses                          []hosting.TicketStatus
	Priorities                        []hosting.TicketPriority
	Staff                             []hosting.Account
	// NoAccount: the email names no account.
	NoAccount bool
	Pager     // the filters kept in its links
	Total     int
}

func staffName(a hosting.Account) string {
	if a.Name != "" && a.Name != a.Email {
		return a.Name + " (" + a.Email + ")"
	}
	return a.Email
}

func (c *Console) staffQueue(r *req) error {
	q := r.URL.Query()
	sq := staffQueue{Status: q.Get("status"), Priority: q.Get("priority"), Assignee: q.Get("assignee"),
		Email: strings.TrimSpace(q.Get("email")), Statuses: hosting.TicketStatuses, Priorities: hosting.TicketPriorities}
	var f store.TicketFilter
	var ok bool
	if f.Status, ok = hosting.ParseTicketStatus(sq.Status); !ok {
		return hosting.Invalid("status", "validation.ticket_status")
	}
	if sq.Priority != "" && !hosting.ValidTicketPriority(sq.Priority) {
		return hosting.Invalid("priority", "validation.ticket_priority")
	}
	f.Priority = hosting.TicketPriority(sq.Priority)
	switch sq.Assignee {
	case "":
	case "mine":
		f.Assignee = r.p.Account.ID
	case "unassigned":
		f.Unassigned = true
	default:
		id, err := hosting.ParseID(sq.Assignee)
		if err != nil {
			return hosting.Invalid("assignee", "validation.not_staff")
		}
		f.Assignee = id
	}
	page, err := pageParam(r)
	if err != nil {
		return err
	}
	staff, err := c.svc.Staff.ListStaff(r.ctx())
	if err != nil {
		return err
	}
	sq.Staff, sq.Page, sq.Last = staff, page, 1
	if sq.Email != "" {
		a, err := c.svc.Staff.StaffAccountByEmail(r.ctx(), sq.Email)
		if hosting.IsCode(err, hosting.CodeNotFound) {
			sq.NoAccount = true
			c.render(r, http.StatusOK, "staffqueue", "console.staff.queue", "staff", sq)
			return nil
		} else if err != nil {
			return err
		}
		f.AccountID = a.ID
	}
	ts, total, err := c.svc.Staff.StaffTickets(r.ctx(), f, page)
	if err != nil {
		return err
	}
	ids := make([]int64, len(ts))
	for i, t := range ts {
		ids[i] = t.AccountID
	}
	accts, err := c.svc.Staff.StaffAccounts(r.ctx(), ids)
	if err != nil {
		return err
	}
	for _, t := range ts {
		row := queueRow{Ticket: t, Email: accts[t.AccountID].Email}
		if t.AssigneeID != nil {
			row.Assignee = "#" + itoa(*t.AssigneeID)
			if i := slices.IndexFunc(staff, func(a hosting.Account) bool { return a.ID == *t.AssigneeID }); i >= 0 {
				row.Assignee = staffName(staff[i])
			}
		}
		sq.Rows = append(sq.Rows, row)
	}
	sq.Total, sq.Pager = total, newPager(r, "/staff/tickets", page, lastPage(total, ops.TicketsPageSize), "")
	c.render(r, http.StatusOK, "staffqueue", "console.staff.queue", "staff", sq)
	return nil
}

// ---- a ticket ----

type staffServerRow struct {
	hosting.Server
	Plan string
}

type staffTicketView struct {
	Ticket   hosting.Ticket
	Account  hosting.Account
	Servers  []staffServerRow
	Billing  staffBilling
	Staff    []hosting.Account
	Assignee string
	// The ticket's server, when it names one of the account's.
	Server *staffServerRow
	Reply  messageForm
	Note   messageForm
}

// staffBilling is an account's billing figures in its own currency.
type staffBilling struct {
	Credit, HourlyBurn, MonthlyBurn string
	DaysLeft                        *int64
}

func (c *Console) staffTicket(r *req) (*staffTicketView, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return nil, err
	}
	t, err := c.svc.Staff.StaffTicket(r.ctx(), id)
	if err != nil {
		return nil, err
	}
	r.auditTargets = append(r.auditTargets, "account="+itoa(t.AccountID))
	acct, err := c.svc.Staff.StaffAccount(r.ctx(), t.AccountID)
	if err != nil {
		return nil, err
	}
	staff, err := c.svc.Staff.ListStaff(r.ctx())
	if err != nil {
		return nil, err
	}
	cat, err := c.catalog(r.ctx())
	if err != nil {
		return nil, err
	}
	v := &staffTicketView{Ticket: t, Account: acct.Account, Staff: staff}
	for _, s := range acct.Servers {
		row := staffServerRow{Server: s, Plan: cat.planName(s.PlanID)}
		v.Servers = append(v.Servers, row)
		if t.ServerID != nil && *t.ServerID == s.ID {
			v.Server = &row
		}
	}
	cur := acct.Billing.Currency
	if cur == "" {
		cur = "EUR"
	}
	money := func(m hosting.Money) string { return formatMoney(m, r.lang) + " " + cur }
	v.Billing = staffBilling{Credit: money(acct.Billing.Credit), HourlyBurn: money(acct.Billing.HourlyBurn),
		MonthlyBurn: money(acct.Billing.MonthlyBurn), DaysLeft: acct.Billing.DaysLeft}
	if t.AssigneeID != nil {
		v.Assignee = "#" + itoa(*t.AssigneeID)
		if i := slices.IndexFunc(staff, func(a hosting.Account) bool { return a.ID == *t.AssigneeID }); i >= 0 {
			v.Assignee = staffName(staff[i])
		}
	}
	return v, nil
}

func (c *Console) staffTicketPage(r *req) error {
	v, err := c.staffTicket(r)
	if err != nil {
		return err
	}
	c.render(r, http.StatusOK, "staffticket", "console.staff.ticket", "staff", v)
	return nil
}

// author is the staff account writing: its name is shown to the customer (never
// its email: ops.StaffReply).
func author(r *req) ops.StaffAuthor {
	id := r.p.Account.ID
	return ops.StaffAuthor{AccountID: &id}
}

// staffReply answers the ticket with the staff account's files; on a mistake the
// page comes back (422) with the reply and the files uploaded.
func (c *Console) staffReply(r *req) error {
	v, err := c.staffTicket(r)
	if err != nil {
		return err
	}
	f := &v.Reply
	return c.postMessage(r, f, func() error {
		_, err := c.svc.Staff.StaffReply(r.ctx(), v.Ticket.ID, author(r), f.Body, f.ids())
		return err
	}, staffTicketPath(v.Ticket.ID), "console.staff.replied", func() {
		c.render(r, http.StatusUnprocessableEntity, "staffticket", "console.staff.ticket", "staff", v)
	})
}

func (c *Console) staffNote(r *req) error {
	v, err := c.staffTicket(r)
	if err != nil {
		return err
	}
	f := &v.Note
	f.Body = r.FormValue("body")
	_, err = c.svc.Staff.StaffNote(r.ctx(), v.Ticket.ID, author(r), f.Body)
	if err == nil {
		return r.done(nil, staffTicketPath(v.Ticket.ID), "console.staff.noted")
	}
	if err := f.failed(r, err); err != nil {
		return err
	}
	c.render(r, http.StatusUnprocessableEntity, "staffticket", "console.staff.ticket", "staff", v)
	return nil
}

// staffAssign gives the ticket to the staff account chosen, or to nobody ("").
func (c *Console) staffAssign(r *req) error {
	v, err := c.staffTicket(r)
	if err != nil {
		return err
	}
	var to *int64
	if raw := strings.TrimSpace(r.FormValue("assignee_id")); raw != "" {
		id, err := hosting.ParseID(raw)
		if err != nil {
			return r.done(hosting.Invalid("assignee_id", "validation.not_staff"), staffTicketPath(v.Ticket.ID), "")
		}
		to = &id
	}
	_, err = c.svc.Staff.Assign(r.ctx(), v.Ticket.ID, to)
	return r.done(err, staffTicketPath(v.Ticket.ID), "console.staff.assigned")
}

func (c *Console) staffClosePage(r *req) error {
	v, err := c.staffTicket(r)
	if err != nil {
		return err
	}
	back := staffTicketPath(v.Ticket.ID)
	if v.Ticket.Status == hosting.TicketClosed {
		return r.redirect(back)
	}
	return c.confirm(r, "console.support.close_title", "staff", confirmation{
		Question: r.T("console.staff.close_question", "subject", v.Ticket.Subject, "email", v.Account.Email),
		Action:   back + "/close", Button: r.T("console.support.close"), Cancel: back})
}

func (c *Console) staffClose(r *req) error {
	v, err := c.staffTicket(r)
	if err != nil {
		return err
	}
	_, err = c.svc.Staff.StaffClose(r.ctx(), v.Ticket.ID)
	return r.done(err, staffTicketPath(v.Ticket.ID), "console.support.closed")
}

// staffDownload serves any ticket's file by the API's rules (httpapi.WriteAttachment).
func (c *Console) staffDownload(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	a, err := c.svc.Staff.StaffAttachment(r.ctx(), id)
	if err != nil {
		return err
	}
	r.auditTargets = append(r.auditTargets, "account="+itoa(a.AccountID))
	httpapi.WriteAttachment(r.w, a)
	return nil
}

// Thread is a ticket's whole thread as staff see it, notes included.
func (v *view) Thread(t hosting.Ticket) []hosting.TicketMessage { return t.Messages }
