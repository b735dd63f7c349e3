package clienttest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestBusyWaitsForTheNamedOperation: a server does one thing at a time. Powering off
// a server still provisioning is answered 409 busy, naming the provisioning; the
// client waits for that operation to end, then powers off.
func TestBusyWaitsForTheNamedOperation(t *testing.T) {
	c, sb := startTest(t)
	ctx := testContext(t)
	// The account's next provisioning takes ten times as long (6 s here instead of
	// 0.6 s): time enough for the client to meet the server busy.
	sb.fault(map[string]any{"operation": "provision", "slow": 10})

	var srv Server
	if err := c.Do(ctx, "POST", "/servers", order("busy"), &srv); err != nil {
		t.Fatal(err)
	}
	if srv.Operation == nil || srv.Operation.Type != "provision" {
		t.Fatalf("the order answered %+v, want a server provisioning", srv)
	}
	off, err := c.Power(ctx, srv.ID, "off")
	if err != nil {
		t.Fatal(err)
	}
	if off.Status != "stopped" {
		t.Errorf("server %s is %s after power off, want stopped", off.Name, off.Status)
	}

	// What the client did, oldest first: the power-off met 409 busy naming the
	// provisioning, the client waited on that operation, then powered off.
	reqs := sb.requests(50)
	var steps []string
	for i := len(reqs) - 1; i >= 0; i-- {
		r := reqs[i]
		switch {
		case r.Method == "POST" && r.Path == fmt.Sprintf("/v1/servers/%d/power", srv.ID):
			var body struct {
				Code      string
				Operation *OperationRef
			}
			_ = json.Unmarshal(r.ResponseBody, &body)
			step := fmt.Sprintf("power %d", r.Status)
			if body.Operation != nil && r.Status == 409 {
				step += fmt.Sprintf(" %s #%d", body.Code, body.Operation.ID)
			}
			steps = append(steps, step)
		case r.Method == "GET" && r.Path == fmt.Sprintf("/v1/operations/%d", srv.Operation.ID):
			if len(steps) == 0 || steps[len(steps)-1] != "wait provision" {
				steps = append(steps, "wait provision")
			}
		}
	}
	want := []string{fmt.Sprintf("power 409 busy #%d", srv.Operation.ID), "wait provision", "power 200"}
	if got := strings.Join(steps, ", "); got != strings.Join(want, ", ") {
		t.Errorf("the client did: %s; want: %s", got, strings.Join(want, ", "))
	}
}
