package ops

import "github.com/riverqueue/river"

// The jobs the core enqueues, in the transaction of the state change they carry out,
// and the periodic ones; internal/worker works them. Their kinds are stable:
// renaming one strands the jobs queued under the old name (docs/states.md).

// OperationArgs is the job that carries out operation OperationID.
type OperationArgs struct {
	OperationID int64 `json:"operation_id"`
}

// Kind implements river.JobArgs.
func (OperationArgs) Kind() string { return "berth.operation" }

// InsertOpts: a job keeps retrying transient failures (a hypervisor away) for long.
func (OperationArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 50}
}

// SnapshotDeleteArgs is the job that removes a deleted snapshot's data from its
// machine. It holds no operation: the server stays free meanwhile.
type SnapshotDeleteArgs struct {
	SnapshotID int64 `json:"snapshot_id"`
}

// Kind implements river.JobArgs.
func (SnapshotDeleteArgs) Kind() string { return "berth.snapshot_delete" }

// MeterArgs is the periodic metering job (Service.Meter).
type MeterArgs struct{}

// Kind implements river.JobArgs.
func (MeterArgs) Kind() string { return "berth.meter" }

// InsertOpts: a pass that fails is simply left to the next one.
func (MeterArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 1} }

// HousekeepingArgs is the periodic job that forgets expired idempotency keys
// (Service.PruneIdempotencyKeys).
type HousekeepingArgs struct{}

// Kind implements river.JobArgs.
func (HousekeepingArgs) Kind() string { return "berth.housekeeping" }

// InsertOpts: the next run does what a failed one left.
func (HousekeepingArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 1} }
