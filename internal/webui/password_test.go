package webui_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

const newPassword = "a new horse, stapled"

// TestConsoleChangePassword: Settings changes the password. A wrong current
// password, a new one too short and a repetition that differs are each refused, all
// at once, in the account's language, and change nothing; a form without the
// session's CSRF token is refused. Once changed, the account signs in with the new
// password only, the session that changed it stays signed in, its other sessions
// are signed out, and an account.updated event names "password".
func TestConsoleChangePassword(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a, email := newAccount(t, env, "en")
	token, _ := apiToken(t, env, a.ID)
	v, other := newVisitor(t, env), newVisitor(t, env)
	for _, x := range []*visitor{v, other} {
		wantStatus(t, x.signIn(email, password), http.StatusSeeOther)
	}
	settings := v.get("/settings")
	wantText(t, settings, `action="/settings/password"`, `name="current_password"`, `autocomplete="new-password"`)

	change := func(current, next, again string) page {
		t.Helper()
		v.get("/settings")
		p := v.post("/settings/password", url.Values{"current_password": {current}, "new_password": {next},
			"new_password_again": {again}})
		return v.follow(p)
	}
	refused := []struct {
		name                 string
		current, next, again string
		want                 []string
	}{
		{"wrong current password", "not the password", newPassword, newPassword, []string{"The current password is wrong."}},
		{"repetition differs", password, newPassword, newPassword + "!", []string{"The new password and its repetition differ."}},
		{"too short", password, "short", "short", []string{"The new password must have 8 to 72 bytes"}},
		{"too long", password, strings.Repeat("é", 37), strings.Repeat("é", 37), []string{"The new password must have 8 to 72 bytes"}},
		{"all at once", "", "", "x", []string{"This field is required.", "The new password must have 8 to 72 bytes",
			"The new password and its repetition differ."}},
	}
	for _, tt := range refused {
		p := change(tt.current, tt.next, tt.again)
		wantText(t, p, `class="notice error"`)
		wantText(t, p, tt.want...)
		if strings.Contains(p.body, "The password was changed") {
			t.Errorf("%s: changed", tt.name)
		}
	}
	// Without the session's token nothing is changed either.
	p := v.post("/settings/password", url.Values{"csrf": {"guess"}, "current_password": {password},
		"new_password": {newPassword}, "new_password_again": {newPassword}})
	wantStatus(t, p, http.StatusForbidden)
	if p := newVisitor(t, env).signIn(email, newPassword); p.status != http.StatusUnauthorized {
		t.Fatalf("before the change the new password signs in: %d", p.status)
	}
	wantStatus(t, other.get("/settings"), http.StatusOK)

	p = change(password, newPassword, newPassword)
	wantText(t, p, `class="notice ok"`, "The password was changed.")
	wantStatus(t, v.get("/servers"), http.StatusOK)
	if p := other.get("/servers"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/signin") {
		t.Errorf("the other session after the change: %d %q, want it signed out", p.status, p.location)
	}
	wantStatus(t, newVisitor(t, env).signIn(email, password), http.StatusUnauthorized)
	if p := newVisitor(t, env).signIn(email, newPassword); p.status != http.StatusSeeOther || p.location != "/servers" {
		t.Errorf("the new password: %d %q", p.status, p.location)
	}

	events := env.Do(token, "GET", "/events", nil, nil).Want(t, http.StatusOK).Map(t)["data"].([]any)
	var changes []string
	for _, e := range events {
		e := e.(map[string]any)
		if e["type"] == "account.updated" {
			changes = append(changes, fmt.Sprint(e["data"].(map[string]any)["changes"]))
		}
	}
	if len(changes) != 1 || changes[0] != "[password]" {
		t.Errorf("account.updated events: %q, want one with changes [password]", changes)
	}
}

// TestConsoleChangePasswordLanguages: the form's refusals read in German and French.
func TestConsoleChangePasswordLanguages(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	for _, tt := range []struct{ lang, wrong, short, differ string }{
		{"de", "Das aktuelle Passwort ist falsch.", "Das neue Passwort muss 8 bis 72 Bytes lang sein",
			"Das neue Passwort und seine Wiederholung stimmen nicht überein."},
		{"fr", "Le mot de passe actuel est faux.", "Le nouveau mot de passe doit compter de 8 à 72 octets",
			"Le nouveau mot de passe et sa répétition diffèrent."},
	} {
		v, _ := signedIn(t, env, tt.lang)
		v.get("/settings")
		p := v.follow(v.post("/settings/password", url.Values{"current_password": {"wrong password"}, "new_password": {"short"},
			"new_password_again": {"shorter"}}))
		wantText(t, p, tt.wrong, tt.short, tt.differ)
	}
}

// TestConsoleChangePasswordThrottled: wrong current passwords count against the
// email's sign-in throttle: after as many as a sign-in may fail, even the right one
// is refused, and signing in is throttled too.
func TestConsoleChangePasswordThrottled(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	for range 5 {
		v.get("/settings")
		p := v.follow(v.post("/settings/password", url.Values{"current_password": {"guess"}, "new_password": {newPassword},
			"new_password_again": {newPassword}}))
		wantText(t, p, "The current password is wrong.")
	}
	v.get("/settings")
	p := v.follow(v.post("/settings/password", url.Values{"current_password": {password}, "new_password": {newPassword},
		"new_password_again": {newPassword}}))
	wantText(t, p, "Too many failed sign-ins")
	wantStatus(t, newVisitor(t, env).signIn(a.Email, newPassword), http.StatusTooManyRequests)
	wantStatus(t, newVisitor(t, env).signIn(a.Email, password), http.StatusTooManyRequests)
}
