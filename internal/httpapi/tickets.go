package httpapi

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

// ---- support tickets and attachments (api/openapi.yaml, Support) ----

// MaxTicketBody caps the JSON of a ticket or a message: 20,000 characters of up to
// 4 bytes each, or 12 as JSON escapes of a surrogate pair, fit (and the idempotency
// fingerprint covers that much, MaxRecipeBody).
const MaxTicketBody = MaxRecipeBody

// listTickets answers GET /tickets?status=&page=: a page of the account's tickets,
// latest activity first, without their messages.
func (s *Server) listTickets(r *request) (int, any, error) {
	var v hosting.Validation
	var status hosting.TicketStatus
	if raw, ok := queryValue(r.Request, "status", &v); ok {
		st, known := hosting.ParseTicketStatus(raw)
		if !known || raw == "" {
			v.Add("status", "validation.ticket_status")
		}
		status = st
	}
	page := pageFromQuery(r.Request, &v)
	if err := v.Err("status", "page"); err != nil {
		return 0, nil, err
	}
	list, total, err := s.svc.Tickets.Tickets(r.ctx, r.p, status, page)
	if err != nil {
		return 0, nil, err
	}
	out := api.Page[api.Ticket]{Data: make([]api.Ticket, len(list))}
	for i, t := range list {
		out.Data[i] = toTicket(t, false)
	}
	query := url.Values{}
	if status != "" {
		query.Set("status", string(status))
	}
	out.Links, out.Meta = s.pageOf(r.Request, query, page, ops.TicketsPageSize, len(list), total)
	return http.StatusOK, out, nil
}

func (s *Server) getTicket(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	t, err := s.svc.Tickets.Ticket(r.ctx, r.p, id)
	return http.StatusOK, one(toTicket(t, true)), err
}

func (s *Server) createTicket(r *request) (int, any, error) {
	var b api.TicketCreate
	if err := decodeMax(r.Request, &b, MaxTicketBody); err != nil {
		return 0, nil, err
	}
	c := ops.TicketCreate{Subject: b.Subject, Body: b.Body, Priority: b.Priority, AttachmentIDs: b.AttachmentIDs}
	if b.ServerID.Set && !b.ServerID.Null {
		c.ServerID = &b.ServerID.Value
	}
	t, err := s.svc.Tickets.CreateTicket(r.ctx, r.p, c)
	return http.StatusCreated, one(toTicket(t, true)), err
}

func (s *Server) addTicketMessage(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	var b api.TicketMessageCreate
	if err := decodeMax(r.Request, &b, MaxTicketBody); err != nil {
		return 0, nil, err
	}
	m, err := s.svc.Tickets.AddTicketMessage(r.ctx, r.p, id, ops.TicketReply{Body: b.Body, AttachmentIDs: b.AttachmentIDs})
	return http.StatusCreated, one(toTicketMessage(m)), err
}

func (s *Server) closeTicket(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	// 404 before a body's 422 (docs/api.md, Errors); the body is empty or {}.
	if _, err := s.svc.Tickets.Ticket(r.ctx, r.p, id); err != nil {
		return 0, nil, err
	}
	var b struct{}
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	t, err := s.svc.Tickets.CloseTicket(r.ctx, r.p, id)
	return http.StatusOK, one(toTicket(t, true)), err
}

// uploadAttachment answers POST /attachments: the body is the file, its
// Content-Type the declared type, Content-Disposition's filename its name.
func (s *Server) uploadAttachment(r *request) (int, any, error) {
	if len(r.Header.Values("Content-Disposition")) > 1 {
		return 0, nil, hosting.Invalid("Content-Disposition", "validation.query_repeated")
	}
	if err := checkEncoding(r.Request); err != nil {
		return 0, nil, err
	}
	data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, hosting.MaxAttachmentSize))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return 0, nil, hosting.Invalid("body", "validation.attachment_too_large", "max", "5 MiB")
		}
		return 0, nil, hosting.Invalid("body", "validation.invalid_json")
	}
	name := ""
	if _, params, err := mime.ParseMediaType(r.Header.Get("Content-Disposition")); err == nil {
		name = params["filename"] // filename* (RFC 2231) decoded into it when given
	}
	a, err := s.svc.Tickets.UploadAttachment(r.ctx, r.p, name, r.Header.Get("Content-Type"), data)
	return http.StatusCreated, one(toAttachment(a)), err
}

// download is a file served as an attachment (GET /attachments/{id}).
type download struct {
	contentType, filename string
	data                  []byte
}

func (s *Server) getAttachment(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	a, err := s.svc.Tickets.Attachment(r.ctx, r.p, id)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, download{contentType: a.ContentType, filename: a.Filename, data: a.Data}, nil
}

// WriteAttachment serves an attachment by the API's rules (writeDownload): the web
// console's pages serve their downloads through it.
func WriteAttachment(w http.ResponseWriter, a hosting.Attachment) {
	writeDownload(w, http.StatusOK, download{contentType: a.ContentType, filename: a.Filename, data: a.Data})
}

// writeDownload serves d so that no browser runs or renders it in the API's origin:
// always a download (Content-Disposition: attachment), never sniffed, sandboxed.
func writeDownload(w http.ResponseWriter, status int, d download) {
	h := w.Header()
	h.Set("Content-Type", d.contentType)
	h.Set("Content-Disposition", contentDisposition(d.filename))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'; frame-ancestors 'none'")
	h.Set("Content-Length", strconv.Itoa(len(d.data)))
	w.WriteHeader(status)
	_, _ = w.Write(d.data)
}

// contentDisposition is `attachment` with the filename twice: an ASCII fallback
// (filename=, quoted; other characters as _) and the name itself in UTF-8
// (filename*=, RFC 8187).
func contentDisposition(name string) string {
	var ascii strings.Builder
	for _, r := range name {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			r = '_'
		}
		ascii.WriteRune(r)
	}
	return `attachment; filename="` + ascii.String() + `"; filename*=UTF-8''` + url.PathEscape(name)
}

func toTicket(t hosting.Ticket, messages bool) api.Ticket {
	out := api.Ticket{ID: t.ID, Subject: t.Subject, Status: string(t.Status), Priority: string(t.Priority), ServerID: t.ServerID,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, ClosedAt: t.ClosedAt}
	if messages {
		out.Messages = make([]api.TicketMessage, 0, len(t.Messages))
		for _, m := range t.Messages {
			if m.Kind == hosting.MessageNote {
				continue // never the customer's to see, whatever a caller read
			}
			out.Messages = append(out.Messages, toTicketMessage(m))
		}
	}
	return out
}

func toTicketMessage(m hosting.TicketMessage) api.TicketMessage {
	out := api.TicketMessage{ID: m.ID, Author: string(m.Kind), AuthorName: m.AuthorName, Body: m.Body,
		Attachments: make([]api.Attachment, len(m.Attachments)), CreatedAt: m.CreatedAt}
	for i, a := range m.Attachments {
		out.Attachments[i] = toAttachment(a)
	}
	return out
}

// toAttachment describes a file; a text file's type is named without its charset.
func toAttachment(a hosting.Attachment) api.Attachment {
	ct, _, _ := strings.Cut(a.ContentType, ";")
	return api.Attachment{ID: a.ID, Filename: a.Filename, ContentType: ct, Size: a.Size}
}
