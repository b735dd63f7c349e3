-- +goose Up
-- A write of what the read cache holds (servers, operations, tokens, accounts) that
-- does not come from Berth (SQL typed in psql, a script; Berth's own connections set
-- berth.app = 'on': OpenPostgres) notifies every berthd when it commits, and each
-- empties its cache (cache_postgres.go). Berth's own writes are counted in berth_gens
-- instead, in the transaction.
-- +goose StatementBegin
CREATE FUNCTION berth_foreign_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('berth.app', true) IS DISTINCT FROM 'on' THEN
        PERFORM pg_notify('berth_foreign_write', '0');
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER berth_foreign_write AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON servers
    FOR EACH STATEMENT EXECUTE FUNCTION berth_foreign_write();
CREATE TRIGGER berth_foreign_write AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON operations
    FOR EACH STATEMENT EXECUTE FUNCTION berth_foreign_write();
CREATE TRIGGER berth_foreign_write AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tokens
    FOR EACH STATEMENT EXECUTE FUNCTION berth_foreign_write();
CREATE TRIGGER berth_foreign_write AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON accounts
    FOR EACH STATEMENT EXECUTE FUNCTION berth_foreign_write();

-- +goose Down
DROP TRIGGER berth_foreign_write ON accounts;
DROP TRIGGER berth_foreign_write ON tokens;
DROP TRIGGER berth_foreign_write ON operations;
DROP TRIGGER berth_foreign_write ON servers;
DROP FUNCTION berth_foreign_write();
