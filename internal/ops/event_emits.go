package ops

import (
	"context"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// The events of servers, operations, snapshots, billing and the account, each
// written by the change it reports (docs/api.md, Events).

func serverResource(id int64) hosting.EventResource {
	return hosting.EventResource{Type: "server", ID: id}
}

// emitServer emits typ about srv as it now is; changes names what server.updated
// changed.
func (s *Service) emitServer(ctx context.Context, tx store.Tx, typ hosting.EventType, srv hosting.Server, changes ...string) error {
	return s.emit(ctx, tx, srv.AccountID, typ, serverResource(srv.ID),
		hosting.ServerEventData{ID: srv.ID, Name: srv.Name, Status: srv.Status, Changes: changes})
}

// setStatus writes a server's status and, when it moved, says so
// (server.status_changed).
func (s *Service) setStatus(ctx context.Context, tx store.Tx, serverID int64, to hosting.Status) error {
	srv, err := tx.ServerAny(ctx, serverID)
	if err != nil {
		return err
	}
	if err := tx.SetServerStatus(ctx, serverID, to); err != nil || srv.Status == to {
		return err
	}
	return s.emit(ctx, tx, srv.AccountID, hosting.EventServerStatusChanged, serverResource(srv.ID),
		hosting.ServerEventData{ID: srv.ID, Name: srv.Name, Status: to, PreviousStatus: srv.Status})
}

// emitOperation emits typ about op as it now is (error: why it failed).
func (s *Service) emitOperation(ctx context.Context, tx store.Tx, typ hosting.EventType, op hosting.Operation, status hosting.OpStatus, errText string) error {
	return s.emit(ctx, tx, op.AccountID, typ, hosting.EventResource{Type: "operation", ID: op.ID},
		hosting.OperationEventData{ID: op.ID, ServerID: nonZero(op.ServerID), VolumeID: op.VolumeID, Type: op.Type, Status: status, Error: errText})
}

// nonZero is id, or nil for 0 (none).
func nonZero(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// emitSnapshot emits typ about snap, in status.
func (s *Service) emitSnapshot(ctx context.Context, tx store.Tx, typ hosting.EventType, snap hosting.Snapshot, status hosting.SnapshotStatus) error {
	return s.emit(ctx, tx, snap.AccountID, typ, hosting.EventResource{Type: "snapshot", ID: snap.ID},
		hosting.SnapshotEventData{ID: snap.ID, ServerID: snap.ServerID, Name: snap.Name, Status: string(status)})
}

// emitAccount emits typ about the account (billing and account events).
func (s *Service) emitAccount(ctx context.Context, tx store.Tx, typ hosting.EventType, account int64, data any) error {
	return s.emit(ctx, tx, account, typ, hosting.EventResource{Type: "account", ID: account}, data)
}

// serverChanges names what PATCH /servers/{id} changed of was.
func serverChanges(was, now hosting.Server) []string {
	var out []string
	if was.DisplayName != now.DisplayName {
		out = append(out, "display_name")
	}
	if (was.ProjectID == nil) != (now.ProjectID == nil) || (was.ProjectID != nil && *was.ProjectID != *now.ProjectID) {
		out = append(out, "project_id")
	}
	return out
}

// toppedUp says that t added credit (billing.topped_up).
func (s *Service) toppedUp(ctx context.Context, tx store.Tx, t hosting.Transaction) error {
	return s.emitAccount(ctx, tx, hosting.EventBillingToppedUp, t.AccountID,
		hosting.BillingEventData{Credit: t.BalanceAfter.String(), Amount: t.Amount.String()})
}

// creditLow says, of each account of low, that its credit fell below
// hosting.CreditLowDays of its burn (billing.credit_low), and mails the holder of
// each of mail, whose credit fell below hosting.CreditMailDays, the warning: once
// per fall below each threshold (the store lists an account only in the batch that
// took it below).
func (s *Service) creditLow(ctx context.Context, tx store.Tx, low, mail []int64) error {
	for _, id := range low {
		a, err := tx.Account(ctx, id)
		if err != nil {
			return err
		}
		if err := s.emitAccount(ctx, tx, hosting.EventBillingCreditLow, id, hosting.BillingEventData{Credit: a.Credit.String()}); err != nil {
			return err
		}
	}
	for _, id := range mail {
		a, err := tx.Account(ctx, id)
		if err != nil {
			return err
		}
		if err := s.mailCreditLow(ctx, tx, a); err != nil {
			return err
		}
	}
	return nil
}
