package webui

import (
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/httpapi"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
)

// The Support pages (docs/api.md, Support tickets): the account's tickets,
// a form to open one, and each ticket's thread with a reply form and its close
// (after the confirmation page, confirm.go). Every rule is the core's
// (internal/ops/tickets.go, internal/hosting/ticket.go): a file chosen on a form is
// uploaded as POST /attachments uploads it (its declared type checked against its
// content), then named by the message. Files that were uploaded when another field
// was wrong are kept on the form (hidden fields), so they need not be chosen again.
// Internal notes are never read here: the customer's ticket comes without them.

// ticketForms are the patterns whose forms carry files: up to
// hosting.MaxMessageAttachments of hosting.MaxAttachmentSize each, and the text.
var ticketForms = []string{"POST /support", "POST /support/{id}/messages", "POST /staff/tickets/{id}/reply"}

// ticketFormLimit caps a form with files.
const ticketFormLimit = hosting.MaxMessageAttachments*hosting.MaxAttachmentSize + maxForm

func init() {
	for _, p := range ticketForms {
		bigForms[p] = ticketFormLimit
	}
}

func (c *Console) supportRoutes() []route {
	return []route{
		{"GET /support", c.supportPage},
		{"GET /support/new", c.newTicketPage},
		{"POST /support", c.createTicket},
		{"GET /support/{id}", c.ticketPage},
		{"POST /support/{id}/messages", c.replyTicket},
		{"GET /support/{id}/close", c.closeTicketPage},
		{"POST /support/{id}/close", c.closeTicket},
		{"GET /attachments/{id}", c.downloadAttachment},
	}
}

// messageForm is what a message form holds: its text, the files already uploaded
// for it (kept after an error) and what went wrong.
type messageForm struct {
	Body     string
	Attached []hosting.Attachment
	Errors   map[string][]string
	Messages []string
}

// carried are the files a form kept from an earlier try: attachment_ids with their
// attachment_names (what the upload answered; the core checks the ids).
func carried(r *req) []hosting.Attachment {
	ids, names := r.Form["attachment_ids"], r.Form["attachment_names"]
	var out []hosting.Attachment
	for i, raw := range ids {
		id, err := hosting.ParseID(strings.TrimSpace(raw))
		if err != nil {
			continue
		}
		a := hosting.Attachment{ID: id, Filename: "#" + raw}
		if i < len(names) {
			a.Filename = names[i]
		}
		out = append(out, a)
	}
	return out
}

// uploadFiles uploads the files of the form's "attachments" field for the
// principal and adds them to f.Attached; a file refused is named in f.Errors
// ("attachments") with why, and the others are uploaded still.
func (c *Console) uploadFiles(r *req, f *messageForm) error {
	var files []*multipartFile
	if r.MultipartForm != nil {
		for _, fh := range r.MultipartForm.File["attachments"] {
			if fh.Filename == "" && fh.Size == 0 {
				continue // the field left empty
			}
			files = append(files, &multipartFile{name: fh.Filename, ct: fh.Header.Get("Content-Type"), fh: fh})
		}
	}
	if len(f.Attached)+len(files) > hosting.MaxMessageAttachments {
		f.addError(r, "attachments", r.c.text(r.lang, hosting.M("validation.attachment_too_many", "max", hosting.MaxMessageAttachments)))
		return nil
	}
	for _, file := range files {
		data, err := file.read()
		if err != nil {
			return err
		}
		a, err := c.svc.Tickets.UploadAttachment(r.ctx(), r.p, file.name, file.ct, data)
		if hosting.ErrorCode(err) == hosting.CodeValidationFailed {
			for _, m := range c.messages(r.lang, err) {
				f.addError(r, "attachments", file.name+": "+m)
			}
			continue
		}
		if err != nil {
			return err
		}
		f.Attached = append(f.Attached, a)
	}
	return nil
}

func (f *messageForm) addError(r *req, field, msg string) {
	if f.Errors == nil {
		f.Errors = map[string][]string{}
	}
	f.Errors[field] = append(f.Errors[field], msg)
	f.Messages = append(f.Messages, msg)
}

// failed takes a validation error of the core into the form: attachment_ids is
// shown at the files. Another error is returned.
func (f *messageForm) failed(r *req, err error) error {
	if hosting.ErrorCode(err) != hosting.CodeValidationFailed {
		return err
	}
	for field, ms := range r.c.fieldErrors(r.lang, err) {
		if field == "attachment_ids" {
			field = "attachments"
		}
		for _, m := range ms {
			f.addError(r, field, m)
		}
	}
	return nil
}

func (f *messageForm) ids() []int64 {
	out := make([]int64, len(f.Attached))
	for i, a := range f.Attached {
		out[i] = a.ID
	}
	return out
}

// multipartFile is a file of a form, read at most one byte past the largest
// attachment (the core refuses it then, by its rule).
type multipartFile struct {
	name, ct string
	fh       *multipart.FileHeader
}

func (m *multipartFile) read() ([]byte, error) {
	f, err := m.fh.Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, hosting.MaxAttachmentSize+1))
}

// ---- the list ----

type ticketList struct {
	Tickets  []hosting.Ticket
	Status   string
	Statuses []hosting.TicketStatus
	Pager    // the filter kept in its links
	Total    int
}

// pageParam reads ?page= (from 1): 422 naming it otherwise.
func pageParam(r *req) (int, error) {
	raw := r.URL.Query().Get("page")
	if raw == "" {
		return 1, nil
	}
	page, err := strconv.Atoi(raw)
	if err != nil || page < 1 {
		return 0, hosting.Invalid("page", "validation.page")
	}
	return page, nil
}

func lastPage(total, size int) int { return max(1, (total+size-1)/size) }

// Pager is a list's place among its pages, as the template "pager" draws it: the
// page shown, the last, and the links to the pages before and after it, each with
// the request's other query parameters kept ("" where there is none).
type Pager struct {
	Page, Last int
	Prev, Next string
}

// newPager is the Pager of page of path's list; fragment ("#rrsets", or "") ends its
// links.
func newPager(r *req, path string, page, last int, fragment string) Pager {
	p := Pager{Page: page, Last: last}
	q := r.URL.Query()
	link := func(n int) string {
		q.Set("page", strconv.Itoa(n))
		return path + "?" + q.Encode() + fragment
	}
	if page > 1 {
		p.Prev = link(page - 1)
	}
	if page < last {
		p.Next = link(page + 1)
	}
	return p
}

// pagerView is what the template "pager" draws: P in V's language, its links
// worded by the messages Before and After (newer and older, previous and next).
type pagerView struct {
	V             *view
	P             Pager
	Before, After string
}

func (v *view) Pager(p Pager, before, after string) pagerView {
	return pagerView{V: v, P: p, Before: before, After: after}
}

func (c *Console) supportPage(r *req) error {
	status, ok := hosting.ParseTicketStatus(r.URL.Query().Get("status"))
	if !ok {
		return hosting.Invalid("status", "validation.ticket_status")
	}
	page, err := pageParam(r)
	if err != nil {
		return err
	}
	ts, total, err := c.svc.Tickets.Tickets(r.ctx(), r.p, status, page)
	if err != nil {
		return err
	}
	l := ticketList{Tickets: ts, Status: string(status), Statuses: hosting.TicketStatuses, Total: total,
		Pager: newPager(r, "/support", page, lastPage(total, ops.TicketsPageSize), "")}
	c.render(r, http.StatusOK, "support", "console.support.title", "support", l)
	return nil
}

// ---- a new ticket ----

type newTicketForm struct {
	messageForm
	Subject    string
	Priority   string
	ServerID   int64
	Servers    []hosting.Server
	Priorities []hosting.TicketPriority
}

func (c *Console) newTicketForm(r *req) (*newTicketForm, error) {
	srvs, err := c.svc.Servers.Servers(r.ctx(), r.p, store.ServerFilter{})
	if err != nil {
		return nil, err
	}
	return &newTicketForm{Priority: string(hosting.PriorityNormal), Servers: srvs, Priorities: hosting.TicketPriorities}, nil
}

func (c *Console) newTicketPage(r *req) error {
	f, err := c.newTicketForm(r)
	if err != nil {
		return err
	}
	if id := r.URL.Query().Get("server_id"); id != "" {
		f.ServerID, _ = hosting.ParseID(id)
	}
	c.render(r, http.StatusOK, "ticketnew", "console.support.new", "support", f)
	return nil
}

// createTicket uploads the form's files, then opens the ticket naming them; on a
// mistake the form comes back (422) with what was entered and the files uploaded.
func (c *Console) createTicket(r *req) error {
	f, err := c.newTicketForm(r)
	if err != nil {
		return err
	}
	f.Subject, f.Body, f.Priority = r.FormValue("subject"), r.FormValue("body"), r.FormValue("priority")
	f.Attached = carried(r)
	var serverID *int64
	if raw := strings.TrimSpace(r.FormValue("server_id")); raw != "" {
		id, err := hosting.ParseID(raw)
		if err != nil {
			f.addError(r, "server_id", r.T("validation.server_unknown"))
		} else {
			serverID, f.ServerID = &id, id
		}
	}
	if err := c.uploadFiles(r, &f.messageForm); err != nil {
		return err
	}
	if len(f.Messages) == 0 {
		var priority *string // none given: the core's default
		if f.Priority != "" {
			priority = &f.Priority
		}
		t, err := c.svc.Tickets.CreateTicket(r.ctx(), r.p, ops.TicketCreate{Subject: &f.Subject, Body: &f.Body,
			Priority: priority, ServerID: serverID, AttachmentIDs: f.ids()})
		if err == nil {
			return r.done(nil, ticketPath(t.ID), "console.support.created")
		}
		if err := f.failed(r, err); err != nil {
			return err
		}
	}
	c.render(r, http.StatusUnprocessableEntity, "ticketnew", "console.support.new", "support", f)
	return nil
}

// ---- one ticket ----

type ticketView struct {
	Ticket hosting.Ticket
	Server *hosting.Server
	Reply  messageForm
}

func (c *Console) ticketView(r *req) (*ticketView, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return nil, err
	}
	t, err := c.svc.Tickets.Ticket(r.ctx(), r.p, id)
	if err != nil {
		return nil, err
	}
	v := &ticketView{Ticket: t}
	if t.ServerID != nil {
		if srv, err := c.svc.Servers.Server(r.ctx(), r.p, hosting.ServerRef{ID: *t.ServerID}); err == nil {
			v.Server = &srv
		}
	}
	return v, nil
}

func (c *Console) ticketPage(r *req) error {
	v, err := c.ticketView(r)
	if err != nil {
		return err
	}
	c.render(r, http.StatusOK, "ticket", "console.support.ticket", "support", v)
	return nil
}

// replyTicket adds the customer's message with its files: a closed ticket is
// reopened by it within 30 days of its closing, and otherwise the core's 422 says
// to open a new one.
func (c *Console) replyTicket(r *req) error {
	v, err := c.ticketView(r)
	if err != nil {
		return err
	}
	f := &v.Reply
	return c.postMessage(r, f, func() error {
		_, err := c.svc.Tickets.AddTicketMessage(r.ctx(), r.p, v.Ticket.ID, ops.TicketReply{Body: &f.Body, AttachmentIDs: f.ids()})
		return err
	}, ticketPath(v.Ticket.ID), "console.support.sent", func() {
		c.render(r, http.StatusUnprocessableEntity, "ticket", "console.support.ticket", "support", v)
	})
}

// postMessage reads a message form (its body, the files carried from an earlier
// try and those uploaded now) and sends it with send: done with flash when it is
// taken; otherwise (a file refused, or the core's 422) redraw draws the page again
// with the form's messages and the files uploaded, so they need not be chosen again.
func (c *Console) postMessage(r *req, f *messageForm, send func() error, done, flash string, redraw func()) error {
	f.Body, f.Attached = r.FormValue("body"), carried(r)
	if err := c.uploadFiles(r, f); err != nil {
		return err
	}
	if len(f.Messages) == 0 {
		err := send()
		if err == nil {
			return r.done(nil, done, flash)
		}
		if err := f.failed(r, err); err != nil {
			return err
		}
	}
	redraw()
	return nil
}

func (c *Console) closeTicketPage(r *req) error {
	v, err := c.ticketView(r)
	if err != nil {
		return err
	}
	back := ticketPath(v.Ticket.ID)
	if v.Ticket.Status == hosting.TicketClosed {
		return r.redirect(back)
	}
	return c.confirm(r, "console.support.close_title", "support", confirmation{
		Question: r.T("console.support.close_question", "subject", v.Ticket.Subject),
		Action:   back + "/close", Button: r.T("console.support.close"), Cancel: back})
}

func (c *Console) closeTicket(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	_, err = c.svc.Tickets.CloseTicket(r.ctx(), r.p, id)
	return r.done(err, ticketPath(id), "console.support.closed")
}

// downloadAttachment serves a file of the account's tickets as the API serves it:
// always a download, never rendered (httpapi.WriteAttachment). Another account's
// file, or a note's, is not found.
func (c *Console) downloadAttachment(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	a, err := c.svc.Tickets.Attachment(r.ctx(), r.p, id)
	if err != nil {
		return err
	}
	httpapi.WriteAttachment(r.w, a)
	return nil
}

// ---- for the templates ----

// TicketStatus is a ticket's status in words.
func (v *view) TicketStatus(s hosting.TicketStatus) string {
	return v.T("console.support.status." + string(s))
}

// Priority is a ticket's priority in words.
func (v *view) Priority(p hosting.TicketPriority) string {
	return v.T("console.support.priority." + string(p))
}

// Size shows a file's size.
func (v *view) Size(n int64) string {
	switch {
	case n < 1<<10:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1<<20:
		return strconv.FormatInt((n+1<<9)>>10, 10) + " KiB"
	}
	s := strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64)
	if v.Lang() != "en" {
		s = strings.Replace(s, ".", ",", 1)
	}
	return s + " MiB"
}

// Customer reports whether a message is the customer's (not staff's or a note).
func (v *view) Customer(m hosting.TicketMessage) bool { return m.Kind == hosting.MessageCustomer }

// Note reports whether a message is an internal note (the staff pages only).
func (v *view) Note(m hosting.TicketMessage) bool { return m.Kind == hosting.MessageNote }

// customerMessages leaves notes out, whatever a caller read: the customer's pages
// draw only these.
func customerMessages(ms []hosting.TicketMessage) []hosting.TicketMessage {
	return slices.DeleteFunc(slices.Clone(ms), func(m hosting.TicketMessage) bool { return m.Kind == hosting.MessageNote })
}

// CustomerThread is a ticket's thread as its customer sees it.
func (v *view) CustomerThread(t hosting.Ticket) []hosting.TicketMessage {
	return customerMessages(t.Messages)
}

// ticketPath is a ticket's page here, staffTicketPath its page in the staff console
// (the paths mails link to).
// ticketPath and staffTicketPath are the ticket pages the core's mails link to.
var ticketPath, staffTicketPath = ops.TicketPath, ops.StaffTicketPath

// threadData is what the "thread" template draws.
type threadData struct {
	V        *view
	Messages []hosting.TicketMessage
	Files    string
}

// ThreadOf hands the "thread" template its messages and where their files are.
func (v *view) ThreadOf(ms []hosting.TicketMessage, files string) threadData {
	return threadData{V: v, Messages: ms, Files: files}
}

// filesData is what the "filesfield" template draws.
type filesData struct {
	V  *view
	ID string
	F  messageForm
}

// FilesOf hands the "filesfield" template a form's files.
func (v *view) FilesOf(id string, f messageForm) filesData { return filesData{V: v, ID: id, F: f} }

// Form is the form's text and files, for the "filesfield" template.
func (f *newTicketForm) Form() messageForm { return f.messageForm }
