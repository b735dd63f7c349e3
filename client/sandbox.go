package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/berthhq/berth/api"
)

// The sandbox API (docs/api.md, The sandbox), present only on a Berth run with `berthd
// serve --sandbox`: faults, the account's test clock, reset, seed and the request
// journal, for testing a client against Berth. Its paths are under /sandbox/v1 beside
// the base URL's /v1; every call acts on the token's account only, needs no scope and
// does not count against the rate limit. Against a Berth without --sandbox each
// answers ErrNotFound.

// sandbox is c calling the sandbox API.
func (c *Client) sandbox() *Client {
	s := *c
	s.base = strings.TrimSuffix(c.base, "/v1") + "/sandbox/v1"
	return &s
}

// CreateSandboxFault adds a fault: an HTTP fault (Method, Path, Status and/or
// DelayMS) makes the account's matching requests fail, or wait, as the real
// answers do; an operation fault (Operation with Fail or Slow) makes its next
// operation of that type fail or take longer. ErrValidation.
func (c *Client) CreateSandboxFault(ctx context.Context, req api.SandboxFaultCreate) (*api.SandboxFault, error) {
	return one[api.SandboxFault](c.sandbox(), ctx, http.MethodPost, "/faults", nil, req)
}

// ListSandboxFaults returns the account's faults, those used up included.
func (c *Client) ListSandboxFaults(ctx context.Context) ([]api.SandboxFault, error) {
	return list[api.SandboxFault](c.sandbox(), ctx, "/faults", nil)
}

// DeleteSandboxFault removes one fault. ErrNotFound.
func (c *Client) DeleteSandboxFault(ctx context.Context, id int64) error {
	return c.sandbox().do(ctx, http.MethodDelete, idPath("/faults", id), nil, nil, nil)
}

// DeleteSandboxFaults removes every fault of the account.
func (c *Client) DeleteSandboxFaults(ctx context.Context) error {
	return c.sandbox().do(ctx, http.MethodDelete, "/faults", nil, nil, nil)
}

// ListSandboxRequests returns the account's latest /v1 requests as Berth saw them,
// newest first: limit of them (1 to 1000; 0 asks for the default, 50).
func (c *Client) ListSandboxRequests(ctx context.Context, limit int) ([]api.SandboxRequest, error) {
	var q url.Values
	if limit != 0 {
		q = url.Values{"limit": {strconv.Itoa(limit)}}
	}
	return list[api.SandboxRequest](c.sandbox(), ctx, "/requests", q)
}

// GetSandboxClock returns the time on the account's test clock.
func (c *Client) GetSandboxClock(ctx context.Context) (*api.Clock, error) {
	return one[api.Clock](c.sandbox(), ctx, http.MethodGet, "/clock", nil, nil)
}

// AdvanceSandboxClock moves the account's test clock forward by d (more than 0, at
// most 8760h, and at most 100 years ahead of the server's clock in all) and returns
// its new time; what the time did to the account (charges, a suspension, metrics) is
// done when it returns. ErrValidation (past the 100 years: nothing changed, and the
// message on advance says how much is left).
func (c *Client) AdvanceSandboxClock(ctx context.Context, d time.Duration) (*api.Clock, error) {
	return one[api.Clock](c.sandbox(), ctx, http.MethodPost, "/clock", nil, api.ClockAdvance{Advance: Ptr(d.String())})
}

// ResetSandboxAccount empties the account (servers, snapshots, keys, projects,
// recipes, operations, ledger, faults, clock), keeping its tokens, and starts it
// again with req.Credit (nil: its opening credit). It returns the account.
func (c *Client) ResetSandboxAccount(ctx context.Context, req api.SandboxReset) (*api.Me, error) {
	return one[api.Me](c.sandbox(), ctx, http.MethodPost, "/reset", nil, req)
}

// SeedSandboxAccount makes SSH keys, projects, recipes, servers and volumes at once,
// servers running or stopped without provisioning, volumes available (attached to the
// server their Server names), all or nothing. ErrValidation (at the item's place,
// e.g. "servers[0].plan_id", "volumes[0].server").
func (c *Client) SeedSandboxAccount(ctx context.Context, req api.SandboxSeed) (*api.SandboxSeeded, error) {
	return one[api.SandboxSeeded](c.sandbox(), ctx, http.MethodPost, "/seed", nil, req)
}

// ReplySandboxTicket answers one of the account's tickets as staff would: the
// ticket becomes answered (a closed one is reopened), ticket.replied is emitted and
// the staff reply's mail sent; req.AuthorName signs it (nil: Support). It returns
// the staff message. ErrNotFound (another account's ticket), ErrValidation ("body",
// "author_name").
func (c *Client) ReplySandboxTicket(ctx context.Context, id int64, req api.SandboxTicketReply) (*api.TicketMessage, error) {
	return one[api.TicketMessage](c.sandbox(), ctx, http.MethodPost, idPath("/tickets", id)+"/reply", nil, req)
}
