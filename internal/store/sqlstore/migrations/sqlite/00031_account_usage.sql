-- +goose Up
-- What each account holds of the resources it may hold many of (live servers, live
-- volumes and their GB, live snapshots), kept by triggers as the rows change, so
-- that a quota check (ops.checkQuota, in every order's write transaction) reads one
-- row instead of counting the account's servers: at 1,000,000 servers in one
-- account that count took about 80 ms an order, with the write lock held
-- (bench/scale.sh). The other kinds of Usage stay counted: their quotas keep them
-- small.
ALTER TABLE accounts ADD COLUMN usage_servers   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN usage_volumes   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN usage_volume_gb INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN usage_snapshots INTEGER NOT NULL DEFAULT 0;

UPDATE accounts SET
    usage_servers = (SELECT COUNT(*) FROM servers WHERE account_id = accounts.id AND deleted_at IS NULL),
    usage_volumes = (SELECT COUNT(*) FROM volumes WHERE account_id = accounts.id AND deleted_at IS NULL),
    usage_volume_gb = (SELECT COALESCE(SUM(size_gb), 0) FROM volumes WHERE account_id = accounts.id AND deleted_at IS NULL),
    usage_snapshots = (SELECT COUNT(*) FROM snapshots WHERE account_id = accounts.id AND deleted_at IS NULL);

-- +goose StatementBegin
CREATE TRIGGER servers_usage_insert AFTER INSERT ON servers WHEN NEW.deleted_at IS NULL BEGIN
    UPDATE accounts SET usage_servers = usage_servers + 1 WHERE id = NEW.account_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER servers_usage_delete AFTER DELETE ON servers WHEN OLD.deleted_at IS NULL BEGIN
    UPDATE accounts SET usage_servers = usage_servers - 1 WHERE id = OLD.account_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER servers_usage_update AFTER UPDATE OF deleted_at, account_id ON servers
WHEN (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL) OR OLD.account_id <> NEW.account_id BEGIN
    UPDATE accounts SET usage_servers = usage_servers - 1 WHERE id = OLD.account_id AND OLD.deleted_at IS NULL;
    UPDATE accounts SET usage_servers = usage_servers + 1 WHERE id = NEW.account_id AND NEW.deleted_at IS NULL;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER volumes_usage_insert AFTER INSERT ON volumes WHEN NEW.deleted_at IS NULL BEGIN
    UPDATE accounts SET usage_volumes = usage_volumes + 1, usage_volume_gb = usage_volume_gb + NEW.size_gb
    WHERE id = NEW.account_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER volumes_usage_delete AFTER DELETE ON volumes WHEN OLD.deleted_at IS NULL BEGIN
    UPDATE accounts SET usage_volumes = usage_volumes - 1, usage_volume_gb = usage_volume_gb - OLD.size_gb
    WHERE id = OLD.account_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER volumes_usage_update AFTER UPDATE OF deleted_at, account_id, size_gb ON volumes
WHEN (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL) OR OLD.account_id <> NEW.account_id OR OLD.size_gb <> NEW.size_gb BEGIN
    UPDATE accounts SET usage_volumes = usage_volumes - 1, usage_volume_gb = usage_volume_gb - OLD.size_gb
    WHERE id = OLD.account_id AND OLD.deleted_at IS NULL;
    UPDATE accounts SET usage_volumes = usage_volumes + 1, usage_volume_gb = usage_volume_gb + NEW.size_gb
    WHERE id = NEW.account_id AND NEW.deleted_at IS NULL;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER snapshots_usage_insert AFTER INSERT ON snapshots WHEN NEW.deleted_at IS NULL BEGIN
    UPDATE accounts SET usage_snapshots = usage_snapshots + 1 WHERE id = NEW.account_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER snapshots_usage_delete AFTER DELETE ON snapshots WHEN OLD.deleted_at IS NULL BEGIN
    UPDATE accounts SET usage_snapshots = usage_snapshots - 1 WHERE id = OLD.account_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER snapshots_usage_update AFTER UPDATE OF deleted_at, account_id ON snapshots
WHEN (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL) OR OLD.account_id <> NEW.account_id BEGIN
    UPDATE accounts SET usage_snapshots = usage_snapshots - 1 WHERE id = OLD.account_id AND OLD.deleted_at IS NULL;
    UPDATE accounts SET usage_snapshots = usage_snapshots + 1 WHERE id = NEW.account_id AND NEW.deleted_at IS NULL;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER snapshots_usage_update;
DROP TRIGGER snapshots_usage_delete;
DROP TRIGGER snapshots_usage_insert;
DROP TRIGGER volumes_usage_update;
DROP TRIGGER volumes_usage_delete;
DROP TRIGGER volumes_usage_insert;
DROP TRIGGER servers_usage_update;
DROP TRIGGER servers_usage_delete;
DROP TRIGGER servers_usage_insert;
ALTER TABLE accounts DROP COLUMN usage_snapshots;
ALTER TABLE accounts DROP COLUMN usage_volume_gb;
ALTER TABLE accounts DROP COLUMN usage_volumes;
ALTER TABLE accounts DROP COLUMN usage_servers;
