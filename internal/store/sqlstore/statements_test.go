package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// collect reads every row, or none, and whatever goes wrong it returns the error,
// no rows, and the connection back to the pool.
func TestCollect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// One connection: the in-memory database is the connection's own, and a query
	// whose rows were left open would keep it from the next.
	db.SetMaxOpenConns(1)

	errStop := errors.New("stop at 2")
	stopAt2 := func(sc func(...any) error) (int64, error) {
		v, err := scanOne[int64](sc)
		if err == nil && v == 2 {
			err = errStop
		}
		return v, err
	}
	tests := []struct {
		name  string
		query string
		scan  func(sc func(...any) error) (int64, error)
		want  []int64 // nil: a nil slice
		err   string  // the error's text holds it; "" for none
		is    error   // and errors.Is it, when set
	}{
		{"rows", `WITH t(x) AS (VALUES (3), (1), (2)) SELECT x FROM t ORDER BY x`, scanOne[int64], []int64{1, 2, 3}, "", nil},
		{"no rows", `SELECT 1 WHERE 1 = 0`, scanOne[int64], nil, "", nil},
		{"the query fails", `SELECT x FROM no_such_table`, scanOne[int64], nil, "no such table", nil},
		{"the scan's own error", `WITH t(x) AS (VALUES (1), (2), (3)) SELECT x FROM t ORDER BY x`, stopAt2, nil, "stop at 2", errStop},
		{"a value the scan cannot convert", `WITH t(x) AS (VALUES (1), ('one')) SELECT x FROM t`, scanOne[int64], nil, "converting", nil},
		// abs of the smallest int64 fails as SQLite steps to the second row: the
		// error reaches Go through rows.Err, after a row was read.
		{"rows.Err after a row", `WITH t(x) AS (VALUES (1), (-9223372036854775808)) SELECT abs(x) FROM t`, scanOne[int64], nil, "integer overflow", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A connection an earlier case left in use fails this one, not hangs it.
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			rows, err := db.QueryContext(ctx, tt.query)
			got, err := collect(rows, err, tt.scan)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("err %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("err %v, want one saying %q", err, tt.err)
			case tt.is != nil && !errors.Is(err, tt.is):
				t.Fatalf("err %v is not %v", err, tt.is)
			}
			if (got == nil) != (tt.want == nil) || !slices.Equal(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
			if n := db.Stats().InUse; n != 0 {
				t.Fatalf("%d connections still in use: rows left open", n)
			}
		})
	}
}

// orEmpty turns only a nil answer without error into an empty list.
func TestOrEmpty(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	tests := []struct {
		name    string
		in      []int64
		err     error
		wantNil bool
		wantLen int
	}{
		{"nil", nil, nil, false, 0},
		{"rows", []int64{7}, nil, false, 1},
		{"an error", nil, boom, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := orEmpty(tt.in, tt.err)
			if err != tt.err || (got == nil) != tt.wantNil || len(got) != tt.wantLen {
				t.Fatalf("orEmpty(%#v, %v) = %#v, %v", tt.in, tt.err, got, err)
			}
		})
	}
}
