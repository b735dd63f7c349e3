// Package webui serves the web console, the account holder's web interface at "/":
// server-rendered pages (html/template) that show all their data without JavaScript,
// enhanced by htmx (live status while a server is busy). Every action calls the same
// internal/ops methods as the API, so no rule is written twice. (A server's serial
// console is another thing: the core's serialconsole.go, relayed by the API's
// serialconsole.go, and shown here by serialconsole.go's page.)
//
// Security: a sign-in opens a session stored hashed (ops.SignIn); its cookie is
// HttpOnly, SameSite=Lax and Secure under TLS. Every POST carries a CSRF token derived
// from the session secret; the sign-in form one from a pre-session cookie (double
// submit). Failed sign-ins are throttled per email and per client address.
package webui

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/httpapi"
	"github.com/berthhq/berth/internal/i18n"
	"github.com/berthhq/berth/internal/metrics"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/ratelimit"
	"github.com/berthhq/berth/internal/realip"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// MetricsReader answers a server's load series (*metrics.Reader is one).
type MetricsReader interface {
	Series(ctx context.Context, serverID int64, r metrics.Range, now time.Time) (metrics.Series, error)
}

// Config tunes the console.
type Config struct {
	// Metrics draws the server charts (nil: the charts say no data).
	Metrics MetricsReader
	// SessionTTL is how long a sign-in lasts (default ops.DefaultSessionTTL).
	SessionTTL time.Duration
	// SignInFailures is how many failed sign-ins an email may have in SignInWindow
	// (default 5); a client address gets four times as many.
	SignInFailures int
	// SignInWindow is the window of the sign-in throttle (default 15 minutes).
	SignInWindow time.Duration
	// Telemetry, when set, counts failed and throttled sign-ins.
	Telemetry Telemetry
	// Limits keeps the sign-in throttle (default: in this process's memory); several
	// processes serving together share it in their store.
	Limits ratelimit.Factory
	// Grouping says which client addresses share the sign-in throttle per address
	// (serve --ipv6-limit-prefix; the zero Grouping counts an IPv6 client by its /64).
	Grouping realip.Grouping
	// ConsoleURL is the address of a server's console WebSocket with a ticket (the
	// API's, httpapi.Server.ConsoleURL; default: on the request's own host).
	ConsoleURL func(r *http.Request, serverID int64, ticket string) string
}

// Telemetry is what the console tells operators' metrics (internal/telemetry
// implements it).
type Telemetry interface {
	// RateLimited counts a 429: surface "console", by "email" or "address".
	RateLimited(surface, by string)
	// SignInFailed counts a sign-in refused for its email or password.
	SignInFailed()
}

// Console is the web interface's http.Handler.
type Console struct {
	svc     ops.Services
	cat     *i18n.Catalog
	log     *slog.Logger
	cfg     Config
	mux     *http.ServeMux
	pages   map[string]*template.Template
	byEmail ratelimit.Counter
	byAddr  ratelimit.Counter
}

// Cookie names.
const (
	sessionCookie = "berth_session"
	preCookie     = "berth_pre" // the sign-in form's CSRF secret, before a session exists
	flashCookie   = "berth_flash"
)

// maxForm caps a form body: a recipe's script may be 64 KiB.
const maxForm = 256 << 10

// New returns the console.
func New(svc ops.Services, cat *i18n.Catalog, log *slog.Logger, cfg Config) (*Console, error) {
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = ops.DefaultSessionTTL
	}
	if cfg.SignInFailures <= 0 {
		cfg.SignInFailures = 5
	}
	if cfg.SignInWindow <= 0 {
		cfg.SignInWindow = 15 * time.Minute
	}
	if cfg.Limits == nil {
		cfg.Limits = ratelimit.InMemory
	}
	if log == nil {
		log = slog.Default()
	}
	c := &Console{svc: svc, cat: cat, log: log, cfg: cfg, mux: http.NewServeMux(),
		byEmail: cfg.Limits("signin-email", cfg.SignInFailures, cfg.SignInWindow),
		byAddr:  cfg.Limits("signin-address", 4*cfg.SignInFailures, cfg.SignInWindow)}
	var err error
	if c.pages, err = parsePages(); err != nil {
		return nil, err
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	c.mux.Handle("GET /static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	}))
	c.mux.Handle("GET /favicon.ico", http.NotFoundHandler())
	c.mux.Handle("GET /signin", c.public(c.signInPage))
	c.mux.Handle("POST /signin", c.public(c.signIn))
	c.passwordResetRoutes()
	for _, rt := range c.routes() {
		c.mux.Handle(rt.pattern, c.private(rt.h))
	}
	c.mux.Handle("/", c.private(func(r *req) error { return hosting.ErrNotFound() }))
	return c, nil
}

type route struct {
	pattern string
	h       handler
}

func (c *Console) routes() []route {
	return slices.Concat(c.serverRoutes(), c.resourceRoutes(), c.domainRoutes(), c.settingsRoutes(), c.supportRoutes(),
		c.staffRoutes())
}

// serverRoutes are the pages of servers and volumes.
func (c *Console) serverRoutes() []route {
	return []route{
		{"GET /{$}", func(r *req) error { return r.redirect("/servers") }},
		{"POST /signout", c.signOut},
		{"GET /servers", c.serversPage},
		{"GET /servers/new", c.orderPage},
		{"POST /servers", c.order},
		{"GET /servers/{id}", c.serverPage},
		{"GET /servers/{id}/power", c.powerPage},
		{"POST /servers/{id}/power", c.power},
		{"GET /servers/{id}/operations", c.serverOperationsPage},
		{"GET /servers/{id}/console", c.serverConsolePage},
		{"POST /servers/{id}/console/ticket", c.consoleTicket},
		{"POST /servers/{id}/update", c.updateServer},
		{"GET /servers/{id}/reinstall", c.reinstallPage},
		{"POST /servers/{id}/reinstall", c.reinstall},
		{"POST /servers/{id}/rescale", c.rescale},
		{"POST /servers/{id}/snapshots", c.createSnapshot},
		{"GET /servers/{id}/snapshots/{sid}/restore", c.snapshotPage("restore")},
		{"POST /servers/{id}/snapshots/{sid}/restore", c.restoreSnapshot},
		{"GET /servers/{id}/snapshots/{sid}/delete", c.snapshotPage("delete")},
		{"POST /servers/{id}/snapshots/{sid}/delete", c.deleteSnapshot},
		{"GET /servers/{id}/delete", c.deleteServerPage},
		{"POST /servers/{id}/delete", c.deleteServer},
		{"POST /servers/{id}/licenses", c.addLicense},
		{"GET /servers/{id}/licenses/{lid}/remove", c.removeLicensePage},
		{"POST /servers/{id}/licenses/{lid}/remove", c.removeLicense},
		{"GET /volumes", c.volumesPage},
		{"POST /volumes", c.createVolume},
		{"GET /volumes/{id}", c.volumePage},
		{"POST /volumes/{id}/attach", c.attachVolume},
		{"POST /volumes/{id}/detach", c.detachVolume},
		{"POST /volumes/{id}/resize", c.resizeVolume},
		{"POST /volumes/{id}/rename", c.renameVolume},
		{"GET /volumes/{id}/delete", c.deleteVolumePage},
		{"POST /volumes/{id}/delete", c.deleteVolume},
	}
}

// resourceRoutes are the pages of SSH keys, projects and recipes.
func (c *Console) resourceRoutes() []route {
	return []route{
		{"GET /ssh-keys", c.keysPage},
		{"POST /ssh-keys", c.createKey},
		{"GET /ssh-keys/{id}/delete", c.deleteKeyPage},
		{"POST /ssh-keys/{id}/delete", c.deleteKey},
		{"GET /projects", c.projectsPage},
		{"POST /projects", c.createProject},
		{"POST /projects/{id}/rename", c.renameProject},
		{"POST /projects/{id}/delete", c.deleteProject},
		{"GET /recipes", c.recipesPage},
		{"POST /recipes", c.createRecipe},
		{"GET /recipes/{id}", c.recipePage},
		{"POST /recipes/{id}", c.updateRecipe},
		{"GET /recipes/{id}/delete", c.deleteRecipePage},
		{"POST /recipes/{id}/delete", c.deleteRecipe},
	}
}

// domainRoutes are the Domains pages and a server's reverse DNS (domains.go).
func (c *Console) domainRoutes() []route {
	return []route{
		{"POST /servers/{id}/rdns", c.setRDNS},
		{"GET /domains", c.domainsPage},
		{"POST /domains", c.createDomain},
		{"GET /domains/{id}", c.domainPage},
		{"POST /domains/{id}/ttl", c.setDomainTTL},
		{"POST /domains/{id}/rrsets", c.putRRset},
		{"GET /domains/{id}/rrsets/{name}/{type}/delete", c.deleteRRsetPage},
		{"POST /domains/{id}/rrsets/{name}/{type}/delete", c.deleteRRset},
		{"GET /domains/{id}/zone-file", c.zoneFile},
		{"POST /domains/{id}/zone-file", c.importZoneFile},
		{"GET /domains/{id}/delete", c.deleteDomainPage},
		{"POST /domains/{id}/delete", c.deleteDomain},
	}
}

// settingsRoutes are billing, activity and the settings pages.
func (c *Console) settingsRoutes() []route {
	return []route{
		{"GET /billing", c.billingPage},
		{"GET /activity", c.activityPage},
		{"GET /settings", c.settingsPage},
		{"POST /settings/language", c.setLanguage},
		{"POST /settings/budget", c.setBudget},
		{"POST /settings/password", c.changePassword},
		{"GET /settings/api", c.apiPage},
		{"POST /settings/api/tokens", c.createToken},
		{"GET /settings/api/tokens/{id}/revoke", c.revokeTokenPage},
		{"POST /settings/api/tokens/{id}/revoke", c.revokeToken},
		{"GET /settings/webhooks", c.webhooksPage},
		{"POST /settings/webhooks", c.createWebhook},
		{"GET /settings/webhooks/{id}", c.webhookPage},
		{"POST /settings/webhooks/{id}/enabled", c.setWebhookEnabled},
		{"POST /settings/webhooks/{id}/test", c.testWebhook},
		{"POST /settings/webhooks/{id}/rotate-secret", c.rotateWebhookSecret},
		{"GET /settings/webhooks/{id}/delete", c.deleteWebhookPage},
		{"POST /settings/webhooks/{id}/delete", c.deleteWebhook},
		{"POST /settings/webhooks/{id}/deliveries/{delivery}/redeliver", c.redeliver},
	}
}

// ServeHTTP implements http.Handler. Every answer (pages, redirects, static files,
// errors) carries the security headers of a browser page; under TLS, HSTS.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	if r.TLS != nil {
		h.Set("Strict-Transport-Security", httpapi.HSTS)
	}
	c.mux.ServeHTTP(w, r)
}

// req is what a page handler gets: the request, its writer, and who is signed in.
type req struct {
	*http.Request
	w      http.ResponseWriter
	c      *Console
	p      hosting.Principal
	lang   string
	csrf   string
	secret string
	flash  *flash
	// auditRead: a GET that the audit log records too (a staff member's read of
	// another account's ticket or file, staff.go); auditTargets are added to the
	// entry's target.
	auditRead    bool
	auditTargets []string
	// refused is the code of an error req.done told on the next page.
	refused string
}

// handler renders a page or acts on a form; an error it returns is rendered by
// Console.fail.
type handler func(r *req) error

func (r *req) ctx() context.Context { return r.Request.Context() }

func (r *req) redirect(to string) error {
	http.Redirect(r.w, r.Request, to, http.StatusSeeOther)
	return nil
}

// public serves pages for visitors who are not signed in.
func (c *Console) public(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		r := &req{Request: hr, w: sw, c: c, lang: i18n.MatchAcceptLanguage(hr.Header.Get("Accept-Language"))}
		err := h(r)
		if err != nil {
			c.fail(r, err)
		}
		c.audit(r, sw, err)
	})
}

// statusWriter remembers the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// audit writes a form's outcome to the audit log, as the API does for its changes:
// every POST of the console changes state (signing in and out included). The staff
// pages' (/staff/) are written with actor "staff", as are their reads of another
// account's ticket or file; the account is the staff member's.
func (c *Console) audit(r *req, w *statusWriter, err error) {
	if r.Method != http.MethodPost && !r.auditRead {
		return
	}
	actor := "console"
	if strings.HasPrefix(r.URL.Path, "/staff/") && r.p.Account.Staff {
		actor = "staff"
	}
	e := hosting.AuditEntry{Actor: actor, Action: r.Method + " " + strings.TrimPrefix(r.Pattern, r.Method+" "), Status: w.status,
		Client: clientAddr(r.Request)}
	if r.p.Account.ID != 0 {
		e.AccountID = &r.p.Account.ID
	}
	var targets []string
	for _, name := range []string{"id", "sid", "lid", "delivery", "name", "type"} {
		if v := r.PathValue(name); v != "" {
			targets = append(targets, name+"="+v)
		}
	}
	e.Target = strings.Join(append(targets, r.auditTargets...), " ")
	var he *hosting.Error
	if errors.As(err, &he) {
		e.Code = string(he.Code)
	} else if err != nil {
		e.Code = string(hosting.CodeInternal)
	} else {
		e.Code = r.refused // a refusal told on the page after the redirect (req.done)
	}
	c.svc.Gate.Audit(r.ctx(), e)
}

// private serves pages of a signed-in account holder: without a valid session a GET
// is sent to sign in, anything else answered 401. A POST must carry the session's
// CSRF token, and a blocked account may look but not change anything.
func (c *Console) private(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		r := &req{Request: hr, w: sw, c: c, lang: i18n.MatchAcceptLanguage(hr.Header.Get("Accept-Language"))}
		err := c.servePrivate(r, hr, h)
		if err != nil {
			c.fail(r, err)
		}
		c.audit(r, sw, err)
	})
}

func (c *Console) servePrivate(r *req, hr *http.Request, h handler) error {
	secret := ""
	if ck, err := hr.Cookie(sessionCookie); err == nil {
		secret = ck.Value
	}
	var err error
	r.p, _, err = c.svc.Sessions.SessionPrincipal(hr.Context(), secret)
	if err != nil {
		if hosting.IsCode(err, hosting.CodeUnauthenticated) && (hr.Method == http.MethodGet || hr.Method == http.MethodHead) {
			next := "/signin"
			if hr.URL.Path != "/" {
				next += "?next=" + urlQueryEscape(hr.URL.RequestURI())
			}
			return r.redirect(next)
		}
		return err
	}
	r.secret = secret
	r.csrf = csrfToken(secret)
	if i18n.Supported(r.p.Account.Language) {
		r.lang = r.p.Account.Language
	}
	if hr.Method == http.MethodPost {
		if err := parseForm(r, hr); err != nil {
			return err
		}
		if !hmac.Equal([]byte(hr.PostFormValue("csrf")), []byte(r.csrf)) {
			return errCSRF
		}
		if !validForm(hr.Form) {
			return hosting.Invalid("body", "validation.invalid_utf8")
		}
		if r.p.Account.Blocked && hr.URL.Path != "/signout" {
			return hosting.Errorf(hosting.CodeAccountBlocked, "error.account_blocked")
		}
	}
	r.flash = takeFlash(r.w, hr)
	return h(r)
}

// zoneFileForm caps the forms that carry a zone file (at most 256 KiB, docs/api.md,
// Domains): URL-encoded, each of its bytes may take three.
const zoneFileForm = 3*dnszone.MaxZoneFileBytes + 64<<10

// bigForms are the patterns whose forms may be larger than maxForm.
var bigForms = map[string]int64{"POST /domains": zoneFileForm, "POST /domains/{id}/zone-file": zoneFileForm}

// parseForm reads a POST's form, URL-encoded or multipart (a zone file's upload), of
// at most maxForm bytes or its pattern's cap in bigForms.
func parseForm(r *req, hr *http.Request) error {
	limit := int64(maxForm)
	if n, ok := bigForms[hr.Pattern]; ok {
		limit = n
	}
	hr.Body = http.MaxBytesReader(r.w, hr.Body, limit)
	var err error
	if ct, _, _ := mime.ParseMediaType(hr.Header.Get("Content-Type")); ct == "multipart/form-data" {
		// Files past 8 MiB wait on disk (removed when the request ends).
		err = hr.ParseMultipartForm(min(limit, 8<<20))
	} else {
		err = hr.ParseForm()
	}
	if err != nil {
		return hosting.Invalid("body", "validation.body_too_large", "max", limit)
	}
	return nil
}

// validForm reports whether every name and value of a form is UTF-8: Go keeps
// other bytes as they are, and they would be stored so (or shown as U+FFFD).
func validForm(f url.Values) bool {
	for k, vs := range f {
		if !utf8.ValidString(k) {
			return false
		}
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return false
			}
		}
	}
	return true
}

// codeCSRF is the code of a form refused for a missing or wrong CSRF token (403).
const codeCSRF hosting.Code = "csrf_failed"

// errCSRF answers a form without the session's CSRF token.
var errCSRF = hosting.Errorf(codeCSRF, "console.csrf_failed")

// csrfToken is the CSRF token of a session: derived from its secret, so it needs no
// storage and cannot be computed without the cookie.
func csrfToken(secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("berth console csrf"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func randomString() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// setCookie sets a cookie of the console: HttpOnly, SameSite=Lax, Secure under TLS.
func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
}

// ---- flash messages: what the page after a redirect says about the action ----

type flash struct {
	OK   bool     `json:"ok"`
	Msgs []string `json:"m"`
}

func setFlash(w http.ResponseWriter, r *http.Request, f flash) {
	b, _ := json.Marshal(f)
	setCookie(w, r, flashCookie, base64.RawURLEncoding.EncodeToString(b), 60)
}

func takeFlash(w http.ResponseWriter, r *http.Request) *flash {
	ck, err := r.Cookie(flashCookie)
	if err != nil {
		return nil
	}
	if r.Method == http.MethodGet && r.Header.Get("HX-Request") == "" {
		setCookie(w, r, flashCookie, "", -1)
	} else {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(ck.Value)
	var f flash
	if err != nil || json.Unmarshal(b, &f) != nil || len(f.Msgs) == 0 {
		return nil
	}
	return &f
}

// done ends a form action: on success back to `to` saying okID; on failure back to
// `to` with the error's messages. Errors that are not the caller's to fix are
// rendered as a page instead.
func (r *req) done(err error, to, okID string, kv ...any) error {
	if err != nil {
		switch hosting.ErrorCode(err) {
		case hosting.CodeInternal, hosting.CodeUnauthenticated, hosting.CodeNotFound:
			return err
		}
		setFlash(r.w, r.Request, flash{Msgs: r.c.messages(r.lang, err)})
		r.refused = string(hosting.ErrorCode(err))
		return r.redirect(to)
	}
	setFlash(r.w, r.Request, flash{OK: true, Msgs: []string{r.T(okID, kv...)}})
	return r.redirect(to)
}

// T translates a message into the reader's language.
func (r *req) T(id string, kv ...any) string { return r.c.cat.T(r.lang, id, hosting.M(id, kv...).Args) }

// opTypeText is an operation's kind in words of lang (console.optype.<type>): every
// page, event and message of the console names a kind through it. A kind it does
// not know is shown as it is.
func (c *Console) opTypeText(lang string, t hosting.OpType) string {
	if !slices.Contains(hosting.OpTypes, t) {
		return string(t)
	}
	return c.cat.T(lang, "console.optype."+string(t), nil)
}

// text renders a message of the core in lang; the operation it names (error.busy,
// error.volume_busy) is named in words, and the amount it names
// (validation.credit_too_low) written by formatMoney, as the pages write them.
func (c *Console) text(lang string, m hosting.Msg) string {
	args := maps.Clone(m.Args)
	if op, ok := args["operation"].(string); ok {
		args["operation"] = c.opTypeText(lang, hosting.OpType(op))
	}
	if raw, ok := args["amount"].(string); ok {
		if amount, err := hosting.ParseMoney(raw); err == nil {
			args["amount"] = formatMoney(amount, lang)
		}
	}
	m.Args = args
	return c.cat.T(lang, m.ID, m.Args)
}

// messages renders an error as the list of messages a person reads: each field's
// messages in the order of the form, or its one message.
func (c *Console) messages(lang string, err error) []string {
	var he *hosting.Error
	if !errors.As(err, &he) {
		return []string{c.cat.T(lang, "error.internal", nil)}
	}
	if len(he.Fields) == 0 {
		return []string{c.text(lang, he.Message)}
	}
	var out []string
	for _, f := range he.Order {
		for _, m := range he.Fields[f] {
			out = append(out, c.text(lang, m))
		}
	}
	return out
}

// fieldErrors renders a validation error's messages by field.
func (c *Console) fieldErrors(lang string, err error) map[string][]string {
	var he *hosting.Error
	if !errors.As(err, &he) || len(he.Fields) == 0 {
		return nil
	}
	out := map[string][]string{}
	for f, ms := range he.Fields {
		for _, m := range ms {
			out[f] = append(out[f], c.text(lang, m))
		}
	}
	return out
}

// statusOf is the status of the page that explains an error: the API's one table,
// and the console's own refusal of a form without its CSRF token.
func statusOf(code hosting.Code) (int, bool) {
	if code == codeCSRF {
		return http.StatusForbidden, true
	}
	return httpapi.StatusOf(code)
}

// fail renders an error page; internal errors are logged with their detail and shown
// only as "internal error".
func (c *Console) fail(r *req, err error) {
	code := hosting.ErrorCode(err)
	status, ok := statusOf(code)
	if !ok {
		status = http.StatusInternalServerError
	}
	// An internal error (the code of every error that is not the API's) is logged:
	// the page says only that something went wrong.
	if (!ok || code == hosting.CodeInternal) && r.Context().Err() == nil {
		// The route's pattern, not the path: a path may hold a secret
		// (/password-reset/{token}).
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		c.log.Error("console request failed", "method", r.Method, "route", route, "err", err)
	}
	var he *hosting.Error
	if errors.As(err, &he) && he.RetryAfter > 0 {
		r.w.Header().Set("Retry-After", itoa(int64(he.RetryAfter)))
	}
	c.render(r, status, "error", "console.error_title", "", map[string]any{"Messages": c.messages(r.lang, err), "Status": status})
}

// render writes a page: the layout around the named page template.
func (c *Console) render(r *req, status int, page, titleID, nav string, data any) {
	v := &view{r: r, Title: r.T(titleID), Nav: nav, Data: data, Flash: r.flash, Account: r.p.Account,
		SignedIn: r.p.Account.ID != 0, CSRF: r.csrf}
	t := c.pages[page]
	var buf strings.Builder
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		c.log.Error("console template", "page", page, "err", err)
		http.Error(r.w, "internal error", http.StatusInternalServerError)
		return
	}
	if status == http.StatusUnprocessableEntity && r.refused == "" {
		r.refused = string(hosting.CodeValidationFailed) // a form shown again with its mistakes
	}
	r.w.Header().Set("Content-Type", "text/html; charset=utf-8")
	r.w.WriteHeader(status)
	_, _ = r.w.Write([]byte(buf.String()))
}

// ---- signing in and out ----

func (c *Console) signInPage(r *req) error {
	if ck, err := r.Cookie(sessionCookie); err == nil {
		if _, _, err := c.svc.Sessions.SessionPrincipal(r.ctx(), ck.Value); err == nil {
			return r.redirect(safeNext(r.URL.Query().Get("next")))
		}
	}
	return c.showSignIn(r, http.StatusOK, "", nil)
}

// showSignIn answers the sign-in page: with msgs as errors, and ok (at most one)
// as the notice of what just succeeded (a password reset).
func (c *Console) showSignIn(r *req, status int, email string, msgs []string, ok ...string) error {
	// One pre-session secret per browser: a second sign-in tab, or the browser's own
	// requests (say, for a favicon) sent here, must not invalidate the first form.
	pre := preSecret(r)
	c.render(r, status, "signin", "console.signin_title", "", map[string]any{
		"Pre": pre, "Email": email, "Next": safeNext(r.URL.Query().Get("next")), "Errors": msgs, "OK": ok})
	return nil
}

// signIn checks the form's CSRF (double submit), the throttle, then the password.
func (c *Console) signIn(r *req) error {
	r.Body = http.MaxBytesReader(r.w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		return hosting.Invalid("body", "validation.body_too_large", "max", 16<<10)
	}
	email := strings.TrimSpace(r.PostFormValue("email"))
	pre, err := r.Cookie(preCookie)
	if err != nil || pre.Value == "" || !hmac.Equal([]byte(pre.Value), []byte(r.PostFormValue("csrf"))) {
		return c.showSignIn(r, http.StatusForbidden, email, []string{r.T("console.signin_cookies")})
	}
	now := time.Now()
	limits := []limit{c.emailLimit(email), c.addrLimit(r)}
	if msg, err := c.throttled(r, now, limits...); err != nil || msg != "" {
		if err != nil {
			return err
		}
		return c.showSignIn(r, http.StatusTooManyRequests, email, []string{msg})
	}
	_, acct, secret, err := c.svc.Sessions.SignIn(r.ctx(), email, r.PostFormValue("password"), c.cfg.SessionTTL)
	if hosting.IsCode(err, hosting.CodeUnauthenticated) {
		if err := count(r, now, limits...); err != nil {
			return err
		}
		if t := c.cfg.Telemetry; t != nil {
			t.SignInFailed()
		}
		return c.showSignIn(r, http.StatusUnauthorized, email, c.messages(r.lang, err))
	}
	if err != nil {
		return err
	}
	setCookie(r.w, r.Request, preCookie, "", -1)
	setCookie(r.w, r.Request, sessionCookie, secret, int(c.cfg.SessionTTL.Seconds()))
	_ = acct
	return r.redirect(safeNext(r.PostFormValue("next")))
}

func (c *Console) signOut(r *req) error {
	if err := c.svc.Sessions.SignOut(r.ctx(), r.secret); err != nil {
		return err
	}
	setCookie(r.w, r.Request, sessionCookie, "", -1)
	return r.redirect("/signin")
}

// safeNext keeps a post-sign-in destination on this site: it answers next as
// http.Redirect will send it (the path cleaned), or /servers when that would leave
// the site or is not a plain path. Browsers follow a Location of "/\host" or
// "/<TAB>/host" off-site (they read "\" as "/" and drop tabs and newlines), so
// control characters, spaces and backslashes are refused anywhere in it; the check
// is made on the cleaned form, which "/./" or "/../" tricks cannot get past.
func safeNext(next string) string {
	const home = "/servers"
	if next == "" || next[0] != '/' || strings.IndexFunc(next, func(r rune) bool {
		return r <= ' ' || r == 0x7f || r == '\\' || r == utf8.RuneError || unicode.IsControl(r) || unicode.IsSpace(r)
	}) >= 0 {
		return home
	}
	p, query, _ := strings.Cut(next, "?")
	if strings.Contains(p, "//") { // never a path of the console's
		return home
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	if query != "" || strings.HasSuffix(next, "?") {
		clean += "?" + query
	}
	u, err := url.Parse(clean)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		strings.HasPrefix(clean, "//") || u.Path == "/signin" || strings.HasPrefix(u.Path, "/signin/") {
		return home
	}
	return clean
}
