package hosting

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// fieldMsg is the one message id a Validation recorded under field ("" when none).
func fieldMsg(t *testing.T, err error, field string) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%v is not a *hosting.Error", err)
	}
	if msgs := e.Fields[field]; len(msgs) > 0 {
		return msgs[0].ID
	}
	t.Fatalf("%v names no %s: %v", err, field, e.Order)
	return ""
}

func strp(s string) *string { return &s }

func TestTicketSubjectAndBody(t *testing.T) {
	for _, c := range []struct {
		name    string
		subject *string
		want    string
	}{
		{"missing", nil, "validation.required"},
		{"empty", strp(""), "validation.required"},
		{"whitespace", strp(" \t\u00a0 "), "validation.required"},
		{"one", strp("x"), ""},
		{"120 characters of 2 bytes", strp(strings.Repeat("é", 120)), ""},
		{"121", strp(strings.Repeat("a", 121)), "validation.ticket_subject_length"},
		{"a newline", strp("a\nBcc: x@example.com"), "validation.ticket_subject_control"},
	} {
		var v Validation
		CheckTicketSubject(&v, c.subject)
		if got := fieldMsg(t, v.Err(), "subject"); got != c.want {
			t.Errorf("subject %s: %q, want %q", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		name string
		body *string
		want string
	}{
		{"missing", nil, "validation.required"},
		{"empty", strp(""), "validation.required"},
		{"whitespace", strp("\n\n  \r\n"), "validation.required"},
		{"one", strp("."), ""},
		{"20,000 characters of 4 bytes", strp(strings.Repeat("😀", 20000)), ""},
		{"20,001", strp(strings.Repeat("a", 20001)), "validation.ticket_body_length"},
		{"lines", strp("line 1\nline 2\ttab"), ""},
	} {
		var v Validation
		CheckTicketBody(&v, c.body)
		if got := fieldMsg(t, v.Err(), "body"); got != c.want {
			t.Errorf("body %s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestTicketPriorityAndStatus(t *testing.T) {
	for _, c := range []struct {
		in   *string
		want TicketPriority
		bad  bool
	}{
		{nil, PriorityNormal, false}, {strp("low"), PriorityLow, false}, {strp("urgent"), PriorityUrgent, false},
		{strp(""), PriorityNormal, true}, {strp("URGENT"), PriorityNormal, true}, {strp("critical"), PriorityNormal, true},
	} {
		var v Validation
		if got := ParseTicketPriority(&v, c.in); got != c.want || v.Has("priority") != c.bad {
			t.Errorf("priority %v: %q (refused %v)", c.in, got, v.Has("priority"))
		}
	}
	for s, ok := range map[string]bool{"": true, "open": true, "answered": true, "customer_reply": true, "closed": true, "Open": false, "new": false} {
		if _, got := ParseTicketStatus(s); got != ok {
			t.Errorf("status %q: %v, want %v", s, got, ok)
		}
	}
}

func TestAttachmentIDs(t *testing.T) {
	for _, c := range []struct {
		ids  []int64
		want string
	}{
		{nil, ""},
		{[]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, ""},
		{[]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, "validation.attachment_too_many"},
		{[]int64{3, 1, 3}, "validation.attachment_repeated"},
	} {
		var v Validation
		CheckAttachmentIDs(&v, c.ids)
		if got := fieldMsg(t, v.Err(), "attachment_ids"); got != c.want {
			t.Errorf("%v: %q, want %q", c.ids, got, c.want)
		}
	}
}

// TestTicketStatuses: the moves of a ticket's status by who writes, and the reopen
// window's edge.
func TestTicketStatuses(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	closed := func(ago time.Duration) Ticket {
		at := now.Add(-ago)
		return Ticket{Status: TicketClosed, ClosedAt: &at}
	}
	for _, c := range []struct {
		name     string
		t        Ticket
		want     TicketStatus
		reopened bool
		refused  bool
	}{
		{"open stays open", Ticket{Status: TicketOpen}, TicketOpen, false, false},
		{"answered", Ticket{Status: TicketAnswered}, TicketCustomerReply, false, false},
		{"customer_reply", Ticket{Status: TicketCustomerReply}, TicketCustomerReply, false, false},
		{"closed just now", closed(0), TicketCustomerReply, true, false},
		{"closed 29 days ago", closed(29 * 24 * time.Hour), TicketCustomerReply, true, false},
		{"closed a millisecond short of 30 days", closed(30*24*time.Hour - time.Millisecond), TicketCustomerReply, true, false},
		{"closed 30 days ago", closed(30 * 24 * time.Hour), TicketClosed, false, true},
		{"closed 31 days ago", closed(31 * 24 * time.Hour), TicketClosed, false, true},
	} {
		got, reopened, err := AfterCustomerMessage(c.t, now)
		if got != c.want || reopened != c.reopened || (err != nil) != c.refused {
			t.Errorf("%s: %q reopened %v, %v", c.name, got, reopened, err)
		}
		if c.refused && fieldMsg(t, err, "body") != "validation.ticket_closed_long_ago" {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	for _, st := range TicketStatuses {
		got, reopened := AfterStaffReply(Ticket{Status: st})
		if got != TicketAnswered || reopened != (st == TicketClosed) {
			t.Errorf("staff reply on %s: %s, reopened %v", st, got, reopened)
		}
	}
}

var (
	pngBytes  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01")
	jpegBytes = []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00")
	pdfBytes  = []byte("%PDF-1.7\n1 0 obj\n")
)

func TestCheckAttachment(t *testing.T) {
	for _, c := range []struct {
		name, declared string
		data           []byte
		want, field    string // want: the type stored, or the message id under field
	}{
		{"png", "image/png", pngBytes, "image/png", ""},
		{"jpeg", "image/jpeg", jpegBytes, "image/jpeg", ""},
		{"pdf", "application/pdf", pdfBytes, "application/pdf", ""},
		{"text", "text/plain", []byte("hello\n"), "text/plain; charset=utf-8", ""},
		{"text utf-8", "text/plain; charset=utf-8", []byte("grüße"), "text/plain; charset=utf-8", ""},
		{"text UTF-8 upper", "Text/Plain; Charset=UTF-8", []byte("x"), "text/plain; charset=utf-8", ""},
		{"text latin-1", "text/plain; charset=iso-8859-1", []byte("x"), "validation.attachment_charset", "content_type"},
		{"5 MiB exactly", "text/plain", bytes.Repeat([]byte("a"), MaxAttachmentSize), "text/plain; charset=utf-8", ""},
		{"5 MiB + 1", "text/plain", bytes.Repeat([]byte("a"), MaxAttachmentSize+1), "validation.attachment_too_large", "body"},
		{"empty", "text/plain", nil, "validation.attachment_empty", "body"},
		{"png declared as jpeg", "image/jpeg", pngBytes, "validation.attachment_mismatch", "content_type"},
		{"text declared as png", "image/png", []byte("not an image"), "validation.attachment_mismatch", "content_type"},
		{"pdf declared as text", "text/plain", pdfBytes, "validation.attachment_mismatch", "content_type"},
		{"html declared html", "text/html", []byte("<html><script>alert(1)</script>"), "validation.attachment_type", "content_type"},
		{"html declared text", "text/plain", []byte("<!DOCTYPE html><script>alert(1)</script>"), "validation.attachment_mismatch", "content_type"},
		{"svg declared svg", "image/svg+xml", []byte("<svg xmlns='http://www.w3.org/2000/svg'/>"), "validation.attachment_type", "content_type"},
		{"svg declared text", "text/plain", []byte("  <svg onload='alert(1)'/>"), "validation.attachment_mismatch", "content_type"},
		{"svg as xml declared text", "text/plain", []byte("<?xml version='1.0'?><svg/>"), "validation.attachment_mismatch", "content_type"},
		{"invalid utf-8 text", "text/plain", []byte("a\xffb"), "validation.attachment_mismatch", "content_type"},
		{"no type", "", []byte("x"), "validation.attachment_type", "content_type"},
		{"octet-stream", "application/octet-stream", []byte("x"), "validation.attachment_type", "content_type"},
		{"malformed type", "image/png; ;", pngBytes, "validation.attachment_type", "content_type"},
	} {
		got, err := CheckAttachment(c.declared, c.data)
		if c.field == "" {
			if err != nil || got != c.want {
				t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
			}
			continue
		}
		if m := fieldMsg(t, err, c.field); m != c.want {
			t.Errorf("%s: %q under %s, want %q", c.name, m, c.field, c.want)
		}
	}
}

func TestSanitizeFilename(t *testing.T) {
	long := strings.Repeat("n", 150)
	for in, want := range map[string]string{
		"report.pdf":                    "report.pdf",
		"../../etc/passwd":              "passwd",
		`C:\Users\me\shot.png`:          "shot.png",
		"a\"b'c`d.txt":                  "abcd.txt",
		"line\r\nbreak.txt":             "linebreak.txt",
		"evil\u202egnp.exe":             "evilgnp.exe",
		"  .hidden.  ":                  "hidden",
		"":                              "attachment",
		"..":                            "attachment",
		"/":                             "attachment",
		"\x00\x01":                      "attachment",
		"bad\xffutf8.txt":               "badutf8.txt",
		"Grüße 日本.txt":                  "Grüße 日本.txt",
		long + ".pdf":                   strings.Repeat("n", 96) + ".pdf",
		long:                            strings.Repeat("n", 100),
		"x." + strings.Repeat("e", 120): ("x." + strings.Repeat("e", 120))[:100],
	} {
		if got := SanitizeFilename(in); got != want {
			t.Errorf("SanitizeFilename(%q) = %q, want %q", in, got, want)
		}
	}
}
