package clienttest

import (
	"errors"
	"testing"
)

// otherToken is the fixtures file's token of its second account.
const otherToken = "berth_sandbox_example-other-token-0123456789abcdef"

// TestAccountsApart: the sandbox acts on the token's account alone. The other
// account of the fixtures sees none of this account's servers, and this account's
// faults never touch its requests.
func TestAccountsApart(t *testing.T) {
	c, sb := startTest(t)
	ctx := testContext(t)
	var seeded struct {
		Servers []Server `json:"servers"`
	}
	sb.call("POST", "/seed", map[string]any{"servers": []map[string]any{
		{"display_name": "mine", "plan_id": 1, "location_id": 1, "image_id": 1, "status": "running"}}}, &seeded)
	if len(seeded.Servers) != 1 || seeded.Servers[0].Status != "running" {
		t.Fatalf("seeded %+v, want one server running", seeded.Servers)
	}
	sb.fault(map[string]any{"method": "GET", "path": "/servers", "status": 503, "times": 0}) // until deleted
	defer sb.call("DELETE", "/faults", nil, nil)

	other := &Client{BaseURL: c.BaseURL, Token: otherToken, MaxAttempts: 1}
	var theirs []Server
	if err := other.Do(ctx, "GET", "/servers", nil, &theirs); err != nil {
		t.Fatalf("the other account's GET /servers: %v", err)
	}
	for _, s := range theirs {
		if s.ID == seeded.Servers[0].ID {
			t.Errorf("the other account sees server %s", s.Name)
		}
	}
	if err := other.Do(ctx, "GET", "/servers/"+seeded.Servers[0].Name, nil, nil); statusOf(err) != 404 {
		t.Errorf("the other account's GET of this account's server: %v, want 404", err)
	}
	c.MaxAttempts = 1
	if err := c.Do(ctx, "GET", "/servers", nil, nil); statusOf(err) != 503 {
		t.Errorf("this account's GET /servers: %v, want its fault's 503", err)
	}
}

// statusOf is the status of an error answer (0: none).
func statusOf(err error) int {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr.Status
	}
	return 0
}
