-- +goose Up
-- What each account holds of the resources it may hold many of (live servers, live
-- volumes and their GB, live snapshots), kept by triggers as the rows change, so
-- that a quota check (ops.checkQuota, in every order's write transaction) reads one
-- row instead of counting the account's servers: at 1,000,000 servers in one
-- account that count took tens of ms an order (bench/scale.sh). The other kinds of
-- Usage stay counted: their quotas keep them small. A statement is counted once, by
-- account, from its transition tables: a seed's million rows, or a sandbox reset's
-- deletion of an account's servers, are one UPDATE of each account, not one per
-- row (a row trigger would update the same accounts row once per row, and each of
-- those updates walks the versions the transaction made before it). PostgreSQL
-- refuses transition tables to an UPDATE OF trigger, so every update of these
-- tables runs its trigger; one that changes no count writes nothing.
ALTER TABLE accounts ADD COLUMN usage_servers   BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN usage_volumes   BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN usage_volume_gb BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN usage_snapshots BIGINT NOT NULL DEFAULT 0;

-- Each table's trigger function: the rows a statement inserted, deleted, or updated
-- (the new rows counted, the old ones taken off, by account; an account whose
-- counts come out the same, as after a change of a server's status, is not written).
-- +goose StatementBegin
CREATE FUNCTION berth_usage_servers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE accounts a SET usage_servers = a.usage_servers + d.n
        FROM (SELECT account_id, COUNT(*) AS n FROM usage_new WHERE deleted_at IS NULL GROUP BY account_id) d
        WHERE a.id = d.account_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE accounts a SET usage_servers = a.usage_servers - d.n
        FROM (SELECT account_id, COUNT(*) AS n FROM usage_old WHERE deleted_at IS NULL GROUP BY account_id) d
        WHERE a.id = d.account_id;
    ELSE
        UPDATE accounts a SET usage_servers = a.usage_servers + d.n
        FROM (SELECT account_id, SUM(n) AS n FROM (
                SELECT account_id, 1 AS n FROM usage_new WHERE deleted_at IS NULL
                UNION ALL
                SELECT account_id, -1 FROM usage_old WHERE deleted_at IS NULL) x
            GROUP BY account_id HAVING SUM(n) <> 0) d
        WHERE a.id = d.account_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION berth_usage_snapshots() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE accounts a SET usage_snapshots = a.usage_snapshots + d.n
        FROM (SELECT account_id, COUNT(*) AS n FROM usage_new WHERE deleted_at IS NULL GROUP BY account_id) d
        WHERE a.id = d.account_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE accounts a SET usage_snapshots = a.usage_snapshots - d.n
        FROM (SELECT account_id, COUNT(*) AS n FROM usage_old WHERE deleted_at IS NULL GROUP BY account_id) d
        WHERE a.id = d.account_id;
    ELSE
        UPDATE accounts a SET usage_snapshots = a.usage_snapshots + d.n
        FROM (SELECT account_id, SUM(n) AS n FROM (
                SELECT account_id, 1 AS n FROM usage_new WHERE deleted_at IS NULL
                UNION ALL
                SELECT account_id, -1 FROM usage_old WHERE deleted_at IS NULL) x
            GROUP BY account_id HAVING SUM(n) <> 0) d
        WHERE a.id = d.account_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION berth_usage_volumes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE accounts a SET usage_volumes = a.usage_volumes + d.n, usage_volume_gb = a.usage_volume_gb + d.gb
        FROM (SELECT account_id, COUNT(*) AS n, SUM(size_gb) AS gb FROM usage_new WHERE deleted_at IS NULL GROUP BY account_id) d
        WHERE a.id = d.account_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE accounts a SET usage_volumes = a.usage_volumes - d.n, usage_volume_gb = a.usage_volume_gb - d.gb
        FROM (SELECT account_id, COUNT(*) AS n, SUM(size_gb) AS gb FROM usage_old WHERE deleted_at IS NULL GROUP BY account_id) d
        WHERE a.id = d.account_id;
    ELSE
        UPDATE accounts a SET usage_volumes = a.usage_volumes + d.n, usage_volume_gb = a.usage_volume_gb + d.gb
        FROM (SELECT account_id, SUM(n) AS n, SUM(gb) AS gb FROM (
                SELECT account_id, 1 AS n, size_gb AS gb FROM usage_new WHERE deleted_at IS NULL
                UNION ALL
                SELECT account_id, -1, -size_gb FROM usage_old WHERE deleted_at IS NULL) x
            GROUP BY account_id HAVING SUM(n) <> 0 OR SUM(gb) <> 0) d
        WHERE a.id = d.account_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER berth_usage_insert AFTER INSERT ON servers REFERENCING NEW TABLE AS usage_new
    FOR EACH STATEMENT EXECUTE FUNCTION berth_usage_servers();
CREATE TRIGGER berth_usage_update AFTER UPDATE ON servers REFERENCING OLD TABLE AS usage_old NEW TABLE AS usage_new
    FOR EACH STATEMENT EXECUTE FUNCTION berth_usage_servers();
CREATE TRIGGER berth_usage_delete AFTER DELETE ON servers REFERENCING OLD TABLE AS usage_old
    FOR EACH STATEMENT EXECUTE FUNCTION berth_usage_servers();
CREATE TRIGGER berth_usage_insert AFTER INSERT ON volumes REFERENCING NEW TABLE AS usage_new
    FOR EACH STATEMENT EXECUTE FUNCTION berth_usage_volumes();
CREATE TRIGGER berth_usage_update AFTER UPDATE ON volumes REFERENCING OLD TABLE AS usage_old NEW TABLE AS usage_new
    FOR EACH STATEMENT EXECUTE FUNCTION berth_usage_volumes();
CREATE TRIGGER berth_usage_delete AFTER DELETE ON volumes REFERENCING OLD TABLE AS usage_old
    FOR EACH STATEMENT EXECUTE FUNCTION berth_usage_volumes();
CREATE TRIGGER berth_usage_insert AFTER INSERT ON snapshots REFERENCING NEW TABLE AS usage_new
    FOR EACH STATEMENT EXECUTE FUNCTION berth_usage_snapshots();
CREATE TRIGGER berth_usage_update AFTER UPDATE ON snapshots REFERENCING OLD TABLE AS usage_old NEW TABLE AS usage_new
    FOR EACH STATEMENT EXECUTE FUNCTION berth_usage_snapshots();
CREATE TRIGGER berth_usage_delete AFTER DELETE ON snapshots REFERENCING OLD TABLE AS usage_old
    FOR EACH STATEMENT EXECUTE FUNCTION berth_usage_snapshots();

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
DROP FUNCTION berth_usage_snapshots();
DROP FUNCTION berth_usage_volumes();
DROP FUNCTION berth_usage_servers();
ALTER TABLE accounts DROP COLUMN usage_snapshots;
ALTER TABLE accounts DROP COLUMN usage_volume_gb;
ALTER TABLE accounts DROP COLUMN usage_volumes;
ALTER TABLE accounts DROP COLUMN usage_servers;
