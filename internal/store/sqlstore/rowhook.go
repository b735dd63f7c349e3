package sqlstore

import (
	"context"
	"database/sql/driver"
	"sync"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// A write transaction on SQLite learns which rows of the cached tables (servers,
// operations, tokens, accounts) it changed from SQLite itself: the write
// connection's pre-update hook, which SQLite calls for every row a statement
// inserts, updates or deletes. The cache then drops only those rows' entries
// (cache.forget, forgetTokens) instead of every entry of their kind, so that a
// server's or an account's change, which happens many times a second on a large
// installation, costs the entries of that server or account and not the whole read
// cache.
//
// The hook is on only while a statement that names one of those tables runs
// (markingQuerier): a statement that does not name them cannot change them (Berth's
// schema has no triggers or cascades; TestNoRawWritesToCachedTables,
// statementKinds), so nothing is missed, and the metering's steps, which write
// hundreds of thousands of rows of other tables beside one statement of accounts,
// do not pay for it on those. A query (INSERT ... RETURNING) changes rows as its
// result is read, after the call returns: from the first, the hook stays on to the
// transaction's end.

// maxChangedRows is the most rows a transaction notes; one that changes more (a
// sandbox reset, a bulk suspension) counts as changing every entry of the kinds it
// wrote.
const maxChangedRows = 4096

// rowHook reaches the write connection's hooks. The write pool holds one
// connection; writeConnector sets it as database/sql opens it. owner is the
// transaction whose hook is on: only it turns the hook off (a transaction that
// database/sql rolled back when its context ended may turn its hook off after the
// connection went to the next one, which must keep its own).
type rowHook struct {
	mu    sync.Mutex
	conn  sqlite.HookRegisterer
	owner *changedRows
}

func (h *rowHook) set(c sqlite.HookRegisterer) {
	h.mu.Lock()
	h.conn = c
	h.mu.Unlock()
}

// start notes in r the rows the write connection changes from now on, reporting
// whether it can. It is called inside a transaction, by the goroutine that holds
// the connection.
func (h *rowHook) start(r *changedRows) bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn == nil {
		return false
	}
	h.conn.RegisterPreUpdateHook(r.note)
	h.owner, r.hook = r, h
	return true
}

// off turns r's hook off, if it is still r's.
func (h *rowHook) off(r *changedRows) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.owner == r && h.conn != nil {
		h.conn.RegisterPreUpdateHook(nil)
		h.owner = nil
	}
}

// writeConnector opens the write connection as sqlite.NewConnector does, and hands
// it to the row hook.
type writeConnector struct {
	driver.Connector
	hook *rowHook
}

func (w writeConnector) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := w.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if r, ok := c.(sqlite.HookRegisterer); ok {
		w.hook.set(r)
	}
	return c, nil
}

// changedRows are the ids of the rows of the cached tables a write transaction
// changed, as its hook saw them (rowHook.start).
type changedRows struct {
	// mu guards what note writes: a transaction database/sql rolls back when its
	// context ends may leave the hook on past its end (note then ignores the rows).
	mu       sync.Mutex
	hook     *rowHook // while on
	started  bool     // the hook was asked for (rowHook.start)
	tracking bool     // the hook was on for every statement that could change them
	keep     bool     // on to the end (a query ran)
	overflow bool     // more than maxChangedRows: not kept
	stopped  bool
	servers  []int64
	ops      []int64
	tokens   []int64
	accounts []int64
}

// on turns the hook on for a statement of kinds k, if it concerns the cache, and
// reports whether to turn it off after it (pause).
func (r *changedRows) on(h *rowHook, k kinds, query bool) (pause bool) {
	if k&(kindServers|kindTokens) == 0 {
		return false
	}
	if query {
		r.keep = true
	}
	switch {
	case !r.started:
		r.started = true
		r.tracking = h.start(r)
	case r.tracking && r.hook == nil:
		r.tracking = h.start(r)
	}
	return r.hook != nil && !r.keep
}

// pause turns the hook off between statements.
func (r *changedRows) pause() {
	if r.hook != nil {
		r.hook.off(r)
		r.hook = nil
	}
}

// note is the pre-update hook.
func (r *changedRows) note(d sqlite.SQLitePreUpdateData) {
	var ids *[]int64
	switch d.TableName {
	case "servers":
		ids = &r.servers
	case "operations":
		ids = &r.ops
	case "tokens":
		ids = &r.tokens
	case "accounts":
		ids = &r.accounts
	default:
		return
	}
	if d.DatabaseName != "main" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || r.overflow {
		return
	}
	switch d.Op {
	case sqlite3.SQLITE_INSERT:
		*ids = append(*ids, d.NewRowID)
	case sqlite3.SQLITE_DELETE:
		*ids = append(*ids, d.OldRowID)
	default:
		*ids = append(*ids, d.OldRowID)
		if d.NewRowID != d.OldRowID {
			*ids = append(*ids, d.NewRowID)
		}
	}
	if len(r.servers)+len(r.ops)+len(r.tokens)+len(r.accounts) > maxChangedRows {
		r.overflow, r.servers, r.ops, r.tokens, r.accounts = true, nil, nil, nil, nil
	}
}

// stop turns the hook off. It must run before the transaction commits or rolls
// back: afterwards the connection is another goroutine's.
func (r *changedRows) stop() {
	if !r.started {
		return
	}
	r.pause()
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
}

// precise reports whether the rows are every row of the cached tables the
// transaction changed. Called after stop.
func (r *changedRows) precise() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tracking && !r.overflow
}
