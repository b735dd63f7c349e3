package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"

	"github.com/berthhq/berth/internal/store/sqlstore"
)

// CopyResult is what CopyStore copied.
type CopyResult struct {
	// Rows is how many rows each of Berth's tables had.
	Rows map[string]int
	// Jobs is how many jobs still to run were copied, by kind (operations in flight,
	// scheduled snapshot deletions).
	Jobs map[string]int
}

// CopyStore moves the SQLite installation in dataDir to the PostgreSQL database at
// databaseURL: every row of Berth's tables and every job still to run, in one
// transaction of the target's. It refuses a source that a serve holds (it holds the
// data directory's lock meanwhile, so none starts) and a target that holds anything.
// Jobs that were running when the source's serve stopped run again from the start of
// their step, as they would have at its restart.
func CopyStore(ctx context.Context, dataDir, databaseURL string) (CopyResult, error) {
	var res CopyResult
	if st, err := os.Stat(filepath.Join(dataDir, sqlstore.DBFile)); errors.Is(err, fs.ErrNotExist) || (err == nil && st.Size() == 0) {
		return res, fmt.Errorf("no Berth database in %s", dataDir)
	} else if err != nil {
		return res, err
	}
	lock, err := os.OpenFile(filepath.Join(dataDir, LockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return res, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return res, fmt.Errorf("a berthd serves %s: stop it first (the copy must see the database at rest)", dataDir)
	}
	if !sqlstore.IsPostgresURL(databaseURL) {
		return res, fmt.Errorf("--to %s: not a PostgreSQL URL", sqlstore.Redact(databaseURL))
	}
	src, err := sqlstore.OpenSQLite(ctx, dataDir, drivers(Config{}).Storage()...)
	if err != nil {
		return res, err
	}
	defer src.Close()
	if err := src.Migrate(ctx); err != nil {
		return res, err
	}
	dst, err := sqlstore.OpenPostgres(ctx, databaseURL, drivers(Config{}).Storage()...)
	if err != nil {
		return res, err
	}
	defer dst.Close()
	if err := dst.Migrate(ctx); err != nil {
		return res, err
	}
	if t, err := dst.Empty(ctx); err != nil {
		return res, err
	} else if t != "" {
		return res, fmt.Errorf("%s is not empty (table %s has rows): a copy goes only into a new database", sqlstore.Redact(databaseURL), t)
	}
	var queued int
	if err := dst.WriteDB().QueryRowContext(ctx, `SELECT COUNT(*) FROM river_job`).Scan(&queued); err != nil {
		return res, err
	} else if queued > 0 {
		return res, fmt.Errorf("%s is not empty (its job queue has %d jobs): a copy goes only into a new database", sqlstore.Redact(databaseURL), queued)
	}
	jobs, err := jobsToRun(ctx, src.WriteDB())
	if err != nil {
		return res, fmt.Errorf("jobs: %w", err)
	}
	inserter, err := river.NewClient(riverdatabasesql.New(dst.WriteDB()), &river.Config{})
	if err != nil {
		return res, err
	}
	res.Rows, err = src.CopyTo(ctx, dst, func(tx *sql.Tx) error {
		if len(jobs) == 0 {
			return nil
		}
		_, err := inserter.InsertManyTx(ctx, tx, jobs)
		return err
	})
	if err != nil {
		return res, err
	}
	res.Jobs = map[string]int{}
	for _, j := range jobs {
		res.Jobs[j.Args.Kind()]++
	}
	return res, nil
}

// copiedJob is a job of the source queue inserted again as it was: its kind and its
// arguments' JSON.
type copiedJob struct {
	kind string
	args json.RawMessage
}

func (j copiedJob) Kind() string                 { return j.kind }
func (j copiedJob) MarshalJSON() ([]byte, error) { return j.args, nil }

// jobsToRun reads the source queue's jobs that have still to run. Periodic work is
// left out (the leader of the new installation schedules its own), and so are wakes.
func jobsToRun(ctx context.Context, db *sql.DB) ([]river.InsertManyParams, error) {
	rows, err := db.QueryContext(ctx, `SELECT kind, args, queue, priority, max_attempts, scheduled_at FROM river_job
		WHERE state IN ('available', 'pending', 'retryable', 'running', 'scheduled')
		AND kind NOT IN ('berth.wake', 'berth.meter', 'berth.housekeeping') ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []river.InsertManyParams
	for rows.Next() {
		var kind, queue string
		var args []byte
		var priority, maxAttempts int
		var at time.Time
		if err := rows.Scan(&kind, &args, &queue, &priority, &maxAttempts, &at); err != nil {
			return nil, err
		}
		if !json.Valid(args) {
			return nil, fmt.Errorf("job of kind %s: arguments are not JSON", kind)
		}
		out = append(out, river.InsertManyParams{Args: copiedJob{kind: kind, args: args},
			InsertOpts: &river.InsertOpts{Queue: queue, Priority: priority, MaxAttempts: maxAttempts, ScheduledAt: at.UTC()}})
	}
	return out, rows.Err()
}
