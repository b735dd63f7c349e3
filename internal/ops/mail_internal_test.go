package ops

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
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
	opts []*river.InsertOpts // each mail's options (nil: its own)
}

func (q *mailQueue) InsertTx(_ context.Context, _ *sql.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if m, ok := args.(MailArgs); ok {
		q.mail = append(q.mail, m)
		q.opts = append(q.opts, opts)
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

// TestMailWorkerMarksTheEnd: with an SMTP sender, a mail's job is marked (its
// metadata's MailEndKey) before the message's end is sent, when the server holds
// nothing yet, and completed once the server took it; a mark that fails leaves the
// server without the mail and the job to be retried; a refusal after the mark clears
// it, and is retried (a 4xx) or ends the job (a 5xx) as before; an attempt that
// finds the mark (its process died after it) sends nothing and completes the job.
func TestMailWorkerMarksTheEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir())
	s := New(Deps{Store: db, Jobs: &mailQueue{}})
	srv := mailtest.NewServer(t, mailtest.ServerOptions{})
	sender, err := mail.NewSMTP(srv.URL(), mail.SMTPOptions{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var log []string // what the worker wrote of each job, in order
	var failMark error
	w := NewMailWorker(s, sender, MailJobs{
		Complete: func(_ context.Context, tx *sql.Tx, job *river.Job[MailArgs]) error {
			if tx == nil {
				t.Error("completed outside a transaction")
			}
			log = append(log, fmt.Sprintf("complete %d", job.ID))
			return nil
		},
		Ending: func(_ context.Context, tx *sql.Tx, id int64, on bool) error {
			if tx == nil {
				t.Error("marked outside a transaction")
			}
			if _, ok := srv.ByMessageID(fmt.Sprintf("job%d@berth.test", id)); ok {
				t.Errorf("job %d marked after the server took its mail", id)
			}
			if failMark != nil {
				return failMark
			}
			log = append(log, fmt.Sprintf("mark %d %v", id, on))
			return nil
		},
	})
	job := func(id int64, attempt int, meta string) *river.Job[MailArgs] {
		return &river.Job[MailArgs]{JobRow: &rivertype.JobRow{ID: id, Attempt: attempt, MaxAttempts: MailMaxAttempts, Metadata: []byte(meta)},
			Args: MailArgs{What: "test", Message: mail.Message{To: "a@example.com", From: "berth@example.net", Subject: "s",
				Text: "t", MessageID: fmt.Sprintf("job%d@berth.test", id)}}}
	}
	want := func(what string, lines ...string) {
		t.Helper()
		if !slices.Equal(log, lines) {
			t.Errorf("%s: the worker wrote %q, want %q", what, log, lines)
		}
		log = nil
	}

	if err := w.Work(ctx, job(1, 1, `{}`)); err != nil {
		t.Fatal(err)
	}
	if _, ok := srv.ByMessageID("job1@berth.test"); !ok {
		t.Error("job 1 not delivered")
	}
	want("job 1", "mark 1 true", "complete 1")

	failMark = errors.New("the store is away")
	if err := w.Work(ctx, job(2, 1, `{}`)); err == nil || !errors.Is(err, failMark) {
		t.Errorf("job 2 with its mark failing: %v, want its error (a retry)", err)
	}
	failMark = nil
	time.Sleep(200 * time.Millisecond)
	if _, ok := srv.ByMessageID("job2@berth.test"); ok || srv.Attempts() != 1 {
		t.Errorf("job 2's mail reached the server although its mark failed (%d attempts)", srv.Attempts())
	}
	want("job 2")

	srv.Refuse(451, 1)
	var cancel *rivertype.JobCancelError
	if err := w.Work(ctx, job(3, 1, `{}`)); err == nil || errors.As(err, &cancel) || !strings.Contains(err.Error(), "451") {
		t.Errorf("job 3, 451 after its mark: %v, want an error to retry", err)
	}
	want("job 3", "mark 3 true", "mark 3 false")
	srv.Refuse(554, 1)
	if err := w.Work(ctx, job(4, 1, `{}`)); !errors.As(err, &cancel) {
		t.Errorf("job 4, 554 after its mark: %v, want the job cancelled", err)
	}
	want("job 4", "mark 4 true", "mark 4 false")

	attempts := srv.Attempts()
	if err := w.Work(ctx, job(5, 2, `{"`+MailEndKey+`": 1, "other": "x"}`)); err != nil {
		t.Errorf("job 5, marked by the attempt before: %v", err)
	}
	if srv.Attempts() != attempts {
		t.Error("job 5's mail was sent again")
	}
	want("job 5", "complete 5")
}
