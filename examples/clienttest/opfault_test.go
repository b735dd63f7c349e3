package clienttest

import (
	"errors"
	"testing"
)

// TestFailedProvisioning: when a provisioning fails, the client reports it, the
// server is left in status error, and the first hour charged at the order is
// refunded. The sandbox makes the account's next provisioning fail.
func TestFailedProvisioning(t *testing.T) {
	c, sb := startTest(t)
	ctx := testContext(t)
	sb.fault(map[string]any{"operation": "provision", "fail": true})

	srv, err := c.CreateServer(ctx, order("doomed"))
	if !errors.Is(err, ErrOperationFailed) {
		t.Fatalf("CreateServer: %v, want ErrOperationFailed", err)
	}
	if srv == nil || srv.Status != "error" {
		t.Fatalf("server %+v, want status error", srv)
	}

	var ledger []struct {
		Type     string `json:"type"`
		Amount   string `json:"amount"`
		Resource *struct {
			Type string `json:"type"`
			ID   int64  `json:"id"`
		} `json:"resource"`
	}
	if err := c.Do(ctx, "GET", "/billing/transactions", nil, &ledger); err != nil {
		t.Fatal(err)
	}
	// The server's entries: the first hour charged at the order, then refunded.
	amounts := map[string]string{}
	for _, tx := range ledger {
		if tx.Resource != nil && tx.Resource.Type == "server" && tx.Resource.ID == srv.ID {
			amounts[tx.Type] = tx.Amount
		}
	}
	if len(amounts) != 2 || amounts["charge"] == "" || amounts["charge"] != "-"+amounts["refund"] {
		t.Errorf("the server's ledger entries %v, want a charge of the first hour and its refund", amounts)
	}
	var billing struct {
		Credit string `json:"credit"`
	}
	if err := c.Do(ctx, "GET", "/billing", nil, &billing); err != nil || billing.Credit != "100.0000" {
		t.Errorf("credit %s (%v), want the whole 100.0000 again", billing.Credit, err)
	}
}
