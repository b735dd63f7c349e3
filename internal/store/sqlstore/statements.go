package sqlstore

import (
	"context"
	"database/sql"
)

// statement is a write and its arguments, one of a list a use of the store runs in
// order (execAll).
type statement struct {
	query string
	args  []any
}

// execAll runs statements in order, stopping at the first that fails (a unique
// rule's refusal is store.ErrConflict).
func (q queries) execAll(ctx context.Context, statements []statement) error {
	for _, s := range statements {
		if _, err := q.q.ExecContext(ctx, s.query, s.args...); err != nil {
			return conflict(err)
		}
	}
	return nil
}

// collect reads every row of a query's answer with scan and closes rows. It takes
// the two results of QueryContext as they come, so that a list reads
//
//	rows, err := q.q.QueryContext(ctx, query, args...)
//	return collect(rows, err, scanServer)
//
// An err returns at once (rows is nil then). A scan's error or rows.Err() returns
// nil and that error, rows closed. No row is a nil slice: orEmpty makes it an empty
// one where a list has always been answered so.
func collect[T any](rows *sql.Rows, err error, scan func(sc func(...any) error) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// orEmpty answers a list that found nothing with an empty slice instead of nil.
func orEmpty[T any](out []T, err error) ([]T, error) {
	if out == nil && err == nil {
		out = []T{}
	}
	return out, err
}

// scanOne reads a row of one column: collect(rows, err, scanOne[int64]).
func scanOne[T any](sc func(...any) error) (T, error) {
	var v T
	err := sc(&v)
	return v, err
}

// column reads the one column of every row a query answers (nil for none).
func column[T any](ctx context.Context, q querier, query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	return collect(rows, err, scanOne[T])
}
