package api

import (
	"encoding/json"
	"time"
)

// The sandbox API (/sandbox/v1, only under `berthd serve --sandbox`).

// SandboxFaultCreate is the body of POST /sandbox/v1/faults: an HTTP fault (method,
// path, status and/or delay_ms) or an operation fault (operation, fail or slow).
type SandboxFaultCreate struct {
	Method      *string  `json:"method,omitempty"`
	Path        *string  `json:"path,omitempty"`
	Status      *int64   `json:"status,omitempty"`
	DelayMS     *int64   `json:"delay_ms,omitempty"`
	Operation   *string  `json:"operation,omitempty"`
	Fail        *bool    `json:"fail,omitempty"`
	Slow        *float64 `json:"slow,omitempty"`
	Times       *int64   `json:"times,omitempty"`
	Probability *float64 `json:"probability,omitempty"`
}

// SandboxFault is a fault: the fields of the other kind, and those not given, are
// null.
type SandboxFault struct {
	ID        int64    `json:"id"`
	Method    *string  `json:"method"`
	Path      *string  `json:"path"`
	Status    *int     `json:"status"`
	DelayMS   *int64   `json:"delay_ms"`
	Operation *string  `json:"operation"`
	Fail      *bool    `json:"fail"`
	Slow      *float64 `json:"slow"`
	Times     int64    `json:"times"`
	// Remaining is null for a fault that applies until deleted (times 0).
	Remaining   *int64  `json:"remaining"`
	Probability float64 `json:"probability"`
}

// SandboxRequest is an entry of the request journal, GET /sandbox/v1/requests.
type SandboxRequest struct {
	ID             int64     `json:"id"`
	Time           time.Time `json:"time"`
	Method         string    `json:"method"`
	Path           string    `json:"path"`
	Query          *string   `json:"query"`
	Status         int       `json:"status"`
	DurationMS     float64   `json:"duration_ms"`
	RequestID      *string   `json:"request_id"`
	IdempotencyKey *string   `json:"idempotency_key"`
	// RequestBody and ResponseBody are JSON values (null: no body); see the
	// document for how bodies that are not JSON, or too long, are kept.
	RequestBody  json.RawMessage `json:"request_body"`
	ResponseBody json.RawMessage `json:"response_body"`
}
