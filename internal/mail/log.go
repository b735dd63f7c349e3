package mail

import (
	"context"
	"log/slog"
	"strings"
)

// Log is the sender used when no SMTP server is configured (no serve --smtp-url):
// each mail is one line of berthd's log at level INFO, message "mail not sent (no
// --smtp-url)", with to, from, subject, message_id, its threading headers, language
// and the text body, and is not sent.
//
// The text body is logged whole, links included: a password-reset link in the log is
// what a developer running berthd on a laptop needs to sign in again, and the log is
// then the only place the mail goes. An operator whose log must not hold reset links
// configures --smtp-url (docs/operating.md, Mail). The HTML alternative is left out:
// it says what the text says.
type Log struct {
	log *slog.Logger
}

var _ CommitSender = (*Log)(nil)

// NewLog is the sender that writes each mail to l.
func NewLog(l *slog.Logger) *Log { return &Log{log: l} }

// LogMessage is the message of a logged mail's line.
const LogMessage = "mail not sent (no --smtp-url)"

// Send logs m. An invalid m is refused as the SMTP sender refuses it.
func (s *Log) Send(ctx context.Context, m Message) error { return s.SendCommit(ctx, m, nil) }

// SendCommit logs m once commit (when not nil) succeeds.
func (s *Log) SendCommit(ctx context.Context, m Message, commit func() error) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if commit != nil {
		if err := commit(); err != nil {
			return err
		}
	}
	attrs := []any{"to", m.To, "from", m.From, "subject", m.Subject, "message_id", m.MessageID, "language", m.Language}
	if m.InReplyTo != "" {
		attrs = append(attrs, "in_reply_to", m.InReplyTo)
	}
	if len(m.References) > 0 {
		attrs = append(attrs, "references", strings.Join(m.References, " "))
	}
	attrs = append(attrs, "text", m.Text)
	s.log.InfoContext(ctx, LogMessage, attrs...)
	return nil
}
