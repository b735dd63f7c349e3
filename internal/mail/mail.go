// Package mail sends Berth's mail (docs/operating.md, Mail): a Message, rendered
// once when it is enqueued (render.go), and a Sender seam with two implementations
// that pass one conformance suite (mailtest.Exercise), as the compute and DNS
// drivers do:
//
//   - SMTP (smtp.go) sends through the operator's server, serve --smtp-url
//     (github.com/wneessen/go-mail): smtp:// with STARTTLS when the server offers it,
//     smtps:// with implicit TLS.
//   - Log (log.go) is used when no SMTP server is configured: the mail is written to
//     berthd's log, not sent.
//
// The core enqueues each mail as a durable job in the transaction of the change it
// tells of (internal/ops/mail.go); the job's worker calls a Sender.
package mail

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"regexp"
	"slices"
	"strings"
)

// Message is one mail as its job carries it: everything is decided at enqueue time,
// so that every attempt sends the same bytes under the same Message-ID. It is a job's
// payload, hence its JSON tags.
type Message struct {
	// To and From are addresses ("a@example.com" or "Name <a@example.com>").
	To   string `json:"to"`
	From string `json:"from"`
	// Subject may be any UTF-8: it is encoded (RFC 2047) when it is not ASCII.
	Subject string `json:"subject"`
	// Text is the plain-text body, always present; HTML, when set, is its
	// alternative (multipart/alternative).
	Text string `json:"text"`
	HTML string `json:"html,omitempty"`
	// Language is the body's language (Content-Language): en, de or fr.
	Language string `json:"language,omitempty"`
	// MessageID is the Message-ID without its angle brackets ("id@host").
	MessageID string `json:"message_id"`
	// InReplyTo and References thread the mail (RFC 5322 3.6.4): Message-IDs without
	// angle brackets.
	InReplyTo  string   `json:"in_reply_to,omitempty"`
	References []string `json:"references,omitempty"`
	// Headers are extra headers; their names start with "X-" (X-Berth-Ticket, ...).
	Headers map[string]string `json:"headers,omitempty"`
}

// Sender sends a mail. Send's error is Permanent when no attempt can ever send m
// (an invalid message, a recipient the server refuses with 5xx); any other error is
// worth another attempt later (the server away, a 4xx).
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// CommitSender is a Sender that tells when a mail passes the point past which the
// receiving server may hold it whatever the sender learns afterwards: SMTP's final
// "." of DATA, after which the server's answer can be lost with the connection or
// the process (RFC 5321 4.1.1.4; RFC 1047). SendCommit calls commit once m is
// written and only that end is left to send, and sends the end only if commit
// succeeds; otherwise it drops the transaction, so that the server discards m, and
// answers commit's error. A caller that records m sent in commit (durably) knows,
// after a crash, that a mail it recorded reached the server or never will: only a
// crash between commit's return and the end's write leaves a recorded mail unsent.
// Send is SendCommit with no commit.
type CommitSender interface {
	Sender
	SendCommit(ctx context.Context, m Message, commit func() error) error
}

// permanent marks an error no retry mends.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent reports whether err says that sending the message again is pointless.
func Permanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}

// ErrInvalid is wrapped by Validate's errors (which are Permanent).
var ErrInvalid = errors.New("invalid mail")

func invalid(format string, args ...any) error {
	return permanent{fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))}
}

// msgIDRe is a Message-ID's id-left "@" id-right, dot-atoms only (RFC 5322 3.6.4).
var msgIDRe = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+/=?^_{|}~.-]+@[A-Za-z0-9.-]+$`)

// headerNameRe is an extra header's name.
var headerNameRe = regexp.MustCompile(`^X-[A-Za-z0-9-]+$`)

// Validate checks m before it is queued or sent: both addresses, a Message-ID, no
// line break in a header (header injection), extra headers named X-*. Its errors
// wrap ErrInvalid and are Permanent.
func (m Message) Validate() error {
	if _, err := mail.ParseAddress(m.To); err != nil {
		return invalid("to %q: %v", m.To, err)
	}
	if _, err := mail.ParseAddress(m.From); err != nil {
		return invalid("from %q: %v", m.From, err)
	}
	if strings.TrimSpace(m.Text) == "" {
		return invalid("no text body")
	}
	ids := append([]string{m.MessageID}, m.References...)
	if m.InReplyTo != "" {
		ids = append(ids, m.InReplyTo)
	}
	for _, id := range ids {
		if !msgIDRe.MatchString(id) {
			return invalid("message id %q: want id@host", id)
		}
	}
	values := []string{m.Subject, m.Language}
	for k, v := range m.Headers {
		if !headerNameRe.MatchString(k) {
			return invalid("header %q: only X- headers may be added", k)
		}
		values = append(values, v)
	}
	if slices.ContainsFunc(values, func(v string) bool { return strings.ContainsAny(v, "\r\n") }) {
		return invalid("a header holds a line break")
	}
	return nil
}

// Domain is the domain of an address ("" when it has none).
func Domain(addr string) string {
	a, err := mail.ParseAddress(addr)
	if err != nil {
		return ""
	}
	_, d, _ := strings.Cut(a.Address, "@")
	return d
}

// Thread places a mail in a conversation (RFC 5322 3.6.4); the zero Thread is a mail
// of its own.
type Thread struct {
	// MessageID, when set, is the mail's own Message-ID: the root of a thread that
	// later mails refer to (a ticket's first mail). Empty: a fresh one.
	MessageID string
	// InReplyTo and References are the Message-IDs it answers and follows.
	InReplyTo  string
	References []string
}
