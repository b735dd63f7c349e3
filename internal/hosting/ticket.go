package hosting

import (
	"bytes"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Support tickets (issue 31; api/openapi.yaml, Support): an account's tickets, answered by
// staff; the files attached to their messages.

// TicketStatus is where a ticket stands.
type TicketStatus string

// The statuses of a ticket: open (new, or the customer wrote again before staff
// answered), answered (staff replied last), customer_reply (the customer wrote after
// an answer, or reopened it), closed.
const (
	TicketOpen          TicketStatus = "open"
	TicketAnswered      TicketStatus = "answered"
	TicketCustomerReply TicketStatus = "customer_reply"
	TicketClosed        TicketStatus = "closed"
)

// TicketStatuses are the values of Ticket.Status.
var TicketStatuses = []TicketStatus{TicketOpen, TicketAnswered, TicketCustomerReply, TicketClosed}

// TicketPriority is how urgent the customer says a ticket is.
type TicketPriority string

// The priorities of a ticket.
const (
	PriorityLow    TicketPriority = "low"
	PriorityNormal TicketPriority = "normal"
	PriorityHigh   TicketPriority = "high"
	PriorityUrgent TicketPriority = "urgent"
)

// TicketPriorities are the values of Ticket.Priority.
var TicketPriorities = []TicketPriority{PriorityLow, PriorityNormal, PriorityHigh, PriorityUrgent}

// MessageKind says who wrote a ticket's message and who sees it.
type MessageKind string

// The kinds of a ticket's message: the customer's, a staff reply, and a staff note
// (internal: the customer never sees it, and it is never mailed).
const (
	MessageCustomer MessageKind = "customer"
	MessageStaff    MessageKind = "staff"
	MessageNote     MessageKind = "note"
)

// Ticket is a support ticket of an account. Messages are filled when it is read
// whole (oldest first; without notes for the customer).
type Ticket struct {
	ID         int64
	AccountID  int64
	Subject    string
	Status     TicketStatus
	Priority   TicketPriority
	ServerID   *int64
	AssigneeID *int64
	CreatedAt  time.Time
	UpdatedAt  time.Time
	ClosedAt   *time.Time
	Messages   []TicketMessage
}

// TicketMessage is one message of a ticket. AuthorID is the account that wrote it
// (nil: staff acting from the command line); AuthorName is what the customer sees.
type TicketMessage struct {
	ID          int64
	TicketID    int64
	Kind        MessageKind
	AuthorID    *int64
	AuthorName  string
	Body        string
	CreatedAt   time.Time
	Attachments []Attachment
}

// Attachment is a file uploaded by an account (POST /attachments), then named by one
// message. Data is read only when the file is served.
type Attachment struct {
	ID          int64
	AccountID   int64
	MessageID   *int64
	Filename    string
	ContentType string
	Size        int64
	Data        []byte
	CreatedAt   time.Time
}

// The bounds of a ticket (api/openapi.yaml, Support), in characters.
const (
	MaxTicketSubject = 120
	MaxTicketBody    = 20000
	// MaxMessageAttachments bounds the attachments one message names.
	MaxMessageAttachments = 10
	// MaxAttachmentSize bounds one attachment: 5 MiB.
	MaxAttachmentSize = 5 << 20
	// MaxAttachmentFilename bounds a sanitised filename, in characters.
	MaxAttachmentFilename = 100
	// TicketReopenWindow: a customer message reopens a ticket closed less than this
	// long ago; later, it asks for a new ticket.
	TicketReopenWindow = 30 * 24 * time.Hour
	// UnattachedAttachmentTTL: an attachment no message names after this long may be
	// removed.
	UnattachedAttachmentTTL = 24 * time.Hour
)

// AttachmentTypes are the content types an attachment may have.
var AttachmentTypes = []string{"image/png", "image/jpeg", "application/pdf", "text/plain"}

// CheckTicketSubject adds to v what is wrong with a ticket's subject (required, 1 to
// 120 characters not all whitespace, on one line).
func CheckTicketSubject(v *Validation, subject *string) {
	switch {
	case subject == nil || strings.TrimSpace(*subject) == "":
		v.Add("subject", "validation.required")
	case utf8.RuneCountInString(*subject) > MaxTicketSubject:
		v.Add("subject", "validation.ticket_subject_length", "max", MaxTicketSubject)
	case strings.IndexFunc(*subject, unicode.IsControl) >= 0:
		v.Add("subject", "validation.ticket_subject_control")
	}
}

// CheckTicketBody adds to v what is wrong with a message's body (required, 1 to
// 20,000 characters not all whitespace, no NUL: CheckText).
func CheckTicketBody(v *Validation, body *string) {
	switch {
	case body == nil || strings.TrimSpace(*body) == "":
		v.Add("body", "validation.required")
	case utf8.RuneCountInString(*body) > MaxTicketBody:
		v.Add("body", "validation.ticket_body_length", "max", MaxTicketBody)
	default:
		CheckText(v, "body", *body)
	}
}

// ParseTicketPriority reads a priority: nil is normal; another value adds to v.
func ParseTicketPriority(v *Validation, p *string) TicketPriority {
	if p == nil {
		return PriorityNormal
	}
	if !slices.Contains(TicketPriorities, TicketPriority(*p)) {
		v.Add("priority", "validation.ticket_priority")
		return PriorityNormal
	}
	return TicketPriority(*p)
}

// ValidTicketPriority reports whether p names a priority.
func ValidTicketPriority(p string) bool { return slices.Contains(TicketPriorities, TicketPriority(p)) }

// ParseTicketStatus reads a status filter ("" is none); false when it names none.
func ParseTicketStatus(s string) (TicketStatus, bool) {
	return TicketStatus(s), s == "" || slices.Contains(TicketStatuses, TicketStatus(s))
}

// CheckAttachmentIDs adds to v what is wrong with a message's attachment_ids as a
// list: at most 10, each once. Whether each is the account's and free is the
// store's to tell.
func CheckAttachmentIDs(v *Validation, ids []int64) {
	if len(ids) > MaxMessageAttachments {
		v.Add("attachment_ids", "validation.attachment_too_many", "max", MaxMessageAttachments)
		return
	}
	for i, id := range ids {
		if slices.Contains(ids[:i], id) {
			v.Add("attachment_ids", "validation.attachment_repeated", "id", id)
			return
		}
	}
}

// AfterCustomerMessage is the status a customer's message leaves t in at now: open
// stays open, answered (and customer_reply) becomes customer_reply, closed reopens as
// customer_reply when it was closed less than TicketReopenWindow ago; reopened says
// so. Later, it is a 422 on body: a new ticket is to be opened.
func AfterCustomerMessage(t Ticket, now time.Time) (status TicketStatus, reopened bool, err error) {
	switch t.Status {
	case TicketOpen:
		return TicketOpen, false, nil
	case TicketClosed:
		if t.ClosedAt != nil && now.Sub(*t.ClosedAt) >= TicketReopenWindow {
			return t.Status, false, Invalid("body", "validation.ticket_closed_long_ago", "days", int(TicketReopenWindow/(24*time.Hour)))
		}
		return TicketCustomerReply, true, nil
	default:
		return TicketCustomerReply, false, nil
	}
}

// AfterStaffReply is the status a staff reply leaves t in: answered (a closed ticket
// is reopened by it; reopened says so).
func AfterStaffReply(t Ticket) (status TicketStatus, reopened bool) {
	return TicketAnswered, t.Status == TicketClosed
}

// CheckAttachment checks an upload: its declared Content-Type (one of
// AttachmentTypes; text/plain in UTF-8 or US-ASCII only) must agree with what
// net/http.DetectContentType finds in data, and HTML or SVG is refused whatever it is
// declared as. It returns the content type to store and serve; the errors are under
// content_type (body for an empty or oversized file).
func CheckAttachment(declared string, data []byte) (string, error) {
	if len(data) == 0 {
		return "", Invalid("body", "validation.attachment_empty")
	}
	if len(data) > MaxAttachmentSize {
		return "", Invalid("body", "validation.attachment_too_large", "max", "5 MiB")
	}
	media, params, err := mime.ParseMediaType(declared)
	if err != nil || !slices.Contains(AttachmentTypes, media) {
		return "", Invalid("content_type", "validation.attachment_type", "types", strings.Join(AttachmentTypes, ", "))
	}
	sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(data))
	if sniffed != media || looksLikeMarkup(data) {
		return "", Invalid("content_type", "validation.attachment_mismatch", "type", media)
	}
	if media != "text/plain" {
		return media, nil
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "us-ascii") {
		return "", Invalid("content_type", "validation.attachment_charset")
	}
	if !utf8.Valid(data) {
		return "", Invalid("content_type", "validation.attachment_mismatch", "type", media)
	}
	return "text/plain; charset=utf-8", nil
}

// looksLikeMarkup reports whether data opens as SVG or another XML or HTML document
// (DetectContentType finds most HTML, but an <svg> tag sniffs as text/plain).
func looksLikeMarkup(data []byte) bool {
	head := bytes.ToLower(bytes.TrimLeft(data[:min(len(data), 1024)], "\t\n\x0c\r \xef\xbb\xbf"))
	for _, p := range []string{"<svg", "<?xml", "<!doctype", "<html", "<script", "<!--"} {
		if bytes.HasPrefix(head, []byte(p)) {
			return true
		}
	}
	return false
}

// SanitizeFilename makes a client's filename safe to store and to name in a
// Content-Disposition: its base name (after the last / or \), without control or
// format characters (bidirectional overrides included), quotes or invalid UTF-8,
// trimmed of spaces and dots, at most MaxAttachmentFilename characters (the
// extension kept when it is short); "attachment" when nothing is left.
func SanitizeFilename(name string) string {
	name = strings.ToValidUTF8(name, "")
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '"' || r == '\'' || r == '`' || r == utf8.RuneError {
			return -1
		}
		return r
	}, name)
	name = strings.Trim(name, " .")
	if n := utf8.RuneCountInString(name); n > MaxAttachmentFilename {
		ext := path.Ext(name)
		if utf8.RuneCountInString(ext) > 10 {
			ext = ""
		}
		runes := []rune(strings.TrimSuffix(name, ext))
		name = strings.TrimRight(string(runes[:MaxAttachmentFilename-utf8.RuneCountInString(ext)]), " .") + ext
	}
	if name == "" {
		return "attachment"
	}
	return name
}
