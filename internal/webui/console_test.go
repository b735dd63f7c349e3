package webui_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testenv"
)

// The console's form flows through the real server (httptest), without a browser.

const password = "correct horse battery"

var seq atomic.Int64

// newAccount creates an account that signs in with email and password.
func newAccount(t *testing.T, env *testenv.Env, lang string) (hosting.Account, string) {
	t.Helper()
	email := fmt.Sprintf("holder%d@example.com", seq.Add(1))
	credit, _ := hosting.ParseMoney("100")
	a, err := env.App.Service.CreateAccount(context.Background(), ops.NewAccount{Email: email, Password: password,
		Language: lang, Credit: credit})
	if err != nil {
		t.Fatal(err)
	}
	return a, email
}

// visitor is a person with a cookie jar; it remembers the CSRF token of the last
// page it saw and sends it with every form.
type visitor struct {
	t    *testing.T
	env  *testenv.Env
	c    *http.Client
	csrf string
	// from, when set, is the client address a trusted proxy names in X-Forwarded-For.
	from string
}

func newVisitor(t *testing.T, env *testenv.Env) *visitor {
	jar, _ := cookiejar.New(nil)
	return &visitor{t: t, env: env, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	status   int
	body     string
	location string
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (v *visitor) do(req *http.Request) page {
	v.t.Helper()
	if v.from != "" {
		req.Header.Set("X-Forwarded-For", v.from)
	}
	resp, err := v.c.Do(req)
	if err != nil {
		v.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	p := page{status: resp.StatusCode, body: string(b), location: resp.Header.Get("Location")}
	if m := csrfRE.FindStringSubmatch(p.body); m != nil {
		v.csrf = m[1]
	}
	return p
}

func (v *visitor) get(path string) page {
	v.t.Helper()
	req, _ := http.NewRequest("GET", v.env.Root+path, nil)
	return v.do(req)
}

// post sends a form with the last CSRF token seen (unless form sets csrf itself).
func (v *visitor) post(path string, form url.Values) page {
	v.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", v.csrf)
	}
	req, _ := http.NewRequest("POST", v.env.Root+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return v.do(req)
}

// follow GETs where a redirect points.
func (v *visitor) follow(p page) page {
	v.t.Helper()
	if p.status != http.StatusSeeOther {
		v.t.Fatalf("status %d, want 303; body: %.500s", p.status, p.body)
	}
	return v.get(p.location)
}

func (v *visitor) signIn(email, pw string) page {
	v.t.Helper()
	v.get("/signin")
	return v.post("/signin", url.Values{"email": {email}, "password": {pw}})
}

func signedIn(t *testing.T, env *testenv.Env, lang string) (*visitor, hosting.Account) {
	t.Helper()
	a, email := newAccount(t, env, lang)
	v := newVisitor(t, env)
	if p := v.signIn(email, password); p.status != http.StatusSeeOther || p.location != "/servers" {
		t.Fatalf("sign in: %d → %q", p.status, p.location)
	}
	return v, a
}

func wantStatus(t *testing.T, p page, want int) {
	t.Helper()
	if p.status != want {
		t.Fatalf("status %d, want %d; body: %.800s", p.status, want, p.body)
	}
}

func wantText(t *testing.T, p page, texts ...string) {
	t.Helper()
	body := html.UnescapeString(p.body)
	for _, s := range texts {
		if !strings.Contains(body, s) {
			t.Errorf("page lacks %q", s)
		}
	}
}

func TestSignInAndOut(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	_, email := newAccount(t, env, "en")
	v := newVisitor(t, env)

	p := v.get("/servers")
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/signin") {
		t.Fatalf("a visitor is sent to sign in: %d %q", p.status, p.location)
	}
	p = v.signIn(email, "wrong password")
	wantStatus(t, p, http.StatusUnauthorized)
	wantText(t, p, "The email or the password is wrong.")
	p = v.signIn("nobody@example.com", password)
	wantStatus(t, p, http.StatusUnauthorized)
	wantText(t, p, "The email or the password is wrong.")
	// An email no account can have, a NUL in it (a 500 on PostgreSQL once).
	p = v.signIn(email+"\x00", password)
	wantStatus(t, p, http.StatusUnauthorized)
	wantText(t, p, "The email or the password is wrong.")

	p = v.signIn(email, password)
	wantStatus(t, p, http.StatusSeeOther)
	for _, ck := range v.c.Jar.Cookies(mustURL(env.Root)) {
		if ck.Name == "berth_session" && !strings.HasPrefix(ck.Value, ops.SessionPrefix) {
			t.Errorf("session cookie %q", ck.Value)
		}
	}
	p = v.follow(p)
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, email, "No servers yet.")

	wantStatus(t, v.post("/signout", nil), http.StatusSeeOther)
	p = v.get("/servers")
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/signin") {
		t.Fatalf("after signing out: %d %q", p.status, p.location)
	}
}

func TestSessionCookieFlags(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	_, email := newAccount(t, env, "en")
	v := newVisitor(t, env)
	v.get("/signin")
	form := url.Values{"email": {email}, "password": {password}, "csrf": {v.csrf}}
	req, _ := http.NewRequest("POST", env.Root+"/signin", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := v.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var found bool
	for _, ck := range resp.Cookies() {
		if ck.Name != "berth_session" {
			continue
		}
		found = true
		if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure {
			t.Errorf("session cookie: HttpOnly %v, SameSite %v, Secure %v (plain HTTP)", ck.HttpOnly, ck.SameSite, ck.Secure)
		}
	}
	if !found {
		t.Fatal("no session cookie")
	}
}

func TestSignInNeedsTheFormsToken(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	_, email := newAccount(t, env, "en")
	v := newVisitor(t, env) // never saw the form: no pre-session cookie
	p := v.post("/signin", url.Values{"email": {email}, "password": {password}, "csrf": {"guess"}})
	wantStatus(t, p, http.StatusForbidden)
}

func TestCSRF(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	v.get("/projects")
	for _, tt := range []struct {
		name, csrf string
	}{{"missing", ""}, {"wrong", "x" + v.csrf}, {"another session's", csrfOfAnotherSession(t, env)}} {
		p := v.post("/projects", url.Values{"name": {"web"}, "csrf": {tt.csrf}})
		if p.status != http.StatusForbidden {
			t.Errorf("%s CSRF token: status %d, want 403", tt.name, p.status)
		}
	}
	ps, _ := env.App.Service.Projects(context.Background(), hosting.Principal{Account: a})
	if len(ps) != 0 {
		t.Fatalf("a refused form created %d projects", len(ps))
	}
	p := v.follow(v.post("/projects", url.Values{"name": {"web"}}))
	wantText(t, p, "Saved.", "web")
}

// TestConsoleAudit: the console's forms go to the audit log like the API's changes,
// refused ones with their code.
func TestConsoleAudit(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	v.get("/projects")
	v.post("/projects", url.Values{"name": {"audited"}, "csrf": {"wrong"}})
	v.follow(v.post("/projects", url.Values{"name": {"audited"}}))
	log, err := env.App.Service.AuditLog(context.Background(), a.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range log {
		if e.Actor != "console" || e.Client == "" {
			t.Errorf("entry %+v", e)
		}
		got = append(got, fmt.Sprintf("%s %d %s", e.Action, e.Status, e.Code))
	}
	want := []string{"POST /projects 303 ", "POST /projects 403 csrf_failed"}
	if len(got) < 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("audit log %q, want it to start with %q", got, want)
	}
}

func csrfOfAnotherSession(t *testing.T, env *testenv.Env) string {
	v, _ := signedIn(t, env, "en")
	v.get("/projects")
	return v.csrf
}

func TestSignInThrottle(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	_, email := newAccount(t, env, "de")
	v := newVisitor(t, env)
	v.get("/signin")
	for i := range 5 {
		p := v.post("/signin", url.Values{"email": {email}, "password": {"wrong"}})
		if p.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d", i+1, p.status)
		}
	}
	// Past the budget even the right password is refused, with a clear message.
	p := v.post("/signin", url.Values{"email": {email}, "password": {password}})
	wantStatus(t, p, http.StatusTooManyRequests)
	wantText(t, p, "Too many failed sign-ins")
	// Case does not make a new email.
	p = v.post("/signin", url.Values{"email": {strings.ToUpper(email)}, "password": {password}})
	wantStatus(t, p, http.StatusTooManyRequests)

	// Another account from the same address still signs in…
	_, other := newAccount(t, env, "en")
	wantStatus(t, v.signIn(other, password), http.StatusSeeOther)
	// …until the address has failed 20 times over all emails.
	w := newVisitor(t, env)
	w.get("/signin")
	for i := range 15 {
		w.post("/signin", url.Values{"email": {fmt.Sprintf("nobody%d@example.com", i)}, "password": {"x"}})
	}
	_, third := newAccount(t, env, "en")
	wantStatus(t, w.post("/signin", url.Values{"email": {third}, "password": {password}}), http.StatusTooManyRequests)
}

// The sign-in throttle per address counts an IPv6 client by its /64 (serve
// --ipv6-limit-prefix changes the length), an IPv4 address alone, also when written
// IPv4-mapped: 20 failures from 20 addresses of one /64 stop the next address of it
// (issue 26).
func TestSignInThrottleIPv6(t *testing.T) {
	t.Parallel()
	// fail has the visitor fail to sign in from each address in turn, with emails of
	// nobody (each once: the throttle per email stays out of it).
	fail := func(t *testing.T, v *visitor, addrs []string) {
		t.Helper()
		for i, from := range addrs {
			v.from = from
			p := v.post("/signin", url.Values{"email": {fmt.Sprintf("nobody%d@example.com", seq.Add(1))}, "password": {"x"}})
			if p.status != http.StatusUnauthorized {
				t.Fatalf("failure %d from %s: status %d", i+1, from, p.status)
			}
		}
	}
	signInFrom := func(t *testing.T, env *testenv.Env, from string) page {
		t.Helper()
		_, email := newAccount(t, env, "en")
		v := newVisitor(t, env)
		v.from = from
		return v.signIn(email, password)
	}
	proxy := []string{"127.0.0.1"}
	network := func(prefix string) []string {
		addrs := make([]string, 20)
		for i := range addrs {
			addrs[i] = fmt.Sprintf("%s:%x", prefix, i+1)
		}
		return addrs
	}

	t.Run("a /64 is one client", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t, testenv.Options{TrustedProxies: proxy})
		v := newVisitor(t, env)
		v.get("/signin")
		fail(t, v, network("2001:db8:1:2:"))
		wantStatus(t, signInFrom(t, env, "2001:db8:1:2::ffff"), http.StatusTooManyRequests)
		wantStatus(t, signInFrom(t, env, "2001:db8:1:3::1"), http.StatusSeeOther)
	})

	t.Run("128: each address alone", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t, testenv.Options{TrustedProxies: proxy, IPv6LimitPrefix: 128})
		v := newVisitor(t, env)
		v.get("/signin")
		fail(t, v, network("2001:db8:1:2:"))
		wantStatus(t, signInFrom(t, env, "2001:db8:1:2::ffff"), http.StatusSeeOther)
		wantStatus(t, signInFrom(t, env, "2001:db8:1:2::1"), http.StatusSeeOther)
		// ::1 failed once above: 19 more are its 20.
		fail(t, v, slices.Repeat([]string{"2001:db8:1:2::1"}, 19))
		wantStatus(t, signInFrom(t, env, "2001:db8:1:2::1"), http.StatusTooManyRequests)
	})

	t.Run("IPv4 alone, mapped or not", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t, testenv.Options{TrustedProxies: proxy})
		v := newVisitor(t, env)
		v.get("/signin")
		addrs := make([]string, 20)
		for i := range addrs {
			addrs[i] = "198.51.100.7"
			if i%2 == 1 {
				addrs[i] = "::ffff:198.51.100.7"
			}
		}
		fail(t, v, addrs)
		wantStatus(t, signInFrom(t, env, "198.51.100.7"), http.StatusTooManyRequests)
		wantStatus(t, signInFrom(t, env, "::ffff:198.51.100.7"), http.StatusTooManyRequests)
		wantStatus(t, signInFrom(t, env, "198.51.100.8"), http.StatusSeeOther)
	})
}

func TestTokens(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, _ := signedIn(t, env, "en")
	v.get("/settings/api")

	p := v.post("/settings/api/tokens", url.Values{"name": {""}, "scopes": {"servers"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	p = v.post("/settings/api/tokens", url.Values{"name": {"ci"}, "scopes": {"servers", "nonsense"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	p = v.post("/settings/api/tokens", url.Values{"name": {"ci"}, "scopes": {"servers"}, "expires_in": {"-5h"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)

	p = v.post("/settings/api/tokens", url.Values{"name": {"deploy"}, "scopes": {"servers"}, "expires_in": {"720h"}})
	wantStatus(t, p, http.StatusOK)
	m := regexp.MustCompile(`id="new-token" class="mono" readonly value="(berth_[^"]+)"`).FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("the new token is not shown: %.2000s", p.body)
	}
	secret := m[1]
	wantText(t, p, "deploy", "read, servers")
	me := env.Do(secret, "GET", "/me", nil, nil).Want(t, 200).Map(t)["data"].(map[string]any)
	if got := fmt.Sprint(me["scopes"]); got != "[read servers]" {
		t.Errorf("scopes %s", got)
	}
	// Shown once: the list shows it, never its secret again.
	p = v.get("/settings/api")
	if strings.Contains(p.body, secret) {
		t.Fatal("the secret is shown again")
	}
	wantText(t, p, "deploy", "read, servers")
	id := regexp.MustCompile(`data-token="(\d+)"`).FindStringSubmatch(p.body)[1]

	// Another account cannot revoke it.
	w, _ := signedIn(t, env, "en")
	w.get("/settings/api")
	wantStatus(t, w.post("/settings/api/tokens/"+id+"/revoke", nil), http.StatusNotFound)
	env.Do(secret, "GET", "/me", nil, nil).Want(t, 200)

	p = v.follow(v.post("/settings/api/tokens/"+id+"/revoke", nil))
	wantText(t, p, "The token was revoked")
	env.Do(secret, "GET", "/me", nil, nil).Want(t, 401)
	if strings.Contains(p.body, `data-token="`+id+`"`) {
		t.Error("a revoked token is still listed")
	}
}

func TestLanguage(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	token, _ := apiToken(t, env, a.ID)
	p := v.get("/settings")
	wantText(t, p, `<html lang="en">`)

	p = v.follow(v.post("/settings/language", url.Values{"language": {"de"}}))
	wantText(t, p, `<html lang="de">`, "Gespeichert.", "Einstellungen", "Abrechnung")
	r := env.Do(token, "GET", "/servers/999999", nil, nil).Want(t, 404)
	if got := r.Map(t)["message"]; got != "Nicht gefunden." {
		t.Errorf("API message %q, want German", got)
	}
	p = v.follow(v.post("/settings/language", url.Values{"language": {"xx"}}))
	wantText(t, p, "Muss einer der folgenden Werte sein")
	p = v.follow(v.post("/settings/language", url.Values{"language": {"fr"}}))
	wantText(t, p, `<html lang="fr">`, "Enregistré.")
}

func TestBudget(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	token, _ := apiToken(t, env, a.ID)
	v.get("/settings")
	for _, tt := range []struct{ in, msg string }{
		{"abc", "Enter an amount"}, {"0", "more than zero"}, {"-3", "more than zero"}, {"1.23456", "Enter an amount"},
	} {
		p := v.follow(v.post("/settings/budget", url.Values{"budget": {tt.in}}))
		wantText(t, p, tt.msg)
	}
	p := v.follow(v.post("/settings/budget", url.Values{"budget": {"49,90"}}))
	wantText(t, p, "Saved.", `value="49.9"`)
	b := env.Do(token, "GET", "/billing", nil, nil).Want(t, 200).Map(t)["data"].(map[string]any)
	if b["budget"] != "49.9000" {
		t.Errorf("API budget %v", b["budget"])
	}
	wantText(t, v.get("/billing"), "49.90 EUR")
	v.follow(v.post("/settings/budget", url.Values{"budget": {""}}))
	b = env.Do(token, "GET", "/billing", nil, nil).Want(t, 200).Map(t)["data"].(map[string]any)
	if b["budget"] != nil {
		t.Errorf("budget not cleared: %v", b["budget"])
	}
}

// TestPagesShowTheirData: every page answers with its data in the HTML itself.
func TestPagesShowTheirData(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	token, _ := apiToken(t, env, a.ID)
	srv := env.Do(token, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1, "display_name": "web-1"}, nil).
		Want(t, 201).Map(t)["data"].(map[string]any)
	id := fmt.Sprint(srv["id"])
	env.Do(token, "POST", "/projects", map[string]any{"name": "shop"}, nil).Want(t, 201)
	env.Do(token, "POST", "/recipes", map[string]any{"name": "nginx", "script": "#!/bin/sh\napt-get install -y nginx\n"}, nil).Want(t, 201)
	for _, tt := range []struct {
		path  string
		texts []string
	}{
		{"/servers", []string{"web-1", srv["name"].(string)}},
		{"/servers/new", []string{"Order a server", "an hour"}},
		{"/servers/new?location_id=2", []string{`<option value="2" selected>`, `name="location_id" value="2"`}},
		{"/servers/" + id, []string{"web-1", "Snapshots", `data-chart="cpu"`, "Rescale", "in stock"}},
		{"/servers/" + id + "/delete", []string{"Delete for good"}},
		{"/servers/" + id + "/power?action=off", []string{"Force web-1 off?", `name="action" value="off"`, `href="/servers/` + id + `" data-cancel`}},
		{"/servers/" + id + "/power?action=reset", []string{"Reset web-1?"}},
		{"/servers/" + id + "/reinstall?image_id=1", []string{"Reinstall web-1 with ubuntu-24.04?", `name="image_id" value="1"`}},
		{"/servers/" + id + "/operations", []string{"Operations", "setup"}},
		{"/projects", []string{"shop"}},
		{"/recipes", []string{"nginx"}},
		{"/billing", []string{"Credit", "Server web-1: the hour from", `data-chart="spend"`}},
		{"/settings", []string{"German (Deutsch)"}},
		{"/settings/api", []string{"test"}},
		{"/ssh-keys", []string{"No SSH keys stored."}},
	} {
		p := v.get(tt.path)
		if p.status != 200 {
			t.Errorf("GET %s: %d", tt.path, p.status)
			continue
		}
		wantText(t, p, tt.texts...)
	}
	wantStatus(t, v.get("/servers/999999"), 404)
	wantStatus(t, v.get("/nonsense"), 404)
}

// TestOrderForm orders through the form; a failed order shows the form again with
// what was entered and the core's messages.
func TestOrderForm(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, _ := signedIn(t, env, "en")
	v.get("/servers/new")
	p := v.post("/servers", url.Values{"location_id": {"1"}, "plan_id": {"1"}, "source": {"image:1"}, "display_name": {"web-1"},
		"root_password": {"short"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	wantText(t, p, `value="web-1"`, "Must be between 8 and 72 characters")
	p = v.post("/servers", url.Values{"location_id": {"1"}, "plan_id": {"1"}, "source": {"app:1"}, "display_name": {"web-1"}})
	wantStatus(t, p, http.StatusSeeOther)
	p = v.follow(p)
	wantText(t, p, "web-1 is being set up.")
}

func apiToken(t *testing.T, env *testenv.Env, accountID int64) (string, hosting.Token) {
	t.Helper()
	tok, secret, err := env.App.Service.CreateToken(context.Background(), accountID, "test", "read,servers,power,snapshots,ssh-keys,recipes", 0)
	if err != nil {
		t.Fatal(err)
	}
	return secret, tok
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// TestSignInNextStaysOnSite: where a sign-in sends its visitor next (the query of GET
// /signin, the form's hidden field) is a path on this site, whatever the link said.
// The bad ones are those an outside test followed off-site in a browser.
func TestSignInNextStaysOnSite(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	_, email := newAccount(t, env, "en")
	for _, tt := range []struct{ next, want string }{
		{"/%09/evil.example", "/servers"},
		{"/./%5Cevil.example", "/servers"},
		{"/%0A/evil.example", "/servers"},
		{"//evil.example", "/servers"},
		{"https://evil.example/", "/servers"},
		{"/billing", "/billing"},
		{"/servers/./x/../y", "/servers/y"},
	} {
		raw, err := url.QueryUnescape(tt.next)
		if err != nil {
			t.Fatal(err)
		}
		v := newVisitor(t, env)
		p := v.get("/signin?next=" + tt.next)
		wantStatus(t, p, http.StatusOK)
		if strings.Contains(p.body, "evil.example") {
			t.Errorf("the sign-in form for next=%s carries it on", tt.next)
		}
		p = v.post("/signin?next="+tt.next, url.Values{"email": {email}, "password": {password}, "next": {raw}})
		if p.status != http.StatusSeeOther || p.location != tt.want {
			t.Errorf("sign in with next=%s: %d → %q, want %q", tt.next, p.status, p.location, tt.want)
		}
		// Signed in already, /signin sends on at once.
		if p := v.get("/signin?next=" + tt.next); p.status != http.StatusSeeOther || p.location != tt.want {
			t.Errorf("GET /signin?next=%s signed in: %d → %q, want %q", tt.next, p.status, p.location, tt.want)
		}
	}
}

// TestFormsMustBeText: a form value that is not UTF-8 is refused (Go keeps the bytes
// as they are), and nothing is written.
func TestFormsMustBeText(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	v.get("/projects")
	p := v.post("/projects", url.Values{"name": {"ab\xff"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	wantText(t, p, "The request body is not valid UTF-8 text")
	if ps, err := env.App.Service.Projects(context.Background(), hosting.Principal{Account: a}); err != nil || len(ps) != 0 {
		t.Fatalf("projects after a refused form: %v %v", ps, err)
	}
	wantStatus(t, v.post("/projects", url.Values{"name": {"shop é"}}), http.StatusSeeOther)
}
