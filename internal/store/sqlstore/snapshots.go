package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/hosting"
)

const snapshotCols = `id, account_id, server_id, name, include_memory, size_gb, status, delete_scheduled, created_at, deleted_at`

func scanSnapshot(sc func(...any) error) (hosting.Snapshot, error) {
	var s hosting.Snapshot
	var created int64
	var deleted sql.NullInt64
	if err := sc(&s.ID, &s.AccountID, &s.ServerID, &s.Name, &s.IncludeMemory, &s.SizeGB, &s.Status, &s.DeleteScheduled, &created, &deleted); err != nil {
		return s, notFound(err)
	}
	s.CreatedAt, s.DeletedAt = fromMS(created), fromNullMS(deleted)
	return s, nil
}

func (q queries) snapshots(ctx context.Context, query string, args ...any) ([]hosting.Snapshot, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	return orEmpty(collect(rows, err, scanSnapshot))
}

func (q queries) Snapshots(ctx context.Context, serverID int64) ([]hosting.Snapshot, error) {
	return q.snapshots(ctx, `SELECT `+snapshotCols+` FROM snapshots WHERE server_id = ? AND deleted_at IS NULL ORDER BY id DESC`, serverID)
}

func (q queries) Snapshot(ctx context.Context, serverID, id int64) (hosting.Snapshot, error) {
	return scanSnapshot(q.q.QueryRowContext(ctx, `SELECT `+snapshotCols+` FROM snapshots WHERE id = ? AND server_id = ? AND deleted_at IS NULL`, id, serverID).Scan)
}

func (q queries) SnapshotAny(ctx context.Context, id int64) (hosting.Snapshot, error) {
	return scanSnapshot(q.q.QueryRowContext(ctx, `SELECT `+snapshotCols+` FROM snapshots WHERE id = ?`, id).Scan)
}

func (q queries) CreateSnapshot(ctx context.Context, s hosting.Snapshot) (int64, error) {
	return q.insert(ctx, `INSERT INTO snapshots (account_id, server_id, name, name_key, include_memory, size_gb, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		s.AccountID, s.ServerID, s.Name, strings.ToLower(s.Name), b2i(s.IncludeMemory), s.SizeGB, string(s.Status), ms(s.CreatedAt))
}

func (q queries) SnapshotReady(ctx context.Context, id int64, sizeGB int) error {
	// A snapshot scheduled for deletion while it was made stays "deleting".
	return q.execOne(ctx, `UPDATE snapshots SET size_gb = ?, status = CASE WHEN delete_scheduled = 1 THEN 'deleting' ELSE 'available' END WHERE id = ? AND deleted_at IS NULL`, sizeGB, id)
}

func (q queries) ScheduleSnapshotDeletion(ctx context.Context, id int64) error {
	return q.execOne(ctx, `UPDATE snapshots SET delete_scheduled = 1, status = 'deleting' WHERE id = ? AND deleted_at IS NULL`, id)
}

func (q queries) ScheduledSnapshotDeletions(ctx context.Context, serverID int64) ([]hosting.Snapshot, error) {
	return q.snapshots(ctx, `SELECT `+snapshotCols+` FROM snapshots WHERE server_id = ? AND deleted_at IS NULL AND delete_scheduled = 1 ORDER BY id`, serverID)
}

// StrandedSnapshotDeletions implements store.Reader.
func (q queries) StrandedSnapshotDeletions(ctx context.Context, limit int) ([]int64, error) {
	return column[int64](ctx, q.q, `SELECT DISTINCT sn.server_id FROM snapshots sn JOIN servers s ON s.id = sn.server_id
		WHERE sn.delete_scheduled = 1 AND sn.deleted_at IS NULL AND s.operation_id IS NULL ORDER BY sn.server_id LIMIT ?`, limit)
}

func (q queries) DeleteSnapshot(ctx context.Context, id int64, at time.Time) error {
	return q.execOne(ctx, `UPDATE snapshots SET deleted_at = ?, status = 'deleting' WHERE id = ? AND deleted_at IS NULL`, ms(at), id)
}

func (q queries) SetServerImage(ctx context.Context, id, imageID int64) error {
	return q.execOne(ctx, `UPDATE servers SET image_id = ? WHERE id = ?`, imageID, id)
}

func (q queries) SetServerPlan(ctx context.Context, id, planID int64, vcpus, memoryMB, diskGB int) error {
	return q.execOne(ctx, `UPDATE servers SET plan_id = ?, vcpus = ?, memory_mb = ?, disk_gb = ? WHERE id = ?`, planID, vcpus, memoryMB, diskGB, id)
}
