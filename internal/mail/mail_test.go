package mail_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/mail"
	"github.com/berthhq/berth/internal/mail/mailtest"
)

// smtpHarness is the SMTP sender against a fresh go-smtp server of mode.
func smtpHarness(t testing.TB, o mailtest.ServerOptions) (mailtest.Harness, *mailtest.Server) {
	srv := mailtest.NewServer(t, o)
	s, err := mail.NewSMTP(srv.URL(), mail.SMTPOptions{TLS: srv.ClientTLS(), Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return mailtest.Harness{Sender: s, MIME: true, Delivered: func(_ testing.TB, id string) (mailtest.Received, bool) {
		return srv.ByMessageID(id)
	}}, srv
}

func TestSMTPConformance(t *testing.T) {
	t.Parallel()
	mailtest.Exercise(t, func(t *testing.T) mailtest.Harness {
		h, _ := smtpHarness(t, mailtest.ServerOptions{Mode: mailtest.StartTLS, User: "berth", Password: "p@ss:w/rd"})
		return h
	})
}

// syncBuffer is a log's output read while it is written.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// logHarness is the log sender writing JSON lines, read back as a developer would.
func logHarness(t testing.TB) (mailtest.Harness, *syncBuffer) {
	buf := &syncBuffer{}
	s := mail.NewLog(slog.New(slog.NewJSONHandler(buf, nil)))
	return mailtest.Harness{Sender: s, Delivered: func(t testing.TB, id string) (mailtest.Received, bool) {
		sc := bufio.NewScanner(strings.NewReader(buf.String()))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var line map[string]any
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("log line %q: %v", sc.Text(), err)
			}
			if line["msg"] != mail.LogMessage || line["message_id"] != id {
				continue
			}
			str := func(k string) string { s, _ := line[k].(string); return s }
			r := mailtest.Received{To: str("to"), From: str("from"), Subject: str("subject"), MessageID: id,
				Language: str("language"), InReplyTo: str("in_reply_to"), Text: str("text")}
			if refs := str("references"); refs != "" {
				r.References = strings.Fields(refs)
			}
			return r, true
		}
		return mailtest.Received{}, false
	}}, buf
}

func TestLogConformance(t *testing.T) {
	t.Parallel()
	mailtest.Exercise(t, func(t *testing.T) mailtest.Harness { h, _ := logHarness(t); return h })
}

func TestSMTPTLSModes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		mode    mailtest.Mode
		wantTLS bool
	}{
		{"smtp:// upgrades with STARTTLS when offered", mailtest.StartTLS, true},
		{"smtp:// goes in the clear when STARTTLS is not offered (opportunistic)", mailtest.Plain, false},
		{"smtps:// speaks TLS from the start", mailtest.Implicit, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h, srv := smtpHarness(t, mailtest.ServerOptions{Mode: c.mode})
			if got := strings.HasPrefix(srv.URL(), "smtps://"); got != (c.mode == mailtest.Implicit) {
				t.Fatalf("url %s", srv.URL())
			}
			m := mail.Message{To: "a@example.com", From: "berth@example.net", Subject: "s", Text: "t", MessageID: "tls1@berth.test"}
			if err := h.Sender.Send(context.Background(), m); err != nil {
				t.Fatal(err)
			}
			got := srv.Wait(t, 1, 10*time.Second)[0]
			if got.TLS != c.wantTLS {
				t.Errorf("TLS = %v, want %v", got.TLS, c.wantTLS)
			}
			if got.EnvelopeFrom != "berth@example.net" || strings.Join(got.EnvelopeTo, ",") != "a@example.com" {
				t.Errorf("envelope %q → %q", got.EnvelopeFrom, got.EnvelopeTo)
			}
		})
	}
}

func TestSMTPAuth(t *testing.T) {
	t.Parallel()
	_, srv := smtpHarness(t, mailtest.ServerOptions{Mode: mailtest.StartTLS, User: "berth", Password: "right"})
	m := mail.Message{To: "a@example.com", From: "berth@example.net", Subject: "s", Text: "t", MessageID: "auth1@berth.test"}
	wrong := strings.Replace(srv.URL(), ":right@", ":wrong@", 1)
	s, err := mail.NewSMTP(wrong, mail.SMTPOptions{TLS: srv.ClientTLS()})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Send(context.Background(), m)
	if err == nil || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("wrong password: err %v, want an error that does not show the password", err)
	}
	s, _ = mail.NewSMTP(srv.URL(), mail.SMTPOptions{TLS: srv.ClientTLS()})
	if err := s.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if got := srv.Wait(t, 1, 10*time.Second)[0]; got.User != "berth" || !got.TLS {
		t.Errorf("user %q tls %v", got.User, got.TLS)
	}
}

func TestSMTPRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		code      int
		permanent bool
	}{{421, false}, {451, false}, {550, true}, {554, true}} {
		h, srv := smtpHarness(t, mailtest.ServerOptions{})
		srv.Refuse(c.code, 1)
		m := mail.Message{To: "a@example.com", From: "berth@example.net", Subject: "s", Text: "t", MessageID: "ref1@berth.test"}
		err := h.Sender.Send(context.Background(), m)
		if err == nil || mail.Permanent(err) != c.permanent {
			t.Errorf("%d: err %v, permanent %v, want %v", c.code, err, mail.Permanent(err), c.permanent)
		}
		if n := len(srv.Messages()); n != 0 {
			t.Errorf("%d: %d accepted", c.code, n)
		}
	}
	// Nothing listens: worth another try.
	s, _ := mail.NewSMTP("smtp://127.0.0.1:1", mail.SMTPOptions{Timeout: 5 * time.Second})
	err := s.Send(context.Background(), mail.Message{To: "a@example.com", From: "b@example.net", Text: "t", MessageID: "x@y"})
	if err == nil || mail.Permanent(err) {
		t.Errorf("connection refused: err %v, want a temporary error", err)
	}
}

func TestParseURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		url  string
		want mail.Server
		err  string
	}{
		{"smtp://mail.example.com", mail.Server{Host: "mail.example.com", Port: 587}, ""},
		{"smtp://mail.example.com:25", mail.Server{Host: "mail.example.com", Port: 25}, ""},
		{"smtps://mail.example.com", mail.Server{Host: "mail.example.com", Port: 465, Implicit: true}, ""},
		{"smtp://u%40x:p%40ss%3Aw@[::1]:2525", mail.Server{Host: "::1", Port: 2525, User: "u@x", Password: "p@ss:w"}, ""},
		{"smtp://user@host", mail.Server{Host: "host", Port: 587, User: "user"}, ""},
		{"http://host", mail.Server{}, `scheme "http"`},
		{"host:25", mail.Server{}, "scheme"},
		{"smtp://host:0", mail.Server{}, "port"},
		{"smtp://host:99999", mail.Server{}, "port"},
		{"smtp://:secret@host", mail.Server{}, "without a user"},
		{"smtp://", mail.Server{}, "no host"},
		{"smtp://host/path", mail.Server{}, "nothing after the port"},
		{"smtp://host?x=1", mail.Server{}, "nothing after the port"},
		{"smtp://u:se cret%zz@host", mail.Server{}, "not a URL"},
	} {
		got, err := mail.ParseURL(c.url)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("%s: %+v, %v; want %+v", c.url, got, err, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: err %v, want one with %q", c.url, err, c.err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error shows the password: %v", c.url, err)
		}
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"smtp://user:secret@host:25":    "smtp://user:REDACTED@host:25",
		"smtps://user:s%40cret@host":    "smtps://user:REDACTED@host:465",
		"smtp://user@host":              "smtp://user@host:587",
		"smtp://host":                   "smtp://host:587",
		"smtp://u:se cret%zz@host:bad":  "smtp://REDACTED@host:bad",
		"smtp://u:secret@host/trailing": "smtp://REDACTED@host/trailing",
	} {
		if got := mail.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSMTPCommit: SendCommit calls commit once, with the message written and not yet
// ended (the server holds nothing yet), then ends it; a commit that fails is
// answered as it is and the message never reaches the server (the connection is
// dropped before DATA's end); a refusal of the ended message comes after commit,
// permanent for a 5xx only. Over STARTTLS and AUTH, as a relay is used.
func TestSMTPCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, srv := smtpHarness(t, mailtest.ServerOptions{Mode: mailtest.StartTLS, User: "berth", Password: "pw"})
	s := h.Sender.(mail.CommitSender)
	m := func(id string) mail.Message {
		return mail.Message{To: "a@example.com", From: "berth@example.net", Subject: "s", Text: "t", MessageID: id}
	}

	calls := 0
	err := s.SendCommit(ctx, m("c1@berth.test"), func() error {
		calls++
		if n, a := len(srv.Messages()), srv.Attempts(); n != 0 || a != 0 {
			t.Errorf("at commit the server has %d messages, %d attempts: want none", n, a)
		}
		return nil
	})
	if err != nil || calls != 1 {
		t.Fatalf("send: %v, commit called %d times", err, calls)
	}
	if _, ok := srv.ByMessageID("c1@berth.test"); !ok {
		t.Error("c1 not delivered")
	}

	refuse := errors.New("the store is away")
	if err := s.SendCommit(ctx, m("c2@berth.test"), func() error { return refuse }); err != refuse {
		t.Errorf("failed commit: err %v, want %v as it is", err, refuse)
	}
	time.Sleep(200 * time.Millisecond) // a message the server took would be there now
	if _, ok := srv.ByMessageID("c2@berth.test"); ok || srv.Attempts() != 1 {
		t.Errorf("a message whose commit failed reached the server (%d attempts, want c1's alone)", srv.Attempts())
	}

	for _, c := range []struct {
		code      int
		permanent bool
	}{{451, false}, {554, true}} {
		srv.Refuse(c.code, 1)
		calls = 0
		err := s.SendCommit(ctx, m(fmt.Sprintf("r%d@berth.test", c.code)), func() error { calls++; return nil })
		if err == nil || mail.Permanent(err) != c.permanent || calls != 1 {
			t.Errorf("%d after DATA: err %v (permanent %v, want %v), commit called %d times, want 1", c.code, err,
				mail.Permanent(err), c.permanent, calls)
		}
	}
	if err := s.Send(ctx, m("c3@berth.test")); err != nil {
		t.Fatalf("send without commit: %v", err)
	}
	if n := len(srv.Messages()); n != 2 {
		t.Errorf("%d messages delivered, want c1 and c3", n)
	}
}

// TestLogCommit: the log sender logs a mail once its commit succeeded, and not at
// all when it failed.
func TestLogCommit(t *testing.T) {
	t.Parallel()
	h, _ := logHarness(t)
	s := h.Sender.(mail.CommitSender)
	m := mail.Message{To: "a@example.com", From: "berth@example.net", Subject: "s", Text: "t", MessageID: "log1@berth.test"}
	refuse := errors.New("the store is away")
	if err := s.SendCommit(context.Background(), m, func() error { return refuse }); err != refuse {
		t.Errorf("failed commit: %v, want %v", err, refuse)
	}
	if _, ok := h.Delivered(t, "log1@berth.test"); ok {
		t.Error("logged although its commit failed")
	}
	calls := 0
	if err := s.SendCommit(context.Background(), m, func() error { calls++; return nil }); err != nil || calls != 1 {
		t.Errorf("send: %v, commit called %d times", err, calls)
	}
	if _, ok := h.Delivered(t, "log1@berth.test"); !ok {
		t.Error("not logged")
	}
}
