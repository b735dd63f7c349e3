-- +goose Up
-- The sweep looks for snapshots scheduled for deletion whose server has no operation
-- left to run the deletion (issue 26): a partial index keeps that look as small as
-- the few snapshots scheduled, however many there are.
CREATE INDEX snapshots_delete_scheduled ON snapshots(server_id) WHERE delete_scheduled = 1 AND deleted_at IS NULL;

-- +goose Down
DROP INDEX snapshots_delete_scheduled;
