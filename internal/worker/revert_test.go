package worker_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/simdriver"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

// simFailingAt is a simulated driver on the harness's database (the tables of its
// Berth's own sim) whose creations fail at step with err.
func (h *harness) simFailingAt(step string, err error) *simdriver.Driver {
	d := simdriver.New(h.env.App.DB.WriteDB(), 0.001, h.env.App.DB.Rebind)
	d.CreateFault = func(_, s string) error {
		if s == step {
			return fmt.Errorf("%w at %s", err, s)
		}
		return nil
	}
	return d
}

// machineRow is what sim_machines holds of a machine: "none", "destroyed" or "live".
func (h *harness) machineRow(t *testing.T, name string) string {
	t.Helper()
	var destroyed sql.NullInt64
	err := h.env.App.DB.WriteDB().QueryRowContext(h.ctx, h.env.App.DB.Rebind(`SELECT destroyed_at FROM sim_machines WHERE name = ?`), name).Scan(&destroyed)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "none"
	case err != nil:
		t.Fatal(err)
	case destroyed.Valid:
		return "destroyed"
	}
	return "live"
}

// refunds counts the refunds of the server in the account's ledger.
func (h *harness) refunds(t *testing.T, serverID int64) int {
	t.Helper()
	list := h.acct.Do("GET", "/billing/transactions", nil).Want(t, 200).Map(t)["data"].([]any)
	n := 0
	for _, e := range list {
		e := e.(map[string]any)
		if r, ok := e["resource"].(map[string]any); ok && e["type"] == "refund" && int64(r["id"].(float64)) == serverID {
			n++
		}
	}
	return n
}

// wantUndone checks that the failed provisioning of srv left nothing of its machine,
// ended in error, and was refunded once.
func (h *harness) wantUndone(t *testing.T, srv hosting.Server) {
	t.Helper()
	if row := h.machineRow(t, srv.Name); row == "live" {
		t.Errorf("the failed provisioning left its machine in sim_machines")
	}
	if op := h.operation(t, srv.Operation.ID); op.Status != hosting.OpError {
		t.Errorf("operation %s (%s), want error", op.Status, op.Error)
	}
	got := h.server(t, srv.ID)
	if got.Status != hosting.StatusError || got.IPv4 != nil || got.IPv6 != nil {
		t.Errorf("server %s with addresses %v %v; want error without", got.Status, got.IPv4, got.IPv6)
	}
	if n := h.refunds(t, srv.ID); n != 1 {
		t.Errorf("%d refunds of the server, want 1", n)
	}
}

// TestFailedProvisioningLeavesNothing (issue 27): a provisioning that fails for good at
// any step of making its machine removes what the steps before made (on the
// simulated driver, the machine's row, written with its disk) before it ends in error
// with its charge refunded. Before, the machine stayed until its owner deleted the
// server.
func TestFailedProvisioningLeavesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, step := range compute.CreateSteps {
		t.Run(step, func(t *testing.T) {
			srv := h.order(t, ops.Order{})
			if err := h.attempt(h.worker(h.env.App.DB, h.simFailingAt(step, compute.ErrFailed)), srv.Operation.ID, 1); err != nil {
				t.Fatalf("attempt 1: %v (the operation should end, not the job fail)", err)
			}
			h.wantUndone(t, srv)
		})
	}
}

// TestReinstallAfterAnUndoneProvisioning: a server whose provisioning failed has no
// machine left, so a reinstall (which error allows otherwise) is refused at once with
// a 422 on server that says what to do, instead of an operation that fails after
// minutes of retries; a server in error that has its machine still reinstalls.
func TestReinstallAfterAnUndoneProvisioning(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	srv := h.order(t, ops.Order{})
	if err := h.attempt(h.worker(h.env.App.DB, h.simFailingAt("start", compute.ErrFailed)), srv.Operation.ID, 1); err != nil {
		t.Fatalf("provisioning: %v", err)
	}
	_, err := h.svc.Reinstall(h.ctx, h.p, srv.ID, ptr(int64(1)))
	var e *hosting.Error
	if !errors.As(err, &e) || e.Code != hosting.CodeValidationFailed || len(e.Fields["server"]) == 0 ||
		e.Fields["server"][0].ID != "validation.server_no_machine" {
		t.Fatalf("reinstall of a server without a machine: %v, want 422 on server", err)
	}
	if got := h.server(t, srv.ID); got.Status != hosting.StatusError || got.Operation != nil {
		t.Errorf("after the refused reinstall: %s, operation %v", got.Status, got.Operation)
	}
}

// TestFailedProvisioningUndoneOnceAcrossRestarts (issue 27): the undo of a failed
// provisioning survives a restart at any point, and its end, with the refund, happens
// once.
func TestFailedProvisioningUndoneOnceAcrossRestarts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)

	t.Run("stopped after a step, before the failure's undo", func(t *testing.T) {
		// Attempt 1 makes the machine up to its start, which fails for now (the
		// process dies there: the job is tried again).
		srv := h.order(t, ops.Order{})
		err := h.attempt(h.worker(h.env.App.DB, h.simFailingAt("start", compute.ErrUnavailable)), srv.Operation.ID, 1)
		if !errors.Is(err, compute.ErrUnavailable) || h.machineRow(t, srv.Name) != "live" {
			t.Fatalf("attempt 1: %v, machine %s; want the job retried with the machine made up to its start", err, h.machineRow(t, srv.Name))
		}
		// After the restart the start fails for good: what attempt 1 made goes.
		if err := h.attempt(h.worker(h.env.App.DB, h.simFailingAt("start", compute.ErrFailed)), srv.Operation.ID, 2); err != nil {
			t.Fatalf("attempt 2: %v", err)
		}
		h.wantUndone(t, srv)
	})

	t.Run("stopped after the undo, before the operation's end", func(t *testing.T) {
		srv := h.order(t, ops.Order{})
		// Attempt 1 fails for good and undoes the machine, but its answer is lost (the
		// process dies before the end commits): the job is tried again.
		lost := &lostDestroy{Driver: h.simFailingAt("define", compute.ErrFailed)}
		if err := h.attempt(h.worker(h.env.App.DB, lost), srv.Operation.ID, 1); err == nil {
			t.Fatal("attempt 1 ended the operation though its undo's answer was lost")
		}
		if row := h.machineRow(t, srv.Name); row != "destroyed" {
			t.Fatalf("after attempt 1 the machine is %s, want destroyed", row)
		}
		if op := h.operation(t, srv.Operation.ID); op.Status != hosting.OpRunning || h.refunds(t, srv.ID) != 0 {
			t.Fatalf("after attempt 1: operation %s, %d refunds; want running, none", op.Status, h.refunds(t, srv.ID))
		}
		// After the restart nothing fails any more: the name's machine is gone for
		// good, so the provisioning ends in error, undoing once more (nothing left).
		if err := h.attempt(h.worker(h.env.App.DB, h.sim), srv.Operation.ID, 2); err != nil {
			t.Fatalf("attempt 2: %v", err)
		}
		h.wantUndone(t, srv)
		// A job repeated after its operation ended only completes: no second refund.
		if err := h.attempt(h.worker(h.env.App.DB, h.sim), srv.Operation.ID, 3); err != nil {
			t.Fatalf("attempt 3: %v", err)
		}
		h.wantUndone(t, srv)
	})
}

// lostDestroy is a driver whose Destroy is carried out but answers an error, as a
// connection lost after the hypervisor did it.
type lostDestroy struct{ compute.Driver }

func (d *lostDestroy) Destroy(ctx context.Context, key, name string) error {
	if err := d.Driver.Destroy(ctx, key, name); err != nil {
		return err
	}
	return fmt.Errorf("%w: the answer was lost", compute.ErrUnavailable)
}
