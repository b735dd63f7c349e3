package client

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/berthhq/berth/api"
)

// Error is an error answer of the API (docs/api.md, Errors): every status of 400 and
// above that the server sent, decoded. Compare it with the sentinels below through
// errors.Is, or take it apart with errors.As:
//
//	var e *client.Error
//	if errors.As(err, &e) && e.Operation != nil { /* wait on it */ }
type Error struct {
	// StatusCode is the HTTP status (401, 403, 404, 409, 422, 429, 503, ...).
	StatusCode int
	// Code is the stable, never translated word of the body ("busy",
	// "validation_failed", ...); empty when the body was not Berth's (a proxy's 502).
	Code string
	// Message is the human-readable message, in the account's language (before a
	// token is resolved, in the client's language option).
	Message string
	// Fields maps each rejected field (or query parameter, or header) of a 422 to its
	// messages.
	Fields map[string][]string
	// RetryAfter is the server's Retry-After (409, 429, 503), zero when absent.
	RetryAfter time.Duration
	// Operation is what holds a busy server (409): wait on it with WaitOperation.
	Operation *api.OperationRef
	// RequestID is the X-Request-Id of the answer, for the operator's logs.
	RequestID string
}

// Error reads as "berth: 422 validation_failed: The name field is required.".
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "berth: %d", e.StatusCode)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	} else if e.Code == "" {
		b.WriteString(" " + http.StatusText(e.StatusCode))
	}
	if e.Operation != nil {
		fmt.Fprintf(&b, " (operation %d, %s)", e.Operation.ID, e.Operation.Type)
	}
	return b.String()
}

// FieldNames returns the rejected fields of a 422, sorted.
func (e *Error) FieldNames() []string {
	names := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Is matches the sentinels: a sentinel of a code matches an Error of that code (or,
// when the body carried no code, of that code's status); ErrForbidden matches every
// 403 and ErrValidation every 422.
func (e *Error) Is(target error) bool {
	s, ok := target.(*sentinel)
	if !ok {
		return false
	}
	if s.code == "" {
		return e.StatusCode == s.status
	}
	return e.Code == s.code || (e.Code == "" && e.StatusCode == s.status)
}

// sentinel is the target of errors.Is for one code or one status.
type sentinel struct {
	code   string // "" matches by status only
	status int
}

func (s *sentinel) Error() string {
	if s.code == "" {
		return fmt.Sprintf("berth: %d %s", s.status, http.StatusText(s.status))
	}
	return "berth: " + s.code
}

// The codes of docs/api.md, Errors and api/openapi.yaml, one sentinel each; use with
// errors.Is. ErrForbidden and ErrValidation match their whole status.
var (
	// ErrUnauthenticated: 401, the token is missing, unknown, expired or revoked.
	ErrUnauthenticated error = &sentinel{"unauthenticated", http.StatusUnauthorized}
	// ErrForbidden: any 403 (ErrMissingScope, ErrAccountBlocked, ErrServerSuspended).
	ErrForbidden error = &sentinel{"", http.StatusForbidden}
	// ErrMissingScope: 403, the token lacks the route's scope.
	ErrMissingScope error = &sentinel{"missing_scope", http.StatusForbidden}
	// ErrAccountBlocked: 403, an operator blocked the account.
	ErrAccountBlocked error = &sentinel{"account_blocked", http.StatusForbidden}
	// ErrServerSuspended: 403, the server is suspended; only GETs answer.
	ErrServerSuspended error = &sentinel{"server_suspended", http.StatusForbidden}
	// ErrNotFound: 404, no such resource on this account (or no such path).
	ErrNotFound error = &sentinel{"not_found", http.StatusNotFound}
	// ErrMethodNotAllowed: 405, the path does not take the method.
	ErrMethodNotAllowed error = &sentinel{"method_not_allowed", http.StatusMethodNotAllowed}
	// ErrBusy: 409, the server runs another operation (Error.Operation names it).
	ErrBusy error = &sentinel{"busy", http.StatusConflict}
	// ErrValidation: any 422 (validation_failed or insufficient_credit); Error.Fields
	// names the fields.
	ErrValidation error = &sentinel{"", http.StatusUnprocessableEntity}
	// ErrInsufficientCredit: 422 on plan_id, the credit does not cover an hour.
	ErrInsufficientCredit error = &sentinel{"insufficient_credit", http.StatusUnprocessableEntity}
	// ErrRateLimited: 429, after the client's retries (if any) ran out.
	ErrRateLimited error = &sentinel{"rate_limited", http.StatusTooManyRequests}
	// ErrUnavailable: 503, after the client's retries (if any) ran out.
	ErrUnavailable error = &sentinel{"unavailable", http.StatusServiceUnavailable}
	// ErrInternal: 500, a failure Berth did not foresee (a change answering 500
	// changed nothing).
	ErrInternal error = &sentinel{"internal", http.StatusInternalServerError}
)

// ErrOperationFailed matches an *OperationError: an awaited operation ended in
// status "error".
var ErrOperationFailed error = &sentinel{code: "operation_failed"}

// ErrTimeout matches a *TimeoutError: a server that did not answer within the client's
// timeout (WithTimeout).
var ErrTimeout error = &sentinel{code: "timeout"}

// TimeoutError is a request that got no whole answer within the client's timeout
// (WithTimeout; DefaultTimeout without it): the server took the connection and said
// nothing, or too little, in time, or the connection never opened. It is not retried.
type TimeoutError struct {
	Method string
	// URL is the request's without its query (which may hold a console ticket): the
	// server's address and the path.
	URL string
	// Timeout is the bound that ran out: the client's timeout, plus the wait of a held
	// request (?wait=N).
	Timeout time.Duration
}

// Error reads as "berth: GET /v1/me: the server at https://berth.example.com did not
// answer within 1m30s".
func (e *TimeoutError) Error() string {
	where, path := e.URL, e.URL
	if u, err := url.Parse(e.URL); err == nil {
		where, path = u.Scheme+"://"+u.Host, u.Path
	}
	return fmt.Sprintf("berth: %s %s: the server at %s did not answer within %s", e.Method, path, where, e.Timeout)
}

// Is matches ErrTimeout.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// OperationError is returned by WaitOperation and WaitServer when the operation
// ended in status "error"; Operation.Error says why.
type OperationError struct {
	Operation *api.Operation
}

func (e *OperationError) Error() string {
	why := "failed"
	if e.Operation.Error != nil && *e.Operation.Error != "" {
		why = *e.Operation.Error
	}
	return fmt.Sprintf("berth: operation %d (%s) ended in error: %s", e.Operation.ID, e.Operation.Type, why)
}

// Is matches ErrOperationFailed.
func (e *OperationError) Is(target error) bool { return target == ErrOperationFailed }
