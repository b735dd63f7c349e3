package sqlstore

import (
	"context"
	"database/sql"
	"sync"
)

// SQLite parses and plans a statement's text each time it is run unprepared, and
// inside a write transaction that was most of a small change's cost: a power action's
// few statements and its event's spent more CPU being parsed than being run
// (bench/results/events-2026-11-27.txt). So on SQLite a write transaction runs each
// statement text it has met before as a statement prepared once on the write
// connection (txStmts). The write pool has one connection, which the open transaction
// holds: a text met for the first time runs unprepared and is prepared after the
// commit, when the connection is free again. PostgreSQL needs none of this: pgx keeps
// a statement cache of its own on each connection.

// maxTxStmts bounds how many statement texts are kept prepared. Texts that vary with
// their input (an IN list of n placeholders) could otherwise grow it without end;
// past it, a new text runs unprepared as before.
const maxTxStmts = 1024

// txStmts is the write connection's prepared statements, by text.
type txStmts struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
	// tried counts the texts given to prepare, kept or not, so that a text that
	// does not prepare is not tried again and again past the bound.
	tried int
}

func (c *txStmts) get(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[query]
}

// prepare prepares, on write, those of queries not prepared yet, while the bound
// allows. It holds no lock while it prepares: the write connection may have been taken
// by another transaction meanwhile, which looks statements up (get) while it holds it.
func (c *txStmts) prepare(ctx context.Context, write *sql.DB, queries []string) {
	c.mu.Lock()
	var todo []string
	seen := map[string]bool{}
	for _, q := range queries {
		if _, ok := c.m[q]; ok || seen[q] || c.tried >= maxTxStmts {
			continue
		}
		seen[q] = true
		c.tried++
		todo = append(todo, q)
	}
	c.mu.Unlock()
	for _, q := range todo {
		st, err := write.PrepareContext(ctx, q)
		if err != nil {
			// It ran, unprepared, in the transaction; what keeps it from
			// preparing now is not the caller's concern. It stays unprepared.
			continue
		}
		c.mu.Lock()
		if _, ok := c.m[q]; ok || c.m == nil { // prepared meanwhile, or closed
			st.Close()
		} else {
			c.m[q] = st
		}
		c.mu.Unlock()
	}
}

func (c *txStmts) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m = nil
}

// preparedQuerier runs a SQLite write transaction's statements prepared where their
// text has been met before, and notes in t the texts met for the first time.
type preparedQuerier struct {
	t *tx
}

func (p preparedQuerier) stmt(ctx context.Context, query string) *sql.Stmt {
	if st := p.t.db.txStmts.get(query); st != nil {
		// On the connection it was prepared on (the pool's only one), the
		// transaction's statement reuses it.
		return p.t.sqlTx.StmtContext(ctx, st)
	}
	p.t.unprepared = append(p.t.unprepared, query)
	return nil
}

func (p preparedQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := p.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return p.t.sqlTx.ExecContext(ctx, query, args...)
}

func (p preparedQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := p.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return p.t.sqlTx.QueryContext(ctx, query, args...)
}

func (p preparedQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return p.t.sqlTx.QueryRowContext(ctx, query, args...)
}
