// Package sqlstore implements store.Store over database/sql in portable SQL. SQLite
// (pure Go, WAL) is the embedded default; the schema is migrated with goose (the
// store's line, then each compute driver's: lines.go) and River's own tables with
// rivermigrate.
package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

//go:embed migrations/sqlite/*.sql
var sqliteMigrations embed.FS

// DB is a Store on a database.
type DB struct {
	queries
	d     dialect
	write *sql.DB
	read  *sql.DB
	path  string
	// drivers are the compute drivers that keep tables in the database: their
	// migration lines run after the store's, a copy writes their tables after its own.
	drivers []compute.Storage
	cache   *cache
	// rowHook tells write transactions the rows of the cached tables (servers,
	// operations, tokens, accounts) they change (SQLite; nil on PostgreSQL).
	rowHook *rowHook
	// ckpt checkpoints SQLite's WAL beside the writer (nil on PostgreSQL).
	ckpt *checkpointer
	// stopWatch ends the change watcher (cache.watch).
	stopWatch chan struct{}
	watchDone chan struct{}

	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt
	// txStmts: on SQLite, the statements write transactions run prepared
	// (txstmts.go); nil on PostgreSQL.
	txStmts *txStmts
}

var _ store.Store = (*DB)(nil)

// SQLite's page caches, in pages of 4 KiB (cache_size of each connection).
//
// modernc.org/sqlite builds SQLite with SQLITE_ENABLE_MEMORY_MANAGEMENT, so the page
// caches of all connections in the process are one LRU list bounded by the sum of
// their cache_size: a connection that reads more takes the pages the others used
// least recently, and no one connection's cache_size bounds it. Each cached page
// costs 8 KiB of C heap (4 KiB of page and SQLite's header, rounded up to a size
// class of modernc.org/memory). SQLite's default, 2,000 KiB (483 pages) a
// connection, made that pool 483 pages per connection (7 on 2 cores, 2 more per
// core), about 27 MB of C heap here, which berthd filled at the pace its database
// grew (bench/README.md, soak.sh). With the sizes below it is 512 pages here
// (256 + 4 x 64), about 4 MB of C heap.
//
// A page missing from the cache is read from the OS's page cache (a pread and a
// copy), so little is lost by keeping this small. In WAL mode a reader's cache is
// dropped at its next transaction after anything commits, which in berthd is every
// few hundred ms while anything happens; what a reader keeps matters only within one
// query. The writer's cache is the one that lasts: it holds the indexes' upper
// pages and the pages new rows go into. cache_size also sets the memory a sort uses
// before spilling to a temp file, but SQLite never goes below 250 pages (1 MiB) for
// that, so these sizes do not change it.
const (
	writeCachePages = 256 // 1 MiB of pages
	readCachePages  = 64  // what a reader reads between two writes
)

// OpenSQLite opens (creating if needed) the SQLite database berth.db in dir, which
// holds the tables of drivers too. SQLite allows one writer at a time, so writes go
// through a pool of one connection while reads use a pool of several (WAL lets
// readers run beside the writer).
func OpenSQLite(ctx context.Context, dir string, drivers ...compute.Storage) (*DB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	path := filepath.Join(dir, DBFile)
	// The file: URI's path: SQLite would end it at a '?' or '#' of the directory's name,
	// and decode a '%'.
	uri := "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	const pragmas = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)"
	cache := func(pages int) string { return fmt.Sprintf("&_pragma=cache_size(%d)", pages) }
	// temp_store(2): the write connection's TEMP tables (billing.go: stageTable) and
	// its statement journals live in its memory, never in temp files.
	// The checkpointer (checkpoint.go) copies the WAL into the database beside the
	// writer; the writer's own checkpoint (SQLite's wal_autocheckpoint) finishes what
	// is left, so the WAL is restarted and stays small.
	connector, err := sqlite.NewConnector(uri + "?" + pragmas + cache(writeCachePages) + "&_pragma=temp_store(2)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	hook := &rowHook{}
	write := sql.OpenDB(writeConnector{Connector: connector, hook: hook})
	write.SetMaxOpenConns(1)
	write.SetConnMaxIdleTime(0)
	read, err := sql.Open("sqlite", uri+"?"+pragmas+cache(readCachePages)+"&_pragma=query_only(1)")
	if err != nil {
		write.Close()
		return nil, err
	}
	ckpt, err := sql.Open("sqlite", uri+"?"+pragmas+cache(16))
	if err != nil {
		write.Close()
		read.Close()
		return nil, err
	}
	ckpt.SetMaxOpenConns(1)
	n := max(4, 2*runtime.GOMAXPROCS(0))
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	db := &DB{queries: on(dialectSQLite, read), write: write, read: read, path: path, drivers: drivers, rowHook: hook,
		stmts: map[string]*sql.Stmt{}, txStmts: &txStmts{m: map[string]*sql.Stmt{}}, ckpt: startCheckpointer(ckpt)}
	if db.cache, err = openCache(dir); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.ping(ctx); err != nil {
		db.Close()
		return nil, err
	}
	db.stopWatch, db.watchDone = make(chan struct{}), make(chan struct{})
	db.cache.watch(db.write, time.Second, db.stopWatch, db.watchDone)
	return db, nil
}

func (db *DB) ping(ctx context.Context) error {
	if err := db.write.PingContext(ctx); err != nil {
		return fmt.Errorf("open %s: %w", db.path, err)
	}
	return nil
}

// Migrate brings Berth's schema (the store's tables, then the drivers') and River's
// tables up to date. It is safe to run on every start and from several processes.
func (db *DB) Migrate(ctx context.Context) error {
	if db.d == dialectPostgres {
		// Several processes may start at once: one migrates, every line (the store's
		// and the drivers') and River's, the others wait for it and then find
		// nothing to do (docs/drivers.md).
		unlock, err := db.advisoryLock(ctx, "berth.migrate")
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		defer unlock()
	}
	if err := db.migrateLines(ctx); err != nil {
		return err
	}
	if err := db.fillServerNets(ctx); err != nil {
		return err
	}
	if db.d == dialectPostgres {
		m, err := rivermigrate.New(riverdatabasesql.New(db.write), nil)
		if err != nil {
			return fmt.Errorf("job migrations: %w", err)
		}
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("migrate jobs: %w", err)
		}
		return nil
	}
	m, err := rivermigrate.New(riversqlite.New(db.write), nil)
	if err != nil {
		return fmt.Errorf("job migrations: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate jobs: %w", err)
	}
	return nil
}

// WriteDB implements store.Store.
func (db *DB) WriteDB() *sql.DB { return db.write }

// ReadDB is the pool of read-only connections (they read beside a write transaction).
func (db *DB) ReadDB() *sql.DB { return db.read }

// Rebind implements store.Store: SQLite takes ? placeholders as they are,
// PostgreSQL numbers them.
func (db *DB) Rebind(q string) string {
	if db.d == dialectPostgres {
		return rebindPostgres(q)
	}
	return q
}

// Close closes both pools.
func (db *DB) Close() error {
	if db.stopWatch != nil { // a second Close finds it nil
		close(db.stopWatch)
		<-db.watchDone
		db.stopWatch = nil
	}
	if err := db.ckpt.close(); err != nil {
		slog.Warn("sqlite checkpointer close", "err", err)
	}
	db.ckpt = nil
	db.stmtMu.Lock()
	for _, st := range db.stmts {
		st.Close()
	}
	db.stmtMu.Unlock()
	if db.txStmts != nil {
		db.txStmts.close()
	}
	err := db.write.Close()
	if db.read != db.write {
		if err2 := db.read.Close(); err == nil {
			err = err2
		}
	}
	if err2 := db.cache.close(); err == nil {
		err = err2
	}
	return err
}

// stmt returns query prepared on the read pool. Hot reads run prepared: SQLite would
// otherwise parse and plan their text on every call, most of their cost.
func (db *DB) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	db.stmtMu.Lock()
	defer db.stmtMu.Unlock()
	if st, ok := db.stmts[query]; ok {
		return st, nil
	}
	st, err := db.read.PrepareContext(ctx, db.Rebind(query))
	if err != nil {
		return nil, err
	}
	db.stmts[query] = st
	return st, nil
}

// TokenByHash implements store.Reader, from memory while nothing changed.
func (db *DB) TokenByHash(ctx context.Context, hash []byte) (hosting.Token, hosting.Account, error) {
	return db.cache.token(ctx, hash, func() (hosting.Token, hosting.Account, error) {
		st, err := db.stmt(ctx, tokenByHashQuery)
		if err != nil {
			return hosting.Token{}, hosting.Account{}, err
		}
		return scanTokenAccount(st.QueryRowContext(ctx, hash).Scan)
	})
}

// Server implements store.Reader, from memory while nothing changed.
func (db *DB) Server(ctx context.Context, accountID int64, ref hosting.ServerRef) (hosting.Server, error) {
	return db.cache.server(ctx, accountID, ref, func() (hosting.Server, error) {
		query, args := serverQuery(accountID, ref)
		st, err := db.stmt(ctx, query)
		if err != nil {
			return hosting.Server{}, err
		}
		return scanServer(st.QueryRowContext(ctx, args...).Scan)
	})
}

// InTx implements store.Store. Under a store.Hold the first transaction is held
// instead of committed, and later ones join it as savepoints. A failure of the
// database that passes (a full disk) is answered hosting.Unavailable.
func (db *DB) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	return transient(db.inTx(ctx, fn))
}

func (db *DB) inTx(ctx context.Context, fn func(tx store.Tx) error) error {
	hold := store.HoldOf(ctx)
	if t, ok := hold.Parked().(*tx); ok && t.db == db {
		return t.savepoint(ctx, fn)
	}
	beginCtx := ctx
	if hold.Take() {
		// Its end is the holder's to decide, not the request's cancellation.
		beginCtx = context.WithoutCancel(ctx)
	}
	sqlTx, err := db.write.BeginTx(beginCtx, nil)
	if err != nil {
		return err
	}
	t := &tx{sqlTx: sqlTx, db: db}
	var q querier = sqlTx
	if db.txStmts != nil {
		q = preparedQuerier{t: t}
	}
	if db.cache != nil {
		q = markingQuerier{q: q, w: &t.writes, hook: db.rowHook}
	}
	t.queries = on(db.d, q)
	t.queries.tx = true
	if err := fn(t); err != nil {
		t.writes.rows.stop()
		_ = sqlTx.Rollback()
		return err
	}
	if hold.Take() {
		hold.Park(t, func(commit bool) error {
			if !commit {
				t.writes.rows.stop()
				return sqlTx.Rollback()
			}
			return transient(db.commit(context.WithoutCancel(ctx), t))
		})
		return nil
	}
	return db.commit(ctx, t)
}

// commit runs what asked to come last, commits t and, once it has committed, runs
// what waited for that.
func (db *DB) commit(ctx context.Context, t *tx) error {
	for i := 0; i < len(t.before); i++ { // a step may ask for another
		if err := t.before[i](ctx); err != nil {
			t.writes.rows.stop()
			_ = t.sqlTx.Rollback()
			return err
		}
	}
	if db.cache != nil && db.cache.pg != nil {
		if err := db.cache.pg.add(context.Background(), t.sqlTx, t.writes.kinds); err != nil {
			_ = t.sqlTx.Rollback()
			return err
		}
	}
	t.writes.rows.stop() // before the connection is another's
	err := t.sqlTx.Commit()
	// Counted even when the commit reports an error: it may have landed anyway.
	db.cache.committed(&t.writes)
	db.ckpt.committed()
	if err != nil {
		return err
	}
	for _, fn := range t.after {
		fn()
	}
	if len(t.unprepared) > 0 {
		db.txStmts.prepare(context.WithoutCancel(ctx), db.write, t.unprepared)
	}
	return nil
}

type tx struct {
	queries
	sqlTx  *sql.Tx
	db     *DB
	after  []func()
	before []func(context.Context) error
	// writes is what it changed that the cache may hold.
	writes writes
	// unprepared is the statement texts it ran that txStmts did not hold.
	unprepared []string
}

// savepoint runs fn inside t as a savepoint: what fn wrote is undone when it fails,
// what t held before stays.
func (t *tx) savepoint(ctx context.Context, fn func(tx store.Tx) error) error {
	if _, err := t.sqlTx.ExecContext(ctx, "SAVEPOINT berth_join"); err != nil {
		return err
	}
	after, before := len(t.after), len(t.before)
	if err := fn(t); err != nil {
		t.after, t.before = t.after[:after], t.before[:before]
		if _, rerr := t.sqlTx.ExecContext(ctx, "ROLLBACK TO berth_join"); rerr != nil {
			return errors.Join(err, rerr)
		}
		_, _ = t.sqlTx.ExecContext(ctx, "RELEASE berth_join")
		return err
	}
	_, err := t.sqlTx.ExecContext(ctx, "RELEASE berth_join")
	return err
}

func (t *tx) SQL() *sql.Tx { return t.sqlTx }

func (t *tx) AfterCommit(fn func()) { t.after = append(t.after, fn) }

func (t *tx) BeforeCommit(fn func(context.Context) error) { t.before = append(t.before, fn) }

var _ store.Tx = (*tx)(nil)
