package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/ratelimit"
	"github.com/berthhq/berth/internal/sandbox"
)

// The sandbox API (docs/api.md, The sandbox), served under /sandbox/v1 only when the server
// runs with a sandbox (serve --sandbox; Config.Sandbox). Without one, every
// /sandbox/v1 path falls to unknown and answers 404 not_found like any unknown path.
//
// Its calls go through the same admission as /v1 calls, with two differences the
// contract makes: any valid token of the account will do (no scope is needed), and a
// call is not counted against the token's rate limit (its rate-limit headers show
// the token's budget as it stands, untouched, and a token that spent its budget may
// still call). An address guessing tokens is limited as on /v1. Answers use the data
// wrapper and the errors of docs/api.md, Errors. A sandbox call is never replayed by Idempotency-Key
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
	X := scopeSandbox
	return []route{
		{"GET", "/faults", X, s.listFaults},
		{"POST", "/faults", X, s.createFault},
		{"DELETE", "/faults", X, s.deleteFaults},
		{"DELETE", "/faults/{id}", X, s.deleteFault},
		{"GET", "/requests", X, s.listRequests},
		{"GET", "/clock", X, s.getClock},
		{"POST", "/clock", X, s.advanceClock},
		{"POST", "/reset", X, s.resetAccount},
		{"POST", "/seed", X, s.seed},
		{"POST", "/tickets/{id}/reply", X, s.sandboxTicketReply},
	}
}

// handleSandbox registers the sandbox routes, and OPTIONS on each of their paths,
// and lists the /v1 routes faults may name.
func (s *Server) handleSandbox() error {
	if err := s.listFaultRoutes(); err != nil {
		return err
	}
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
	return nil
}

// listFaultRoutes lists the /v1 routes an HTTP fault may name: those of an account
// (a route without a token has no account to fault), each with the fault statuses
// the OpenAPI document gives it, since a fault makes a route answer only what it can
// answer in production.
func (s *Server) listFaultRoutes() error {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(s.openapi, &doc); err != nil {
		return fmt.Errorf("the OpenAPI document: %w", err)
	}
	s.faultRoute = map[string]sandbox.Route{}
	for _, rt := range s.routes() {
		if rt.scope == "" {
			continue
		}
		var op struct {
			Responses map[string]json.RawMessage `json:"responses"`
		}
		if raw, ok := doc.Paths[rt.path][strings.ToLower(rt.method)]; !ok || json.Unmarshal(raw, &op) != nil {
			return fmt.Errorf("the OpenAPI document has no %s %s", rt.method, rt.path)
		}
		fr := sandbox.Route{Method: rt.method, Path: rt.path}
		for _, st := range sandbox.FaultStatuses {
			if _, ok := op.Responses[strconv.Itoa(st)]; ok {
				fr.Statuses = append(fr.Statuses, st)
			}
		}
		s.faultRoutes = append(s.faultRoutes, fr)
		s.faultRoute[rt.method+" "+rt.path] = fr
	}
	return nil
}

// injectFault applies the account's HTTP fault for a request to rt, if one applies
// (after authentication, the rate limit and the scope: the account is known): it
// waits the fault's delay, then answers its status through fail, the error writer
// of every answer, with the body and headers production gives that status, and
// reports false; nothing else is done for the request (no handler runs, an
// Idempotency-Key is not used). With a delay alone it reports true: the request is
// served as usual, later. A client that goes away during the delay ends it.
func (s *Server) injectFault(w http.ResponseWriter, req *request, rt route, lang string) bool {
	fr, ok := s.faultRoute[rt.method+" "+rt.path]
	if !ok {
		return true
	}
	f, ok := s.sandbox.TakeHTTPFault(req.p.Account.ID, fr)
	if !ok {
		return true
	}
	if f.DelayMS > 0 {
		t := time.NewTimer(time.Duration(f.DelayMS) * time.Millisecond)
		select {
		case <-req.ctx.Done():
			t.Stop()
			s.fail(w, req.Request, lang, req.ctx.Err())
			return false
		case <-t.C:
		}
	}
	switch f.Status {
	case 0:
		return true
	case http.StatusTooManyRequests:
		// The rate-limit headers are the token's, as authenticate set them; the
		// client is told to come back in a second, the least a real 429 says.
		s.fail(w, req.Request, lang, limited(ratelimit.Result{RetryAfter: time.Second}))
	default:
		s.fail(w, req.Request, lang, s.svc.Sandbox.FaultError(req.ctx, req.p, f.Status, faultTarget(req.Request, rt)))
	}
	return false
}

// faultTarget is the server or the volume the path of a request to rt names.
func faultTarget(r *http.Request, rt route) ops.FaultTarget {
	var t ops.FaultTarget
	id := r.PathValue("id")
	switch {
	case strings.HasPrefix(rt.path, "/servers/{id}"):
		if ref, ok := hosting.ParseServerRef(id); ok {
			t.Server = &ref
		}
	case strings.HasPrefix(rt.path, "/volumes/{id}"):
		if ref, ok := hosting.ParseVolumeRef(id); ok {
			t.Volume = &ref
		}
	}
	return t
}

// sandboxDispatch serves a sandbox route: admission (401, 429 for an address, 403 for
// a blocked account), then the handler. A state-changing call is audited.
func (s *Server) sandboxDispatch(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := &request{Request: r, ctx: r.Context()}
		defer req.noteAccount(w)
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
		s.svc.Gate.Audit(r.Context(), auditEntry(req, SandboxBase, rt, status, rec.body.Bytes(), "", false))
	})
}

// SandboxRoutes lists every route of the sandbox API as "METHOD /sandbox/v1/path",
// for tests and docs: those the server serves when it runs with a sandbox.
func (s *Server) SandboxRoutes() []struct{ Method, Path string } {
	var out []struct{ Method, Path string }
	for _, rt := range s.sandboxRoutes() {
		out = append(out, struct{ Method, Path string }{rt.method, SandboxBase + rt.path})
	}
	return out
}

// ---- faults ----

func (s *Server) createFault(r *request) (int, any, error) {
	var in api.SandboxFaultCreate
	if err := decode(r.Request, &in); err != nil {
		return 0, nil, err
	}
	f, err := s.sandbox.AddFault(r.p.Account.ID, sandbox.FaultSpec{Method: in.Method, Path: in.Path, Status: in.Status,
		DelayMS: in.DelayMS, Operation: in.Operation, Fail: in.Fail, Slow: in.Slow, Times: in.Times, Probability: in.Probability},
		s.faultRoutes)
	return http.StatusCreated, one(toFault(f)), err
}

func (s *Server) listFaults(r *request) (int, any, error) {
	return http.StatusOK, list(s.sandbox.Faults(r.p.Account.ID), toFault), nil
}

func (s *Server) deleteFault(r *request) (int, any, error) {
	id, err := pathID(r.Request)
	if err != nil {
		return 0, nil, err
	}
	if !s.sandbox.DeleteFault(r.p.Account.ID, id) {
		return 0, nil, hosting.ErrNotFound()
	}
	return http.StatusNoContent, nil, nil
}

func (s *Server) deleteFaults(r *request) (int, any, error) {
	s.sandbox.ClearFaults(r.p.Account.ID)
	return http.StatusNoContent, nil, nil
}

func toFault(f sandbox.Fault) api.SandboxFault {
	out := api.SandboxFault{ID: f.ID, Times: f.Times, Probability: f.Probability}
	if f.Times > 0 {
		rem := f.Remaining
		out.Remaining = &rem
	}
	if f.IsHTTP() {
		method, path := f.Method, f.Path
		out.Method, out.Path = &method, &path
		if f.Status != 0 {
			st := f.Status
			out.Status = &st
		}
		if f.HasDelay {
			d := f.DelayMS
			out.DelayMS = &d
		}
		return out
	}
	op, fail := string(f.Operation), f.Fail
	out.Operation, out.Fail = &op, &fail
	if f.Slow > 0 {
		slow := f.Slow
		out.Slow = &slow
	}
	return out
}

// ---- the request journal ----

// Journal limits of GET /sandbox/v1/requests?limit=N.
const (
	journalLimitDefault = 50
	journalLimitMax     = sandbox.MaxJournal
)

func (s *Server) listRequests(r *request) (int, any, error) {
	var v hosting.Validation
	limit := journalLimitDefault
	if raw, ok := queryValue(r.Request, "limit", &v); ok {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > journalLimitMax || raw != strconv.Itoa(n) {
			v.Add("limit", "validation.int_range", "min", 1, "max", journalLimitMax)
		}
		limit = n
	}
	if err := v.Err("limit"); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, list(s.sandbox.Requests(r.p.Account.ID, limit), toJournalEntry), nil
}

func toJournalEntry(e sandbox.Entry) api.SandboxRequest {
	out := api.SandboxRequest{ID: e.ID, Time: e.Time, Method: e.Method, Path: e.Path, Status: e.Status,
		DurationMS: float64(e.Duration.Microseconds()) / 1000, RequestBody: e.RequestBody, ResponseBody: e.ResponseBody}
	for _, f := range []struct {
		dst **string
		v   string
	}{{&out.Query, e.Query}, {&out.RequestID, e.RequestID}, {&out.IdempotencyKey, e.IdempotencyKey}} {
		if f.v != "" {
			v := f.v
			*f.dst = &v
		}
	}
	return out
}

// journal starts the journal entry of a /v1 request (the sandbox keeps the latest
// of each account, GET /sandbox/v1/requests): it returns the writer the request is
// answered through, which keeps the answer's start, and done, which records the
// entry once the request is answered, if it came from an account (after
// authentication). The request's body is read ahead up to what the journal keeps,
// and given to the handler whole.
func (s *Server) journal(w http.ResponseWriter, req *request) (http.ResponseWriter, func()) {
	r := req.Request
	start, at := time.Now(), s.svc.Gate.Now()
	var reqBody sandbox.Capture
	if r.Body != nil && r.Body != http.NoBody {
		_, _ = io.Copy(&reqBody, io.LimitReader(r.Body, sandbox.MaxJournalBody+1))
		r.Body = readCloser{io.MultiReader(bytes.NewReader(reqBody.Bytes()), r.Body), r.Body}
	}
	tee := &teeWriter{ResponseWriter: w}
	return tee, func() {
		if req.p.Account.ID == 0 {
			return
		}
		status := tee.status
		if status == 0 {
			status = http.StatusOK
		}
		s.sandbox.Record(req.p.Account.ID, sandbox.Entry{Time: at, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
			Status: status, Duration: time.Since(start), RequestID: w.Header().Get("X-Request-Id"),
			IdempotencyKey: r.Header.Get("Idempotency-Key"), RequestBody: reqBody.Body(), ResponseBody: tee.body.Body()})
	}
}

type readCloser struct {
	io.Reader
	io.Closer
}

// teeWriter is a ResponseWriter that keeps the status and the start of the body.
type teeWriter struct {
	http.ResponseWriter
	status int
	body   sandbox.Capture
}

func (t *teeWriter) WriteHeader(status int) {
	if t.status == 0 {
		t.status = status
	}
	t.ResponseWriter.WriteHeader(status)
}

func (t *teeWriter) Write(p []byte) (int, error) {
	if t.status == 0 {
		t.status = http.StatusOK
	}
	_, _ = t.body.Write(p)
	return t.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (t *teeWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
