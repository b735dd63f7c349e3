package sqlstore

import "context"

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

// column reads the one column of every row a query answers.
func column[T any](ctx context.Context, q querier, query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
