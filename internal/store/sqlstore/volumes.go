package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// ---- volumes (docs/api.md, Volumes) ----

const volumeCols = `v.id, v.account_id, v.name, v.size_gb, v.location_id, v.project_id, v.server_id, v.format, v.status,
	v.created_at, v.deleted_at, o.id, o.type, o.server_id, o.started_at`

const volumeFrom = ` FROM volumes v LEFT JOIN operations o ON o.id = v.operation_id `

func scanVolume(sc func(...any) error) (hosting.Volume, error) {
	var v hosting.Volume
	var project, server, deleted, opID, opServer, opStarted sql.NullInt64
	var opType sql.NullString
	var created int64
	err := sc(&v.ID, &v.AccountID, &v.Name, &v.SizeGB, &v.LocationID, &project, &server, &v.Format, &v.Status,
		&created, &deleted, &opID, &opType, &opServer, &opStarted)
	if err != nil {
		return v, notFound(err)
	}
	v.ProjectID, v.ServerID = nullInt(project), nullInt(server)
	v.CreatedAt, v.DeletedAt = fromMS(created), fromNullMS(deleted)
	if opID.Valid {
		id := v.ID
		v.Operation = &hosting.Operation{ID: opID.Int64, AccountID: v.AccountID, ServerID: opServer.Int64, VolumeID: &id,
			Type: hosting.OpType(opType.String), Status: hosting.OpRunning, StartedAt: fromMS(opStarted.Int64)}
	}
	return v, nil
}

func (q queries) Volumes(ctx context.Context, accountID int64, f store.VolumeFilter) ([]hosting.Volume, error) {
	where, args := `v.account_id = ? AND v.deleted_at IS NULL`, []any{accountID}
	if f.ServerID != nil {
		where, args = where+` AND v.server_id = ?`, append(args, *f.ServerID)
	}
	if f.ProjectID != nil {
		where, args = where+` AND v.project_id = ?`, append(args, *f.ProjectID)
	}
	rows, err := q.q.QueryContext(ctx, `SELECT `+volumeCols+volumeFrom+`WHERE `+where+` ORDER BY v.id`, args...)
	return orEmpty(collect(rows, err, scanVolume))
}

func (q queries) Volume(ctx context.Context, accountID int64, ref hosting.VolumeRef) (hosting.Volume, error) {
	if ref.Name != "" {
		return scanVolume(q.q.QueryRowContext(ctx, `SELECT `+volumeCols+volumeFrom+
			`WHERE v.account_id = ? AND v.name = ? AND v.deleted_at IS NULL`, accountID, ref.Name).Scan)
	}
	return scanVolume(q.q.QueryRowContext(ctx, `SELECT `+volumeCols+volumeFrom+
		`WHERE v.account_id = ? AND v.id = ? AND v.deleted_at IS NULL`, accountID, ref.ID).Scan)
}

func (q queries) VolumeAny(ctx context.Context, id int64) (hosting.Volume, error) {
	return scanVolume(q.q.QueryRowContext(ctx, `SELECT `+volumeCols+volumeFrom+`WHERE v.id = ?`, id).Scan)
}

func (q queries) ServerVolumes(ctx context.Context, serverID int64) ([]hosting.Volume, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+volumeCols+volumeFrom+`WHERE v.server_id = ? AND v.deleted_at IS NULL ORDER BY v.id`, serverID)
	return orEmpty(collect(rows, err, scanVolume))
}

func (q queries) CreateVolume(ctx context.Context, v hosting.Volume) (int64, error) {
	return q.insert(ctx, `INSERT INTO volumes (account_id, name, size_gb, location_id, project_id, server_id, format, status, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, v.AccountID, v.Name, v.SizeGB, v.LocationID, v.ProjectID, v.ServerID, v.Format,
		string(v.Status), ms(v.CreatedAt))
}

func (q queries) UpdateVolume(ctx context.Context, v hosting.Volume) error {
	err := q.execOne(ctx, `UPDATE volumes SET name = ?, project_id = ? WHERE id = ? AND deleted_at IS NULL`, v.Name, v.ProjectID, v.ID)
	return err
}

func (q queries) SetVolumeStatus(ctx context.Context, id int64, status hosting.VolumeStatus) error {
	return q.execOne(ctx, `UPDATE volumes SET status = ? WHERE id = ?`, string(status), id)
}

func (q queries) SetVolumeServer(ctx context.Context, id int64, serverID *int64) error {
	return q.execOne(ctx, `UPDATE volumes SET server_id = ? WHERE id = ?`, serverID, id)
}

func (q queries) SetVolumeSize(ctx context.Context, id int64, sizeGB int) error {
	return q.execOne(ctx, `UPDATE volumes SET size_gb = ? WHERE id = ?`, sizeGB, id)
}

func (q queries) HoldVolumes(ctx context.Context, ids []int64, op int64) error {
	for _, id := range ids {
		if err := q.markBusy(ctx, "volumes", id, op); err != nil {
			return err
		}
	}
	return nil
}

func (q queries) HeldVolumes(ctx context.Context, op int64) ([]hosting.Volume, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+volumeCols+volumeFrom+`WHERE v.operation_id = ? AND v.deleted_at IS NULL ORDER BY v.id`, op)
	return orEmpty(collect(rows, err, scanVolume))
}

func (q queries) HoldServerVolumes(ctx context.Context, serverID, op int64) error {
	_, err := q.q.ExecContext(ctx, `UPDATE volumes SET operation_id = ? WHERE server_id = ? AND deleted_at IS NULL`, op, serverID)
	return err
}

func (q queries) DeleteVolume(ctx context.Context, id int64, at time.Time) error {
	return q.execOne(ctx, `UPDATE volumes SET deleted_at = ?, project_id = NULL WHERE id = ? AND deleted_at IS NULL`, ms(at), id)
}
