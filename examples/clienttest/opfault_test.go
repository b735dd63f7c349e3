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
		Type   string `json:"type"`
		Amount string `json:"amount"`
	}
	if err := c.Do(ctx, "GET", "/billing/transactions", nil, &ledger); err != nil {
		t.Fatal(err)
	}
	// Newest first: the refund, the first hour's charge, the reset's top-up.
	if len(ledger) != 3 || ledger[0].Type != "refund" || ledger[1].Type != "charge" ||
		ledger[0].Amount != ledger[1].Amount[1:] {
		t.Errorf("ledger %+v, want a charge of the first hour and its refund", ledger)
	}
	var billing struct {
		Credit string `json:"credit"`
	}
	if err := c.Do(ctx, "GET", "/billing", nil, &billing); err != nil || billing.Credit != "100.0000" {
		t.Errorf("credit %s (%v), want the whole 100.0000 again", billing.Credit, err)
	}
}
