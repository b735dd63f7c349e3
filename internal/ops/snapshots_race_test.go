package ops_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/worker"
)

// scheduleHookStore is the store with a pause inside every transaction that schedules
// a snapshot deletion: just before the write, onSchedule runs.
type scheduleHookStore struct {
	store.Store
	onSchedule func()
}

func (s scheduleHookStore) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	return s.Store.InTx(ctx, func(tx store.Tx) error { return fn(scheduleHookTx{tx, s.onSchedule}) })
}

type scheduleHookTx struct {
	store.Tx
	onSchedule func()
}

func (t scheduleHookTx) ScheduleSnapshotDeletion(ctx context.Context, id int64) error {
	t.onSchedule()
	return t.Tx.ScheduleSnapshotDeletion(ctx, id)
}

// recordingQueue is a job queue that only records what is enqueued: the operation it
// holds is the test's to carry out.
type recordingQueue struct {
	mu   sync.Mutex
	jobs []river.JobArgs
}

func (q *recordingQueue) InsertTx(_ context.Context, _ *sql.Tx, args river.JobArgs, _ *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.jobs = append(q.jobs, args)
	return &rivertype.JobInsertResult{Job: &rivertype.JobRow{ID: int64(len(q.jobs))}}, nil
}

// TestScheduledDeletionMeetsOperationEnd (issue 26, item 12): a snapshot deletion asked
// for while its server's operation ends must end, whichever transaction commits first.
// The deletion reads the server busy and is held just before it writes "scheduled";
// meanwhile the operation ends. On PostgreSQL the end used to commit at once, having
// found nothing scheduled, and the deletion was then scheduled for an end that had
// passed: the snapshot stayed "deleting" forever (the fault test saw it after a kill).
// Now the end waits for the deletion's decision and runs it.
func TestScheduledDeletionMeetsOperationEnd(t *testing.T) {
	t.Parallel()
	var driver compute.Driver
	env := testenv.New(t, testenv.Options{
		SweepEvery: time.Hour, // the sweep would end the stranded deletion itself: this is about the operation's end
		WrapDriver: func(d compute.Driver) compute.Driver { driver = d; return d },
	})
	ctx := context.Background()
	a := env.NewAccount("en", "100", "")
	serverID, snapID := snapshotted(t, a)

	hooked, reached, release := holdingSchedule(env)
	queue := &recordingQueue{}
	svc := ops.New(ops.Deps{Store: hooked, Jobs: queue, Driver: driver, Log: slog.New(slog.DiscardHandler)})
	p, err := svc.Authenticate(ctx, a.Token)
	if err != nil {
		t.Fatal(err)
	}
	// An operation only this test carries out: its job is in the recording queue.
	srv, err := svc.Power(ctx, p, serverID, hosting.PowerOff)
	if err != nil || srv.Operation == nil {
		t.Fatalf("power off: %+v, %v", srv, err)
	}
	op := srv.Operation.ID

	deletion := make(chan deletionResult, 1)
	go func() {
		deleted, err := svc.DeleteSnapshot(ctx, p, serverID, snapID)
		deletion <- deletionResult{deleted, err}
	}()
	select {
	case <-reached:
	case r := <-deletion:
		t.Fatalf("the deletion ended without scheduling (deleted %v, %v): the server should be busy", r.deleted, r.err)
	}

	// The operation ends while the deletion holds its decision.
	ended := make(chan error, 1)
	go func() { ended <- carryOut(ctx, svc, hooked, driver, op) }()
	endedFirst := false
	select {
	case err := <-ended:
		endedFirst = true // it did not wait for the decision
		if err != nil {
			t.Fatalf("the operation's end: %v", err)
		}
	case <-time.After(time.Second): // waiting, as it should
	}
	close(release)
	r := <-deletion
	if r.err != nil || r.deleted {
		t.Fatalf("DeleteSnapshot: deleted %v, %v; want scheduled", r.deleted, r.err)
	}
	if !endedFirst {
		if err := <-ended; err != nil {
			t.Fatalf("the operation's end: %v", err)
		}
	}

	wantDeletionRan(t, env, queue, snapID, endedFirst)
}

// carryOut carries out operation op with a worker of svc's, as its job would.
func carryOut(ctx context.Context, svc *ops.Service, st store.Reader, driver compute.Driver, op int64) error {
	w := worker.New(worker.Deps{Service: svc, Store: st, Driver: driver, Log: slog.New(slog.DiscardHandler),
		Complete: func(context.Context, *sql.Tx, *river.Job[ops.OperationArgs]) error { return nil }})
	return w.Work(ctx, &river.Job[ops.OperationArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 25},
		Args: ops.OperationArgs{OperationID: op}})
}

// deletionResult is what a DeleteSnapshot answered.
type deletionResult struct {
	deleted bool
	err     error
}

// holdingSchedule is env's store holding the first transaction that schedules a
// snapshot deletion just before its write: reached closes there, and it goes on once
// release closes.
func holdingSchedule(env *testenv.Env) (hooked scheduleHookStore, reached, release chan struct{}) {
	reached, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	hooked = scheduleHookStore{Store: env.App.DB, onSchedule: func() {
		once.Do(func() {
			close(reached)
			select {
			case <-release:
			case <-time.After(2 * time.Minute):
			}
		})
	}}
	return hooked, reached, release
}

// snapshotted is a running server of a's with a snapshot taken: their ids.
func snapshotted(t *testing.T, a *testenv.Account) (serverID, snapID int64) {
	t.Helper()
	srv := a.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}).Want(t, 201).Map(t)["data"].(map[string]any)
	serverID = int64(srv["id"].(float64))
	a.WaitStatus(t, fmt.Sprint(serverID), "running", time.Minute)
	snap := a.Do("POST", fmt.Sprintf("/servers/%d/snapshots", serverID), map[string]any{"name": "before"}).Want(t, 201).Map(t)["data"].(map[string]any)
	snapID = int64(snap["id"].(float64))
	waitIdle(t, a, serverID) // the snapshot is taken
	return serverID, snapID
}

// wantDeletionRan checks that the scheduled deletion of snapshot snapID ran with its
// server's operation's end: the snapshot is deleted, and a job removes its data.
func wantDeletionRan(t *testing.T, env *testenv.Env, queue *recordingQueue, snapID int64, endedFirst bool) {
	t.Helper()
	got, err := env.App.DB.SnapshotAny(context.Background(), snapID)
	if err != nil {
		t.Fatal(err)
	}
	if got.DeletedAt == nil {
		t.Fatalf("snapshot %d is %s and live after its server's operation ended (the end committed first: %v): "+
			"a deletion accepted as scheduled never ends", snapID, got.Status, endedFirst)
	}
	var removal bool
	queue.mu.Lock()
	for _, j := range queue.jobs {
		if d, ok := j.(ops.SnapshotDeleteArgs); ok && d.SnapshotID == snapID {
			removal = true
		}
	}
	queue.mu.Unlock()
	if !removal {
		t.Errorf("no job removes snapshot %d's data from its machine", snapID)
	}
}

// waitIdle waits until the server has no operation.
func waitIdle(t *testing.T, a *testenv.Account, id int64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		m := a.Do("GET", fmt.Sprintf("/servers/%d", id), nil).Want(t, 200).Map(t)["data"].(map[string]any)
		if m["operation"] == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %d still busy after a minute: %v", id, m)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStrandedDeletionRun: a snapshot left scheduled for deletion on an idle server
// (whatever left it so) is deleted by the sweep's RunStrandedDeletions; one whose
// server is busy is left to that operation's end.
func TestStrandedDeletionRun(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{SweepEvery: time.Hour})
	ctx := context.Background()
	a := env.NewAccount("en", "100", "")
	var servers, snaps []int64
	for i := range 2 {
		srv := a.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}).Want(t, 201).Map(t)["data"].(map[string]any)
		id := int64(srv["id"].(float64))
		a.WaitStatus(t, fmt.Sprint(id), "running", time.Minute)
		snap := a.Do("POST", fmt.Sprintf("/servers/%d/snapshots", id), map[string]any{"name": fmt.Sprint("s", i)}).Want(t, 201).Map(t)["data"].(map[string]any)
		waitIdle(t, a, id)
		servers, snaps = append(servers, id), append(snaps, int64(snap["id"].(float64)))
	}
	// Both scheduled as a lost race would leave them; the second server is busy with an
	// operation no worker runs.
	svc := ops.New(ops.Deps{Store: env.App.DB, Jobs: &recordingQueue{}, Log: slog.New(slog.DiscardHandler)})
	p, err := svc.Authenticate(ctx, a.Token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Power(ctx, p, servers[1], hosting.PowerOff); err != nil {
		t.Fatal(err)
	}
	if err := env.App.DB.InTx(ctx, func(tx store.Tx) error {
		for _, id := range snaps {
			if err := tx.ScheduleSnapshotDeletion(ctx, id); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	n, err := svc.RunStrandedDeletions(ctx)
	if err != nil || n != 1 {
		t.Fatalf("RunStrandedDeletions: %d, %v; want 1", n, err)
	}
	if got, err := env.App.DB.SnapshotAny(ctx, snaps[0]); err != nil || got.DeletedAt == nil {
		t.Errorf("the idle server's scheduled snapshot: %+v, %v; want deleted", got, err)
	}
	if got, err := env.App.DB.SnapshotAny(ctx, snaps[1]); err != nil || got.DeletedAt != nil || got.Status != hosting.SnapshotDeleting {
		t.Errorf("the busy server's scheduled snapshot: %+v, %v; want left deleting", got, err)
	}
	if n, err := svc.RunStrandedDeletions(ctx); err != nil || n != 0 {
		t.Errorf("again: %d, %v; want 0", n, err)
	}
}
