// Package apitest checks HTTP answers against Berth's OpenAPI document
// (api/openapi.yaml). Every API test runs its responses through a Checker, so a
// response the document does not describe (an undocumented status, a missing
// rate-limit header, an extra field, a money string with two decimals, ...) fails
// the test that produced it.
//
// Use it directly:
//
//	c := apitest.New(t)
//	c.Check(t, req, resp.StatusCode, resp.Header, body)
//
// or let an http.Client check everything that passes through it:
//
//	client := &http.Client{Transport: apitest.New(t).Transport(t, nil)}
//
// Check and the Transport report failures with t.Errorf, never t.Fatalf, so they may
// be used from any goroutine.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/berthhq/berth/api"
)

// contract is the loaded document, shared by every Checker of the process.
type contract struct {
	doc    *openapi3.T
	router routers.Router
}

var (
	loadOnce sync.Once
	loaded   *contract
	loadErr  error
)

func load() (*contract, error) {
	ctx := context.Background()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.OpenAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("load api/openapi.yaml: %w", err)
	}
	if err := doc.Validate(ctx); err != nil {
		return nil, fmt.Errorf("validate api/openapi.yaml: %w", err)
	}
	// The document's only server is the relative URL /v1: gorillamux then matches
	// the path prefix /v1 on any scheme and host, so requests to
	// http://127.0.0.1:PORT/v1/... find their route as they are.
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "/v1" {
		return nil, errors.New("api/openapi.yaml: servers must be exactly [{url: /v1}]")
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route api/openapi.yaml: %w", err)
	}
	return &contract{doc: doc, router: router}, nil
}

// Checker validates answers against the OpenAPI document.
type Checker struct {
	c *contract
}

// New returns a Checker. The document is loaded and validated once per process; a
// document that does not load or validate fails the test.
func New(t testing.TB) *Checker {
	t.Helper()
	loadOnce.Do(func() { loaded, loadErr = load() })
	if loadErr != nil {
		t.Fatalf("apitest: %v", loadErr)
		return nil
	}
	return &Checker{c: loaded}
}

// Doc returns the loaded, validated document. It is shared: do not modify it.
func (c *Checker) Doc() *openapi3.T { return c.c.doc }

func options() *openapi3filter.Options {
	return &openapi3filter.Options{
		IncludeResponseStatus: true,
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		MultiError:            true,
	}
}

// Check validates one answer to req: the request must match a documented route, the
// status must be documented for that route, and the headers and body must match
// what the document says of that status. Use CheckUndocumented for a deliberate
// request to a path or method the document does not list.
func (c *Checker) Check(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	route, params, err := c.c.router.FindRoute(req)
	if err != nil {
		t.Errorf("apitest: %s %s matches no documented route (%v); it answered %d %s",
			req.Method, req.URL.Path, err, status, excerpt(body))
		return
	}
	c.checkRoute(t, req, route, params, status, header, body)
}

func (c *Checker) checkRoute(t testing.TB, req *http.Request, route *routers.Route, params map[string]string,
	status int, header http.Header, body []byte) {
	t.Helper()
	what := fmt.Sprintf("%s %s (%s) answered %d", req.Method, req.URL.Path, route.Operation.OperationID, status)
	if header == nil {
		header = http.Header{}
	}
	if route.Operation.Responses.Status(status) == nil && route.Operation.Responses.Default() == nil {
		documented := make([]string, 0, route.Operation.Responses.Len())
		for code := range route.Operation.Responses.Map() {
			documented = append(documented, code)
		}
		slices.Sort(documented)
		t.Errorf("apitest: %s, a status the document does not give this route (documented: %s)\nbody: %s",
			what, strings.Join(documented, ", "), excerpt(body))
		return
	}
	c.checkRequestID(t, what, header)
	opts := options()
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    req,
			PathParams: params,
			Route:      route,
			Options:    opts,
		},
		Status:  status,
		Header:  header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: opts,
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("apitest: %s, which does not match the OpenAPI document: %v\nbody: %s", what, err, excerpt(body))
		return
	}
	// ValidateResponse does not look at the body of a response documented without
	// one (204): it must be empty.
	if ref := route.Operation.Responses.Status(status); ref != nil && ref.Value != nil && len(ref.Value.Content) == 0 && len(body) != 0 {
		t.Errorf("apitest: %s with a body, but the document gives this status no body: %s", what, excerpt(body))
	}
}

// checkRequestID checks the one X-Request-Id every answer carries, also where no
// route is documented (docs/api.md, The sandbox).
func (c *Checker) checkRequestID(t testing.TB, what string, header http.Header) {
	t.Helper()
	if ids := header.Values("X-Request-Id"); len(ids) != 1 {
		t.Errorf("apitest: %s with X-Request-Id %q, want one", what, ids)
	} else if err := c.c.doc.Components.Headers["X-Request-Id"].Value.Schema.Value.VisitJSON(ids[0]); err != nil {
		t.Errorf("apitest: %s with X-Request-Id %q, which does not match the OpenAPI document: %v", what, ids[0], err)
	}
}

// CheckUndocumented validates the answer to a deliberate request for a path the
// document does not list (404, code not_found) or a listed path with a method it
// does not take (405, code method_not_allowed, with an Allow header), or what comes
// before those (401 unauthenticated, 429 rate_limited, 403 account_blocked). The
// body must be a JSON Error.
func (c *Checker) CheckUndocumented(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	what := fmt.Sprintf("%s %s answered %d", req.Method, req.URL.Path, status)
	if _, _, err := c.c.router.FindRoute(req); err == nil {
		t.Errorf("apitest: %s, but %s %s is a documented route: use Check", what, req.Method, req.URL.Path)
		return
	}
	c.checkUndocumented(t, what, status, header, body)
}

func (c *Checker) checkUndocumented(t testing.TB, what string, status int, header http.Header, body []byte) {
	t.Helper()
	var wantCode string
	switch status {
	case http.StatusNotFound:
		wantCode = "not_found"
	case http.StatusMethodNotAllowed:
		wantCode = "method_not_allowed"
		if header.Get("Allow") == "" {
			t.Errorf("apitest: %s without an Allow header", what)
		}
	case http.StatusUnauthorized:
		wantCode = "unauthenticated" // the token is looked at before the path
	case http.StatusTooManyRequests:
		wantCode = "rate_limited"
	case http.StatusForbidden:
		wantCode = "account_blocked" // a blocked account's every request but GET /me
	default:
		t.Errorf("apitest: %s for an undocumented path or method; only 401, 403 (blocked), 429, 404 and 405 are allowed there: %s",
			what, excerpt(body))
		return
	}
	if ct := header.Get("Content-Type"); !isJSON(ct) {
		t.Errorf("apitest: %s with Content-Type %q, want application/json", what, ct)
	}
	c.checkRequestID(t, what, header)
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("apitest: %s with a body that is not JSON (%v): %s", what, err, excerpt(body))
		return
	}
	schema := c.c.doc.Components.Schemas["Error"].Value
	if err := schema.VisitJSON(v, openapi3.VisitAsResponse(), openapi3.MultiErrors()); err != nil {
		t.Errorf("apitest: %s with a body that is not an Error: %v\nbody: %s", what, err, excerpt(body))
		return
	}
	if code := v.(map[string]any)["code"]; code != wantCode {
		t.Errorf("apitest: %s with code %v, want %s", what, code, wantCode)
	}
}

// check validates an answer whatever the request: a documented route with Check,
// an unknown path or method (router says so, server answers 404 or 405) with
// CheckUndocumented.
func (c *Checker) check(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	route, params, err := c.c.router.FindRoute(req)
	switch {
	case err == nil:
		c.checkRoute(t, req, route, params, status, header, body)
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed || status == http.StatusUnauthorized ||
		status == http.StatusForbidden || status == http.StatusTooManyRequests:
		c.checkUndocumented(t, fmt.Sprintf("%s %s answered %d", req.Method, req.URL.Path, status), status, header, body)
	default:
		t.Errorf("apitest: %s %s matches no documented route (%v); it answered %d %s",
			req.Method, req.URL.Path, err, status, excerpt(body))
	}
}

// Transport returns a RoundTripper that sends requests with base (nil means
// http.DefaultTransport) and checks every answer: answers to documented routes as
// Check does, 404 and 405 answers to undocumented paths or methods as
// CheckUndocumented does. The body is read and restored, so callers read it as
// usual; a 101 (a WebSocket) is checked by its status and headers, and its body, the
// connection, left to the caller. Failures are reported on t.
func (c *Checker) Transport(t testing.TB, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{c: c, t: t, base: base}
}

type transport struct {
	c    *Checker
	t    testing.TB
	base http.RoundTripper
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := tr.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// A WebSocket: its body is the connection, which the caller goes on with.
		tr.c.check(tr.t, req, resp.StatusCode, resp.Header, nil)
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return resp, fmt.Errorf("apitest: reading the body of %s %s: %w", req.Method, req.URL.Path, err)
	}
	tr.c.check(tr.t, req, resp.StatusCode, resp.Header, body)
	return resp, nil
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

func excerpt(body []byte) string {
	const max = 2000
	if len(body) == 0 {
		return "(no body)"
	}
	if len(body) > max {
		return string(body[:max]) + "…"
	}
	return string(body)
}
