-- +goose Up
-- What each account holds of the resources it may hold many of (live servers, live
-- volumes and their GB, live snapshots), kept by triggers as the rows change, so
-- that a quota check (ops.checkQuota, in every order's write transaction) reads one
-- row instead of counting the account's servers: at 1,000,000 servers in one
-- account that count took tens of ms an order (bench/scale.sh). The other kinds of
-- Usage stay counted: their quotas keep them small. Inserts and deletes are counted
-- once a statement (a seed's million rows are one UPDATE an account); an update
-- only when it changes what is counted.
ALTER TABLE accounts ADD COLUMN usage_servers   BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN usage_volumes   BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN usage_volume_gb BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN usage_snapshots BIGINT NOT NULL DEFAULT 0;

-- berth_usage_rows: the rows a statement inserted (or, negated, deleted), by account:
-- live ones and their GB (volumes; 0 for the others).
-- +goose StatementBegin
CREATE FUNCTION berth_usage_statement() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    sign BIGINT := CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END;
BEGIN
    IF TG_TABLE_NAME = 'servers' THEN
        IF TG_OP = 'INSERT' THEN
            UPDATE accounts a SET usage_servers = a.usage_servers + sign * d.n
            FROM (SELECT account_id, COUNT(*) AS n FROM usage_new WHERE deleted_at IS NULL GROUP BY account_id) d
            WHERE a.id = d.account_id;
        ELSE
            UPDATE accounts a SET usage_servers = a.usage_servers + sign * d.n
            FROM (SELECT account_id, COUNT(*) AS n FROM usage_old WHERE deleted_at IS NULL GROUP BY account_id) d
            WHERE a.id = d.account_id;
        END IF;
    ELSIF TG_TABLE_NAME = 'volumes' THEN
        IF TG_OP = 'INSERT' THEN
            UPDATE accounts a SET usage_volumes = a.usage_volumes + sign * d.n, usage_volume_gb = a.usage_volume_gb + sign * d.gb
            FROM (SELECT account_id, COUNT(*) AS n, SUM(size_gb) AS gb FROM usage_new WHERE deleted_at IS NULL GROUP BY account_id) d
            WHERE a.id = d.account_id;
        ELSE
            UPDATE accounts a SET usage_volumes = a.usage_volumes + sign * d.n, usage_volume_gb = a.usage_volume_gb + sign * d.gb
            FROM (SELECT account_id, COUNT(*) AS n, SUM(size_gb) AS gb FROM usage_old WHERE deleted_at IS NULL GROUP BY account_id) d
            WHERE a.id = d.account_id;
        END IF;
    ELSE
        IF TG_OP = 'INSERT' THEN
            UPDATE accounts a SET usage_snapshots = a.usage_snapshots + sign * d.n
            FROM (SELECT account_id, COUNT(*) AS n FROM usage_new WHERE deleted_at IS NULL GROUP BY account_id) d
            WHERE a.id = d.account_id;
        ELSE
            UPDATE accounts a SET usage_snapshots = a.usage_snapshots + sign * d.n
            FROM (SELECT account_id, COUNT(*) AS n FROM usage_old WHERE deleted_at IS NULL GROUP BY account_id) d
            WHERE a.id = d.account_id;
        END IF;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- berth_usage_row: one updated row that changed what is counted.
-- +goose StatementBegin
CREATE FUNCTION berth_usage_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    gb_old BIGINT := 0;
    gb_new BIGINT := 0;
BEGIN
    IF TG_TABLE_NAME = 'volumes' THEN
        gb_old := OLD.size_gb;
        gb_new := NEW.size_gb;
    END IF;
    IF OLD.deleted_at IS NULL THEN
        UPDATE accounts SET
            usage_servers = usage_servers - CASE WHEN TG_TABLE_NAME = 'servers' THEN 1 ELSE 0 END,
            usage_volumes = usage_volumes - CASE WHEN TG_TABLE_NAME = 'volumes' THEN 1 ELSE 0 END,
            usage_volume_gb = usage_volume_gb - gb_old,
            usage_snapshots = usage_snapshots - CASE WHEN TG_TABLE_NAME = 'snapshots' THEN 1 ELSE 0 END
        WHERE id = OLD.account_id;
    END IF;
    IF NEW.deleted_at IS NULL THEN
        UPDATE accounts SET
            usage_servers = usage_servers + CASE WHEN TG_TABLE_NAME = 'servers' THEN 1 ELSE 0 END,
            usage_volumes = usage_volumes + CASE WHEN TG_TABLE_NAME = 'volumes' THEN 1 ELSE 0 END,
            usage_volume_gb = usage_volume_gb + gb_new,
            usage_snapshots = usage_snapshots + CASE WHEN TG_TABLE_NAME = 'snapshots' THEN 1 ELSE 0 END
        WHERE id = NEW.account_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER berth_usage_insert AFTER INSERT ON servers REFERENCING NEW TABLE AS usage_new
    FOR EACH STATEMENT EXECUTE FUNCTION berth_usage_statement();
CREATE TRIGGER berth_usage_delete AFTER DELETE ON servers REFERENCING OLD TABLE AS usage_old
    FOR EACH STATEMENT EXECUTE FUNCTION berth_usage_statement();
CREATE TRIGGER berth_usage_update AFTER UPDATE OF deleted_at, account_id ON servers FOR EACH ROW
    WHEN ((OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL) OR OLD.account_id <> NEW.account_id)
    EXECUTE FUNCTION berth_usage_row();
CREATE TRIGGER berth_usage_insert AFTER INSERT ON volumes REFERENCING NEW TABLE AS usage_new
    FOR EACH STATEMENT EXECUTE FUNCTION berth_usage_statement();
CREATE TRIGGER berth_usage_delete AFTER DELETE ON volumes REFERENCING OLD TABLE AS usage_old
    FOR EACH STATEMENT EXECUTE FUNCTION berth_usage_statement();
CREATE TRIGGER berth_usage_update AFTER UPDATE OF deleted_at, account_id, size_gb ON volumes FOR EACH ROW
    WHEN ((OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL) OR OLD.account_id <> NEW.account_id OR OLD.size_gb <> NEW.size_gb)
    EXECUTE FUNCTION berth_usage_row();
CREATE TRIGGER berth_usage_insert AFTER INSERT ON snapshots REFERENCING NEW TABLE AS usage_new
    FOR EACH STATEMENT EXECUTE FUNCTION berth_usage_statement();
CREATE TRIGGER berth_usage_delete AFTER DELETE ON snapshots REFERENCING OLD TABLE AS usage_old
    FOR EACH STATEMENT EXECUTE FUNCTION berth_usage_statement();
CREATE TRIGGER berth_usage_update AFTER UPDATE OF deleted_at, account_id ON snapshots FOR EACH ROW
    WHEN ((OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL) OR OLD.account_id <> NEW.account_id)
    EXECUTE FUNCTION berth_usage_row();

-- The counts of what is there, after the triggers: making them locked the three
-- tables against writes until this commits (older processes serve on while a newer
-- one migrates), so no row is written between this count and the first trigger.
UPDATE accounts SET
    usage_servers = (SELECT COUNT(*) FROM servers WHERE account_id = accounts.id AND deleted_at IS NULL),
    usage_volumes = (SELECT COUNT(*) FROM volumes WHERE account_id = accounts.id AND deleted_at IS NULL),
    usage_volume_gb = (SELECT COALESCE(SUM(size_gb), 0) FROM volumes WHERE account_id = accounts.id AND deleted_at IS NULL),
    usage_snapshots = (SELECT COUNT(*) FROM snapshots WHERE account_id = accounts.id AND deleted_at IS NULL);

-- +goose Down
DROP TRIGGER berth_usage_update ON snapshots;
DROP TRIGGER berth_usage_delete ON snapshots;
DROP TRIGGER berth_usage_insert ON snapshots;
DROP TRIGGER berth_usage_update ON volumes;
DROP TRIGGER berth_usage_delete ON volumes;
DROP TRIGGER berth_usage_insert ON volumes;
DROP TRIGGER berth_usage_update ON servers;
DROP TRIGGER berth_usage_delete ON servers;
DROP TRIGGER berth_usage_insert ON servers;
DROP FUNCTION berth_usage_row();
DROP FUNCTION berth_usage_statement();
ALTER TABLE accounts DROP COLUMN usage_snapshots;
ALTER TABLE accounts DROP COLUMN usage_volume_gb;
ALTER TABLE accounts DROP COLUMN usage_volumes;
ALTER TABLE accounts DROP COLUMN usage_servers;
