package webui_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/app"
	"github.com/berthhq/berth/internal/mail/mailtest"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testlog"
)

// Password reset from the sign-in page (issue 31), through the console's forms and a
// real SMTP server in-process: the link works once, within the hour, for its account
// only; an unknown email is answered as a known one and gets nothing; the sign-in
// throttle covers the requests.

const resetPublicURL = "https://console.example"

var resetLinkRE = regexp.MustCompile(regexp.QuoteMeta(resetPublicURL+ops.PasswordResetPath) + `([A-Za-z0-9_-]{43})`)

// resetEnv is a Berth mailing to a go-smtp server, on a fake clock.
func resetEnv(t *testing.T) (*testenv.Env, *mailtest.Server, *testenv.FakeClock) {
	t.Helper()
	srv := mailtest.NewServer(t, mailtest.ServerOptions{})
	clock := testenv.NewFakeClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	env := testenv.New(t, testenv.Options{PublicURL: resetPublicURL, Clock: clock.Now,
		Mail: app.MailConfig{SMTPURL: srv.URL(), From: "Berth <noreply@console.example>"}})
	return env, srv, clock
}

// askReset asks for a reset of email on the form the sign-in page links to.
func askReset(t *testing.T, v *visitor, email string) page {
	t.Helper()
	if p := v.get("/signin"); !strings.Contains(p.body, `href="/password-reset"`) {
		t.Fatalf("the sign-in page has no link to reset a password")
	}
	wantStatus(t, v.get("/password-reset"), http.StatusOK)
	return v.post("/password-reset", url.Values{"email": {email}})
}

// resetToken is the token of the reset link in mail m.
func resetToken(t *testing.T, m mailtest.Received) string {
	t.Helper()
	got := resetLinkRE.FindStringSubmatch(m.Text)
	if got == nil || !strings.Contains(m.HTML, `href="`+got[0]+`"`) {
		t.Fatalf("no reset link on --public-url in the mail:\n%s\n%s", m.Text, m.HTML)
	}
	return got[1]
}

func TestPasswordResetByMail(t *testing.T) {
	t.Parallel()
	env, srv, _ := resetEnv(t)
	a, email := newAccount(t, env, "de")
	elsewhere := newVisitor(t, env) // signed in on another device
	wantStatus(t, elsewhere.signIn(email, password), http.StatusSeeOther)

	v := newVisitor(t, env)
	p := askReset(t, v, email)
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, "If an account has this email, a link")
	m := srv.Wait(t, 1, time.Minute)[0]
	if m.To != "<"+email+">" && m.To != email {
		t.Errorf("to %q, want %s", m.To, email)
	}
	if m.Subject != "Ihr Berth-Passwort zurücksetzen" || m.Language != "de" || !strings.Contains(m.Text, "60 Minuten") {
		t.Errorf("subject %q language %q: want the account's German:\n%s", m.Subject, m.Language, m.Text)
	}
	if !strings.HasSuffix(m.MessageID, "@console.example") || !strings.Contains(m.From, "noreply@console.example") {
		t.Errorf("message id %q from %q", m.MessageID, m.From)
	}
	token := resetToken(t, m)

	// The link's form; a password out of bounds is refused and leaves the link good.
	p = v.get(ops.PasswordResetPath + token)
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, email)
	p = v.post(ops.PasswordResetPath+token, url.Values{"new_password": {"short"}, "new_password_again": {"short"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	p = v.post(ops.PasswordResetPath+token, url.Values{"new_password": {"a new long password"}, "new_password_again": {"another one"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)

	p = v.post(ops.PasswordResetPath+token, url.Values{"new_password": {"a new long password"}, "new_password_again": {"a new long password"}})
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, "Your password was changed")
	// Every session of the account ended; the old password is gone, the new one works.
	if p := elsewhere.get("/servers"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/signin") {
		t.Errorf("the other device's session after the reset: %d → %q, want it signed out", p.status, p.location)
	}
	wantStatus(t, newVisitor(t, env).signIn(email, password), http.StatusUnauthorized)
	wantStatus(t, newVisitor(t, env).signIn(email, "a new long password"), http.StatusSeeOther)

	// Once only.
	wantStatus(t, v.get(ops.PasswordResetPath+token), http.StatusNotFound)
	p = v.post(ops.PasswordResetPath+token, url.Values{"new_password": {"a third password"}, "new_password_again": {"a third password"}})
	wantStatus(t, p, http.StatusNotFound)
	wantText(t, p, "This link does not work")
	wantStatus(t, newVisitor(t, env).signIn(email, "a new long password"), http.StatusSeeOther)
	_ = a
}

// TestPasswordResetExpires: a link works until an hour after it was asked for, not
// after.
func TestPasswordResetExpires(t *testing.T) {
	t.Parallel()
	env, srv, clock := resetEnv(t)
	_, email := newAccount(t, env, "en")
	v := newVisitor(t, env)
	wantStatus(t, askReset(t, v, email), http.StatusOK)
	wantStatus(t, askReset(t, v, email), http.StatusOK)
	got := srv.Wait(t, 2, time.Minute)
	first, second := resetToken(t, got[0]), resetToken(t, got[1])
	clock.Advance(59 * time.Minute)
	wantStatus(t, v.get(ops.PasswordResetPath+first), http.StatusOK)
	clock.Advance(time.Minute)
	wantStatus(t, v.get(ops.PasswordResetPath+first), http.StatusNotFound)
	p := v.post(ops.PasswordResetPath+second, url.Values{"new_password": {"a new long password"}, "new_password_again": {"a new long password"}})
	wantStatus(t, p, http.StatusNotFound)
	wantStatus(t, newVisitor(t, env).signIn(email, password), http.StatusSeeOther)
}

// TestPasswordResetIsForItsAccountOnly: a link sets the password of the account it
// was mailed for, whoever opens it (another account's holder signed in included),
// and no other account's; a used link dies with the account's other open links; a
// made-up token works for none.
func TestPasswordResetIsForItsAccountOnly(t *testing.T) {
	t.Parallel()
	env, srv, _ := resetEnv(t)
	_, alice := newAccount(t, env, "en")
	bob, _ := signedIn(t, env, "en")
	_, bobEmail := newAccount(t, env, "en")
	v := newVisitor(t, env)
	wantStatus(t, askReset(t, v, alice), http.StatusOK)
	wantStatus(t, askReset(t, v, bobEmail), http.StatusOK)
	wantStatus(t, askReset(t, v, alice), http.StatusOK)
	tokens := map[string][]string{} // by recipient: the mails may arrive in any order
	for _, m := range srv.Wait(t, 3, time.Minute) {
		to := strings.Trim(m.To, "<>")
		tokens[to] = append(tokens[to], resetToken(t, m))
	}
	if len(tokens[alice]) != 2 || len(tokens[bobEmail]) != 1 {
		t.Fatalf("reset links by recipient: %v", tokens)
	}
	aliceToken, aliceAgain, bobToken := tokens[alice][0], tokens[alice][1], tokens[bobEmail][0]

	p := bob.get(ops.PasswordResetPath + aliceToken)
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, alice)
	p = bob.post(ops.PasswordResetPath+aliceToken, url.Values{"new_password": {"alice's new one"}, "new_password_again": {"alice's new one"}})
	wantStatus(t, p, http.StatusOK)
	wantStatus(t, newVisitor(t, env).signIn(alice, "alice's new one"), http.StatusSeeOther)
	wantStatus(t, newVisitor(t, env).signIn(bobEmail, password), http.StatusSeeOther)
	wantStatus(t, newVisitor(t, env).signIn(bobEmail, "alice's new one"), http.StatusUnauthorized)
	// Alice's other link died with the one used; Bob's still works.
	wantStatus(t, v.get(ops.PasswordResetPath+aliceAgain), http.StatusNotFound)
	wantStatus(t, v.get(ops.PasswordResetPath+bobToken), http.StatusOK)
	wantStatus(t, v.get(ops.PasswordResetPath+strings.Repeat("A", 43)), http.StatusNotFound)
}

// TestPasswordResetUnknownEmail: an email no account has is answered with the same
// page and status as an account's, and nothing is queued or sent for it.
func TestPasswordResetUnknownEmail(t *testing.T) {
	t.Parallel()
	env, srv, _ := resetEnv(t)
	_, email := newAccount(t, env, "en")
	v := newVisitor(t, env)
	known := askReset(t, v, email)
	unknown := askReset(t, v, "nobody-"+email)
	if known.status != unknown.status || known.body != unknown.body {
		t.Errorf("known email: %d\n%s\nunknown: %d\n%s", known.status, known.body, unknown.status, unknown.body)
	}
	// An email no account can have, a NUL in it (a 500 on PostgreSQL once).
	if nul := askReset(t, v, email+"\x00"); nul.status != known.status || nul.body != known.body {
		t.Errorf("known email: %d\n%s\nwith a NUL: %d\n%s", known.status, known.body, nul.status, nul.body)
	}
	srv.Wait(t, 1, time.Minute)
	jobs, err := env.App.Jobs(context.Background(), ops.MailKind)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("mail jobs %d, %v; want the known email's only", len(jobs), err)
	}
	time.Sleep(200 * time.Millisecond)
	if got := srv.Messages(); len(got) != 1 || !strings.Contains(got[0].To, email) || strings.Contains(got[0].To, "nobody") {
		t.Errorf("mails %v", got)
	}
}

// TestPasswordResetThrottle: a reset request counts as a failed sign-in of its email
// and of its address: the sixth request for one email in the window is refused (and
// sends nothing), and so is a sign-in with that email; an unknown email is throttled
// alike.
func TestPasswordResetThrottle(t *testing.T) {
	t.Parallel()
	env, srv, _ := resetEnv(t)
	_, email := newAccount(t, env, "en")
	v := newVisitor(t, env)
	for i := range 5 {
		if p := askReset(t, v, email); p.status != http.StatusOK {
			t.Fatalf("request %d: %d", i+1, p.status)
		}
	}
	p := askReset(t, v, strings.ToUpper(email))
	wantStatus(t, p, http.StatusTooManyRequests)
	wantText(t, p, "Too many failed sign-ins")
	wantStatus(t, newVisitor(t, env).signIn(email, password), http.StatusTooManyRequests)
	srv.Wait(t, 5, time.Minute)
	time.Sleep(200 * time.Millisecond)
	if n := len(srv.Messages()); n != 5 {
		t.Errorf("%d mails, want 5", n)
	}
	// The address: 20 requests over any emails, then none.
	w := newVisitor(t, env)
	for i := range 15 {
		if p := askReset(t, w, "nobody"+strings.Repeat("x", i)+"@example.com"); p.status != http.StatusOK {
			t.Fatalf("request %d from the address: %d", i+1, p.status)
		}
	}
	_, fresh := newAccount(t, env, "en")
	wantStatus(t, askReset(t, w, fresh), http.StatusTooManyRequests)
}

// TestConsoleErrorLogHoldsNoResetToken: a console request that fails inside (here, the
// store closed under it) is logged with its route's pattern, never its path: a
// password-reset link's path holds the token, which must not reach the log.
func TestConsoleErrorLogHoldsNoResetToken(t *testing.T) {
	t.Parallel()
	var log testlog.Buffer
	env := testenv.New(t, testenv.Options{Logger: slog.New(slog.NewJSONHandler(&log, nil))})
	v := newVisitor(t, env)
	const token = "AAAAsecretTokenOfThirtyTwoBytesBase64urlAAAA"
	if err := env.App.DB.Close(); err != nil {
		t.Fatal(err)
	}
	p := v.get(ops.PasswordResetPath + token)
	if p.status != http.StatusInternalServerError {
		t.Fatalf("with the store closed: %d, want 500", p.status)
	}
	out := log.String()
	if !strings.Contains(out, "console request failed") || !strings.Contains(out, "/password-reset/{token}") {
		t.Errorf("the failure is not logged with its route:\n%s\n%.300s", out, p.body)
	}
	if strings.Contains(out, token) {
		t.Errorf("the log holds the reset token:\n%s", out)
	}
}

// TestPasswordResetFormsNeedTheirToken: both forms are refused without the
// pre-session CSRF token (403) and send nothing; an empty email is asked for again.
func TestPasswordResetFormsNeedTheirToken(t *testing.T) {
	t.Parallel()
	env, srv, _ := resetEnv(t)
	_, email := newAccount(t, env, "en")
	v := newVisitor(t, env)
	v.get("/password-reset")
	wantStatus(t, v.post("/password-reset", url.Values{"email": {email}, "csrf": {"forged"}}), http.StatusForbidden)
	wantStatus(t, v.post("/password-reset", url.Values{"email": {" "}}), http.StatusUnprocessableEntity)
	wantStatus(t, askReset(t, v, email), http.StatusOK)
	token := resetToken(t, srv.Wait(t, 1, time.Minute)[0])
	other := newVisitor(t, env) // no pre-session cookie at all
	p := other.post(ops.PasswordResetPath+token, url.Values{"new_password": {"a new long password"},
		"new_password_again": {"a new long password"}, "csrf": {"x"}})
	wantStatus(t, p, http.StatusForbidden)
	wantStatus(t, newVisitor(t, env).signIn(email, password), http.StatusSeeOther) // unchanged
	if n := len(srv.Messages()); n != 1 {
		t.Errorf("%d mails, want 1", n)
	}
}
