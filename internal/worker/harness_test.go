package worker_test

import (
	"context"
	"database/sql"
	"log/slog"
	"strconv"
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
	"github.com/berthhq/berth/internal/testwatch"
	"github.com/berthhq/berth/internal/worker"
)

func TestMain(m *testing.M) {
	testwatch.Start()
	m.Run()
}

// queue is a job queue that only records what is enqueued: the jobs are the test's to
// carry out.
type queue struct {
	mu   sync.Mutex
	jobs []river.JobArgs
}

func (q *queue) InsertTx(_ context.Context, _ *sql.Tx, args river.JobArgs, _ *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.jobs = append(q.jobs, args)
	return &rivertype.JobInsertResult{Job: &rivertype.JobRow{ID: int64(len(q.jobs))}}, nil
}

// harness is a whole Berth (testenv, on the sim driver) beside a second core whose
// jobs the test carries out itself, with workers built on the store and driver a test
// chooses: a failure can be injected at any step, and an attempt run when the test
// says.
type harness struct {
	env    *testenv.Env
	sim    compute.Driver // the Berth's own driver
	svc    *ops.Service
	queue  *queue
	acct   *testenv.Account
	p      hosting.Principal
	quiet  *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{queue: &queue{}, quiet: slog.New(slog.DiscardHandler)}
	// The Berth's own sweep would find the harness's operations without a job (their
	// jobs are the test's) and give them one, which its workers would then carry out
	// behind the test's back: under load a test lasts past the sweep's interval.
	h.env = testenv.New(t, testenv.Options{SweepEvery: 24 * time.Hour,
		WrapDriver: func(d compute.Driver) compute.Driver { h.sim = d; return d }})
	h.ctx = context.Background()
	h.acct = h.env.NewAccount("en", "100", "")
	h.svc = ops.New(ops.Deps{Store: h.env.App.DB, Jobs: h.queue, Driver: h.sim, Log: h.quiet})
	var err error
	if h.p, err = h.svc.Authenticate(h.ctx, h.acct.Token); err != nil {
		t.Fatal(err)
	}
	return h
}

// worker is a worker of the harness's core reading from r and driving d.
func (h *harness) worker(r store.Reader, d compute.Driver) *worker.Worker {
	return worker.New(worker.Deps{Service: h.svc, Store: r, Driver: d, Log: h.quiet,
		Complete: func(context.Context, *sql.Tx, *river.Job[ops.OperationArgs]) error { return nil }})
}

// order orders a server through the harness's core: its provisioning waits for the
// test.
func (h *harness) order(t *testing.T, o ops.Order) hosting.Server {
	t.Helper()
	if o.PlanID == nil {
		o.PlanID, o.LocationID = ptr(int64(1)), ptr(int64(1))
	}
	if o.ImageID == nil && o.AppID == nil {
		o.ImageID = ptr(int64(1))
	}
	srv, err := h.svc.OrderServer(h.ctx, h.p, o)
	if err != nil {
		t.Fatalf("order: %v", err)
	}
	return srv
}

// attempt runs attempt n (from 1) of operation op with w.
func (h *harness) attempt(w *worker.Worker, op int64, n int) error {
	return w.Work(h.ctx, &river.Job[ops.OperationArgs]{JobRow: &rivertype.JobRow{ID: op, Attempt: n, MaxAttempts: 50},
		Args: ops.OperationArgs{OperationID: op}})
}

// operation reads an operation as the store has it.
func (h *harness) operation(t *testing.T, id int64) hosting.Operation {
	t.Helper()
	op, err := h.env.App.DB.OperationAny(h.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// server reads a server as the store has it.
func (h *harness) server(t *testing.T, id int64) hosting.Server {
	t.Helper()
	srv, err := h.env.App.DB.ServerAny(h.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func ptr[T any](v T) *T { return &v }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
