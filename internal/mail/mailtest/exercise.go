package mailtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/berthhq/berth/internal/mail"
)

// Harness is a sender under test and how to see what it delivered.
type Harness struct {
	Sender mail.Sender
	// Delivered is what became of the mail of a Message-ID (false: nothing did).
	Delivered func(t testing.TB, messageID string) (Received, bool)
	// MIME says the sender writes MIME messages (SMTP): the HTML alternative, the
	// extra headers and the encoding of the header are checked too. The log sender
	// shows the text only.
	MIME bool
}

var seq atomic.Int64

func messageID() string { return fmt.Sprintf("conf%d.%d@berth.test", seq.Add(1), seq.Load()*7) }

// Exercise is the conformance suite of mail.Sender: every implementation passes it.
// newHarness makes a fresh sender for each case.
func Exercise(t *testing.T, newHarness func(t *testing.T) Harness) {
	ctx := context.Background()
	base := func() mail.Message {
		return mail.Message{To: "Anna Muster <anna@example.com>", From: "Berth <berth@example.net>", Subject: "Your password",
			Text: "Hello,\n\nopen https://berth.example/password-reset/abc to set a new password.\n", Language: "en", MessageID: messageID()}
	}
	t.Run("delivers to, from, subject, message id, language and text", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		m := base()
		if err := h.Sender.Send(ctx, m); err != nil {
			t.Fatalf("send: %v", err)
		}
		got := mustDeliver(t, h, m.MessageID)
		for _, c := range []struct{ what, got, want string }{
			{"to", got.To, m.To}, {"from", got.From, m.From}, {"subject", got.Subject, m.Subject},
			{"message id", got.MessageID, m.MessageID}, {"language", got.Language, "en"},
		} {
			if !sameAddress(c.got, c.want) {
				t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
			}
		}
		if strings.TrimRight(got.Text, "\n") != strings.TrimRight(m.Text, "\n") {
			t.Errorf("text = %q, want %q", got.Text, m.Text)
		}
	})
	t.Run("UTF-8 subject and body arrive intact, the header encoded", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		m := base()
		m.Subject, m.Language = "Passwort zurücksetzen – Guthaben 3,50 € ✓", "de"
		m.Text = "Grüße aus Zürich: 3,50 € übrig.\n" + strings.Repeat("ä", 200) + "\n"
		if err := h.Sender.Send(ctx, m); err != nil {
			t.Fatalf("send: %v", err)
		}
		got := mustDeliver(t, h, m.MessageID)
		if got.Subject != m.Subject || strings.TrimRight(got.Text, "\n") != strings.TrimRight(m.Text, "\n") {
			t.Errorf("subject %q text %q, want %q %q", got.Subject, got.Text, m.Subject, m.Text)
		}
		if h.MIME {
			raw := got.Header.Get("Subject")
			if !strings.HasPrefix(raw, "=?UTF-8?") || strings.ContainsFunc(raw, func(r rune) bool { return r > 127 }) {
				t.Errorf("Subject header %q: want RFC 2047 encoded ASCII", raw)
			}
			for i, line := range strings.Split(string(got.Raw), "\r\n") {
				if len(line) > 998 {
					t.Errorf("line %d is %d bytes long (RFC 5322: at most 998)", i, len(line))
				}
			}
		}
	})
	t.Run("threading headers", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		m := base()
		m.InReplyTo, m.References = "ticket-7@berth.example", []string{"ticket-7@berth.example", "ticket-7.m3@berth.example"}
		if err := h.Sender.Send(ctx, m); err != nil {
			t.Fatalf("send: %v", err)
		}
		got := mustDeliver(t, h, m.MessageID)
		if got.InReplyTo != m.InReplyTo || strings.Join(got.References, " ") != strings.Join(m.References, " ") {
			t.Errorf("in-reply-to %q references %q, want %q %q", got.InReplyTo, got.References, m.InReplyTo, m.References)
		}
	})
	t.Run("text and HTML as multipart/alternative, extra headers", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		if !h.MIME {
			t.Skip("the sender writes no MIME message")
		}
		m := base()
		m.HTML = `<p>Hello, <a href="https://berth.example/password-reset/abc">set a new password</a>.</p>`
		m.Headers = map[string]string{"X-Berth-Ticket": "7"}
		if err := h.Sender.Send(ctx, m); err != nil {
			t.Fatalf("send: %v", err)
		}
		got := mustDeliver(t, h, m.MessageID)
		if got.ContentType != "multipart/alternative" {
			t.Errorf("content type %q, want multipart/alternative", got.ContentType)
		}
		if strings.TrimSpace(got.HTML) != m.HTML || !strings.Contains(got.Text, "password-reset/abc") {
			t.Errorf("html %q text %q", got.HTML, got.Text)
		}
		if v := got.Header.Get("X-Berth-Ticket"); v != "7" {
			t.Errorf("X-Berth-Ticket = %q, want 7", v)
		}
		if v := got.Header.Get("Date"); v == "" {
			t.Error("no Date header")
		}
	})
	t.Run("invalid messages are refused for good, nothing delivered", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			name   string
			change func(*mail.Message)
		}{
			{"line break in the subject", func(m *mail.Message) { m.Subject = "hi\r\nBcc: victim@example.com" }},
			{"line break in an extra header", func(m *mail.Message) { m.Headers = map[string]string{"X-Berth-Ticket": "1\nBcc: x@y"} }},
			{"a header not X-", func(m *mail.Message) { m.Headers = map[string]string{"Bcc": "x@example.com"} }},
			{"bad recipient", func(m *mail.Message) { m.To = "not an address" }},
			{"two recipients", func(m *mail.Message) { m.To = "a@example.com, b@example.com" }},
			{"bad sender", func(m *mail.Message) { m.From = "" }},
			{"no message id", func(m *mail.Message) { m.MessageID = "" }},
			{"bad message id", func(m *mail.Message) { m.MessageID = "a b@c" }},
			{"bad in-reply-to", func(m *mail.Message) { m.InReplyTo = "<x@y>" }},
			{"no text", func(m *mail.Message) { m.Text = " " }},
		} {
			h := newHarness(t)
			m := base()
			id := m.MessageID
			c.change(&m)
			err := h.Sender.Send(ctx, m)
			if err == nil || !mail.Permanent(err) || !errors.Is(err, mail.ErrInvalid) {
				t.Errorf("%s: err %v, want a permanent mail.ErrInvalid", c.name, err)
			}
			if _, ok := h.Delivered(t, id); ok {
				t.Errorf("%s: delivered", c.name)
			}
		}
	})
}

func mustDeliver(t *testing.T, h Harness, id string) Received {
	t.Helper()
	got, ok := h.Delivered(t, id)
	if !ok {
		t.Fatalf("mail %s not delivered", id)
	}
	return got
}

// sameAddress compares a header as read with what was sent: exactly, or as the same
// display name and address however quoted.
func sameAddress(got, want string) bool {
	if got == want {
		return true
	}
	return strings.ReplaceAll(got, `"`, "") == strings.ReplaceAll(want, `"`, "")
}
