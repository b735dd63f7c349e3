package ops

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/berthhq/berth/internal/hosting"
)

// MaxStaffAuthorName bounds the name a sandbox staff reply is signed with.
const MaxStaffAuthorName = 100

// SandboxStaffReply posts a staff reply to one of the principal's own tickets (serve
// --sandbox), so that a client's author can test the answered path: it is StaffReply
// itself (the ticket answered, or reopened, ticket.replied, the staff reply's mail),
// signed authorName (nil or empty: Support), without attachments. A ticket of
// another account is not found, before anything about the body is judged.
func (s *Service) SandboxStaffReply(ctx context.Context, p hosting.Principal, ticketID int64, body, authorName *string) (hosting.TicketMessage, error) {
	if _, err := s.Ticket(ctx, p, ticketID); err != nil {
		return hosting.TicketMessage{}, err
	}
	var v hosting.Validation
	hosting.CheckTicketBody(&v, body)
	name := ""
	if authorName != nil {
		name = strings.TrimSpace(*authorName)
		if utf8.RuneCountInString(name) > MaxStaffAuthorName || strings.IndexFunc(name, unicode.IsControl) >= 0 || !utf8.ValidString(name) {
			v.Add("author_name", "validation.author_name", "max", MaxStaffAuthorName)
		}
	}
	if err := v.Err("body", "author_name"); err != nil {
		return hosting.TicketMessage{}, err
	}
	return s.StaffReply(ctx, ticketID, StaffAuthor{Name: name}, *body, nil)
}
