package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// ResetAccount implements store.Writer: a sandbox reset, in the order the schema's
// references ask (PostgreSQL checks them): what points at a row goes, or lets go of
// it, before the row.
func (q queries) ResetAccount(ctx context.Context, accountID int64, at time.Time) (store.AccountReset, error) {
	var out store.AccountReset
	if _, err := q.LockAccount(ctx, accountID); err != nil {
		return out, err
	}
	// The machines that may still exist: of the live servers, and of the deleted ones
	// whose deletion ran since the last reset (a reset removes the operations, so a
	// server deleted before it has none; its machine went with that reset or with its
	// deletion).
	var err error
	if out.Machines, err = column[string](ctx, q.q, `SELECT s.name FROM servers s WHERE s.account_id = ?
		AND (s.deleted_at IS NULL OR EXISTS (SELECT 1 FROM operations o WHERE o.server_id = s.id)) ORDER BY s.id`, accountID); err != nil {
		return out, err
	}
	ids, err := column[int64](ctx, q.q, `SELECT id FROM volumes WHERE account_id = ? ORDER BY id`, accountID)
	if err != nil {
		return out, err
	}
	for _, id := range ids {
		v := hosting.Volume{ID: id}
		out.Volumes = append(out.Volumes, v.DriverName())
	}
	var opening int64
	err = q.q.QueryRowContext(ctx, `SELECT amount FROM transactions WHERE account_id = ? AND type = ? ORDER BY id LIMIT 1`,
		accountID, string(hosting.TxTopup)).Scan(&opening)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return out, err
	}
	out.OpeningCredit = hosting.Money(opening)

	id := []any{accountID}
	return out, q.execAll(ctx, []statement{
		// The jobs of its operations, snapshot deletions, webhook deliveries and mails
		// (of what happened before the reset) that wait to run. A
		// running one finds its operation or snapshot gone and is cancelled by its
		// worker; a finished one is left to the job queue, which may still be
		// recording its end (River's completer fails on a job row that is gone).
		{`DELETE FROM river_job WHERE state IN ('available', 'pending', 'retryable', 'scheduled') AND (
			(kind = 'berth.operation' AND ` + q.jsonInt("args", "operation_id") + ` IN (SELECT id FROM operations WHERE account_id = ?))
			OR (kind = 'berth.snapshot_delete' AND ` + q.jsonInt("args", "snapshot_id") + ` IN (SELECT id FROM snapshots WHERE account_id = ?))
			OR (kind = 'berth.volume_delete' AND ` + q.jsonInt("args", "volume_id") + ` IN (SELECT id FROM volumes WHERE account_id = ?))
			OR (kind = 'berth.webhook_delivery' AND ` + q.jsonInt("args", "delivery_id") + ` IN (SELECT id FROM webhook_deliveries WHERE account_id = ?))
			OR (kind = 'berth.mail' AND ` + q.jsonInt("args", "account_id") + ` = ?))`,
			[]any{accountID, accountID, accountID, accountID, accountID}},
		// Deleted at once, without an operation; their projects are about to go.
		{`UPDATE servers SET deleted_at = ? WHERE account_id = ? AND deleted_at IS NULL`, []any{ms(at), accountID}},
		{`UPDATE servers SET operation_id = NULL WHERE account_id = ? AND operation_id IS NOT NULL`, id},
		{`UPDATE servers SET project_id = NULL WHERE account_id = ? AND project_id IS NOT NULL`, id},
		{`DELETE FROM server_keys WHERE server_id IN (SELECT id FROM servers WHERE account_id = ?)`, id},
		{`DELETE FROM server_ptrs WHERE server_id IN (SELECT id FROM servers WHERE account_id = ?)`, id},
		{`DELETE FROM metric_samples WHERE server_id IN (SELECT id FROM servers WHERE account_id = ?)`, id},
		{`UPDATE license_keys SET server_license_id = NULL WHERE server_license_id IN (SELECT id FROM server_licenses WHERE account_id = ?)`, id},
		{`DELETE FROM license_usage WHERE server_license_id IN (SELECT id FROM server_licenses WHERE account_id = ?)`, id},
		{`DELETE FROM server_licenses WHERE account_id = ?`, id},
		{`DELETE FROM snapshots WHERE account_id = ?`, id},
		{`DELETE FROM volumes WHERE account_id = ?`, id},
		{keepSerialsQuery + `account_id = ?` + keepSerialsConflict, id},
		{`DELETE FROM zone_rrsets WHERE zone_id IN (SELECT id FROM zones WHERE account_id = ?)`, id},
		{`DELETE FROM zones WHERE account_id = ?`, id},
		{`DELETE FROM operations WHERE account_id = ?`, id},
		{`DELETE FROM meters WHERE account_id = ?`, id},
		{`DELETE FROM transactions WHERE account_id = ?`, id},
		{`DELETE FROM account_spend WHERE account_id = ?`, id},
		{`DELETE FROM idempotency_keys WHERE account_id = ?`, id},
		{`DELETE FROM ssh_keys WHERE account_id = ?`, id},
		{`DELETE FROM projects WHERE account_id = ?`, id},
		{`DELETE FROM recipes WHERE account_id = ?`, id},
		{`DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE account_id = ?)`, id},
		{`DELETE FROM webhook_deliveries WHERE account_id = ?`, id},
		{`DELETE FROM webhooks WHERE account_id = ?`, id},
		// Its tickets with their messages and every file attached to them (staff's
		// too), and the files it uploaded that no message names.
		{`DELETE FROM attachments WHERE (account_id = ? AND message_id IS NULL) OR message_id IN (SELECT m.id FROM ticket_messages m
			JOIN tickets t ON t.id = m.ticket_id WHERE t.account_id = ?)`, []any{accountID, accountID}},
		{`DELETE FROM ticket_messages WHERE ticket_id IN (SELECT id FROM tickets WHERE account_id = ?)`, id},
		{`DELETE FROM tickets WHERE account_id = ?`, id},
		{`DELETE FROM events WHERE account_id = ?`, id},
		{`UPDATE accounts SET credit = 0, burn = 0, ledger_lines = 0, next_due = NULL, charged_to = 0 WHERE id = ?`, id},
	})
}
