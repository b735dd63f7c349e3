// Package hosting holds Berth's domain: accounts, servers, the catalog, operations and
// the rules that govern them. It knows nothing of HTTP, SQL or any compute driver.
package hosting

import (
	"errors"
	"fmt"
	"sort"
)

// Code is a stable, machine-readable error word (docs/api.md, Errors). Codes are never
// translated; messages are.
type Code string

const (
	CodeUnauthenticated    Code = "unauthenticated"
	CodeMissingScope       Code = "missing_scope"
	CodeAccountBlocked     Code = "account_blocked"
	CodeServerSuspended    Code = "server_suspended"
	CodeNotFound           Code = "not_found"
	CodeBusy               Code = "busy"
	CodeValidationFailed   Code = "validation_failed"
	CodeInsufficientCredit Code = "insufficient_credit"
	CodeRateLimited        Code = "rate_limited"
	CodeUnavailable        Code = "unavailable"
	CodeInternal           Code = "internal"
)

// Msg is a message to show a person: a catalog id and the values it interpolates.
// It is translated only when rendered, in the language of whoever reads it.
type Msg struct {
	ID   string
	Args map[string]any
}

// M builds a Msg from an id and alternating key, value pairs.
func M(id string, kv ...any) Msg {
	m := Msg{ID: id}
	if len(kv) > 0 {
		m.Args = make(map[string]any, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			m.Args[kv[i].(string)] = kv[i+1]
		}
	}
	return m
}

// Error is the one error type the core returns for anything a client caused or can
// act on. Anything else reaching the edge is an internal error.
type Error struct {
	Code    Code
	Message Msg
	// Fields holds the field errors of a validation failure, keyed by field name.
	Fields map[string][]Msg
	// Order is the order in which Fields should be reported (the request schema's).
	Order []string
	// Operation names the operation holding a busy server (CodeBusy).
	Operation *Operation
	// RetryAfter, in seconds, for busy, rate-limited and unavailable answers.
	RetryAfter int
	// Cause is what made the platform answer so (for the log; a client never sees it).
	Cause error
}

func (e *Error) Error() string {
	var s string
	if len(e.Fields) > 0 {
		s = fmt.Sprintf("%s: %v", e.Code, e.Fields)
	} else {
		s = fmt.Sprintf("%s: %s", e.Code, e.Message.ID)
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Unavailable is the answer when the platform cannot complete an action now for a
// reason that passes (a full disk, a database that cannot be written): nothing was
// changed, and the client retries after retryAfter seconds. cause goes to the log.
func Unavailable(cause error, retryAfter int) *Error {
	e := Errorf(CodeUnavailable, "error.unavailable")
	e.Cause, e.RetryAfter = cause, retryAfter
	return e
}

// Errorf returns an *Error with a code and a message.
func Errorf(code Code, id string, kv ...any) *Error {
	return &Error{Code: code, Message: M(id, kv...)}
}

// ErrNotFound is the answer for anything that does not exist on the caller's account.
func ErrNotFound() *Error { return Errorf(CodeNotFound, "error.not_found") }

// ErrorCode returns the code of err, or CodeInternal when err is not an *Error.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// IsCode reports whether err is an *Error with the given code.
func IsCode(err error, code Code) bool { return err != nil && ErrorCode(err) == code }

// Validation collects field errors so that every one of them is reported at once.
type Validation struct {
	order  []string
	fields map[string][]Msg
	code   Code
}

// SetCode makes the error answer code instead of validation_failed: a 422 whose
// cause a client handles apart, such as too little credit (insufficient_credit).
func (v *Validation) SetCode(c Code) { v.code = c }

// Add records a field error.
func (v *Validation) Add(field, id string, kv ...any) {
	if v.fields == nil {
		v.fields = map[string][]Msg{}
	}
	if _, ok := v.fields[field]; !ok {
		v.order = append(v.order, field)
	}
	v.fields[field] = append(v.fields[field], M(id, kv...))
}

// Has reports whether field already has an error.
func (v *Validation) Has(field string) bool { _, ok := v.fields[field]; return ok }

// Empty reports whether nothing was recorded.
func (v *Validation) Empty() bool { return len(v.fields) == 0 }

// Err returns nil when there is nothing to report, else a validation *Error whose
// fields are ordered by schemaOrder first, then in the order they were added.
func (v *Validation) Err(schemaOrder ...string) error {
	if v.Empty() {
		return nil
	}
	rank := map[string]int{}
	for i, f := range schemaOrder {
		rank[f] = i
	}
	order := append([]string(nil), v.order...)
	sort.SliceStable(order, func(i, j int) bool {
		ri, oki := rank[order[i]]
		rj, okj := rank[order[j]]
		switch {
		case oki && okj:
			return ri < rj
		case oki:
			return true
		default:
			return false
		}
	})
	code := CodeValidationFailed
	if v.code != "" {
		code = v.code
	}
	return &Error{Code: code, Fields: v.fields, Order: order}
}

// Invalid is a one-field validation error.
func Invalid(field, id string, kv ...any) error {
	var v Validation
	v.Add(field, id, kv...)
	return v.Err()
}
