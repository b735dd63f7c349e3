// Package client is the Go SDK of Berth's /v1 API: one method per operation of
// api/openapi.yaml, with the request and response types of package api.
//
//	c, err := client.New(client.WithBaseURL("https://berth.example.com/v1"), client.WithToken(token))
//	srv, err := c.CreateServer(ctx, api.ServerCreate{PlanID: client.Ptr(plan), LocationID: client.Ptr(loc), ImageID: client.Ptr(img)})
//	srv, err = c.WaitServer(ctx, srv.Name, "running")
//
// # Methods
//
// Each method is named after its operation's operationId (GetServer, PowerServer,
// ListTransactions, ...) and takes a context.Context first. A server is named by its
// numeric id (ID(42)) or its name ("server-a1b2c3"); other resources by their id.
// Lists answer every item, except the histories, which are paginated: ListTransactions,
// ListOperations, ListServerOperations and ListWebhookDeliveries answer one page, and
// AllTransactions, AllOperations, AllServerOperations and AllWebhookDeliveries walk
// every page as an iter.Seq2.
//
// # Webhooks
//
// CreateWebhook has the account's events sent to a URL as they happen, signed with a
// secret its answer alone shows (RotateWebhookSecret gives another); TestWebhook
// sends a test event, ListWebhookDeliveries shows each delivery with its attempts and
// RedeliverWebhookDelivery sends one again. A receiver checks what it gets with
// client/webhook.Verify (docs/webhooks.md). Changing webhooks needs a token holding
// every scope (ErrMissingScope).
//
// # Waiting
//
// An action on a server (CreateServer, PowerServer, ReinstallServer, RescaleServer,
// CreateSnapshot, RestoreSnapshot) answers at once; the server's Operation names
// what runs. WaitOperation waits for an operation to end by letting the API hold the
// request (GET /operations/{id}?wait=60): no polling, one request a minute at most
// against the rate limit. WaitServer waits until a server rests in a status.
//
// # Errors
//
// An error answer is an *Error (status, code, translated message, field messages,
// Retry-After, the operation holding a busy server). Match its code with errors.Is
// and the sentinels (ErrNotFound, ErrBusy, ErrValidation, ErrRateLimited, ...); an
// awaited operation that ended in "error" is an *OperationError (ErrOperationFailed).
//
// # Retries
//
// A 429 or 503 is sent again after its Retry-After, and a request that got no answer
// (except a DELETE) after a short backoff, within DefaultRetryPolicy (5 retries, 2
// minutes of waiting; see WithRetryPolicy and WithoutRetries). Every POST carries an
// Idempotency-Key, the same on each attempt of one call, so a retried order whose
// first answer was lost answers the first server instead of making a second
// (WithIdempotencyKey sets a key of the caller's own). A 409 is never retried: wait
// on Error.Operation, or let RetryBusy wait on it and call again.
//
// # Timeouts
//
// Each request must be answered within DefaultTimeout (90 s; WithTimeout changes it,
// 0 lifts it): a server that takes the connection and says nothing fails the call
// with a *TimeoutError (ErrTimeout) naming its address and the timeout, and the call
// is not retried. A request the API is asked to hold (?wait=N) gets the timeout on
// top of its N seconds, so WaitOperation and WaitServer wait as long as ctx lets
// them, each of their requests bounded; an open serial console is not bounded at all.
// An HTTP client given with WithHTTPClient keeps its own Timeout besides.
//
// Client.RateLimit returns the token's budget as the latest answer stated it
// (requests a minute, those left, when all are back), for a client that paces
// itself instead of meeting 429s.
package client
