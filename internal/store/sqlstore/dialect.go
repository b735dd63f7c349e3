package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync"
)

// Berth's SQL is written once, with ? placeholders, in the subset SQLite and
// PostgreSQL share: integers for times, money and flags, RETURNING, ON CONFLICT,
// UPDATE ... FROM, window functions. Where the two differ (a JSON field, the byte
// length of a text, locking a row) the query asks its dialect.

// dialect says which database a DB speaks.
type dialect int

const (
	dialectSQLite dialect = iota
	dialectPostgres
)

// rebindCache keeps each query text PostgreSQL was given: the same few hundred texts
// run again and again.
var rebindCache sync.Map // string -> string

// rebindPostgres turns ? placeholders into PostgreSQL's $1, $2, ...; a numbered ?N
// becomes $N. A ? inside a quoted literal or identifier is left alone.
func rebindPostgres(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	if v, ok := rebindCache.Load(q); ok {
		return v.(string)
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			b.WriteByte(c)
		case c == '\'' || c == '"':
			quote = c
			b.WriteByte(c)
		case c == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			b.WriteByte('$')
			if j > i+1 {
				b.WriteString(q[i+1 : j])
				i = j - 1
			} else {
				n++
				b.WriteString(strconv.Itoa(n))
			}
		default:
			b.WriteByte(c)
		}
	}
	out := b.String()
	rebindCache.Store(q, out)
	return out
}

// pgQuerier runs ?-placeholder queries on PostgreSQL.
type pgQuerier struct{ q querier }

func (p pgQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return p.q.ExecContext(ctx, rebindPostgres(query), args...)
}

func (p pgQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return p.q.QueryContext(ctx, rebindPostgres(query), args...)
}

func (p pgQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return p.q.QueryRowContext(ctx, rebindPostgres(query), args...)
}

// on returns the queries of dialect d on q.
func on(d dialect, q querier) queries {
	if d == dialectPostgres {
		return queries{q: pgQuerier{q}, d: d}
	}
	return queries{q: q, d: d}
}

// forUpdate is the clause that locks the rows a SELECT reads until the transaction
// ends: PostgreSQL's FOR UPDATE. SQLite needs none, as its write transactions run one
// at a time.
func (q queries) forUpdate() string {
	if q.d == dialectPostgres {
		return " FOR UPDATE"
	}
	return ""
}

// forNoKeyUpdate is forUpdate's lock as an UPDATE takes it (FOR NO KEY UPDATE on
// PostgreSQL): it keeps out the row's other writers but not the inserts that
// reference it. FOR UPDATE also waits for those (a foreign key's check holds FOR
// KEY SHARE on the row referenced): two transactions that each inserted a row of an
// account (an operation, an event) and then lock the account FOR UPDATE deadlock.
func (q queries) forNoKeyUpdate() string {
	if q.d == dialectPostgres {
		return " FOR NO KEY UPDATE"
	}
	return ""
}

// textBytes is the SQL for the length in bytes of a text column.
func (q queries) textBytes(col string) string {
	if q.d == dialectPostgres {
		return "octet_length(" + col + ")"
	}
	return "length(CAST(" + col + " AS BLOB))"
}

// jsonInt is the SQL for an integer field of a JSON column.
func (q queries) jsonInt(col, field string) string {
	if q.d == dialectPostgres {
		return "(" + col + "->>'" + field + "')::bigint"
	}
	return "json_extract(" + col + ", '$." + field + "')"
}

// Serialize implements store.Writer: PostgreSQL's transaction-scoped advisory lock.
func (q queries) Serialize(ctx context.Context, name string) error {
	if q.d != dialectPostgres {
		return nil
	}
	_, err := q.q.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext(?))`, "berth.tx."+name)
	return err
}
