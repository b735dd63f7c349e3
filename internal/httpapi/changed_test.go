package httpapi_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/testenv"
)

// gatedDestroy holds the driver's Destroy until release is closed: a deletion stays
// under way until the test lets it end.
type gatedDestroy struct {
	compute.Driver
	release chan struct{}
}

func (g *gatedDestroy) Destroy(ctx context.Context, key, name string) error {
	select {
	case <-g.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Driver.Destroy(ctx, key, name)
}

func (g *gatedDestroy) Unwrap() []compute.Driver { return []compute.Driver{g.Driver} }

// TestOperationOnAChangedServer: a request that starts an operation decides on the
// server as its transaction read it. On PostgreSQL (READ COMMITTED) that transaction
// may then wait — a snapshot checks the account's quota on the account's row, which a
// top-up or a metering pass may hold — while other requests change the server and
// end: an operation starts and finishes, an operator suspends it. The server is free
// again, but no longer what the request validated, and an operation started on that
// is wrong (a memory snapshot of a machine that stopped meanwhile fails at every
// attempt and never ends: the fault test found it, seed 1795637055945718485). Such a
// request answers 409 busy; asked again, it is decided on the server as it is.
//
// SQLite runs write transactions one at a time: nothing can commit between a
// transaction's read and its write, and there is no such race to provoke.
func TestOperationOnAChangedServer(t *testing.T) {
	if !testenv.Postgres() {
		t.Skip("PostgreSQL only: SQLite runs write transactions one at a time, so none commits between another's read and write")
	}
	t.Parallel()
	// The deletion's job may not end before the request that waited behind it has
	// answered: it would free the server first, and the request would find the
	// server changed without the deletion under way to name (one run in ten did).
	gate := &gatedDestroy{release: make(chan struct{})}
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate.release) }) }
	t.Cleanup(open)
	env := testenv.New(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver { gate.Driver = d; return gate }})
	ctx := context.Background()
	db := env.App.DB.WriteDB()

	for _, tt := range []struct {
		name     string
		snapshot map[string]any                                             // the request that waits
		change   func(t *testing.T, a *testenv.Account, srv map[string]any) // what commits meanwhile, and ends
		status   string                                                     // the server's status after the change
		again    func(t *testing.T, r *testenv.Response)                    // the answer when asked again
	}{
		{"memory snapshot of a server powered off meanwhile", map[string]any{"name": "mem", "include_memory": true},
			func(t *testing.T, a *testenv.Account, srv map[string]any) {
				powerWait(t, a, srv["name"].(string), "off")
			},
			"stopped",
			func(t *testing.T, r *testenv.Response) { wantInvalid(t, r, "include_memory") }},
		{"snapshot of a server suspended meanwhile", map[string]any{"name": "disk"},
			func(t *testing.T, _ *testenv.Account, srv map[string]any) {
				if _, err := env.App.Service.SetServerSuspended(ctx, num(t, srv["id"]), true); err != nil {
					t.Fatal(err)
				}
			},
			"suspended",
			func(t *testing.T, r *testenv.Response) { wantError(t, r, http.StatusForbidden, "server_suspended") }},
		{"snapshot of a server deleted meanwhile", map[string]any{"name": "gone"},
			func(t *testing.T, a *testenv.Account, srv map[string]any) {
				a.Do("DELETE", "/servers/"+srv["name"].(string), nil).Want(t, http.StatusNoContent)
			},
			"",
			func(t *testing.T, r *testenv.Response) { wantNotFound(t, r) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := env.NewAccount("en", "100", "")
			srv := runningServer(t, a)
			path := "/servers/" + itoa(num(t, srv["id"]))

			// Another transaction holds the account's row (as a top-up writing the
			// credit does) until the change is done.
			hold := holdAccountRow(t, ctx, db, a.ID)
			answer := make(chan *testenv.Response, 1)
			snapshot := func() { answer <- a.Do("POST", path+"/snapshots", tt.snapshot) }
			var r *testenv.Response
			if tt.status == "" {
				// A deletion writes the account's row too (its meter leaves the
				// account's burn): it waits for the row first, the snapshot request
				// after it, having read the server before the deletion committed.
				deleted := make(chan struct{})
				go func() { tt.change(t, a, srv); close(deleted) }()
				waitForLockWaits(t, db, 1)
				go snapshot()
				waitForLockWaits(t, db, 2)
				if err := hold.Rollback(); err != nil {
					t.Fatal(err)
				}
				<-deleted
				r = <-answer
				open()
			} else {
				go snapshot()
				waitForLockWaits(t, db, 1)
				tt.change(t, a, srv)
			}
			// The operation the change started (the suspension's power-off, the
			// deletion) ends: the server is free again when the request goes on.
			waitFree(t, db, num(t, srv["id"]))
			if tt.status != "" {
				if err := hold.Rollback(); err != nil {
					t.Fatal(err)
				}
			}

			if r == nil {
				r = <-answer
			}
			if r.Status != http.StatusConflict {
				t.Fatalf("the snapshot request that read the server before the change: %d %s, want 409 busy", r.Status, r.Body)
			}
			e := wantError(t, r, http.StatusConflict, "busy")
			if tt.status == "" {
				// Its write waited behind the deletion's for the server's row, and
				// read it again: busy with the deletion, which it names.
				var body struct{ Operation struct{ Type string } }
				if err := json.Unmarshal(r.Body, &body); err != nil || body.Operation.Type != "delete" || r.Header.Get("Retry-After") == "" {
					t.Errorf("409 %s (Retry-After %q), want busy naming the deletion", r.Body, r.Header.Get("Retry-After"))
				}
			} else if e.Message != msg("en", "error.server_changed") || r.Header.Get("Retry-After") == "" {
				t.Errorf("409 message %q, Retry-After %q", e.Message, r.Header.Get("Retry-After"))
			}
			if tt.status != "" {
				got := data(t, a.Do("GET", path, nil).Want(t, 200))
				if got["status"] != tt.status || got["operation"] != nil {
					t.Errorf("server after the change: status %v, operation %v; want %s, none", got["status"], got["operation"], tt.status)
				}
				if list := snapshotList(t, a, itoa(num(t, srv["id"]))); len(list) != 0 {
					t.Errorf("the refused snapshot is listed: %v", list)
				}
			}
			tt.again(t, a.Do("POST", path+"/snapshots", tt.snapshot))
		})
	}
}

// waitForLockWaits waits until n sessions of the test's database wait for a lock.
func waitForLockWaits(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var waiting int
		err := db.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests never waited for the account's row", n)
		}
	}
}

// waitFree waits until server id has no operation (the API does not show a deleted
// server's deletion, so this reads the database).
func waitFree(t *testing.T, db *sql.DB, id int64) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var busy bool
		if err := db.QueryRowContext(context.Background(), `SELECT operation_id IS NOT NULL FROM servers WHERE id = $1`, id).Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %d still busy after 30 s", id)
		}
	}
}

// TestSnapshotOfAServerGivenAVolumeMeanwhile: a snapshot request decides on the
// server's volumes as they are once it holds the account's row, not as they were
// when it read the server (docs/volumes.md, Snapshots). It reads the server free and
// without volumes, then waits for the account's row (as in TestOperationOnAChangedServer)
// while a volume is attached to the server, the attachment starting and ending: the
// server is free again, running, with a volume. The request answers 422, and nothing
// is made: a snapshot would have to take the volume, and libvirt cannot.
func TestSnapshotOfAServerGivenAVolumeMeanwhile(t *testing.T) {
	if !testenv.Postgres() {
		t.Skip("PostgreSQL only: SQLite runs write transactions one at a time, so none commits between another's read and write")
	}
	t.Parallel()
	env := testenv.New(t)
	ctx, db := context.Background(), env.App.DB.WriteDB()
	a := env.NewAccount("en", "100", "")
	srv := runningServer(t, a)
	id := itoa(num(t, srv["id"]))
	vol := createVolume(t, a, map[string]any{"location_id": num(t, srv["location_id"])})

	hold := holdAccountRow(t, ctx, db, a.ID)
	answer := make(chan *testenv.Response, 1)
	go func() { answer <- a.Do("POST", "/servers/"+id+"/snapshots", map[string]any{"name": "racing"}) }()
	waitForLockWaits(t, db, 1)
	attaching := data(t, a.Do("POST", "/volumes/"+itoa(num(t, vol["id"]))+"/attach", map[string]any{"server_id": srv["id"]}).Want(t, 200))
	if op := waitOp(t, a, opID(t, attaching)); op["status"] != "success" {
		t.Fatalf("the attachment: %v", op)
	}
	waitFree(t, db, num(t, srv["id"]))
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}

	wantInvalidMsg(t, <-answer, "server", msg("en", "validation.snapshot_running_volumes"))
	if list := snapshotList(t, a, id); len(list) != 0 {
		t.Errorf("the refused snapshot is listed: %v", list)
	}
	if got := data(t, a.Do("GET", "/servers/"+id, nil).Want(t, 200)); got["operation"] != nil || got["status"] != "running" {
		t.Errorf("the server after the refused snapshot: %v, operation %v", got["status"], got["operation"])
	}
}

// holdAccountRow begins a transaction that holds the account's row, as a top-up
// writing the credit does, until the caller rolls it back (or the test ends).
func holdAccountRow(t *testing.T, ctx context.Context, db *sql.DB, accountID int64) *sql.Tx {
	t.Helper()
	hold, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hold.Rollback() })
	if _, err := hold.ExecContext(ctx, `UPDATE accounts SET credit = credit WHERE id = $1`, accountID); err != nil {
		t.Fatal(err)
	}
	return hold
}
