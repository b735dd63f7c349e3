package app

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivertype"
)

// On PostgreSQL a process that dies leaves its jobs "running". River's rescuer hands
// them on once they have run longer than any attempt may (minutes: a reboot of a guest
// that ignores ACPI is given up only after two graceful shutdowns), which is right for
// a process that is alive but slow, and far too late for one that is gone.
//
// So each process holds, for as long as it lives, a PostgreSQL advisory lock named
// after its River client ID (which River records in each job it attempts), on a
// connection of its own; PostgreSQL releases it the moment the process's connection
// closes, as it does when the process dies. The leader's sweep looks at the jobs shown
// running: one whose client's lock is free in two sweeps in a row (a live process
// whose connection broke, when PostgreSQL restarts, takes its lock again within
// seconds) was left by a dead process, and is made available again at once.

// liveness holds this process's lock.
type liveness struct {
	id   string
	lock sessionLock
	stop func()
}

// clientID names this process's River client: unique, and readable in the job table.
func clientID() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("berthd-%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

func livenessLock(id string) string { return "berth.worker." + id }

// startLiveness takes the lock (an error when it cannot) and keeps it until close:
// when its connection breaks it takes it again on a new one.
func startLiveness(ctx context.Context, db *sql.DB, id string) (*liveness, error) {
	l := &liveness{id: id, lock: sessionLock{db: db, name: livenessLock(id)}}
	if !l.lock.take(ctx) {
		return nil, fmt.Errorf("liveness lock %s: not taken", l.lock.name)
	}
	l.stop = every(2*time.Second, func(ctx context.Context) { l.lock.take(ctx) })
	return l, nil
}

func (l *liveness) close() {
	if l == nil {
		return
	}
	l.stop()
	l.lock.release()
}

// deadWorkers finds the jobs of processes that died; suspects are the clients seen
// without their lock in the sweep before.
type deadWorkers struct {
	suspects map[string]bool
}

// rescueDead makes the running jobs of dead processes available again and returns
// how many it rescued. It runs on the leader.
func (a *App) rescueDead(ctx context.Context) (int, error) {
	rows, err := a.DB.WriteDB().QueryContext(ctx, `SELECT id, attempted_by[cardinality(attempted_by)] FROM river_job
		WHERE state = 'running' AND cardinality(attempted_by) > 0`)
	if err != nil {
		return 0, err
	}
	byClient := map[string][]int64{}
	for rows.Next() {
		var id int64
		var client string
		if err := rows.Scan(&id, &client); err != nil {
			rows.Close()
			return 0, err
		}
		if client != a.live.id {
			byClient[client] = append(byClient[client], id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	conn, err := a.DB.WriteDB().Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	suspects := map[string]bool{}
	var dead []int64
	for client, ids := range byClient {
		var free bool
		if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(hashtext($1))`, livenessLock(client)).Scan(&free); err != nil {
			return 0, err
		}
		if !free {
			continue
		}
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_unlock(hashtext($1))`, livenessLock(client)); err != nil {
			return 0, err
		}
		suspects[client] = true
		if a.dead.suspects[client] {
			dead = append(dead, ids...)
		}
	}
	a.dead.suspects = suspects
	if len(dead) == 0 {
		return 0, nil
	}
	exec := riverdatabasesql.New(a.DB.WriteDB()).GetExecutor()
	jobs, err := exec.JobGetByIDMany(ctx, &riverdriver.JobGetByIDManyParams{ID: dead})
	if err != nil {
		return 0, err
	}
	var still []*rivertype.JobRow
	for _, j := range jobs {
		if j.State == rivertype.JobStateRunning {
			still = append(still, j)
		}
	}
	if len(still) == 0 {
		return 0, nil
	}
	return len(still), rescueJobs(ctx, exec, still, "the berthd process working this job died; taken over by another")
}
