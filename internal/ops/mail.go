package ops

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/mail"
	"github.com/berthhq/berth/internal/store"
)

// Mail (docs/operating.md, Mail). Every mail Berth sends is a job
// enqueued in the transaction of the change it tells of (the outbox rule, as webhook
// deliveries): rendered then in its reader's language, with its Message-ID made then,
// so that every attempt sends the same message under the same Message-ID. The
// worker (MailWorker) hands it to the mail.Sender: SMTP (serve --smtp-url), or the
// log when none is configured.
//
// Delivery is exactly once across a crash, and at least once otherwise. Once the
// message is written to the SMTP server and only DATA's final "." is left to send
// (mail.CommitSender), the worker commits MailEndKey into its job's metadata, in a
// transaction of its own, and sends the "." only once that has committed. A process
// that dies before the commit leaves the server with an unended message, which it
// drops, and the job's next attempt sends the mail; one that dies after it had sent
// the mail or was about to, and the next attempt finds the key and completes the job
// without sending. Only a crash in the instant between the commit and the "."'s write
// loses a mail. (SMTP gives no point at which both sides know the same thing, RFC
// 1047: recording the mail sent after the server's 250 instead, as Berth did, sends
// it twice when a crash falls between that 250 and the record.) A live process that
// learns that the server did not take the mail (a 4xx or 5xx to its end, or the
// connection lost before the answer) clears the key and goes on as for any failure:
// a lost answer may then mean a second copy, under the same Message-ID. A mail the
// server refused for good (5xx) is not retried; any other failure is, on
// MailRetryWait's schedule, up to MailMaxAttempts attempts.
//
// To mail from a use case, in its transaction (tx), e.g. a ticket's:
//
//	// a staff reply, to the account holder, in the account's language:
//	_, err := s.mailAccount(ctx, tx, t.AccountID, mail.TicketReply{TicketID: t.ID, Subject: t.Subject,
//		Author: msg.AuthorName, Body: msg.Body, URL: s.link("/support/" + id)}, s.ticketThread(t.ID, false))
//	// a new ticket (New: true, the thread's root) or a customer's message (New: false,
//	// s.ticketThread(t.ID, false)), to --support-email (nothing without one):
//	_, err := s.mailSupport(ctx, tx, t.AccountID, mail.TicketToSupport{TicketID: t.ID, Subject: t.Subject,
//		AccountID: t.AccountID, AccountEmail: email, Body: msg.Body, New: true, URL: s.link("/staff/tickets/" + id)},
//		s.ticketThread(t.ID, true))
//
// Both answer the mail's Message-ID. Never pass an internal note's body: whatever
// Body holds is mailed. A message made by hand goes through s.enqueueMail.

// MailKind is the kind of the job that sends a mail.
const MailKind = "berth.mail"

// MailMaxAttempts is how many attempts a mail has: on MailRetryWait's schedule,
// about a day and a half of them.
const MailMaxAttempts = 40

// MailRetryWait is the wait after a mail's failed attempt: 30 s doubling to an hour.
func MailRetryWait(attempt int) time.Duration {
	wait := 30 * time.Second
	for i := 1; i < attempt && wait < time.Hour; i++ {
		wait *= 2
	}
	return min(wait, time.Hour)
}

// MailArgs are the job's: the message as it is sent, and what it is (the Data's
// kind, for the log), and whose account it is about (0: none).
type MailArgs struct {
	What      string       `json:"what"`
	AccountID int64        `json:"account_id,omitempty"`
	Message   mail.Message `json:"message"`
}

// Kind implements river.JobArgs.
func (MailArgs) Kind() string { return MailKind }

// MailQueue is the job queue mails are sent from, apart from the operations: a few
// at a time per process (app's mailWorkers), as an SMTP relay takes a few
// connections of a client at once, and so that a burst of mails (a metering pass
// warning many accounts) holds few in the window of a crash (above).
const MailQueue = "mail"

// InsertOpts gives the job MailMaxAttempts attempts, retried on MailRetryWait's
// schedule (the retry policy app gives River for this kind), in MailQueue.
func (MailArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: MailQueue, MaxAttempts: MailMaxAttempts}
}

// MailOptions are the operator's mail settings (serve --mail-from, --support-email,
// --public-url).
type MailOptions struct {
	// From is the sender of every mail (default "Berth <berth@DOMAIN>", DOMAIN the
	// LinkBase's host).
	From string
	// Support is where new tickets and customers' messages are mailed ("": nowhere).
	Support string
	// LinkBase starts every link a mail holds: serve --public-url (default
	// http://127.0.0.1:8080, serve's --addr default). Never a request's Host: a
	// reset link built from one would go wherever the asker's Host header pointed.
	LinkBase string
}

// withDefaults fills what o leaves out.
func (o MailOptions) withDefaults() MailOptions {
	o.LinkBase = strings.TrimRight(o.LinkBase, "/")
	if o.LinkBase == "" {
		o.LinkBase = "http://127.0.0.1:8080"
	}
	if o.From == "" {
		o.From = "Berth <berth@" + linkHost(o.LinkBase) + ">"
	}
	return o
}

// linkHost is the host of a link base, without its port ("localhost" when it has
// none).
func linkHost(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" {
		return "localhost"
	}
	h := u.Hostname()
	if strings.Contains(h, ":") { // an IPv6 address is no domain
		return "localhost"
	}
	return h
}

// mailDomain is the right side of the Message-IDs Berth makes: --public-url's host,
// else --mail-from's domain.
func (s *Service) mailDomain() string {
	if h := linkHost(s.mail.LinkBase); h != "localhost" && h != "127.0.0.1" {
		return h
	}
	if d := mail.Domain(s.mail.From); d != "" {
		return d
	}
	return "localhost"
}

// link is an absolute link to a path of the console.
func (s *Service) link(path string) string { return s.mail.LinkBase + path }

// newMessageID is a fresh Message-ID (without angle brackets) of kind.
func (s *Service) newMessageID(kind string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s.%s@%s", hex.EncodeToString(b), strings.ReplaceAll(kind, "_", "-"), s.mailDomain())
}

// ticketThread is where a mail about ticket id goes in its thread: every mail of a
// ticket refers to the ticket's root Message-ID, ticket-ID@DOMAIN, so that mail
// readers keep them in one conversation. root makes the mail the root itself (the
// first mail of a ticket, to --support-email); the others are in reply to it.
func (s *Service) ticketThread(id int64, root bool) mail.Thread {
	rootID := fmt.Sprintf("ticket-%d@%s", id, s.mailDomain())
	if root {
		return mail.Thread{MessageID: rootID}
	}
	return mail.Thread{InReplyTo: rootID, References: []string{rootID}}
}

// enqueueMail enqueues m in tx, what naming it in the log: m.From and m.MessageID
// are filled when empty (--mail-from; a fresh id). It answers the Message-ID. A
// Service without a job queue (Deps.Jobs) sends no mail: it logs that and answers "".
// An invalid m is an internal error: Berth made it.
func (s *Service) enqueueMail(ctx context.Context, tx store.Tx, what string, accountID int64, m mail.Message) (string, error) {
	if m.From == "" {
		m.From = s.mail.From
	}
	if m.MessageID == "" {
		m.MessageID = s.newMessageID(what)
	}
	if err := m.Validate(); err != nil {
		return "", internal("mail "+what, err)
	}
	if s.jobs == nil {
		s.log.Warn("mail not queued: this Service has no job queue", "what", what, "account", accountID)
		return "", nil
	}
	if err := s.enqueue(ctx, tx, MailArgs{What: what, AccountID: accountID, Message: m}); err != nil {
		return "", internal("enqueue mail", err)
	}
	return m.MessageID, nil
}

// mailTo renders d in lang and enqueues it to to, placed in th.
func (s *Service) mailTo(ctx context.Context, tx store.Tx, to, lang string, accountID int64, d mail.Data, th mail.Thread) (string, error) {
	c, err := mail.Render(lang, d)
	if err != nil {
		return "", internal("render mail "+d.Kind(), err)
	}
	return s.enqueueMail(ctx, tx, d.Kind(), accountID, mail.Message{To: to, Subject: c.Subject, Text: c.Text, HTML: c.HTML,
		Language: lang, MessageID: th.MessageID, InReplyTo: th.InReplyTo, References: th.References})
}

// mailAccount mails d to the holder of account accountID, in the account's language,
// placed in th (the zero Thread: a mail of its own). It answers the Message-ID.
func (s *Service) mailAccount(ctx context.Context, tx store.Tx, accountID int64, d mail.Data, th mail.Thread) (string, error) {
	a, err := tx.Account(ctx, accountID)
	if err != nil {
		return "", notFoundOr("account", err)
	}
	return s.mailTo(ctx, tx, a.Email, a.Language, accountID, d, th)
}

// mailSupport mails d to --support-email, in English, placed in th; without a
// support address it sends nothing and answers "".
func (s *Service) mailSupport(ctx context.Context, tx store.Tx, accountID int64, d mail.Data, th mail.Thread) (string, error) {
	if s.mail.Support == "" {
		return "", nil
	}
	return s.mailTo(ctx, tx, s.mail.Support, "en", accountID, d, th)
}

// ---- the mails of the core's own changes ----

// mailCreditLow warns account a that its credit runs low: it lasts less than
// hosting.CreditMailDays at its burn.
func (s *Service) mailCreditLow(ctx context.Context, tx store.Tx, a hosting.Account) error {
	_, err := s.mailAccount(ctx, tx, a.ID, mail.CreditLow{Email: a.Email, Credit: a.Credit.String() + " " + a.Currency,
		Days: hosting.CreditMailDays, BillingURL: s.link("/billing")}, mail.Thread{})
	return err
}

// mailSuspended tells account id that its servers were suspended for credit (with
// account.suspended).
func (s *Service) mailSuspended(ctx context.Context, tx store.Tx, id int64) error {
	a, err := tx.Account(ctx, id)
	if err != nil {
		return internal("account", err)
	}
	_, err = s.mailAccount(ctx, tx, id, mail.Suspended{Email: a.Email, Credit: a.Credit.String() + " " + a.Currency,
		BillingURL: s.link("/billing")}, mail.Thread{})
	return err
}

// mailWebhookDisabled tells hook's account that it was disabled for reason (with
// webhook.disabled).
func (s *Service) mailWebhookDisabled(ctx context.Context, tx store.Tx, hook hosting.Webhook, reason string) error {
	a, err := tx.Account(ctx, hook.AccountID)
	if err != nil {
		return internal("account", err)
	}
	_, err = s.mailAccount(ctx, tx, hook.AccountID, mail.WebhookDisabled{Email: a.Email, WebhookURL: hook.URL, Reason: reason,
		SettingsURL: s.link(fmt.Sprintf("/settings/webhooks/%d", hook.ID))}, mail.Thread{})
	return err
}

// MailWorker sends the mail jobs through a mail.Sender: a permanent failure (an
// invalid message, a 5xx) ends the job at once, any other is retried on
// MailRetryWait's schedule until the last attempt.
type MailWorker struct {
	river.WorkerDefaults[MailArgs]
	s      *Service
	sender mail.Sender
	jobs   MailJobs
}

// MailJobs writes a mail job's River row in a transaction of the store, for what
// River's own bookkeeping would record too late: Complete marks the job completed
// (river.JobCompleteTx bound to the store's driver); Ending sets (on) or clears the
// job's metadata key MailEndKey, which says that an attempt is sending the mail's
// end. Either may be nil (the worker then does without: at least once).
type MailJobs struct {
	Complete func(ctx context.Context, tx *sql.Tx, job *river.Job[MailArgs]) error
	Ending   func(ctx context.Context, tx *sql.Tx, jobID int64, on bool) error
}

// MailEndKey is the key of a mail job's metadata that an attempt sets before it
// sends the mail's end (DATA's final ".") and clears when the server did not take
// the mail: an attempt that finds it set follows one whose process died with the
// mail sent or on its way, and does not send it again.
const MailEndKey = "berth_mail_end"

// NewMailWorker is the worker of s's mails, sending through sender, its job rows
// written through jobs.
func NewMailWorker(s *Service, sender mail.Sender, jobs MailJobs) *MailWorker {
	return &MailWorker{s: s, sender: sender, jobs: jobs}
}

// Timeout bounds an attempt (the SMTP client's own timeouts are shorter).
func (w *MailWorker) Timeout(*river.Job[MailArgs]) time.Duration { return 2 * time.Minute }

// Work makes one attempt.
func (w *MailWorker) Work(ctx context.Context, job *river.Job[MailArgs]) error {
	a := job.Args
	// In transactions of their own, not of ctx: a stop that cancels ctx now must not
	// leave a sent mail's job to run again.
	inTx := func(f func(ctx context.Context, tx *sql.Tx) error) error {
		done, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		return w.s.store.InTx(done, func(tx store.Tx) error { return f(done, tx.SQL()) })
	}
	complete := func() {
		if w.jobs.Complete == nil {
			return
		}
		if err := inTx(func(ctx context.Context, tx *sql.Tx) error { return w.jobs.Complete(ctx, tx, job) }); err != nil {
			w.s.log.Warn("a sent mail's job not marked completed at once: River does it", "message_id", a.Message.MessageID, "err", err)
		}
	}
	if mailEnding(job) {
		w.s.log.Info("mail sent by an attempt a restart cut off: not sent again", "what", a.What, "account", a.AccountID,
			"message_id", a.Message.MessageID, "attempt", job.Attempt)
		complete()
		return nil
	}
	var err error
	marked := false
	if cs, ok := w.sender.(mail.CommitSender); ok && w.jobs.Ending != nil {
		err = cs.SendCommit(ctx, a.Message, func() error {
			if err := inTx(func(ctx context.Context, tx *sql.Tx) error { return w.jobs.Ending(ctx, tx, job.ID, true) }); err != nil {
				return fmt.Errorf("mark the mail's end in its job: %w", err)
			}
			marked = true
			return nil
		})
	} else {
		err = w.sender.Send(ctx, a.Message)
	}
	if err == nil {
		w.s.log.Info("mail sent", "what", a.What, "account", a.AccountID, "message_id", a.Message.MessageID, "attempt", job.Attempt)
		complete()
		return nil
	}
	if marked {
		// The server did not take the mail (or its answer was lost): the next attempt
		// is to send it.
		if uerr := inTx(func(ctx context.Context, tx *sql.Tx) error { return w.jobs.Ending(ctx, tx, job.ID, false) }); uerr != nil {
			w.s.log.Error("mail lost: not taken by the server, and its job still says it was sent", "what", a.What,
				"account", a.AccountID, "message_id", a.Message.MessageID, "err", err, "unmark_err", uerr)
		}
	}
	if mail.Permanent(err) {
		w.s.log.Error("mail refused for good", "what", a.What, "account", a.AccountID, "message_id", a.Message.MessageID, "err", err)
		return river.JobCancel(err)
	}
	if job.Attempt >= job.MaxAttempts {
		w.s.log.Error("mail given up", "what", a.What, "account", a.AccountID, "message_id", a.Message.MessageID,
			"attempts", job.Attempt, "err", err)
	}
	return fmt.Errorf("mail %s (%s), attempt %d of %d: %w", a.Message.MessageID, a.What, job.Attempt, job.MaxAttempts, err)
}

// mailEnding reports whether job's metadata holds MailEndKey: an attempt before
// this one sent, or was sending, the mail's end when its process died.
func mailEnding(job *river.Job[MailArgs]) bool {
	var meta map[string]json.RawMessage
	if len(job.Metadata) == 0 || json.Unmarshal(job.Metadata, &meta) != nil {
		return false
	}
	_, ok := meta[MailEndKey]
	return ok
}
