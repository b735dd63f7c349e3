package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
)

// TestClockAdvanceOverAFailedProvisioning: a server whose provisioning failed has no
// machine; an advance fills the metrics of the account's other servers and answers
// 200, never a 500 over the one without a machine (found by the shell examples of
// docs/testing-your-client.md).
func TestClockAdvanceOverAFailedProvisioning(t *testing.T) {
	// On the system clock: with a fake clock in the past, the sampler's pruning by the
	// system clock would remove the samples the advance filled in (see
	// TestClockAdvanceFillsMetrics).
	e := testenv.New(t, testenv.Options{Sandbox: true})
	a := e.NewAccount("en", "100", "")
	ok := order(t, a, map[string]any{"display_name": "fine", "plan_id": 1, "location_id": 1, "image_id": 1})
	waitOp(t, a, opID(t, ok))
	a.Sandbox("POST", "/faults", map[string]any{"operation": "provision", "fail": true}).Want(t, http.StatusCreated)
	failed := order(t, a, map[string]any{"display_name": "failed", "plan_id": 1, "location_id": 1, "image_id": 1})
	a.WaitStatus(t, failed["name"].(string), "error", 60*time.Second)

	advance(t, a, "48h")
	m := data(t, a.Do("GET", "/servers/"+failed["name"].(string)+"/metrics?range=24h", nil).Want(t, http.StatusOK))
	if n := len(m["cpu"].([]any)); n != 0 {
		t.Errorf("the server without a machine has %d metrics points", n)
	}
	m = data(t, a.Do("GET", "/servers/"+ok["name"].(string)+"/metrics?range=24h", nil).Want(t, http.StatusOK))
	if n := len(m["cpu"].([]any)); n < 300 {
		t.Errorf("the running server has %d points over the day skipped, want about 1,440", n)
	}
	e.AssertLedger(t)
}
