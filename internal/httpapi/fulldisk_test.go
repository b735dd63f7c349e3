package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/testdisk"
	"github.com/berthhq/berth/internal/testenv"
)

// gatedCreate holds the driver's Create until released, so a test can change the
// world (fill the disk) while an operation is in flight.
type gatedCreate struct {
	compute.Driver
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (g *gatedCreate) Create(ctx context.Context, key string, spec compute.Spec) (compute.Machine, error) {
	g.once.Do(func() { close(g.entered) })
	<-g.release
	return g.Driver.Create(ctx, key, spec)
}

// TestFullDisk: on a full disk a change answers 503 unavailable with Retry-After
// (never 500), reads still answer, and an operation whose end could not be written
// while the disk was full ends by itself once space is back, without a restart: its
// job, which the queue could not mark as ended, is rescued (issue 12, items 3 and 4).
func TestFullDisk(t *testing.T) {
	t.Parallel()
	testenv.SkipOnPostgres(t, "fills the file system under SQLite's data directory")
	disk := testdisk.Mount(t, 48<<20)
	gate := &gatedCreate{entered: make(chan struct{}), release: make(chan struct{})}
	env := testenv.New(t, testenv.Options{DataDir: filepath.Join(disk.Dir, "data"), SweepEvery: 250 * time.Millisecond,
		WrapDriver: func(d compute.Driver) compute.Driver { gate.Driver = d; return gate }})
	t.Cleanup(func() { env.AssertLedger(t) })
	a := env.NewAccount("de", "10", "")
	srv := data(t, a.Do("POST", "/servers", baseOrder()).Want(t, http.StatusCreated))
	name, op := srv["name"].(string), opID(t, srv)
	select {
	case <-gate.entered:
	case <-time.After(60 * time.Second):
		t.Fatal("the provisioning never reached the driver")
	}

	// A write that fits in room the WAL file already has commits all the same, disk
	// full or not (its blocks are there), and the checkpointer starts the WAL over
	// often: the WAL is cut to nothing first, so that writes need blocks the full
	// disk does not have.
	truncateWAL(t, env)
	disk.Fill(t)
	// Should a write have come between the two, the first few may still fit.
	var full *testenv.Response
	for i := range 200 {
		r := a.Do("POST", "/projects", map[string]any{"name": fmt.Sprintf("on-a-full-disk-%d", i)})
		if r.Status != http.StatusCreated {
			full = r
			break
		}
	}
	if full == nil {
		t.Fatal("200 projects made on a full disk")
	}
	e := wantError(t, full, http.StatusServiceUnavailable, "unavailable")
	close(gate.release) // the machine is made; recording that fails: the disk is full
	if e.Message != msg("de", "error.unavailable") {
		t.Errorf("503 message %q, want the account's language", e.Message)
	}
	r := a.Do("POST", "/ssh-keys", map[string]any{"name": "k", "public_key": testenv.PublicKey(t)})
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Errorf("a key on a full disk: %d (Retry-After %q) %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if got := data(t, a.Do("GET", "/servers/"+name, nil).Want(t, http.StatusOK)); got["status"] != "provisioning" {
		t.Errorf("on a full disk the server shows %v", got["status"])
	}
	// Long enough for the job queue to give up recording the attempt's end (it
	// retries for ~7 s): the job is left "running" with no worker.
	time.Sleep(12 * time.Second)
	disk.Free(t)

	deadline := time.Now().Add(150 * time.Second)
	for {
		o := data(t, a.Do("GET", fmt.Sprintf("/operations/%d?wait=10", op), nil).Want(t, http.StatusOK))
		if o["status"] == "success" {
			break
		}
		if o["status"] != "running" || time.Now().After(deadline) {
			t.Fatalf("after space came back the provisioning is %v (%v); it must end by itself", o["status"], o["error"])
		}
	}
	a.WaitStatus(t, name, "running", 30*time.Second)
	a.Do("POST", "/projects", map[string]any{"name": "after"}).Want(t, http.StatusCreated)
	a.Do("DELETE", "/servers/"+name, nil).Want(t, http.StatusNoContent)
}

// truncateWAL checkpoints env's SQLite WAL whole and cuts the file to nothing
// (waiting while the checkpointer or a writer is at it).
func truncateWAL(t *testing.T, env *testenv.Env) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var busy, frames, done int
		err := env.App.DB.WriteDB().QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &done)
		if err != nil {
			t.Fatal(err)
		}
		if busy == 0 && frames == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the WAL was not truncated in 30 s: busy %d, %d frames", busy, frames)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
