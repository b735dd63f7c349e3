package sqlstore

import (
	"context"
	"database/sql/driver"
	"sync"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// A write transaction on SQLite learns which rows of servers and operations it
// changed from SQLite itself: the write connection's pre-update hook, which SQLite
// calls for every row a statement inserts, updates or deletes. The cache then drops
// only those rows' servers (cache.forget) instead of every server it holds, so that
// a server's change, which happens many times a second on a large installation,
// costs the entries of that server and not the whole read cache.
//
// The hook is on only from a transaction's first statement that names servers or
// operations (markingQuerier) to its end: the metering's steps, which write hundreds
// of thousands of rows of other tables, never pay for it. A statement that does not
// name those tables cannot change them (Berth's schema has no triggers or
// cascades; TestNoRawWritesToCachedTables, statementKinds), so nothing is missed.

// maxChangedRows is the most rows a transaction notes; one that changes more (a
// sandbox reset, a bulk suspension) counts as changing every server.
const maxChangedRows = 4096

// rowHook reaches the write connection's hooks. The write pool holds one
// connection; writeConnector sets it as database/sql opens it.
type rowHook struct {
	mu   sync.Mutex
	conn sqlite.HookRegisterer
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
	c := h.conn
	h.mu.Unlock()
	if c == nil {
		return false
	}
	r.conn = c
	c.RegisterPreUpdateHook(r.note)
	return true
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

// changedRows are the ids of the servers and operations rows a write transaction
// changed, from when its hook started (rowHook.start).
type changedRows struct {
	// mu guards what note writes: a transaction database/sql rolls back when its
	// context ends may leave the hook on past its end (note then ignores the rows).
	mu       sync.Mutex
	conn     sqlite.HookRegisterer // the connection whose hook it is, while on
	started  bool                  // the hook was asked for (rowHook.start)
	tracking bool                  // the hook was on for every statement that could change them
	overflow bool                  // more than maxChangedRows: not kept
	stopped  bool
	servers  []int64
	ops      []int64
}

// note is the pre-update hook.
func (r *changedRows) note(d sqlite.SQLitePreUpdateData) {
	var servers bool
	switch d.TableName {
	case "servers":
		servers = true
	case "operations":
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
	ids := &r.ops
	if servers {
		ids = &r.servers
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
	if len(r.servers)+len(r.ops) > maxChangedRows {
		r.overflow, r.servers, r.ops = true, nil, nil
	}
}

// stop turns the hook off. It must run before the transaction commits or rolls
// back: afterwards the connection is another goroutine's.
func (r *changedRows) stop() {
	if r.conn == nil {
		return
	}
	r.conn.RegisterPreUpdateHook(nil)
	r.conn = nil
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
}

// precise reports whether the rows are every row of servers and operations the
// transaction changed. Called after stop.
func (r *changedRows) precise() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tracking && !r.overflow
}
