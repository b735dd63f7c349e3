package sqlstore

import (
	"errors"

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
