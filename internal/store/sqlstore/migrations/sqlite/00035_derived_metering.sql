-- +goose Up
-- Metering derived from the meters (issues 29 and 34, hosting.Meter, billing.Lines).
-- A meter is never written again once opened, but for stopped_at, set once: a new
-- price or a restart opens another meter for the resource from its next hour, so a
-- resource may have several (one open at most). The hourly pass then writes nothing
-- per meter or per hour: each account's charges since its charged_to, one ledger row
-- a UTC day (of at most 1,024 lines), which the ledger shows again line by line.
--
-- meters: next_at becomes billed_from, the first hour the pass charges (hours before
-- it were charged one row each, and stay so); month_start/month_charged become what
-- the month was charged before it. A finished meter (next_at NULL) is stopped at its
-- billed_from: no hour left. The table is made again: SQLite cannot drop the
-- UNIQUE (resource_type, resource_id) of its definition.
CREATE TABLE meters_derived (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id    INTEGER NOT NULL REFERENCES accounts(id),
    resource_type TEXT    NOT NULL,
    resource_id   INTEGER NOT NULL,
    resource_name TEXT    NOT NULL,
    -- price of one hour, and the most charged per calendar month (NULL: no cap)
    rate          INTEGER NOT NULL,
    monthly_cap   INTEGER,
    started_at    INTEGER NOT NULL,
    -- the first hour the metering pass charges; its hours start there, every hour
    billed_from   INTEGER NOT NULL,
    -- no hour starting at or after it is charged (set once: the resource is gone,
    -- or another meter follows)
    stopped_at    INTEGER,
    -- what the resource was charged before billed_from in the month starting at
    -- month_start
    month_start   INTEGER NOT NULL,
    month_charged INTEGER NOT NULL
);
INSERT INTO meters_derived (id, account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at, billed_from,
    stopped_at, month_start, month_charged)
SELECT id, account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at,
    COALESCE(next_at, stopped_at, started_at),
    CASE WHEN next_at IS NULL THEN COALESCE(stopped_at, started_at) ELSE stopped_at END,
    month_start, month_charged
FROM meters;
DROP TABLE meters;
ALTER TABLE meters_derived RENAME TO meters;
-- One open meter a resource; the latest of a resource found by id.
CREATE UNIQUE INDEX meters_open ON meters(resource_type, resource_id) WHERE stopped_at IS NULL;
CREATE INDEX meters_resource ON meters(resource_type, resource_id, id);
-- An account's meters that may still charge after a time, with all a pass reads.
CREATE INDEX meters_account ON meters(account_id, COALESCE(stopped_at, 9223372036854775807), billed_from, rate, monthly_cap,
    month_start, month_charged);

-- accounts: charged_to, every hour of the account's meters starting before it is
-- charged; next_due, the earliest hour of its meters at or after charged_to (NULL:
-- none), which the pass looks for; ledger_lines, how many entries its ledger shows.
ALTER TABLE accounts ADD COLUMN charged_to INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN next_due INTEGER;
ALTER TABLE accounts ADD COLUMN ledger_lines INTEGER NOT NULL DEFAULT 0;
UPDATE accounts SET
    next_due = (SELECT MIN(billed_from) FROM meters m WHERE m.account_id = accounts.id
        AND (m.stopped_at IS NULL OR m.stopped_at > m.billed_from)),
    ledger_lines = (SELECT COUNT(*) FROM transactions t WHERE t.account_id = accounts.id);
UPDATE accounts SET charged_to = next_due WHERE next_due IS NOT NULL;
CREATE INDEX accounts_next_due ON accounts(next_due) WHERE next_due IS NOT NULL;

-- transactions: a row shows as lines entries (a pass's row: its window's charges,
-- lines_before being how many the account's rows before it show); a pass's row holds
-- the charges of the hours in [period_start, window_end) from its first_line on.
-- Each row takes 1,024 ids, its lines the first of them.
ALTER TABLE transactions ADD COLUMN lines INTEGER NOT NULL DEFAULT 1;
ALTER TABLE transactions ADD COLUMN lines_before INTEGER NOT NULL DEFAULT 0;
ALTER TABLE transactions ADD COLUMN window_end INTEGER;
ALTER TABLE transactions ADD COLUMN first_line INTEGER NOT NULL DEFAULT 0;
UPDATE transactions SET lines_before = r.n
FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY account_id ORDER BY id) - 1 AS n FROM transactions) AS r
WHERE r.id = transactions.id AND r.n <> 0;
CREATE INDEX transactions_lines ON transactions(account_id, lines_before);
-- A window is charged once: its rows are (account, start, first line).
CREATE UNIQUE INDEX transactions_window_once ON transactions(account_id, period_start, first_line) WHERE window_end IS NOT NULL;

-- +goose Down
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
CREATE TABLE meters_hourly (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id    INTEGER NOT NULL REFERENCES accounts(id),
    resource_type TEXT    NOT NULL,
    resource_id   INTEGER NOT NULL,
    resource_name TEXT    NOT NULL,
    rate          INTEGER NOT NULL,
    monthly_cap   INTEGER,
    started_at    INTEGER NOT NULL,
    next_at       INTEGER,
    stopped_at    INTEGER,
    month_start   INTEGER NOT NULL,
    month_charged INTEGER NOT NULL,
    UNIQUE (resource_type, resource_id)
);
-- Back to one meter a resource, the latest; the derived charges since the upgrade
-- are not made rows one by one: down is for a store that never metered after it.
INSERT INTO meters_hourly (id, account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at, next_at,
    stopped_at, month_start, month_charged)
SELECT id, account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at,
    CASE WHEN stopped_at IS NULL OR stopped_at > billed_from THEN billed_from END, stopped_at, month_start, month_charged
FROM meters m WHERE id = (SELECT MAX(id) FROM meters l WHERE l.resource_type = m.resource_type AND l.resource_id = m.resource_id);
DROP TABLE meters;
ALTER TABLE meters_hourly RENAME TO meters;
CREATE INDEX meters_next ON meters(next_at) WHERE next_at IS NOT NULL;
CREATE INDEX meters_account ON meters(account_id);
