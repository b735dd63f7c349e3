package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

const serverCols = `s.id, s.account_id, s.name, s.display_name, s.project_id, s.status, s.suspended, s.location_id, s.plan_id,
	s.image_id, s.app_id, s.recipe_id, s.vcpus, s.memory_mb, s.disk_gb, s.ipv4, s.ipv6, s.root_pass_hash, s.ssh_key_ids,
	s.created_at, s.deleted_at, o.id, o.type, o.action, o.started_at`

const serverFrom = ` FROM servers s LEFT JOIN operations o ON o.id = s.operation_id `

func scanServer(sc func(...any) error) (hosting.Server, error) {
	var s hosting.Server
	var project, app, recipe, deleted, opID, opStarted sql.NullInt64
	var ipv4, ipv6, opType, opAction sql.NullString
	var keyIDs string
	var created int64
	var suspended int
	err := sc(&s.ID, &s.AccountID, &s.Name, &s.DisplayName, &project, &s.Status, &suspended, &s.LocationID, &s.PlanID,
		&s.ImageID, &app, &recipe, &s.VCPUs, &s.MemoryMB, &s.DiskGB, &ipv4, &ipv6, &s.RootPassHash, &keyIDs,
		&created, &deleted, &opID, &opType, &opAction, &opStarted)
	if err != nil {
		return s, notFound(err)
	}
	s.ProjectID, s.AppID, s.RecipeID = nullInt(project), nullInt(app), nullInt(recipe)
	s.SuspendedByOperator, s.SuspendedForCredit = suspended&suspendedByOperator != 0, suspended&suspendedForCredit != 0
	s.Suspended = suspended != 0
	s.IPv4, s.IPv6 = nullStr(ipv4), nullStr(ipv6)
	s.CreatedAt, s.DeletedAt = fromMS(created), fromNullMS(deleted)
	s.SSHKeyIDs = parseIDs(keyIDs)
	if opID.Valid {
		s.Operation = &hosting.Operation{ID: opID.Int64, AccountID: s.AccountID, ServerID: s.ID, Type: hosting.OpType(opType.String),
			Action: hosting.PowerAction(opAction.String), Status: hosting.OpRunning, StartedAt: fromMS(opStarted.Int64)}
	}
	return s, nil
}

func parseIDs(s string) []int64 {
	ids := []int64{}
	for _, p := range strings.Split(s, ",") {
		if id, err := strconv.ParseInt(p, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}

func (q queries) Servers(ctx context.Context, accountID int64, f store.ServerFilter) ([]hosting.Server, error) {
	query := `SELECT ` + serverCols + serverFrom + `WHERE s.account_id = ? AND s.deleted_at IS NULL`
	args := []any{accountID}
	if f.ProjectID != nil {
		query += ` AND s.project_id = ?`
		args = append(args, *f.ProjectID)
	}
	if f.Status != nil {
		if *f.Status == hosting.StatusSuspended {
			query += ` AND s.suspended <> 0`
		} else {
			query += ` AND s.suspended = 0 AND s.status = ?`
			args = append(args, string(*f.Status))
		}
	}
	rows, err := q.q.QueryContext(ctx, query+` ORDER BY s.id`, args...)
	return orEmpty(collect(rows, err, scanServer))
}

var (
	serverByIDQuery   = `SELECT ` + serverCols + serverFrom + `WHERE s.deleted_at IS NULL AND s.account_id = ? AND s.id = ?`
	serverByNameQuery = `SELECT ` + serverCols + serverFrom + `WHERE s.deleted_at IS NULL AND s.account_id = ? AND s.name = ?`
)

// serverQuery is the text and arguments of a Server lookup.
func serverQuery(accountID int64, ref hosting.ServerRef) (string, []any) {
	if ref.Name != "" {
		return serverByNameQuery, []any{accountID, ref.Name}
	}
	return serverByIDQuery, []any{accountID, ref.ID}
}

func (q queries) Server(ctx context.Context, accountID int64, ref hosting.ServerRef) (hosting.Server, error) {
	query, args := serverQuery(accountID, ref)
	return scanServer(q.q.QueryRowContext(ctx, query, args...).Scan)
}

func (q queries) ServerAny(ctx context.Context, id int64) (hosting.Server, error) {
	return scanServer(q.q.QueryRowContext(ctx, `SELECT `+serverCols+serverFrom+`WHERE s.id = ?`, id).Scan)
}

func (q queries) CountServers(ctx context.Context, accountID int64) (int, error) {
	var n int
	err := q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM servers WHERE account_id = ? AND deleted_at IS NULL`, accountID).Scan(&n)
	return n, err
}

func (q queries) ServerKeys(ctx context.Context, serverID int64) ([]hosting.SSHKey, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT ssh_key_id, name, public_key, fingerprint FROM server_keys WHERE server_id = ? ORDER BY position`, serverID)
	return collect(rows, err, func(sc func(...any) error) (k hosting.SSHKey, err error) {
		err = sc(&k.ID, &k.Name, &k.PublicKey, &k.Fingerprint)
		return k, err
	})
}

func (q queries) CreateServer(ctx context.Context, s hosting.Server) (int64, error) {
	ids := make([]int64, len(s.Keys))
	for i, k := range s.Keys {
		ids[i] = k.ID
	}
	id, err := q.insert(ctx, `INSERT INTO servers (account_id, name, display_name, project_id, status, suspended, location_id, plan_id, image_id,
		app_id, recipe_id, vcpus, memory_mb, disk_gb, root_pass_hash, ssh_key_ids, created_at)
		VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.AccountID, s.Name, s.DisplayName, s.ProjectID, string(s.Status), s.LocationID, s.PlanID, s.ImageID,
		s.AppID, s.RecipeID, s.VCPUs, s.MemoryMB, s.DiskGB, s.RootPassHash, joinIDs(ids), ms(s.CreatedAt))
	if err != nil {
		return 0, err
	}
	for i, k := range s.Keys {
		if _, err := q.q.ExecContext(ctx, `INSERT INTO server_keys (server_id, position, ssh_key_id, name, public_key, fingerprint) VALUES (?, ?, ?, ?, ?, ?)`,
			id, i, k.ID, k.Name, k.PublicKey, k.Fingerprint); err != nil {
			return 0, err
		}
	}
	return id, nil
}

func (q queries) UpdateServer(ctx context.Context, s hosting.Server) error {
	return q.execOne(ctx, `UPDATE servers SET display_name = ?, project_id = ? WHERE id = ? AND deleted_at IS NULL`, s.DisplayName, s.ProjectID, s.ID)
}

func (q queries) SetServerStatus(ctx context.Context, id int64, status hosting.Status) error {
	return q.execOne(ctx, `UPDATE servers SET status = ? WHERE id = ?`, string(status), id)
}

func (q queries) SetServerAddresses(ctx context.Context, id int64, ipv4, ipv6 string) error {
	v4, v6 := serverNets(ipv4, ipv6)
	if err := q.execOne(ctx, `UPDATE servers SET ipv4 = ?, ipv6 = ?, ipv4_net = ?, ipv6_net = ? WHERE id = ?`,
		ipv4, ipv6, v4, v6, id); err != nil {
		return err
	}
	return q.dropLostPTRs(ctx, id, ipv4, ipv6)
}

// servers.suspended is a set of reasons, one bit each.
const (
	suspendedByOperator = 1
	suspendedForCredit  = 2
)

// SetServerSuspended sets or lifts an operator's suspension; one for credit stays.
func (q queries) SetServerSuspended(ctx context.Context, id int64, suspended bool) error {
	return q.execOne(ctx, `UPDATE servers SET suspended = (suspended & 2) + ? WHERE id = ? AND deleted_at IS NULL`, b2i(suspended)*suspendedByOperator, id)
}

func (q queries) DeleteServer(ctx context.Context, id int64, at time.Time) error {
	if err := q.execOne(ctx, `UPDATE servers SET deleted_at = ?, project_id = NULL WHERE id = ? AND deleted_at IS NULL`, ms(at), id); err != nil {
		return err
	}
	_, err := q.q.ExecContext(ctx, `DELETE FROM server_ptrs WHERE server_id = ?`, id)
	return err
}

// ---- operations ----

func (q queries) StartOperation(ctx context.Context, op hosting.Operation) (int64, error) {
	var server any // NULL for a volume's operation that concerns no server
	if op.ServerID != 0 {
		server = op.ServerID
	}
	id, err := q.insert(ctx, `INSERT INTO operations (account_id, server_id, type, action, snapshot_id, image_id, plan_id, upgrade_disk,
		after_status, volume_id, size_gb, automount, status, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		op.AccountID, server, string(op.Type), string(op.Action), op.SnapshotID, op.ImageID, op.PlanID, b2i(op.UpgradeDisk), string(op.AfterStatus),
		op.VolumeID, op.SizeGB, b2i(op.Automount), string(hosting.OpRunning), ms(op.StartedAt))
	if err != nil {
		return 0, err
	}
	if op.ServerID != 0 {
		if err := q.markBusy(ctx, "servers", op.ServerID, id); err != nil {
			return 0, err
		}
	}
	if op.VolumeID != nil {
		if err := q.markBusy(ctx, "volumes", *op.VolumeID, id); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// markBusy makes the row id of table (servers or volumes) busy with operation op;
// ErrConflict when it is busy already.
func (q queries) markBusy(ctx context.Context, table string, id, op int64) error {
	res, err := q.q.ExecContext(ctx, `UPDATE `+table+` SET operation_id = ? WHERE id = ? AND operation_id IS NULL`, op, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return store.ErrConflict
	}
	return nil
}

func (q queries) FinishOperation(ctx context.Context, id int64, status hosting.OpStatus, errText string, at time.Time) error {
	if err := q.execOne(ctx, `UPDATE operations SET status = ?, error = ?, finished_at = ? WHERE id = ? AND status = 'running'`,
		string(status), errText, ms(at), id); err != nil {
		return err
	}
	if _, err := q.q.ExecContext(ctx, `UPDATE servers SET operation_id = NULL WHERE operation_id = ?`, id); err != nil {
		return err
	}
	if _, err := q.q.ExecContext(ctx, `UPDATE volumes SET operation_id = NULL WHERE operation_id = ?`, id); err != nil {
		return err
	}
	if q.d == dialectPostgres {
		// Delivered to every process listening once the transaction commits, and
		// never if it does not: a ?wait on another process ends at once.
		_, err := q.q.ExecContext(ctx, `SELECT pg_notify('`+OperationEndedChannel+`', ?)`, strconv.FormatInt(id, 10))
		return err
	}
	return nil
}

// OperationEndedChannel is the PostgreSQL channel on which the id of every operation
// that ended is notified.
const OperationEndedChannel = "berth_operation_ended"

const opCols = `id, account_id, server_id, type, action, snapshot_id, image_id, plan_id, upgrade_disk, after_status, volume_id, size_gb,
	automount, status, error, started_at, finished_at`

func scanOp(sc func(...any) error) (hosting.Operation, error) {
	var o hosting.Operation
	var started int64
	var finished, server, snapshot, image, plan, volume sql.NullInt64
	if err := sc(&o.ID, &o.AccountID, &server, &o.Type, &o.Action, &snapshot, &image, &plan, &o.UpgradeDisk, &o.AfterStatus,
		&volume, &o.SizeGB, &o.Automount, &o.Status, &o.Error, &started, &finished); err != nil {
		return o, notFound(err)
	}
	o.ServerID = server.Int64 // 0: none
	o.StartedAt, o.FinishedAt = fromMS(started), fromNullMS(finished)
	o.SnapshotID, o.ImageID, o.PlanID, o.VolumeID = nullInt(snapshot), nullInt(image), nullInt(plan), nullInt(volume)
	return o, nil
}

func (q queries) Operation(ctx context.Context, accountID, id int64) (hosting.Operation, error) {
	return scanOp(q.q.QueryRowContext(ctx, `SELECT `+opCols+` FROM operations WHERE id = ? AND account_id = ?`, id, accountID).Scan)
}

func (q queries) OperationAny(ctx context.Context, id int64) (hosting.Operation, error) {
	return scanOp(q.q.QueryRowContext(ctx, `SELECT `+opCols+` FROM operations WHERE id = ?`, id).Scan)
}

// OrphanedOperations implements store.Reader. It reads River's job table: an
// operation's job carries {"operation_id": N} (ops.OperationArgs).
func (q queries) OrphanedOperations(ctx context.Context) ([]int64, error) {
	return column[int64](ctx, q.q, `SELECT o.id FROM operations o WHERE o.status = 'running' AND NOT EXISTS (
		SELECT 1 FROM river_job j WHERE j.kind = 'berth.operation'
			AND j.state IN ('available', 'pending', 'retryable', 'running', 'scheduled')
			AND `+q.jsonInt("j.args", "operation_id")+` = o.id) ORDER BY o.id`)
}

func (q queries) RunningOperations(ctx context.Context) ([]hosting.Operation, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+opCols+` FROM operations WHERE status = 'running' ORDER BY id`)
	return collect(rows, err, scanOp)
}

// PowerTarget is a server whose status follows its machine's power: running or
// stopped, with no operation under way.
type PowerTarget struct {
	ServerID int64
	Name     string
	Status   hosting.Status
}

// PowerTargets lists the servers whose status follows their machines' power
// (PowerTarget), for the reconcile loop of a driver whose machines run on hosts.
func (db *DB) PowerTargets(ctx context.Context) ([]PowerTarget, error) {
	rows, err := db.read.QueryContext(ctx, db.Rebind(`SELECT id, name, status FROM servers
		WHERE deleted_at IS NULL AND operation_id IS NULL AND status IN (?, ?) ORDER BY id`), string(hosting.StatusRunning), string(hosting.StatusStopped))
	return collect(rows, err, func(sc func(...any) error) (t PowerTarget, err error) {
		err = sc(&t.ServerID, &t.Name, &t.Status)
		return t, err
	})
}
