package sqlstore

import (
	"context"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// Operations implements store.Reader: a page of an account's operations, newest first
// (ids grow in creation order), and how many match in all. A server's filter reads
// the index operations_server, a volume's operations_volume (its volume_id = ? implies
// the partial index's volume_id IS NOT NULL, on SQLite and PostgreSQL alike).
func (q queries) Operations(ctx context.Context, accountID int64, f store.OperationFilter, limit, offset int) ([]hosting.Operation, int, error) {
	where, args := `account_id = ?`, []any{accountID}
	if f.ServerID != nil {
		where += ` AND server_id = ?`
		args = append(args, *f.ServerID)
	}
	if f.VolumeID != nil {
		where += ` AND volume_id = ?`
		args = append(args, *f.VolumeID)
	}
	if f.Status != nil {
		where += ` AND status = ?`
		args = append(args, string(*f.Status))
	}
	var total int
	if err := q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM operations WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	if limit <= 0 {
		limit = 1 << 62 // all: PostgreSQL takes no negative LIMIT
	}
	rows, err := q.q.QueryContext(ctx, `SELECT `+opCols+` FROM operations WHERE `+where+` ORDER BY id DESC LIMIT ? OFFSET ?`,
		append(args, limit, offset)...)
	out, err := orEmpty(collect(rows, err, scanOp))
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}
