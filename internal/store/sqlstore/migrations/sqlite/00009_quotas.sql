-- +goose Up
-- Per-account quotas beside the server quota (hosting.DefaultQuotas): what an account
-- may hold bounds every list the API does not paginate.
ALTER TABLE accounts ADD COLUMN quota_ssh_keys  INTEGER NOT NULL DEFAULT 100;
ALTER TABLE accounts ADD COLUMN quota_projects  INTEGER NOT NULL DEFAULT 100;
ALTER TABLE accounts ADD COLUMN quota_recipes   INTEGER NOT NULL DEFAULT 50;
ALTER TABLE accounts ADD COLUMN quota_snapshots INTEGER NOT NULL DEFAULT 100;
ALTER TABLE accounts ADD COLUMN quota_tokens    INTEGER NOT NULL DEFAULT 50;
CREATE INDEX snapshots_account ON snapshots(account_id) WHERE deleted_at IS NULL;

-- +goose Down
DROP INDEX snapshots_account;
ALTER TABLE accounts DROP COLUMN quota_tokens;
ALTER TABLE accounts DROP COLUMN quota_snapshots;
ALTER TABLE accounts DROP COLUMN quota_recipes;
ALTER TABLE accounts DROP COLUMN quota_projects;
ALTER TABLE accounts DROP COLUMN quota_ssh_keys;
