package httpapi

import (
	"net/http"

	"github.com/berthhq/berth/internal/hosting"
)

// The sandbox API (API-DECISIONS §11), served under /sandbox/v1 only when the server
// runs with a sandbox (serve --sandbox; Config.Sandbox). Without one, every
// /sandbox/v1 path falls to unknown and answers 404 not_found like any unknown path.
//
// Its calls go through the same admission as /v1 calls, with two differences the
// contract makes: any valid token of the account will do (no scope is needed), and a
// call is not counted against the token's rate limit (so it carries no rate-limit
// headers). An address guessing tokens is limited as on /v1. Answers use the data
// wrapper and the errors of §2. A sandbox call is never replayed by Idempotency-Key
// (it is a test harness's instruction, not an order); a state-changing one goes to
// the audit log like any other.

// SandboxBase is the path the sandbox API is served under.
const SandboxBase = "/sandbox/v1"

// scopeSandbox marks the routes of the sandbox API: they need a valid token, any
// scope, and are not rate-limited. It is no scope a token can hold.
const scopeSandbox hosting.Scope = "\x00sandbox"

// sandboxRoutes is the route table of the sandbox API, paths relative to SandboxBase.
// Every route has scope scopeSandbox.
func (s *Server) sandboxRoutes() []route {
	var routes []route
	routes = append(routes, s.clockRoutes()...)
	return routes
}

// handleSandbox registers the sandbox routes, and OPTIONS on each of their paths.
func (s *Server) handleSandbox() {
	var paths []string
	methods := map[string][]string{}
	for _, rt := range s.sandboxRoutes() {
		s.mux.Handle(rt.method+" "+SandboxBase+rt.path, s.sandboxDispatch(rt))
		if _, ok := methods[rt.path]; !ok {
			paths = append(paths, rt.path)
		}
		methods[rt.path] = append(methods[rt.path], rt.method)
	}
	for _, p := range paths {
		s.mux.Handle("OPTIONS "+SandboxBase+p, s.options(append(methods[p], http.MethodOptions)))
	}
}

// sandboxDispatch serves a sandbox route: admission (401, 429 for an address, 403 for
// a blocked account), then the handler. A state-changing call is audited.
func (s *Server) sandboxDispatch(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := &request{Request: r, ctx: r.Context()}
		if rt.method == http.MethodGet {
			s.serve(w, req, rt)
			return
		}
		rec := &recorder{header: http.Header{}}
		s.serve(rec, req, rt)
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		_, _ = w.Write(rec.body.Bytes())
		s.svc.Audit(r.Context(), auditEntry(req, SandboxBase, rt, status, rec.body.Bytes(), "", false))
	})
}

// SandboxRoutes lists every route of the sandbox API as "METHOD /sandbox/v1/path",
// for tests and docs; none when the server runs without a sandbox.
func (s *Server) SandboxRoutes() []struct{ Method, Path string } {
	var out []struct{ Method, Path string }
	if s.sandbox == nil {
		return out
	}
	for _, rt := range s.sandboxRoutes() {
		out = append(out, struct{ Method, Path string }{rt.method, SandboxBase + rt.path})
	}
	return out
}
