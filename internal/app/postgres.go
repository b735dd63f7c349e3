package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/ratelimit"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/worker"
)

// Berth on PostgreSQL (--database): any number of processes serve one database.
// Everything that must happen once happens once because the database says so:
//   - an operation's state change and its job commit together, and River hands each
//     job to one worker of one process at a time; a process that dies leaves its jobs
//     to River's rescuer, which hands them to another after the longest an attempt may
//     take (RescueStuckJobsAfter);
//   - metering and housekeeping are River periodic jobs, which only River's elected
//     leader inserts;
//   - metrics sampling, the sweep for operations without a job and the libvirt power
//     reconcile run in the process holding a PostgreSQL advisory lock (leader below);
//     the lock goes with the connection of a process that dies.
// Jobs are inserted through River's database/sql driver, inside the store's own
// transactions (the store speaks database/sql through pgx's adapter); they are worked
// by a client on River's pgx driver, whose LISTEN wakes the workers of every process
// when a transaction that inserted jobs commits.

// jobWorker is a River client that works jobs, whatever its transaction type.
type jobWorker interface {
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
}

// Migrate creates the store cfg names if need be (as cfg.Create allows) and brings
// its schema up to date: the store's lines, the drivers' and River's. Nothing else
// happens: no catalog, no keys, no workers. The tests' stores start from one made so
// (internal/testenv), not from a schema migrated anew for each.
func Migrate(ctx context.Context, cfg Config) error {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	return db.Close()
}

// openStore opens the database cfg names (creating it as cfg.Create allows) and
// migrates it.
func openStore(ctx context.Context, cfg Config) (*sqlstore.DB, error) {
	if cfg.DatabaseURL != "" {
		return openPostgres(ctx, cfg)
	}
	warnings, err := prepareDataDir(cfg.DataDir, cfg.Create)
	for _, w := range warnings {
		cfg.Logger.Warn(w)
	}
	if err != nil {
		return nil, err
	}
	db, err := sqlstore.OpenSQLite(ctx, cfg.DataDir, drivers(cfg).Storage()...)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func openPostgres(ctx context.Context, cfg Config) (*sqlstore.DB, error) {
	if !sqlstore.IsPostgresURL(cfg.DatabaseURL) {
		return nil, fmt.Errorf("--database %s: not a PostgreSQL URL (postgres://user:password@host:port/dbname)",
			sqlstore.Redact(cfg.DatabaseURL))
	}
	db, err := sqlstore.OpenPostgres(ctx, cfg.DatabaseURL, drivers(cfg).Storage()...)
	if err != nil {
		return nil, err
	}
	if cfg.Create == CreateNever {
		// An operator command on a database that holds no Berth (a mistyped URL)
		// must not create one and report success in it.
		v, err := db.SchemaVersion(ctx)
		if err != nil || v == 0 {
			db.Close()
			if err == nil {
				err = errors.New("it holds no Berth schema")
			}
			return nil, fmt.Errorf("database %s: %w; run berthd migrate --database URL first", sqlstore.Redact(cfg.DatabaseURL), err)
		}
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// sqlDriver is River's driver on the store's database/sql pool: jobs inserted with it
// join the store's transactions.
func (a *App) sqlDriver() riverdriver.Driver[*sql.Tx] {
	if a.DB.Postgres() {
		return riverdatabasesql.New(a.DB.WriteDB())
	}
	return riversqlite.New(a.DB.WriteDB())
}

// completeTx marks an operation's job completed in the store's transaction that
// records the operation's end.
func (a *App) completeTx() worker.CompleteTx {
	return completeJobTx[ops.OperationArgs](a.DB.Postgres())
}

// mailEndingTx sets (on) or clears ops.MailEndKey in a running mail job's metadata
// in a transaction of the store, as River keeps metadata on each store (jsonb on
// PostgreSQL, JSON text on SQLite). A job no longer running is an error: its
// attempt has ended.
func mailEndingTx(postgres bool) func(ctx context.Context, tx *sql.Tx, jobID int64, on bool) error {
	set, clear := `UPDATE river_job SET metadata = json_set(metadata, '$.`+ops.MailEndKey+`', 1) WHERE id = ? AND state = 'running'`,
		`UPDATE river_job SET metadata = json_remove(metadata, '$.`+ops.MailEndKey+`') WHERE id = ? AND state = 'running'`
	if postgres {
		set, clear = `UPDATE river_job SET metadata = metadata || '{"`+ops.MailEndKey+`": 1}' WHERE id = $1 AND state = 'running'`,
			`UPDATE river_job SET metadata = metadata - '`+ops.MailEndKey+`' WHERE id = $1 AND state = 'running'`
	}
	return func(ctx context.Context, tx *sql.Tx, jobID int64, on bool) error {
		q := clear
		if on {
			q = set
		}
		res, err := tx.ExecContext(ctx, q, jobID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("mail job %d: not running (%d rows, %v)", jobID, n, err)
		}
		return nil
	}
}

// completeJobTx marks a job of args T completed in a transaction of the store (on
// PostgreSQL, or on SQLite).
func completeJobTx[T river.JobArgs](postgres bool) func(ctx context.Context, tx *sql.Tx, job *river.Job[T]) error {
	if !postgres {
		return func(ctx context.Context, tx *sql.Tx, job *river.Job[T]) error {
			_, err := river.JobCompleteTx[*riversqlite.Driver](ctx, tx, job)
			return err
		}
	}
	// The job is worked by the pgx client, the transaction is database/sql's:
	// river.JobCompleteTx wants both of one driver, so this does what it does through
	// the database/sql driver's executor.
	drv := riverdatabasesql.New(nil)
	return func(ctx context.Context, tx *sql.Tx, job *river.Job[T]) error {
		if job.State != rivertype.JobStateRunning {
			return errors.New("job must be running")
		}
		p := riverdriver.JobSetStateCompleted(job.ID, time.Now().UTC(), nil)
		rows, err := drv.UnwrapExecutor(tx).JobSetStateIfRunningMany(ctx, &riverdriver.JobSetStateIfRunningManyParams{
			ID:              []int64{p.ID},
			Attempt:         []*int{p.Attempt},
			ErrData:         [][]byte{p.ErrData},
			FinalizedAt:     []*time.Time{p.FinalizedAt},
			MetadataDoMerge: []bool{false},
			MetadataUpdates: [][]byte{nil},
			ScheduledAt:     []*time.Time{p.ScheduledAt},
			State:           []rivertype.JobState{p.State},
		})
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return fmt.Errorf("job %d: not running any more", job.ID)
		}
		return nil
	}
}

// startPostgresWorkers starts a River client on the pgx driver working the queue.
func (a *App) startPostgresWorkers(ctx context.Context, cfg *river.Config) (*river.Client[pgx.Tx], error) {
	pool, err := pgxpool.New(ctx, a.cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	work, err := river.NewClient[pgx.Tx](riverpgxv5.New(pool), cfg)
	if err != nil {
		pool.Close()
		return nil, err
	}
	if err := work.Start(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	stopListen := listenOperationsEnded(pool, a.Service.OperationEnded, a.Service.EventsWritten, a.DB.DNSChanged, a.DB.ForeignWrite, a.log)
	a.closePool = func() {
		stopListen()
		pool.Close()
	}
	return work, nil
}

// rescueMargin is how long past the longest attempt River's rescuer waits before it
// hands a job that still shows running to another worker: the job's process died,
// or could not record its end.
func (a *App) rescueMargin() time.Duration {
	if a.cfg.Driver == "" || a.cfg.Driver == "sim" {
		return max(10*time.Second, time.Duration(float64(2*time.Minute)*a.cfg.SimTimeScale))
	}
	return 2 * time.Minute
}

// sessionLock is a PostgreSQL session advisory lock held on a connection of its own:
// PostgreSQL releases it when that connection closes, as it does when the process
// dies.
type sessionLock struct {
	db   *sql.DB
	name string
	mu   sync.Mutex
	conn *sql.Conn
	held bool
}

// take reports whether this process holds the lock, taking it when no one does. A
// broken connection lost the lock with it: take tries again on a new one.
func (l *sessionLock) take(ctx context.Context) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := l.conn.PingContext(pctx)
		cancel()
		if err != nil {
			l.conn.Close()
			l.conn, l.held = nil, false
		}
	}
	if l.held {
		return true
	}
	if l.conn == nil {
		conn, err := l.db.Conn(ctx)
		if err != nil {
			return false
		}
		l.conn = conn
	}
	var ok bool
	if err := l.conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(hashtext($1))`, l.name).Scan(&ok); err != nil {
		l.conn.Close()
		l.conn = nil
		return false
	}
	l.held = ok
	return ok
}

// release gives the lock up (with the session that holds it).
func (l *sessionLock) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		l.conn.Close()
		l.conn, l.held = nil, false
	}
}

// leader says whether this process is the one doing the cluster's periodic work now.
// On SQLite the process holding the data directory's lock is the only one that
// serves; on PostgreSQL it is the one holding the berth.leader advisory lock. A nil
// leader always leads.
type leader struct{ lock sessionLock }

func newLeader(db *sqlstore.DB) *leader {
	if !db.Postgres() {
		return nil
	}
	return &leader{lock: sessionLock{db: db.WriteDB(), name: "berth.leader"}}
}

// Leads reports whether this process leads, taking the lead when no one holds it.
func (l *leader) Leads(ctx context.Context) bool { return l == nil || l.lock.take(ctx) }

func (l *leader) close() {
	if l != nil {
		l.lock.release()
	}
}

// limits is where the rate limits and the sign-in throttle are kept: in memory when
// one process serves (SQLite), in the database every process shares (PostgreSQL).
func (a *App) limits() ratelimit.Factory {
	if a.DB.Postgres() {
		return a.DB.RateLimits
	}
	return ratelimit.InMemory
}
