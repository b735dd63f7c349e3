package ops

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/berthhq/berth/internal/mail"
	"github.com/berthhq/berth/internal/mail/mailtest"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

// mailQueue records the mail jobs enqueued, and nothing else.
type mailQueue struct {
	mu   sync.Mutex
	mail []MailArgs
}

func (q *mailQueue) InsertTx(_ context.Context, _ *sql.Tx, args river.JobArgs, _ *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if m, ok := args.(MailArgs); ok {
		q.mail = append(q.mail, m)
	}
	return &rivertype.JobInsertResult{}, nil
}

// TestTicketMailsThread: the mails of a ticket (as the tickets' use cases send them:
// mailSupport with the root thread for a new ticket, mailAccount answering it for a
// staff reply) arrive threaded: the first is the ticket's root Message-ID, the reply
// is in reply to it and refers to it; the reply is in the account's language, the
// support mail in English, both from --mail-from; without --support-email nothing is
// queued for support.
func TestTicketMailsThread(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir())
	q := &mailQueue{}
	s := New(Deps{Store: db, Jobs: q, Mail: MailOptions{From: "Hosting <noreply@hosting.example>", Support: "support@hosting.example",
		LinkBase: "https://cloud.example/"}})
	a, err := s.CreateAccount(ctx, NewAccount{Email: "kunde@example.com", Password: "correct horse battery", Language: "de"})
	if err != nil {
		t.Fatal(err)
	}
	var rootID, replyID string
	if err := db.InTx(ctx, func(tx store.Tx) error {
		var err error
		if rootID, err = s.mailSupport(ctx, tx, a.ID, mail.TicketToSupport{TicketID: 7, Subject: "Platte voll", AccountID: a.ID,
			AccountEmail: a.Email, Body: "Hilfe!", New: true, URL: s.link("/staff/tickets/7")}, s.ticketThread(7, true)); err != nil {
			return err
		}
		replyID, err = s.mailAccount(ctx, tx, a.ID, mail.TicketReply{TicketID: 7, Subject: "Platte voll", Author: "Sam",
			Body: "Vergrößern Sie sie.", URL: s.link("/support/7")}, s.ticketThread(7, false))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if rootID != "ticket-7@cloud.example" || replyID == "" || replyID == rootID || !strings.HasSuffix(replyID, "@cloud.example") {
		t.Fatalf("message ids %q and %q", rootID, replyID)
	}

	srv := mailtest.NewServer(t, mailtest.ServerOptions{})
	sender, err := mail.NewSMTP(srv.URL(), mail.SMTPOptions{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(q.mail) != 2 {
		t.Fatalf("%d mails queued, want 2", len(q.mail))
	}
	for _, m := range q.mail {
		if err := sender.Send(ctx, m.Message); err != nil {
			t.Fatal(err)
		}
	}
	got := srv.Wait(t, 2, time.Minute)
	root, reply := got[0], got[1]
	if root.MessageID != rootID || root.InReplyTo != "" || !strings.Contains(root.To, "support@hosting.example") ||
		root.Subject != "[#7] New ticket: Platte voll" || root.Language != "en" || !strings.Contains(root.Text, "Hilfe!") {
		t.Errorf("support mail %+v", root)
	}
	if reply.MessageID != replyID || reply.InReplyTo != rootID || strings.Join(reply.References, " ") != rootID ||
		!strings.Contains(reply.To, a.Email) || reply.Subject != "Re: [#7] Platte voll" || reply.Language != "de" ||
		!strings.Contains(reply.Text, "https://cloud.example/support/7") {
		t.Errorf("reply mail %+v", reply)
	}
	for _, m := range got {
		if !strings.Contains(m.From, "noreply@hosting.example") {
			t.Errorf("from %q", m.From)
		}
	}

	// No support address: nothing for support.
	s2 := New(Deps{Store: db, Jobs: q})
	if err := db.InTx(ctx, func(tx store.Tx) error {
		id, err := s2.mailSupport(ctx, tx, a.ID, mail.TicketToSupport{TicketID: 8, Subject: "x", Body: "y", New: true}, s2.ticketThread(8, true))
		if id != "" {
			t.Errorf("mailed support without an address: %s", id)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(q.mail) != 2 {
		t.Errorf("%d mails queued, want still 2", len(q.mail))
	}
}

func TestMailRetryWait(t *testing.T) {
	t.Parallel()
	for attempt, want := range map[int]time.Duration{1: 30 * time.Second, 2: time.Minute, 3: 2 * time.Minute, 7: 32 * time.Minute,
		8: time.Hour, 9: time.Hour, MailMaxAttempts: time.Hour} {
		if got := MailRetryWait(attempt); got != want {
			t.Errorf("MailRetryWait(%d) = %s, want %s", attempt, got, want)
		}
	}
	var total time.Duration
	for a := 1; a < MailMaxAttempts; a++ {
		total += MailRetryWait(a)
	}
	if total < 24*time.Hour || total > 48*time.Hour {
		t.Errorf("the attempts span %s: want a day or two", total)
	}
}
