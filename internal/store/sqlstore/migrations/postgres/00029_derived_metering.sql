-- +goose Up
-- Metering derived from the meters (issues 29 and 34): see SQLite's migration
-- 00035_derived_metering.sql for what each column means.
ALTER TABLE meters RENAME COLUMN next_at TO billed_from;
UPDATE meters SET billed_from = COALESCE(stopped_at, started_at), stopped_at = COALESCE(stopped_at, started_at)
WHERE billed_from IS NULL;
ALTER TABLE meters ALTER COLUMN billed_from SET NOT NULL;
ALTER TABLE meters DROP CONSTRAINT meters_resource_type_resource_id_key;
DROP INDEX meters_next;
DROP INDEX meters_account;
CREATE UNIQUE INDEX meters_open ON meters(resource_type, resource_id) WHERE stopped_at IS NULL;
CREATE INDEX meters_resource ON meters(resource_type, resource_id, id);
-- What a metering step reads of an account's meters, whole, so that it reads the
-- index alone (an Index Only Scan): id and stopped_at too, since PostgreSQL's
-- planner takes an expression's column as needed by a query that reads the
-- expression only.
CREATE INDEX meters_account ON meters(account_id, COALESCE(stopped_at, 9223372036854775807), billed_from)
    INCLUDE (id, stopped_at, rate, monthly_cap, month_start, month_charged);

ALTER TABLE accounts ADD COLUMN charged_to BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN next_due BIGINT;
ALTER TABLE accounts ADD COLUMN ledger_lines BIGINT NOT NULL DEFAULT 0;
UPDATE accounts SET
    next_due = (SELECT MIN(billed_from) FROM meters m WHERE m.account_id = accounts.id
        AND (m.stopped_at IS NULL OR m.stopped_at > m.billed_from)),
    ledger_lines = (SELECT COUNT(*) FROM transactions t WHERE t.account_id = accounts.id);
UPDATE accounts SET charged_to = next_due WHERE next_due IS NOT NULL;
CREATE INDEX accounts_next_due ON accounts(next_due) WHERE next_due IS NOT NULL;

ALTER TABLE transactions ADD COLUMN lines BIGINT NOT NULL DEFAULT 1;
ALTER TABLE transactions ADD COLUMN lines_before BIGINT NOT NULL DEFAULT 0;
ALTER TABLE transactions ADD COLUMN window_end BIGINT;
ALTER TABLE transactions ADD COLUMN first_line BIGINT NOT NULL DEFAULT 0;
UPDATE transactions SET lines_before = r.n
FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY account_id ORDER BY id) - 1 AS n FROM transactions) AS r
WHERE r.id = transactions.id AND r.n <> 0;
CREATE INDEX transactions_lines ON transactions(account_id, lines_before);
CREATE UNIQUE INDEX transactions_window_once ON transactions(account_id, period_start, first_line) WHERE window_end IS NOT NULL;
-- Each row takes 1,024 ids (its lines' ids are its own and those after it).
ALTER TABLE transactions ALTER COLUMN id SET INCREMENT BY 1024;
SELECT setval(pg_get_serial_sequence('transactions', 'id'), COALESCE(MAX(id), 0) + 1024, false) FROM transactions;
-- A license step counts its rows by account, for ledger_lines.
ALTER TABLE charge_totals ADD COLUMN lines BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE charge_totals DROP COLUMN lines;
ALTER TABLE transactions ALTER COLUMN id SET INCREMENT BY 1;
DROP INDEX transactions_window_once;
DROP INDEX transactions_lines;
ALTER TABLE transactions DROP COLUMN first_line;
ALTER TABLE transactions DROP COLUMN window_end;
ALTER TABLE transactions DROP COLUMN lines_before;
ALTER TABLE transactions DROP COLUMN lines;
DROP INDEX accounts_next_due;
ALTER TABLE accounts DROP COLUMN ledger_lines;
ALTER TABLE accounts DROP COLUMN next_due;
ALTER TABLE accounts DROP COLUMN charged_to;
-- Back to one meter a resource, the latest (down is for a store that never metered
-- after the upgrade).
DELETE FROM meters m WHERE id <> (SELECT MAX(id) FROM meters l WHERE l.resource_type = m.resource_type AND l.resource_id = m.resource_id);
DROP INDEX meters_account;
DROP INDEX meters_resource;
DROP INDEX meters_open;
ALTER TABLE meters ADD CONSTRAINT meters_resource_type_resource_id_key UNIQUE (resource_type, resource_id);
ALTER TABLE meters ALTER COLUMN billed_from DROP NOT NULL;
UPDATE meters SET billed_from = NULL WHERE stopped_at IS NOT NULL AND stopped_at <= billed_from;
ALTER TABLE meters RENAME COLUMN billed_from TO next_at;
CREATE INDEX meters_next ON meters(next_at, id) WHERE next_at IS NOT NULL;
CREATE INDEX meters_account ON meters(account_id);
