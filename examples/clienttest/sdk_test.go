package clienttest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// TestSDKAgainstTheSandbox runs Berth's Go SDK under the same faults, set up through
// the SDK's own sandbox methods: it retries a 429 after its Retry-After by itself,
// and a 409 names the operation to wait on.
func TestSDKAgainstTheSandbox(t *testing.T) {
	ctx := testContext(t)
	c, err := client.New(client.WithBaseURL(berthURL+"/v1"), client.WithToken(token))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ResetSandboxAccount(ctx, api.SandboxReset{Credit: client.Ptr("100.00")}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()

	_, err = c.CreateSandboxFault(ctx, api.SandboxFaultCreate{Method: client.Ptr("GET"), Path: client.Ptr("/servers"),
		Status: client.Ptr[int64](429), Times: client.Ptr[int64](2)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListServers(ctx, client.ServerListOptions{}); err != nil {
		t.Fatalf("ListServers through two 429s: %v", err)
	}
	reqs, err := c.ListSandboxRequests(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	var statuses []int // oldest first
	for _, r := range reqs {
		if r.Path == "/v1/servers" && !r.Time.Before(start.Add(-time.Second)) {
			statuses = append([]int{r.Status}, statuses...)
		}
	}
	if fmt.Sprint(statuses) != "[429 429 200]" {
		t.Errorf("the SDK's attempts answered %v, want [429 429 200]", statuses)
	}

	_, err = c.CreateSandboxFault(ctx, api.SandboxFaultCreate{Operation: client.Ptr("provision"), Slow: client.Ptr(10.0)})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := c.CreateServer(ctx, api.ServerCreate{PlanID: client.Ptr[int64](1), LocationID: client.Ptr[int64](1), ImageID: client.Ptr[int64](1)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.PowerServer(ctx, srv.Name, "off")
	var busy *client.Error
	if !errors.As(err, &busy) || !errors.Is(err, client.ErrBusy) || busy.Operation == nil || busy.Operation.ID != srv.Operation.ID {
		t.Fatalf("power off while provisioning: %v, want ErrBusy naming operation %d", err, srv.Operation.ID)
	}
	if _, err := c.WaitOperation(ctx, busy.Operation.ID); err != nil {
		t.Fatal(err)
	}
	off, err := c.PowerServer(ctx, srv.Name, "off")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitOperation(ctx, off.Operation.ID); err != nil {
		t.Fatal(err)
	}
}
