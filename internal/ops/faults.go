package ops

import (
	"context"
	"errors"
	"fmt"

	"github.com/berthhq/berth/internal/hosting"
)

// OperationFaults injects the operation faults a sandbox's account asked for
// (serve --sandbox, docs/api.md, The sandbox; internal/sandbox implements it). A fault
// changes only what the driver does or how long it takes: the operation then ends
// through the worker's own success or failure handling, as it would in production
// (internal/worker asks for it with Service.OperationFault).
type OperationFaults interface {
	// OperationFault is the fault operation opID of the account, of type typ,
	// meets. A fault is taken on the operation's first attempt (first) and counted
	// once; later attempts meet the same one. fail: the operation fails at once;
	// slow above 0: its driver's durations are multiplied by slow.
	OperationFault(accountID, opID int64, typ hosting.OpType, first bool) (fail bool, slow float64)
}

// ErrSandboxFault is why an operation a sandbox fault fails ends in error.
var ErrSandboxFault = errors.New("failed by a sandbox fault (POST /sandbox/v1/faults)")

// FaultTarget is what a request a sandbox's HTTP fault answers addresses: the server
// or the volume its path names; neither on the other routes.
type FaultTarget struct {
	Server *hosting.ServerRef
	Volume *hosting.VolumeRef
}

// FaultError is the error a request of p answers under a sandbox's HTTP fault of
// status 409, 500 or 503: the one production answers with that status, as the core
// builds it. A 409 on a request that addresses a server or a volume (target) names
// the operation it has in progress, as a real busy answer does; without one it is the
// 409 of a server that changed meanwhile, and on a request that addresses neither the
// 409 of an Idempotency-Key still in use. (A 429 is the edge's: the rate limit lives
// there.)
func (s *Service) FaultError(ctx context.Context, p hosting.Principal, status int, target FaultTarget) error {
	switch status {
	case 409:
		if target.Server == nil && target.Volume == nil {
			e := hosting.Errorf(hosting.CodeBusy, "error.idempotency_in_progress")
			e.RetryAfter = 1
			return e
		}
		if op := s.targetOperation(ctx, p, target); op != nil {
			return busy(op)
		}
		return changedMeanwhile()
	case 503:
		return hosting.Unavailable(ErrSandboxFault, 5)
	}
	return fmt.Errorf("sandbox fault: %w", ErrSandboxFault)
}

// targetOperation is the operation the server or volume of target has in progress
// (nil: none, or it names none of the account's).
func (s *Service) targetOperation(ctx context.Context, p hosting.Principal, target FaultTarget) *hosting.Operation {
	if target.Server != nil {
		if srv, err := s.Server(ctx, p, *target.Server); err == nil {
			return srv.Operation
		}
		return nil
	}
	if vol, err := s.Volume(ctx, p, *target.Volume); err == nil {
		return vol.Operation
	}
	return nil
}
