// Package clienttest is an example of testing an API client against Berth's sandbox
// (`berthd serve --sandbox`; docs/testing-your-client.md). This file is the client
// under test: a small hand-written client of Berth's /v1 API using only net/http,
// as a client author would write one. Its tests (the _test.go files) run it against
// a real berthd started with `serve --sandbox --seed ../fixtures.yaml`, and make
// that Berth fail on purpose: 503s and 429s, a server busy with an operation, a
// provisioning that ends in error, a month of billing in a second.
//
// Berth's own Go SDK, package github.com/berthhq/berth/client, does all this and
// more (sdk_test.go runs the same faults against it); this client shows what any
// client must do, in any language.
package clienttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Client calls Berth's /v1 API.
type Client struct {
	BaseURL string // e.g. http://127.0.0.1:8080/v1
	Token   string
	HTTP    *http.Client // nil: http.DefaultClient
	// MaxAttempts bounds the attempts of one call answered 429 or 503 (0: 5).
	MaxAttempts int
}

// Error is an error answer of the API (docs/api.md, Errors).
type Error struct {
	Status     int
	Code       string              `json:"code"`
	Message    string              `json:"message"`
	Errors     map[string][]string `json:"errors"`
	Operation  *OperationRef       `json:"operation"` // on a 409 busy: what holds the server
	RetryAfter time.Duration       // from Retry-After (409, 429, 503)
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// OperationRef names an operation.
type OperationRef struct {
	ID   int64  `json:"id"`
	Type string `json:"type"`
}

// Server is the part of a server record this client reads.
type Server struct {
	ID        int64         `json:"id"`
	Name      string        `json:"name"`
	Status    string        `json:"status"`
	PlanID    int64         `json:"plan_id"`
	Operation *OperationRef `json:"operation"`
}

// Operation is the part of an operation this client reads.
type Operation struct {
	ID     int64   `json:"id"`
	Type   string  `json:"type"`
	Status string  `json:"status"` // running, success, error
	Error  *string `json:"error"`
}

// Do sends a request and decodes the answer's data into out (nil: ignored). A 429
// or a 503 is sent again after its Retry-After, up to MaxAttempts attempts; every
// attempt of a POST carries the same Idempotency-Key, so that an order whose answer
// was lost is answered with the first server, never a second. Another error answer
// is an *Error.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return err
		}
	}
	key := ""
	if method == http.MethodPost {
		key = newKey()
	}
	attempts := c.MaxAttempts
	if attempts <= 0 {
		attempts = 5
	}
	for attempt := 1; ; attempt++ {
		err := c.send(ctx, method, path, payload, key, out)
		var apiErr *Error
		if !errors.As(err, &apiErr) || (apiErr.Status != 429 && apiErr.Status != 503) || attempt == attempts {
			return err
		}
		select {
		case <-time.After(apiErr.RetryAfter):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// send makes one attempt.
func (c *Client) send(ctx context.Context, method, path string, payload []byte, key string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, bytes.NewReader(payload))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	httpClient := c.HTTP
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 400 {
		apiErr := &Error{Status: resp.StatusCode}
		if err := json.Unmarshal(data, apiErr); err != nil {
			return fmt.Errorf("%s %s: %d and a body that is not JSON: %w", method, path, resp.StatusCode, err)
		}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			apiErr.RetryAfter = time.Duration(s) * time.Second
		}
		return apiErr
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	return json.Unmarshal(data, &struct {
		Data any `json:"data"`
	}{out})
}

func newKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// WaitOperation waits until an operation ends, letting the API hold each request
// (?wait=60) rather than polling.
func (c *Client) WaitOperation(ctx context.Context, id int64) (*Operation, error) {
	for {
		var op Operation
		if err := c.Do(ctx, http.MethodGet, fmt.Sprintf("/operations/%d?wait=60", id), nil, &op); err != nil {
			return nil, err
		}
		if op.Status != "running" {
			return &op, nil
		}
	}
}

// WhenIdle runs call; when it is answered 409 busy, it waits for the operation the
// answer names to end and runs call again (a server does one thing at a time).
func (c *Client) WhenIdle(ctx context.Context, call func() error) error {
	for {
		err := call()
		var apiErr *Error
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict || apiErr.Code != "busy" {
			return err
		}
		if apiErr.Operation == nil { // busy with something unnamed: come back later
			select {
			case <-time.After(apiErr.RetryAfter):
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		if _, err := c.WaitOperation(ctx, apiErr.Operation.ID); err != nil {
			return err
		}
	}
}

// ErrOperationFailed is an awaited operation that ended in error.
var ErrOperationFailed = errors.New("the operation ended in error")

// CreateServer orders a server and waits until its provisioning ends: the server
// running, or ErrOperationFailed with the server as the operation left it.
func (c *Client) CreateServer(ctx context.Context, order map[string]any) (*Server, error) {
	var srv Server
	if err := c.Do(ctx, http.MethodPost, "/servers", order, &srv); err != nil {
		return nil, err
	}
	return c.awaitServer(ctx, &srv)
}

// Power asks for a power action (on, off, shutdown, reboot, reset) and waits until
// it ends; when the server is busy, it first waits for what it is busy with.
func (c *Client) Power(ctx context.Context, serverID int64, action string) (*Server, error) {
	var srv Server
	err := c.WhenIdle(ctx, func() error {
		return c.Do(ctx, http.MethodPost, fmt.Sprintf("/servers/%d/power", serverID), map[string]string{"action": action}, &srv)
	})
	if err != nil {
		return nil, err
	}
	return c.awaitServer(ctx, &srv)
}

// awaitServer waits for the operation srv names, then reads srv again.
func (c *Client) awaitServer(ctx context.Context, srv *Server) (*Server, error) {
	var opErr error
	if srv.Operation != nil {
		op, err := c.WaitOperation(ctx, srv.Operation.ID)
		if err != nil {
			return nil, err
		}
		if op.Status == "error" {
			opErr = fmt.Errorf("%s #%d: %w", op.Type, op.ID, ErrOperationFailed)
		}
	}
	var now Server
	if err := c.Do(ctx, http.MethodGet, fmt.Sprintf("/servers/%d", srv.ID), nil, &now); err != nil {
		return nil, err
	}
	return &now, opErr
}
