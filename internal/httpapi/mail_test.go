package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/riverqueue/river/rivertype"
	"log/slog"
	netmail "net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/app"
	"github.com/berthhq/berth/internal/mail"
	"github.com/berthhq/berth/internal/mail/mailtest"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/webhook"
)

// The mails of the core's own changes (issue 31), each through a real SMTP server
// (go-smtp, in-process) from its real trigger: the hourly charge that takes the
// credit low and the one that exhausts it, a webhook disabled by failures; a retry
// after the server refused once; the log when no SMTP server is configured.

const (
	mailPublicURL = "https://cloud.example"
	mailFrom      = "Example Hosting <noreply@hosting.example>"
)

// mailOptions are testenv options sending mail to srv.
func mailOptions(srv *mailtest.Server) testenv.Options {
	return testenv.Options{PublicURL: mailPublicURL, Mail: app.MailConfig{SMTPURL: srv.URL(), From: mailFrom}}
}

// accountEmail is the email of account a.
func accountEmail(t *testing.T, env *testenv.Env, a *testenv.Account) string {
	t.Helper()
	acct, err := env.App.DB.Account(context.Background(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	return acct.Email
}

// wantMail checks what every mail of Berth has: to, from, the subject, the language,
// a Message-ID on --public-url's host, the text and the HTML bodies holding want.
func wantMail(t *testing.T, m mailtest.Received, to, subject, lang string, want ...string) {
	t.Helper()
	if a, err := netmail.ParseAddress(m.To); err != nil || a.Address != to || strings.Join(m.EnvelopeTo, ",") != to {
		t.Errorf("to %q (envelope %q), want %q", m.To, m.EnvelopeTo, to)
	}
	if a, err := netmail.ParseAddress(m.From); err != nil || a.String() != `"Example Hosting" <noreply@hosting.example>` ||
		m.EnvelopeFrom != "noreply@hosting.example" {
		t.Errorf("from %q (envelope %q), want %q", m.From, m.EnvelopeFrom, mailFrom)
	}
	if m.Subject != subject {
		t.Errorf("subject %q, want %q", m.Subject, subject)
	}
	if m.Language != lang {
		t.Errorf("language %q, want %q", m.Language, lang)
	}
	if !strings.HasSuffix(m.MessageID, "@cloud.example") {
		t.Errorf("message id %q: want one on --public-url's host", m.MessageID)
	}
	if m.ContentType != "multipart/alternative" || m.HTML == "" {
		t.Errorf("content type %q, html %d bytes: want text and HTML", m.ContentType, len(m.HTML))
	}
	for _, w := range want {
		if !strings.Contains(m.Text, w) || !strings.Contains(m.HTML, w) {
			t.Errorf("the mail lacks %q:\n%s", w, m.Text)
		}
	}
}

// mailJobs are the mail jobs of the queue.
func mailJobs(t *testing.T, env *testenv.Env) int {
	t.Helper()
	jobs, err := env.App.Jobs(context.Background(), ops.MailKind)
	if err != nil {
		t.Fatal(err)
	}
	return len(jobs)
}

// TestMailCreditLowAndSuspension: the hourly charge that takes an account's credit
// below hosting.CreditLowDays of its burn writes billing.credit_low and mails nothing;
// the one that takes it below hosting.CreditMailDays (its days_left below 3) mails the
// warning, once for that fall (the next charge, still below, mails nothing); the charge
// that exhausts it mails the suspension notice. Both in the account's language
// (German), their links on --public-url.
func TestMailCreditLowAndSuspension(t *testing.T) {
	t.Parallel()
	srv := mailtest.NewServer(t, mailtest.ServerOptions{})
	o := mailOptions(srv)
	o.RateLimit = 100000
	env, clock := billingEnv(t, o)
	a := env.NewAccount("de", "1.1830", "") // 169 hours of plan 1: 7 days after its first
	email := accountEmail(t, env, a)
	srv2 := runningServer(t, a)

	clock.Set(billingStart.Add(time.Hour)) // 1.1690 left: below 7 days of 0.0070 an hour
	meter(t, env)
	if got := eventTypes(events(t, a, "?types=billing.credit_low")); len(got) != 1 {
		t.Errorf("billing.credit_low events %v, want one", got)
	}
	time.Sleep(300 * time.Millisecond)
	if n := mailJobs(t, env); n != 0 {
		t.Errorf("%d mail jobs below 7 days (3 not reached), want none", n)
	}

	// 72 hours of credit is 0.5040: after the charge of hour 96 the credit is 0.5040
	// (not below), after hour 97's 0.4970, below 3 days.
	clock.Set(billingStart.Add(96 * time.Hour))
	meter(t, env)
	time.Sleep(300 * time.Millisecond)
	if n := mailJobs(t, env); n != 0 {
		t.Errorf("%d mail jobs at exactly 3 days of credit, want none", n)
	}
	clock.Set(billingStart.Add(97 * time.Hour))
	meter(t, env)
	low := srv.Wait(t, 1, time.Minute)[0]
	wantMail(t, low, email, "Ihr Berth-Guthaben wird knapp: noch 0.4970 EUR", "de",
		mailPublicURL+"/billing", "weniger als 3 Tage")
	clock.Set(billingStart.Add(98 * time.Hour))
	meter(t, env) // still below: no second warning
	if n := mailJobs(t, env); n != 1 {
		t.Errorf("%d mail jobs after a second charge below the threshold, want 1", n)
	}

	clock.Set(billingStart.Add(170 * time.Hour)) // every hour since: the credit runs out
	meter(t, env)
	got := srv.Wait(t, 2, time.Minute)
	wantMail(t, got[1], email, "Ihre Berth-Server wurden gesperrt", "de", mailPublicURL+"/billing")
	a.WaitStatus(t, srv2["name"].(string), "suspended", 30*time.Second)
	if got[1].MessageID == low.MessageID {
		t.Errorf("two mails under one Message-ID %s", low.MessageID)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(srv.Messages()); n != 2 {
		t.Errorf("%d mails, want 2", n)
	}
}

// TestMailWebhookDisabled: a webhook whose delivery failed every attempt is disabled,
// and its account holder is told so by mail, in French, with a link to the webhook's
// page.
func TestMailWebhookDisabled(t *testing.T) {
	t.Parallel()
	srv := mailtest.NewServer(t, mailtest.ServerOptions{})
	o := mailOptions(srv)
	o.WebhookAllowPrivate = true
	env := testenv.New(t, o)
	a := env.NewAccount("fr", "100", "")
	c := as(env, a, "")
	rcv := newReceiver(t, 500)
	hook, _ := createHook(t, c, map[string]any{"url": rcv.URL, "event_types": []string{"project.*"}})
	c.Do("POST", "/projects", map[string]any{"name": "p"}).Want(t, 201)
	for attempt := 1; attempt < webhook.MaxAttempts; attempt++ {
		retryOnSchedule(t, env, ops.WebhookDeliveryKind, attempt, time.Minute)
	}
	m := srv.Wait(t, 1, time.Minute)[0]
	wantMail(t, m, accountEmail(t, env, a), "Votre webhook Berth a été désactivé", "fr",
		rcv.URL, mailPublicURL+"/settings/webhooks/"+hook, "a échoué")
	if w := data(t, c.Do("GET", "/webhooks/"+hook, nil).Want(t, 200)); w["enabled"] != false {
		t.Errorf("webhook %v", w)
	}
}

// TestMailRetriedAfterRefusal: a mail the SMTP server refuses with a 4xx is tried
// again on MailRetryWait's schedule and delivered once, under the Message-ID of the
// refused attempt.
func TestMailRetriedAfterRefusal(t *testing.T) {
	t.Parallel()
	srv := mailtest.NewServer(t, mailtest.ServerOptions{})
	srv.Refuse(451, 1)
	env := testenv.New(t, mailOptions(srv))
	a := env.NewAccount("en", "100", "")
	email := accountEmail(t, env, a)
	ctx := context.Background()
	if err := env.App.Service.RequestPasswordReset(ctx, email); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		jobs, err := env.App.Jobs(ctx, ops.MailKind)
		if err != nil || len(jobs) != 1 {
			t.Fatalf("mail jobs %v, %v", jobs, err)
		}
		j := jobs[0]
		if (j.State == "retryable" || j.State == "available") && j.Attempt == 1 && len(j.Errors) == 1 {
			if got, want := j.ScheduledAt.Sub(*j.AttemptedAt), ops.MailRetryWait(1); got != want {
				t.Errorf("the retry comes %s after the refusal, want %s", got, want)
			}
			if !strings.Contains(j.Errors[0].Error, "451") {
				t.Errorf("the attempt's error %q does not say what the server answered", j.Errors[0].Error)
			}
			if err := env.App.RetryJob(ctx, j.ID); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("mail job %s at attempt %d, want it refused once", j.State, j.Attempt)
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := srv.Wait(t, 1, time.Minute)
	refused := srv.Refused()
	if len(refused) != 1 || refused[0].MessageID == "" || refused[0].MessageID != got[0].MessageID {
		t.Errorf("refused %v, delivered %s: want the same Message-ID", refused, got[0].MessageID)
	}
	waitJobState(t, env, ops.MailKind, "completed")
	if n, att := len(srv.Messages()), srv.Attempts(); n != 1 || att != 2 {
		t.Errorf("%d delivered in %d attempts, want 1 in 2", n, att)
	}
}

// waitJobState waits for the one job of kind to reach state.
func waitJobState(t *testing.T, env *testenv.Env, kind, state string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		jobs, err := env.App.Jobs(context.Background(), kind)
		if err != nil || len(jobs) != 1 {
			t.Fatalf("%s jobs %v, %v", kind, jobs, err)
		}
		if string(jobs[0].State) == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s job %s, want %s", kind, jobs[0].State, state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lockedBuffer is a log's output, read while it is written.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestMailWithoutSMTPIsLogged: with no --smtp-url a mail is written to the log (its
// link with it, what a developer needs) and its job completes.
func TestMailWithoutSMTPIsLogged(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	env := testenv.New(t, testenv.Options{PublicURL: mailPublicURL, Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	a := env.NewAccount("en", "100", "")
	email := accountEmail(t, env, a)
	if err := env.App.Service.RequestPasswordReset(context.Background(), email); err != nil {
		t.Fatal(err)
	}
	waitJobState(t, env, ops.MailKind, "completed")
	log := buf.String()
	var line string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, mail.LogMessage) {
			line = l
		}
	}
	for _, want := range []string{`"to":"` + email + `"`, `"subject":"Reset your Berth password"`, `"message_id":"`,
		mailPublicURL + ops.PasswordResetPath} {
		if !strings.Contains(line, want) {
			t.Errorf("the log's mail line lacks %s:\n%s", want, line)
		}
	}
	if !strings.Contains(log, "no --smtp-url") {
		t.Error("the start does not warn that mail is only logged")
	}
}

// TestMailTickets: a ticket's mails, through a real SMTP server. A new ticket and the
// customer's next message go to --support-email, in English, the first the root of
// the ticket's thread and the second in reply to it; a staff reply goes to the account
// holder in the account's language (French), in the same thread, with the staff name
// and a link to the ticket's page; an internal note is never mailed.
func TestMailTickets(t *testing.T) {
	t.Parallel()
	srv := mailtest.NewServer(t, mailtest.ServerOptions{})
	o := mailOptions(srv)
	o.Mail.Support = "support@hosting.example"
	env := testenv.New(t, o)
	ctx := context.Background()
	a := env.NewAccount("fr", "10", "")
	email := accountEmail(t, env, a)
	_, staff := makeStaff(t, env)

	tk := data(t, a.Do("POST", "/tickets", map[string]any{"subject": "Disque plein", "body": "Mon serveur ne démarre plus."}).Want(t, 201))
	id := num(t, tk["id"])
	opened := srv.Wait(t, 1, time.Minute)[0]
	wantMail(t, opened, "support@hosting.example", fmt.Sprintf("[#%d] New ticket: Disque plein", id), "en",
		"Mon serveur ne démarre plus.", email, fmt.Sprintf("%s/staff/tickets/%d", mailPublicURL, id))
	root := opened.MessageID
	if opened.InReplyTo != "" || len(opened.References) != 0 {
		t.Errorf("the new ticket's mail is in reply to %q %v, want the thread's root", opened.InReplyTo, opened.References)
	}

	if _, err := env.App.Service.StaffNote(ctx, id, ops.StaffAuthor{AccountID: &staff.ID}, "Internal: host 3 is flaky"); err != nil {
		t.Fatal(err)
	}
	if _, err := env.App.Service.StaffReply(ctx, id, ops.StaffAuthor{AccountID: &staff.ID, Name: "Ada"}, "Nous regardons.", nil); err != nil {
		t.Fatal(err)
	}
	reply := srv.Wait(t, 2, time.Minute)[1]
	wantMail(t, reply, email, reply.Subject, "fr", "Nous regardons.", "Ada", fmt.Sprintf("%s/support/%d", mailPublicURL, id))
	if reply.InReplyTo != root || len(reply.References) != 1 || reply.References[0] != root {
		t.Errorf("the reply's thread: In-Reply-To %q, References %v, want %s", reply.InReplyTo, reply.References, root)
	}
	if !strings.Contains(reply.Subject, "Disque plein") {
		t.Errorf("the reply's subject %q does not name the ticket", reply.Subject)
	}

	a.Do("POST", fmt.Sprintf("/tickets/%d/messages", id), map[string]any{"body": "Merci !"}).Want(t, 201)
	again := srv.Wait(t, 3, time.Minute)[2]
	wantMail(t, again, "support@hosting.example", again.Subject, "en", "Merci !")
	if !strings.Contains(again.Subject, "Disque plein") || !strings.Contains(again.Subject, fmt.Sprintf("#%d", id)) {
		t.Errorf("the customer's message's subject %q", again.Subject)
	}
	if again.InReplyTo != root {
		t.Errorf("the customer's message In-Reply-To %q, want %s", again.InReplyTo, root)
	}
	time.Sleep(300 * time.Millisecond)
	for _, m := range srv.Messages() {
		if strings.Contains(m.Text, "host 3") || strings.Contains(m.HTML, "host 3") {
			t.Errorf("an internal note was mailed to %v", m.EnvelopeTo)
		}
	}
	if n := len(srv.Messages()); n != 3 {
		t.Errorf("%d mails, want 3", n)
	}
}

// TestSandboxResetDropsQueuedMail: a sandbox reset drops the account's mails still
// waiting to be sent (here one the SMTP server refused, waiting for its retry): they
// told of what the reset took away. Another account's waiting mail stays.
func TestSandboxResetDropsQueuedMail(t *testing.T) {
	t.Parallel()
	srv := mailtest.NewServer(t, mailtest.ServerOptions{})
	srv.Refuse(451, 100)
	o := mailOptions(srv)
	o.Sandbox = true
	o.Mail.Support = "support@hosting.example"
	env := testenv.New(t, o)
	a := env.NewAccount("en", "10", "")
	b := env.NewAccount("en", "10", "")
	for _, c := range []*testenv.Account{a, b} {
		c.Do("POST", "/tickets", map[string]any{"subject": "s", "body": "b"}).Want(t, 201)
	}
	waiting := func() map[int64]int {
		t.Helper()
		jobs, err := env.App.Jobs(context.Background(), ops.MailKind)
		if err != nil {
			t.Fatal(err)
		}
		out := map[int64]int{}
		for _, j := range jobs {
			var args ops.MailArgs
			if err := json.Unmarshal(j.EncodedArgs, &args); err != nil {
				t.Fatal(err)
			}
			if j.State == rivertype.JobStateRetryable || j.State == rivertype.JobStateAvailable || j.State == rivertype.JobStateScheduled {
				out[args.AccountID]++
			}
		}
		return out
	}
	deadline := time.Now().Add(time.Minute)
	for srv.Attempts() < 2 || waiting()[a.ID] != 1 || waiting()[b.ID] != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the two mails are not waiting for a retry: %v, %d attempts", waiting(), srv.Attempts())
		}
		time.Sleep(50 * time.Millisecond)
	}
	a.Sandbox("POST", "/reset", nil).Want(t, 200)
	if got := waiting(); got[a.ID] != 0 || got[b.ID] != 1 {
		t.Errorf("mails waiting after a's reset: %v, want only b's", got)
	}
}
