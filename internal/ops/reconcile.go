package ops

import (
	"context"
	"errors"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// ReconcilePower makes an idle server's status follow its machine's real power state
// when the machine changed by itself (a guest that powered itself off, or one an
// operator started by hand). A server busy with an operation is left to it. It
// reports whether the status changed.
func (s *Service) ReconcilePower(ctx context.Context, serverID int64, state compute.State) (bool, error) {
	changed := false
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		srv, err := tx.ServerAny(ctx, serverID)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil || srv.DeletedAt != nil || srv.Operation != nil {
			return err
		}
		var to hosting.Status
		switch {
		case srv.Status == hosting.StatusRunning && state == compute.StateStopped:
			to = hosting.StatusStopped
		case srv.Status == hosting.StatusStopped && state == compute.StateRunning:
			to = hosting.StatusRunning
		default:
			return nil
		}
		changed = true
		s.log.Info("server status follows its machine", "server", srv.Name, "from", srv.Status, "to", to)
		return s.setStatus(ctx, tx, srv.ID, to)
	})
	return changed, internal("reconcile power", err)
}
