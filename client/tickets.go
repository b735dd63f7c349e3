package client

import (
	"context"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/berthhq/berth/api"
)

// Support tickets: the account's questions to the operator's staff and their
// answers, with files attached (docs/api.md, Support). Reading them needs read;
// opening, writing to and closing one, and uploading a file, the scope tickets
// (ErrMissingScope otherwise). Another account's ticket or file is ErrNotFound.

// Ticket statuses (api.Ticket's Status, TicketListOptions' Status), priorities
// (api.TicketCreate's Priority) and message authors (api.TicketMessage's Author).
const (
	TicketOpen          = "open"
	TicketAnswered      = "answered"
	TicketCustomerReply = "customer_reply"
	TicketClosed        = "closed"

	PriorityLow    = "low"
	PriorityNormal = "normal"
	PriorityHigh   = "high"
	PriorityUrgent = "urgent"

	AuthorCustomer = "customer"
	AuthorStaff    = "staff"
)

// MaxAttachmentSize is the largest file UploadAttachment sends: 5 MiB.
const MaxAttachmentSize = 5 << 20

// TicketListOptions narrows ListTickets to one status ("": any) and names its page
// (from 1; 0 is the first).
type TicketListOptions struct {
	Status string
	Page   int
}

// ListTickets returns one page (50) of the account's tickets, latest activity first,
// without their messages. ErrValidation (an unknown status: "status").
func (c *Client) ListTickets(ctx context.Context, opts TicketListOptions) (*api.Page[api.Ticket], error) {
	var q url.Values
	if opts.Status != "" {
		q = url.Values{"status": {opts.Status}}
	}
	return page[api.Ticket](c, ctx, "/tickets", pageQuery(q, opts.Page))
}

// AllTickets yields the account's tickets as ListTickets orders them (opts.Page is
// ignored), page after page, each once. A ticket that gains activity while it runs
// moves to the first page: it is yielded where it was met, or not at all when met
// only after moving; an error ends the sequence with (zero, err).
func (c *Client) AllTickets(ctx context.Context, opts TicketListOptions) iter.Seq2[api.Ticket, error] {
	return func(yield func(api.Ticket, error) bool) {
		seen := map[int64]bool{}
		for p := 1; ; p++ {
			opts.Page = p
			pg, err := c.ListTickets(ctx, opts)
			if err != nil {
				yield(api.Ticket{}, err)
				return
			}
			for _, t := range pg.Data {
				if seen[t.ID] {
					continue
				}
				seen[t.ID] = true
				if !yield(t, nil) {
					return
				}
			}
			if len(pg.Data) == 0 || p >= pg.Meta.LastPage {
				return
			}
		}
	}
}

// CreateTicket opens a ticket with its first message (req.Body) and the files of
// req.AttachmentIDs (UploadAttachment first), and returns it with its messages.
// ErrValidation (under the field: subject 1 to 120 characters on one line, body 1
// to 20,000, priority, server_id, attachment_ids; the open-ticket quota).
func (c *Client) CreateTicket(ctx context.Context, req api.TicketCreate) (*api.Ticket, error) {
	return one[api.Ticket](c, ctx, http.MethodPost, "/tickets", nil, req)
}

// GetTicket returns a ticket with its messages, oldest first (staff's internal notes
// never). ErrNotFound.
func (c *Client) GetTicket(ctx context.Context, id int64) (*api.Ticket, error) {
	return one[api.Ticket](c, ctx, http.MethodGet, idPath("/tickets", id), nil, nil)
}

// AddTicketMessage writes to a ticket and returns the message: an answered ticket
// becomes customer_reply, one closed less than 30 days ago is reopened. ErrNotFound,
// ErrValidation (body, attachment_ids as at creation; closed 30 days ago or more:
// "body"; the open-ticket quota when it would reopen).
func (c *Client) AddTicketMessage(ctx context.Context, id int64, req api.TicketMessageCreate) (*api.TicketMessage, error) {
	return one[api.TicketMessage](c, ctx, http.MethodPost, idPath("/tickets", id)+"/messages", nil, req)
}

// CloseTicket closes a ticket (a closed one is returned as it is) and returns it
// with its messages. ErrNotFound.
func (c *Client) CloseTicket(ctx context.Context, id int64) (*api.Ticket, error) {
	return one[api.Ticket](c, ctx, http.MethodPost, idPath("/tickets", id)+"/close", nil, nil)
}

// AttachmentContentType is the type to declare for a file of filename whose content
// starts with head (512 bytes are enough): by its extension the four types Berth
// takes, else what the content looks like (net/http.DetectContentType). Berth checks
// the declared type against the content either way.
func AttachmentContentType(filename string, head []byte) string {
	switch strings.ToLower(path.Ext(filename)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".pdf":
		return "application/pdf"
	case ".txt", ".log", ".text", ".conf", ".cfg", ".md", ".csv":
		return "text/plain; charset=utf-8"
	}
	return http.DetectContentType(head)
}

// UploadAttachment stores the file read from r (at most MaxAttachmentSize bytes:
// what r holds past that is not sent, and Berth refuses the file) as contentType
// (image/png, image/jpeg, application/pdf or text/plain) named filename, for a
// message's AttachmentIDs within a day. Berth keeps the name's base only.
// ErrValidation ("body": empty, too large, the account's quota; "content_type":
// another type, or not what the content is).
func (c *Client) UploadAttachment(ctx context.Context, r io.Reader, contentType, filename string) (*api.Attachment, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxAttachmentSize+1))
	if err != nil {
		return nil, fmt.Errorf("berth: reading the file to upload: %w", err)
	}
	if data == nil {
		data = []byte{} // an empty file is sent as one, for Berth to refuse
	}
	disposition := "attachment"
	if filename != "" {
		disposition = mime.FormatMediaType("attachment", map[string]string{"filename": filename})
		if disposition == "" {
			return nil, fmt.Errorf("berth: filename %q cannot be sent in Content-Disposition", filename)
		}
	}
	return one[api.Attachment](c, ctx, http.MethodPost, "/attachments", nil,
		fileBody{data: data, contentType: contentType, disposition: disposition})
}

// AttachmentFile is a file as GetAttachment downloaded it.
type AttachmentFile struct {
	// Filename is the name Berth gives it. It is not a path to write to as it
	// stands: take its base (filepath.Base) and check it, as with any name a
	// server sends.
	Filename    string
	ContentType string
	Data        []byte
}

// GetAttachment downloads a file: one the account uploaded, or one of a staff reply
// on its tickets. ErrNotFound.
func (c *Client) GetAttachment(ctx context.Context, id int64) (*AttachmentFile, error) {
	var out fileAnswer
	if err := c.do(ctx, http.MethodGet, idPath("/attachments", id), nil, nil, &out); err != nil {
		return nil, err
	}
	f := &AttachmentFile{ContentType: out.header.Get("Content-Type"), Data: out.data}
	if _, params, err := mime.ParseMediaType(out.header.Get("Content-Disposition")); err == nil {
		f.Filename = params["filename"]
	}
	return f, nil
}
