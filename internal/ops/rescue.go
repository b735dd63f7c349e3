package ops

import (
	"context"

	"github.com/berthhq/berth/internal/store"
)

// Every accepted operation ends, success or error, without an operator. Its job
// carries it out and retries what fails (a hypervisor away, a full disk); what could
// still strand it is a job that is gone while the operation runs: discarded after
// its last attempt when even recording the failure failed (the database could not be
// written), or cancelled. ResumeOrphanedOperations gives each such operation a new
// job. A job left "running" by a worker whose end could not be recorded is the job
// queue's to rescue (see internal/app).

// ResumeOrphanedOperations enqueues a job for every running operation that has none
// left, and reports how many it resumed. The check and the enqueue are one
// transaction, so an operation never gets two jobs.
func (s *Service) ResumeOrphanedOperations(ctx context.Context) (int, error) {
	ids, err := s.store.OrphanedOperations(ctx)
	if err != nil || len(ids) == 0 {
		return 0, internal("orphaned operations", err)
	}
	n := 0
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		// Two processes resuming at once would give an operation two jobs.
		if err := tx.Serialize(ctx, "resume-operations"); err != nil {
			return err
		}
		ids, err := tx.OrphanedOperations(ctx)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := s.enqueue(ctx, tx, OperationArgs{OperationID: id}); err != nil {
				return err
			}
		}
		n = len(ids)
		return nil
	})
	if err != nil {
		return 0, internal("resume operations", err)
	}
	if n > 0 {
		s.log.Warn("operations without a job resumed", "operations", n)
	}
	return n, nil
}
