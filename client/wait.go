package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/berthhq/berth/api"
)

// Operation statuses.
const (
	OperationStatusRunning = "running"
	OperationStatusSuccess = "success"
	OperationStatusError   = "error"
)

// maxWait is the longest the API holds GET /operations/{id}?wait=N.
const maxWait = 60

// WaitOperation returns the operation once it has ended. It asks the API to hold
// each request until the operation ends (GET /operations/{id}?wait=60, counted
// once against the rate limit) and asks again while it runs; it polls nothing
// itself. An operation that ended in "error" is returned with an *OperationError
// (errors.Is(err, ErrOperationFailed)). ctx bounds the whole wait: when it ends, the
// error is ctx's. ErrNotFound: no such operation on this account.
func (c *Client) WaitOperation(ctx context.Context, id int64) (*api.Operation, error) {
	for {
		op, err := one[api.Operation](c, ctx, http.MethodGet, idPath("/operations", id),
			url.Values{"wait": {strconv.Itoa(c.waitSeconds(ctx))}}, nil)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		switch op.Status {
		case OperationStatusRunning:
			if err := ctx.Err(); err != nil {
				return op, err
			}
		case OperationStatusError:
			return op, &OperationError{Operation: op}
		default:
			return op, nil
		}
	}
}

// GetOperationWait returns an operation after at most one held request: as soon as it
// ends, or after wait (rounded to whole seconds, 1 to 60) with status still
// "running". A progress display calls it in a loop to show the elapsed time and the
// server's status between two answers; WaitOperation is the loop without display.
// Unlike WaitOperation it returns an operation that ended in "error" without an
// error. ErrNotFound.
func (c *Client) GetOperationWait(ctx context.Context, id int64, wait time.Duration) (*api.Operation, error) {
	secs := min(max(int(wait.Round(time.Second)/time.Second), 1), maxWait)
	return one[api.Operation](c, ctx, http.MethodGet, idPath("/operations", id), url.Values{"wait": {strconv.Itoa(secs)}}, nil)
}

// waitSeconds is the ?wait of the next request: 60, or less so that the answer
// comes before ctx's deadline and the HTTP client's Timeout.
func (c *Client) waitSeconds(ctx context.Context) int {
	w := maxWait
	if dl, ok := ctx.Deadline(); ok {
		w = min(w, int(time.Until(dl)/time.Second)-1)
	}
	if t := c.http.Timeout; t > 0 {
		w = min(w, int(t/time.Second)-5)
	}
	return max(w, 1)
}

// WaitServer returns the server once it shows status with no operation in progress,
// waiting on each operation it runs meanwhile with WaitOperation. It fails when an
// operation ends in "error" (an *OperationError, with the server as it then is: also
// when the server's last operation failed before WaitServer first looked), and
// when the server rests in another status with no operation that could change it
// (e.g. "error" or "suspended" while "running" is awaited). ErrNotFound: no such
// server (also when it was deleted meanwhile).
func (c *Client) WaitServer(ctx context.Context, server, status string) (*api.Server, error) {
	for {
		srv, err := c.GetServer(ctx, server)
		if err != nil {
			return nil, err
		}
		if srv.Operation == nil {
			if srv.Status == status {
				return srv, nil
			}
			// Its last operation may have failed before this looked (a provisioning
			// that fails at once): that failure is the answer.
			if ops, err := c.ListServerOperations(ctx, srv.Name, OperationListOptions{}); err == nil && len(ops.Data) > 0 &&
				ops.Data[0].Status == "error" {
				return srv, &OperationError{Operation: &ops.Data[0]}
			}
			return srv, fmt.Errorf("berth: server %s is %s with no operation in progress: it will not become %s", srv.Name, srv.Status, status)
		}
		if _, err := c.WaitOperation(ctx, srv.Operation.ID); err != nil {
			var failed *OperationError
			if errors.As(err, &failed) {
				if now, err2 := c.GetServer(ctx, server); err2 == nil {
					srv = now
				}
				return srv, err
			}
			return nil, err
		}
	}
}

// busyWait is what RetryBusy waits after a 409 that names no operation and carries no
// Retry-After.
const busyWait = time.Second

// RetryBusy calls fn, and calls it again each time it fails with ErrBusy (409): before
// each new call it waits for the operation the 409 names to end, with WaitOperation
// (however that operation ends: it is not the caller's), or, when the 409 names none,
// for its Retry-After (1 s without one). It returns fn's first other result: nil, or
// an error that is not a 409. ctx bounds the whole wait; when it ends first, the last
// 409 is returned. A program that changes a server others may be changing too wraps
// each change in it:
//
//	err := c.RetryBusy(ctx, func() error { srv, err = c.PowerServer(ctx, name, client.PowerOff); return err })
func (c *Client) RetryBusy(ctx context.Context, fn func() error) error {
	for {
		err := fn()
		var e *Error
		if !errors.As(err, &e) || !errors.Is(e, ErrBusy) {
			return err
		}
		if e.Operation != nil {
			_, werr := c.WaitOperation(ctx, e.Operation.ID)
			switch {
			case ctx.Err() != nil:
				return err
			case werr != nil && !errors.Is(werr, ErrOperationFailed):
				return werr
			}
			continue
		}
		wait := e.RetryAfter
		if wait <= 0 {
			wait = busyWait
		}
		if !sleep(ctx, wait) {
			return err
		}
	}
}
