package clienttest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// TestSDKAgainstTheSandbox runs the same faults against Berth's Go SDK: it retries a
// 429 after its Retry-After on its own, and a 409 names the operation to wait on.
func TestSDKAgainstTheSandbox(t *testing.T) {
	_, sb := startTest(t)
	ctx := testContext(t)
	c, err := client.New(client.WithBaseURL(berthURL+"/v1"), client.WithToken(token))
	if err != nil {
		t.Fatal(err)
	}

	sb.fault(map[string]any{"method": "GET", "path": "/servers", "status": 429, "times": 2})
	if _, err := c.ListServers(ctx, client.ServerListOptions{}); err != nil {
		t.Fatalf("ListServers through two 429s: %v", err)
	}
	var statuses []int // oldest first
	for _, r := range sb.requests(3) {
		statuses = append([]int{r.Status}, statuses...)
	}
	if fmt.Sprint(statuses) != "[429 429 200]" {
		t.Errorf("the SDK's attempts answered %v, want [429 429 200]", statuses)
	}

	sb.fault(map[string]any{"operation": "provision", "slow": 10})
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
