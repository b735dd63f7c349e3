// Package httpapi serves the /v1 API: a table of routes, each naming the scope it
// needs, and one dispatcher that authenticates, rate-limits, authorizes, calls the
// route's handler and renders what it returns. Handlers never write responses.
package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/i18n"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/ratelimit"
	"github.com/berthhq/berth/internal/realip"
	"github.com/berthhq/berth/internal/sandbox"
)

// Config sets the server's limits.
type Config struct {
	// RateLimit is requests per minute per token (default 120).
	RateLimit int
	// AnonRateLimit is requests per minute per client address without a valid token
	// (default 60).
	AnonRateLimit int
	// RateWindow is the rolling window both limits count over (default 1 minute, as
	// docs/api.md, Rate limits has it; tests shorten it to see a Retry-After of seconds).
	RateWindow time.Duration
	// Metrics answers GET /servers/{id}/metrics (nil: that route answers 503).
	Metrics MetricsReader
	// Telemetry, when set, counts the 429 answers.
	Telemetry Telemetry
	// Limits keeps the rate limits (default: in this process's memory); several
	// processes serving together share them in their store.
	Limits ratelimit.Factory
	// Grouping says which client addresses share a per-address limit (serve
	// --ipv6-limit-prefix; the zero Grouping counts an IPv6 client by its /64).
	Grouping realip.Grouping
	// PublicURL, when set, is the address clients reach the service at, /v1 left out
	// (https://api.example.com, behind a proxy): the absolute links the API builds
	// start with it. Unset, they start with the scheme of the connection and the
	// request's Host. See ParsePublicURL.
	PublicURL string
	// CORSOrigins are the browser origins whose scripts may call the API (none by
	// default). See ParseCORSOrigin and cors.go.
	CORSOrigins []string
	// Sandbox, when set, serves the /sandbox/v1 API on its state (serve --sandbox,
	// docs/api.md, The sandbox; sandbox.go). Nil: every /sandbox/v1 path is 404.
	Sandbox *sandbox.State
}

// Telemetry is what the API tells operators' metrics (internal/telemetry implements
// it).
type Telemetry interface {
	// RateLimited counts a 429: surface "api", by "token" or "address".
	RateLimited(surface, by string)
}

// Server is the /v1 API handler.
type Server struct {
	svc     ops.Services
	i18n    *i18n.Catalog
	log     *slog.Logger
	tokens  ratelimit.Counter
	anon    ratelimit.Counter
	mux     *http.ServeMux
	openapi []byte
	metrics MetricsReader
	tel     Telemetry
	// publicURL is Config.PublicURL parsed (nil: none).
	publicURL *url.URL
	// corsOrigins are Config.CORSOrigins as browsers send them.
	corsOrigins map[string]bool
	// sandbox is Config.Sandbox (nil: off); faultRoutes are the routes its HTTP
	// faults may name, also by "METHOD /path" in faultRoute (sandbox.go).
	sandbox     *sandbox.State
	faultRoutes []sandbox.Route
	faultRoute  map[string]sandbox.Route
	// grouping is Config.Grouping: whose requests anon counts together (addrKey).
	grouping realip.Grouping
}

// request is what a handler gets.
type request struct {
	*http.Request
	ctx context.Context
	p   hosting.Principal
}

// handler returns the status and body to send, or an error to render.
type handler func(r *request) (int, any, error)

type route struct {
	method, path string
	scope        hosting.Scope // "" for routes without a token
	h            handler
}

// New returns the API server, its handlers calling svc (ops.Service.Services gives the core's).
func New(svc ops.Services, cat *i18n.Catalog, log *slog.Logger, cfg Config) (*Server, error) {
	if cfg.RateLimit <= 0 {
		cfg.RateLimit = 120
	}
	if cfg.AnonRateLimit <= 0 {
		cfg.AnonRateLimit = 60
	}
	if cfg.RateWindow <= 0 {
		cfg.RateWindow = time.Minute
	}
	doc, err := api.OpenAPIJSON()
	if err != nil {
		return nil, err
	}
	if cfg.Limits == nil {
		cfg.Limits = ratelimit.InMemory
	}
	s := &Server{svc: svc, i18n: cat, log: log, mux: http.NewServeMux(), openapi: doc,
		tokens: cfg.Limits("api-token", cfg.RateLimit, cfg.RateWindow), anon: cfg.Limits("api-address", cfg.AnonRateLimit, cfg.RateWindow),
		grouping: cfg.Grouping, metrics: cfg.Metrics, tel: cfg.Telemetry, sandbox: cfg.Sandbox}
	if cfg.PublicURL != "" {
		if s.publicURL, err = ParsePublicURL(cfg.PublicURL); err != nil {
			return nil, fmt.Errorf("public URL %q: %w", cfg.PublicURL, err)
		}
	}
	for _, o := range cfg.CORSOrigins {
		origin, err := ParseCORSOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("CORS origin %q: %w", o, err)
		}
		if s.corsOrigins == nil {
			s.corsOrigins = map[string]bool{}
		}
		s.corsOrigins[origin] = true
	}
	// Every path answers OPTIONS with its methods (and CORS preflights, cors.go).
	var paths []string
	methods := map[string][]string{}
	for _, rt := range s.routes() {
		s.mux.Handle(rt.method+" /v1"+rt.path, s.dispatch(rt))
		if _, ok := methods[rt.path]; !ok {
			paths = append(paths, rt.path)
		}
		methods[rt.path] = append(methods[rt.path], rt.method)
	}
	s.mux.Handle("GET /v1"+ConsolePath, http.HandlerFunc(s.consoleSocket))
	methods[ConsolePath] = append([]string{http.MethodGet}, methods[ConsolePath]...)
	for _, p := range paths {
		s.mux.Handle("OPTIONS /v1"+p, s.options(append(methods[p], http.MethodOptions)))
	}
	if s.sandbox != nil {
		if err := s.handleSandbox(); err != nil {
			return nil, err
		}
	}
	s.mux.HandleFunc("/", s.unknown)
	return s, nil
}

func (s *Server) routes() []route {
	R, P, S, K, C := hosting.ScopeRead, hosting.ScopePower, hosting.ScopeServers, hosting.ScopeSSHKeys, hosting.ScopeRecipes
	N, A, V, D, L := hosting.ScopeSnapshots, hosting.ScopeAll, hosting.ScopeStorage, hosting.ScopeDomains, hosting.ScopeLicenses
	T := hosting.ScopeTickets
	return []route{
		{"GET", "/openapi.json", "", s.openAPI},
		{"GET", "/me", R, s.me},
		{"PATCH", "/me", R, s.patchMe},
		{"GET", "/billing", R, s.getBilling},
		{"GET", "/billing/transactions", R, s.listTransactions},
		{"GET", "/locations", R, s.locations},
		{"GET", "/apps", R, s.apps},
		{"GET", "/licenses", R, s.listLicenses},
		{"GET", "/servers", R, s.listServers},
		{"POST", "/servers", S, s.orderServer},
		{"GET", "/servers/{id}", R, s.getServer},
		{"PATCH", "/servers/{id}", S, s.patchServer},
		{"DELETE", "/servers/{id}", S, s.deleteServer},
		{"POST", "/servers/{id}/power", P, s.power},
		{"POST", ConsolePath, P, s.consoleTicket},
		{"POST", "/servers/{id}/reinstall", S, s.reinstall},
		{"GET", "/servers/{id}/rescale-options", R, s.rescaleOptions},
		{"GET", "/servers/{id}/metrics", R, s.serverMetrics},
		{"POST", "/servers/{id}/rescale", S, s.rescale},
		{"GET", "/servers/{id}/operations", R, s.listServerOperations},
		{"GET", "/servers/{id}/rdns", R, s.listRDNS},
		{"PUT", "/servers/{id}/rdns", D, s.setRDNS},
		{"GET", "/servers/{id}/licenses", R, s.listServerLicenses},
		{"POST", "/servers/{id}/licenses", L, s.addServerLicense},
		{"DELETE", "/servers/{id}/licenses/{license}", L, s.removeServerLicense},
		{"GET", "/servers/{id}/snapshots", R, s.listSnapshots},
		{"POST", "/servers/{id}/snapshots", N, s.createSnapshot},
		{"POST", "/servers/{id}/snapshots/{snapshot}/restore", N, s.restoreSnapshot},
		{"DELETE", "/servers/{id}/snapshots/{snapshot}", N, s.deleteSnapshot},
		{"GET", "/ssh-keys", R, s.listSSHKeys},
		{"POST", "/ssh-keys", K, s.createSSHKey},
		{"DELETE", "/ssh-keys/{id}", K, s.deleteSSHKey},
		{"GET", "/projects", R, s.listProjects},
		{"POST", "/projects", S, s.createProject},
		{"PATCH", "/projects/{id}", S, s.renameProject},
		{"DELETE", "/projects/{id}", S, s.deleteProject},
		{"GET", "/recipes", R, s.listRecipes},
		{"POST", "/recipes", C, s.createRecipe},
		{"GET", "/recipes/{id}", R, s.getRecipe},
		{"PATCH", "/recipes/{id}", C, s.updateRecipe},
		{"DELETE", "/recipes/{id}", C, s.deleteRecipe},
		{"GET", "/volumes", R, s.listVolumes},
		{"POST", "/volumes", V, s.createVolume},
		{"GET", "/volumes/{id}", R, s.getVolume},
		{"PATCH", "/volumes/{id}", V, s.patchVolume},
		{"DELETE", "/volumes/{id}", V, s.deleteVolume},
		{"POST", "/volumes/{id}/attach", V, s.attachVolume},
		{"POST", "/volumes/{id}/detach", V, s.detachVolume},
		{"POST", "/volumes/{id}/resize", V, s.resizeVolume},
		{"GET", "/domains", R, s.listDomains},
		{"POST", "/domains", D, s.createDomain},
		{"GET", "/domains/{id}", R, s.getDomain},
		{"PATCH", "/domains/{id}", D, s.patchDomain},
		{"DELETE", "/domains/{id}", D, s.deleteDomain},
		{"GET", "/domains/{id}/rrsets", R, s.listRRsets},
		{"GET", "/domains/{id}/rrsets/{name}/{type}", R, s.getRRset},
		{"PUT", "/domains/{id}/rrsets/{name}/{type}", D, s.putRRset},
		{"DELETE", "/domains/{id}/rrsets/{name}/{type}", D, s.deleteRRset},
		{"GET", "/domains/{id}/zone-file", R, s.exportZoneFile},
		{"PUT", "/domains/{id}/zone-file", D, s.importZoneFile},
		{"GET", "/operations", R, s.listOperations},
		{"GET", "/operations/{id}", R, s.getOperation},
		{"GET", "/events", R, s.listEvents},
		{"GET", "/tickets", R, s.listTickets},
		{"POST", "/tickets", T, s.createTicket},
		{"GET", "/tickets/{id}", R, s.getTicket},
		{"POST", "/tickets/{id}/messages", T, s.addTicketMessage},
		{"POST", "/tickets/{id}/close", T, s.closeTicket},
		{"POST", "/attachments", T, s.uploadAttachment},
		{"GET", "/attachments/{id}", R, s.getAttachment},
		{"GET", "/webhooks", R, s.listWebhooks},
		{"POST", "/webhooks", A, s.createWebhook},
		{"GET", "/webhooks/{id}", R, s.getWebhook},
		{"PATCH", "/webhooks/{id}", A, s.updateWebhook},
		{"DELETE", "/webhooks/{id}", A, s.deleteWebhook},
		{"POST", "/webhooks/{id}/test", A, s.testWebhook},
		{"POST", "/webhooks/{id}/rotate-secret", A, s.rotateWebhookSecret},
		{"GET", "/webhooks/{id}/deliveries", R, s.listWebhookDeliveries},
		{"POST", "/webhooks/{id}/deliveries/{delivery}/redeliver", A, s.redeliverWebhook},
	}
}

// Routes lists every route as "METHOD /v1/path" with its scope, for tests and docs.
func (s *Server) Routes() []struct{ Method, Path, Scope string } {
	var out []struct{ Method, Path, Scope string }
	for _, rt := range s.routes() {
		out = append(out, struct{ Method, Path, Scope string }{rt.method, "/v1" + rt.path, string(rt.scope)})
	}
	return out
}

// HSTS is the Strict-Transport-Security of every answer served over TLS, the API's
// and the console's: browsers use only HTTPS for the host, and its subdomains, for
// two years.
const HSTS = "max-age=63072000; includeSubDomains"

// ServeHTTP implements http.Handler. Every answer carries the security headers of a
// JSON API: never cached, never sniffed as another type, never framed or allowed to
// load anything, no referrer; under TLS, HSTS; to an allowed browser origin, CORS
// (cors.go). A path that is not in clean form (a "." or ".." segment, an empty one as
// in "//") is answered 404 like any unknown path: ServeMux would redirect it with 307,
// keeping the method, to the cleaned path, so that DELETE /v1/servers/1/snapshots/..
// followed to DELETE /v1/servers/1. Every answer carries X-Request-Id (requestid.go),
// which r's header holds too from here on (the client's or a new one); and every
// request is logged (requestlog.go).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := requestID(r.Header)
	// The request's own allocation: the answer's writer and its id's header value.
	st := &requestState{lw: loggedWriter{ResponseWriter: w}, ids: [1]string{id}}
	ids := st.ids[:]
	r.Header[requestIDHeader] = ids
	h := w.Header()
	h[requestIDHeader] = ids
	for _, kv := range securityHeaders {
		h[kv.key] = kv.value
	}
	if r.TLS != nil {
		h["Strict-Transport-Security"] = hstsValue
	}
	s.setCORS(h, r)
	if s.log.Enabled(r.Context(), slog.LevelInfo) {
		lw := &st.lw
		w = lw
		// Deferred, so that a request cut short (a list whose stream broke panics
		// with http.ErrAbortHandler) is logged too.
		defer s.logRequest(lw, r, id, start)
	}
	if !isCleanPath(r.URL.EscapedPath()) {
		s.unknown(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// limitString is strconv.Itoa(n), kept for the last n asked: a limit is the same on
// nearly every answer.
func limitString(n int) string {
	if c := lastLimit.Load(); c != nil && c.n == n {
		return c.s
	}
	c := &formattedInt{n: n, s: strconv.Itoa(n)}
	lastLimit.Store(c)
	return c.s
}

type formattedInt struct {
	n int
	s string
}

var lastLimit atomic.Pointer[formattedInt]

// securityHeaders go on every answer of the API (docs/SECURITY.md, API8). Their
// value slices are shared by all answers and never written: net/http copies them
// when it sends the header, and Header.Set replaces a slice, Add (cap 1) copies it.
var securityHeaders = []struct {
	key   string
	value []string
}{
	{"Cache-Control", []string{"no-store"}},
	{"X-Content-Type-Options", []string{"nosniff"}},
	{"X-Frame-Options", []string{"DENY"}},
	{"Content-Security-Policy", []string{"default-src 'none'; frame-ancestors 'none'"}},
	{"Referrer-Policy", []string{"no-referrer"}},
}

var hstsValue = []string{HSTS}

// requestState is what ServeHTTP keeps of a request, in one allocation.
type requestState struct {
	lw  loggedWriter
	ids [1]string
}

// isCleanPath reports whether p is a rooted path that ServeMux would not clean:
// no ".", ".." or empty segment (a trailing slash is kept by ServeMux too).
func isCleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	clean := path.Clean(p)
	if p[len(p)-1] == '/' && clean != "/" {
		clean += "/"
	}
	return clean == p
}

// addrKey is the key of r's client in the limit per address: its address, or its
// IPv6 network (Config.Grouping). Logs and the audit log take clientAddr.
func (s *Server) addrKey(r *http.Request) string { return s.grouping.Key(clientAddr(r)) }

func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// bearer is the token of r's Authorization header. A request that sends the header
// twice names no token: which of the two a proxy before Berth looked at is unknown.
func bearer(r *http.Request) (string, bool) {
	if len(r.Header.Values("Authorization")) != 1 {
		return "", false
	}
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || strings.ContainsAny(tok, " \t") {
		return "", false
	}
	return tok, true
}

func setLimitHeaders(h http.Header, res ratelimit.Result) {
	// One array for the three values, each header a full slice of one of them (cap
	// 1: an Add to one of them copies instead of writing into the next).
	v := [...]string{limitString(res.Limit), strconv.Itoa(res.Remaining),
		strconv.FormatInt(int64(math.Ceil(float64(res.Reset.UnixNano())/1e9)), 10)}
	vals := v[:]
	limit, remaining, reset := vals[0:1:1], vals[1:2:2], vals[2:3:3]
	h["X-Ratelimit-Limit"] = limit
	h["X-Ratelimit-Remaining"] = remaining
	h["X-Ratelimit-Reset"] = reset
	h["Ratelimit-Limit"] = limit
	h["Ratelimit-Remaining"] = remaining
	h["Ratelimit-Reset"] = reset
	if !res.Allowed {
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil(res.RetryAfter.Seconds()))))
	}
}

// dispatch applies, in order (docs/api.md, Errors): 401, 429, 403 (scope, blocked), then
// the handler's own 404 → 403 → 422 → 409 → 422 → 503. A POST with an Idempotency-Key
// runs at most once per key (docs/api.md, Idempotency and operations); every state-changing request goes to
// the audit log with its outcome.
func (s *Server) dispatch(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The events its changes write name it (docs/api.md, Events).
		req := &request{Request: r, ctx: hosting.WithRequestID(r.Context(), r.Header.Get(requestIDHeader))}
		defer req.noteAccount(w)
		if s.sandbox != nil {
			var done func()
			w, done = s.journal(w, req)
			defer done()
		}
		if rt.method == http.MethodGet {
			s.serve(w, req, rt)
			return
		}
		rec := &recorder{header: http.Header{}}
		idemKey, replayed := s.serveChange(rec, req, rt)
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		_, _ = w.Write(rec.body.Bytes())
		s.svc.Gate.Audit(r.Context(), auditEntry(req, "/v1", rt, status, rec.body.Bytes(), idemKey, replayed))
	})
}

// noteAccount tells the request's log line its account, once admit knew it.
func (req *request) noteAccount(w http.ResponseWriter) {
	if id := req.p.Account.ID; id != 0 {
		noteAccount(w, id)
	}
}

// serve authenticates and authorizes a request, then runs its handler; lang is the
// language of its errors.
func (s *Server) serve(w http.ResponseWriter, req *request, rt route) {
	lang, ok := s.admit(w, req, rt)
	if ok {
		s.run(w, req, rt, lang)
	}
}

// admit answers 401, 429 and 403 itself and then reports false.
func (s *Server) admit(w http.ResponseWriter, req *request, rt route) (lang string, ok bool) {
	r := req.Request
	lang = i18n.MatchAcceptLanguage(r.Header.Get("Accept-Language"))
	if rt.scope == "" {
		return lang, true
	}
	// A sandbox call is not counted against the token's rate limit and needs no
	// scope of its own (docs/api.md, The sandbox): any valid token of the account will do.
	sandboxCall := rt.scope == scopeSandbox
	if req.p, lang, ok = s.authenticate(w, r, lang, !sandboxCall); !ok {
		return lang, false
	}
	if missing := req.p.Token.Scopes.Missing(rt.scope); !sandboxCall && len(missing) > 0 {
		s.fail(w, r, lang, missingScope(rt.scope, missing))
		return lang, false
	}
	if req.p.Account.Blocked && !(rt.method == "GET" && rt.path == "/me") {
		s.fail(w, r, lang, hosting.Errorf(hosting.CodeAccountBlocked, "error.account_blocked"))
		return lang, false
	}
	if s.sandbox != nil && !sandboxCall && !s.injectFault(w, req, rt, lang) {
		return lang, false
	}
	return lang, true
}

// missingScope is the 403 of a token that lacks missing of need: for ScopeAll it
// names every scope the token lacks.
func missingScope(need hosting.Scope, missing []hosting.Scope) error {
	if need != hosting.ScopeAll {
		return hosting.Errorf(hosting.CodeMissingScope, "error.missing_scope", "scope", string(need))
	}
	return hosting.Errorf(hosting.CodeMissingScope, "error.missing_scopes", "scopes", hosting.Scopes(missing).String())
}

// run calls the route's handler and renders what it returns.
func (s *Server) run(w http.ResponseWriter, req *request, rt route, lang string) {
	status, body, err := rt.h(req)
	if err != nil {
		s.fail(w, req.Request, lang, err)
		return
	}
	if body == nil {
		w.WriteHeader(status)
		return
	}
	if st, ok := body.(stream); ok {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		if err := st(w); err != nil {
			s.log.Error("list cut short", "request_id", req.Header.Get(requestIDHeader), "method", req.Method, "path", req.URL.Path, "error", err)
			panic(http.ErrAbortHandler)
		}
		return
	}
	if d, ok := body.(download); ok {
		writeDownload(w, status, d)
		return
	}
	if text, ok := body.(plainText); ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, string(text))
		return
	}
	if raw, ok := body.([]byte); ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(raw)
		return
	}
	writeJSON(w, status, body)
}

// serveChange serves a state-changing request, through the idempotency layer when it
// is a POST with an Idempotency-Key. It returns the key and whether the answer was a
// replay.
func (s *Server) serveChange(w http.ResponseWriter, req *request, rt route) (key string, replayed bool) {
	lang, ok := s.admit(w, req, rt)
	if !ok {
		return "", false
	}
	r := req.Request
	key = r.Header.Get("Idempotency-Key")
	if rt.method != http.MethodPost || len(r.Header.Values("Idempotency-Key")) == 0 {
		s.run(w, req, rt, lang)
		return "", false
	}
	// The fingerprint covers the body up to the largest any route accepts; a longer
	// one is refused by the route itself. An attachment's is the file (5 MiB).
	limit := int64(MaxRecipeBody)
	if rt.path == "/attachments" {
		limit = hosting.MaxAttachmentSize
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		s.fail(w, r, lang, hosting.Invalid("body", "validation.invalid_json"))
		return key, false
	}
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(raw), r.Body))
	if len(r.Header.Values("Idempotency-Key")) > 1 {
		s.fail(w, r, lang, hosting.Invalid(ops.IdempotencyKeyField, "validation.idempotency_key"))
		return key, false
	}
	hash := ops.RequestHash(r.Method, r.URL.RequestURI(), raw)
	var first http.Header
	resp, replayed, err := s.svc.Gate.Idempotent(req.ctx, req.p, key, hash, func(ctx context.Context) ops.Response {
		rec := &recorder{header: http.Header{}}
		req.ctx = ctx
		s.run(rec, req, rt, lang)
		first = rec.header
		return ops.Response{Status: rec.status, ContentType: rec.header.Get("Content-Type"), Body: rec.body.Bytes()}
	})
	if err != nil {
		s.fail(w, r, lang, err)
		return key, false
	}
	if replayed {
		// Another run's answer (this request may have run too, and been undone): none
		// of this run's headers describe it.
		w.Header().Set("Idempotent-Replayed", "true")
	} else {
		for k, v := range first {
			w.Header()[k] = v
		}
	}
	if resp.ContentType != "" {
		w.Header().Set("Content-Type", resp.ContentType)
	}
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
	return key, replayed
}

// recorder keeps an answer in memory.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}

// auditEntry describes a state-changing request for the audit log: who, what (the
// route's path under base, /v1 or /sandbox/v1), on what, and how it ended.
func auditEntry(req *request, base string, rt route, status int, body []byte, key string, replayed bool) hosting.AuditEntry {
	e := hosting.AuditEntry{Actor: "api", Action: rt.method + " " + base + rt.path, Status: status,
		Client: clientAddr(req.Request), IdempotencyKey: key, Replayed: replayed}
	if req.p.Account.ID != 0 {
		e.AccountID, e.TokenID = &req.p.Account.ID, &req.p.Token.ID
	}
	var targets []string
	for _, name := range []string{"id", "snapshot"} {
		if v := req.PathValue(name); v != "" {
			targets = append(targets, name+"="+v)
		}
	}
	var parsed struct {
		Code string `json:"code"`
		Data struct {
			ID any `json:"id"`
		} `json:"data"`
	}
	if len(body) > 0 && json.Unmarshal(body, &parsed) == nil {
		e.Code = parsed.Code
		if status == http.StatusCreated && parsed.Data.ID != nil {
			targets = append(targets, fmt.Sprintf("created=%v", parsed.Data.ID))
		}
	}
	e.Target = strings.Join(targets, " ")
	return e
}

// authenticate resolves the request's token and, when count is set, counts the
// request against its rate limit; either way it sets the limit headers (a sandbox
// call is not counted: its headers show the budget as it stands). It answers 401 or 429 itself and then
// reports false. lang becomes the account's language once the token is known.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, lang string, count bool) (hosting.Principal, string, bool) {
	now := time.Now()
	// An address past its budget of failed attempts is refused before any token
	// lookup, so guessing tokens is slow.
	// The limiters' keys need no prefix: each limiter has a name of its own, which
	// the shared store puts in front.
	ip := s.addrKey(r)
	ctx := r.Context()
	res, err := s.anon.Peek(ctx, ip, now)
	if err != nil {
		s.fail(w, r, lang, err)
		return hosting.Principal{}, lang, false
	}
	if !res.Allowed {
		setLimitHeaders(w.Header(), res)
		s.countLimited("address")
		s.fail(w, r, lang, limited(res))
		return hosting.Principal{}, lang, false
	}
	secret, ok := bearer(r)
	var p hosting.Principal
	if ok {
		p, err = s.svc.Gate.Authenticate(r.Context(), secret)
	}
	if !ok || hosting.IsCode(err, hosting.CodeUnauthenticated) {
		res, err := s.anon.Allow(ctx, ip, now)
		if err != nil {
			s.fail(w, r, lang, err)
			return p, lang, false
		}
		setLimitHeaders(w.Header(), res)
		if !res.Allowed {
			s.countLimited("address")
			s.fail(w, r, lang, limited(res))
			return p, lang, false
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="berth"`)
		s.fail(w, r, lang, hosting.Errorf(hosting.CodeUnauthenticated, "error.unauthenticated"))
		return p, lang, false
	}
	if err != nil {
		s.fail(w, r, lang, err)
		return p, lang, false
	}
	if i18n.Supported(p.Account.Language) {
		lang = p.Account.Language
	}
	key := strconv.FormatInt(p.Token.ID, 10)
	if !count {
		// The budget as it is, for the headers; the call itself is free, even to a
		// token that has spent its budget.
		if res, err = s.tokens.Peek(ctx, key, now); err != nil {
			s.fail(w, r, lang, err)
			return p, lang, false
		}
		res.Allowed = true
		setLimitHeaders(w.Header(), res)
		return p, lang, true
	}
	res, err = s.tokens.Allow(ctx, key, now)
	if err != nil {
		s.fail(w, r, lang, err)
		return p, lang, false
	}
	setLimitHeaders(w.Header(), res)
	if !res.Allowed {
		s.countLimited("token")
		s.fail(w, r, lang, limited(res))
		return p, lang, false
	}
	return p, lang, true
}

// countLimited counts a 429 of the limit on a token or on a client address.
func (s *Server) countLimited(by string) {
	if s.tel != nil {
		s.tel.RateLimited("api", by)
	}
}

func limited(res ratelimit.Result) error {
	secs := int(math.Ceil(res.RetryAfter.Seconds()))
	e := hosting.Errorf(hosting.CodeRateLimited, "error.rate_limited", "seconds", secs)
	e.RetryAfter = secs
	return e
}

// fail renders an error; internal errors are logged with their detail.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, lang string, err error) {
	status, body, he := s.errorBody(err, lang)
	if status >= 500 && r.Context().Err() == nil {
		s.log.Error("request failed", "request_id", r.Header.Get(requestIDHeader), "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if he.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(he.RetryAfter))
	} else if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "5")
	}
	writeJSON(w, status, body)
}

// unknown answers paths outside the route table: 405 with Allow when the path exists
// for other methods, else 404, both in the API's error format. A request that presents
// a token is authenticated and counted first, like every other (docs/api.md, Rate limits), and
// answered in the account's language; a blocked account's is 403.
func (s *Server) unknown(w http.ResponseWriter, r *http.Request) {
	lang := i18n.MatchAcceptLanguage(r.Header.Get("Accept-Language"))
	if r.Header.Get("Authorization") != "" {
		p, l, ok := s.authenticate(w, r, lang, true)
		noteAccount(w, p.Account.ID) // known for a 429 too
		if !ok {
			return
		}
		lang = l
		if p.Account.Blocked {
			// A blocked account's every request is 403 but GET /me, which is a route:
			// 403 comes before 404 and 405 (docs/api.md, Errors).
			s.fail(w, r, lang, hosting.Errorf(hosting.CodeAccountBlocked, "error.account_blocked"))
			return
		}
	}
	var allow []string
	if isCleanPath(r.URL.EscapedPath()) { // else no route has it, whatever the method
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
				allow = append(allow, m)
			}
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.fail(w, r, lang, hosting.Errorf(codeMethodNotAllowed, "error.method_not_allowed"))
		return
	}
	s.fail(w, r, lang, hosting.Errorf(hosting.CodeNotFound, "error.path_not_found"))
}
