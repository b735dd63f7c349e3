package sqlstore

import (
	"database/sql/driver"
	"errors"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/berthhq/berth/internal/hosting"
)

// unavailableRetryAfter is the Retry-After of an answer the database could not give
// now: long enough for an operator to free space, short enough for a client to see it
// work again soon.
const unavailableRetryAfter = 10

// transient turns a failure of the database that passes — the disk is full, an I/O
// error, the database stayed locked past the busy timeout, it cannot be opened or
// written now — into hosting.Unavailable (503 with Retry-After; the cause goes to the
// log). Anything else (a broken rule, a corrupt file, a bug) is left as it is: an
// internal error. What the client caused (a *hosting.Error) is left alone.
func transient(err error) error {
	var he *hosting.Error
	if err == nil || errors.As(err, &he) {
		return err
	}
	if pgTransient(err) {
		return hosting.Unavailable(err, unavailableRetryAfter)
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_NOMEM,
		sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PROTOCOL:
		return hosting.Unavailable(err, unavailableRetryAfter)
	}
	return err
}

// pgTransient reports whether a PostgreSQL failure passes: the server is out of disk
// or memory, shutting down, or not reachable; two transactions deadlocked or could not
// be serialized (the client's retry runs afresh).
func pgTransient(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), // connection exception
			strings.HasPrefix(pe.Code, "53"),       // insufficient resources: disk full, out of memory, too many connections
			strings.HasPrefix(pe.Code, "57P"),      // operator intervention: shutdown, cannot connect now
			pe.Code == "40001", pe.Code == "40P01": // serialization failure, deadlock
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || pgconn.Timeout(err) || errors.Is(err, driver.ErrBadConn) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}
