package app

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

// openApp opens a Berth on a fresh data directory without working its jobs yet.
func openApp(t *testing.T) *App {
	t.Helper()
	a, err := Open(context.Background(), Config{DataDir: t.TempDir(), SimTimeScale: 0.001, FetchPoll: 10 * time.Millisecond,
		SweepEvery: 50 * time.Millisecond, MeterEvery: 24 * time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	return a
}

func order(t *testing.T, a *App) hosting.Server {
	t.Helper()
	ctx := context.Background()
	acct, err := a.Service.CreateAccount(ctx, ops.NewAccount{Email: "o@example.com", Password: "correct horse battery", Credit: 1000000})
	if err != nil {
		t.Fatal(err)
	}
	one := int64(1)
	srv, err := a.Service.OrderServer(ctx, hosting.Principal{Account: acct}, ops.Order{PlanID: &one, LocationID: &one, ImageID: &one})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func jobState(t *testing.T, a *App, opID int64) []string {
	t.Helper()
	rows, err := a.DB.WriteDB().Query(`SELECT state FROM river_job WHERE kind = 'berth.operation'
		AND json_extract(args, '$.operation_id') = ? ORDER BY id`, opID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func waitOperation(t *testing.T, a *App, opID int64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		op, err := a.DB.OperationAny(context.Background(), opID)
		if err != nil {
			t.Fatal(err)
		}
		if op.Status != hosting.OpRunning {
			if op.Status != hosting.OpSuccess {
				t.Fatalf("operation %d ended %s: %s", opID, op.Status, op.Error)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("operation %d still running after 60 s (jobs %v)", opID, jobState(t, a, opID))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An operation whose job is gone (discarded when even its failure could not be
// recorded) gets a new one, once, and then ends.
func TestResumeOrphanedOperations(t *testing.T) {
	t.Parallel()
	a := openApp(t)
	ctx := context.Background()
	srv := order(t, a)
	op := srv.Operation.ID
	if n, err := a.Service.ResumeOrphanedOperations(ctx); err != nil || n != 0 {
		t.Fatalf("an operation with its job: resumed %d, %v", n, err)
	}
	if _, err := a.DB.WriteDB().Exec(`UPDATE river_job SET state = 'discarded', finalized_at = datetime('now')
		WHERE json_extract(args, '$.operation_id') = ?`, op); err != nil {
		t.Fatal(err)
	}
	if n, err := a.Service.ResumeOrphanedOperations(ctx); err != nil || n != 1 {
		t.Fatalf("an operation whose job was discarded: resumed %d, %v; want 1", n, err)
	}
	if n, err := a.Service.ResumeOrphanedOperations(ctx); err != nil || n != 0 {
		t.Fatalf("resumed again: %d, %v; an operation must never get two jobs", n, err)
	}
	if got := jobState(t, a, op); len(got) != 2 || got[0] != "discarded" || got[1] != "available" {
		t.Fatalf("jobs of the operation: %v, want [discarded available]", got)
	}
	if err := a.StartWorkers(ctx); err != nil {
		t.Fatal(err)
	}
	waitOperation(t, a, op)
}

// A job left "running" that this process does not work (its end could not be
// recorded) is rescued by the sweep and the operation ends; one this process works is
// left alone.
func TestSweepRescuesStrandedJobs(t *testing.T) {
	t.Parallel()
	a := openApp(t)
	ctx := context.Background()
	if err := a.StartWorkers(ctx); err != nil {
		t.Fatal(err)
	}
	// Ordered while the queue takes nothing, then left as a worker whose end was lost
	// leaves its job: running, attempted a while ago, worked by no one.
	if err := a.jobs.QueuePause(ctx, river.QueueDefault, nil); err != nil {
		t.Fatal(err)
	}
	op := order(t, a).Operation.ID
	if _, err := a.DB.WriteDB().Exec(`UPDATE river_job SET state = 'running', attempt = 1,
		attempted_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '-2 minutes') WHERE json_extract(args, '$.operation_id') = ?`, op); err != nil {
		t.Fatal(err)
	}
	if err := a.jobs.QueueResume(ctx, river.QueueDefault, nil); err != nil {
		t.Fatal(err)
	}
	waitOperation(t, a, op)
}

func TestStranded(t *testing.T) {
	t.Parallel()
	now := time.Now()
	w := newWorkingJobs()
	w.running[1] = 1
	w.finished[2] = now.Add(-10 * time.Second)
	w.finished[3] = now.Add(-strandedAfterFinish - time.Second)
	w.finished[4] = now.Add(-2 * time.Hour)
	for _, c := range []struct {
		id   int64
		want bool
	}{
		{1, false}, // worked now
		{2, false}, // just finished: its end is being recorded
		{3, true},  // finished long enough ago
		{4, true},  // forgotten
		{5, true},  // never worked here
	} {
		if got := w.stranded(c.id, now); got != c.want {
			t.Errorf("job %d: stranded %v, want %v", c.id, got, c.want)
		}
	}
	if _, ok := w.finished[4]; ok {
		t.Error("a finish over an hour old was not forgotten")
	}
}
