-- +goose Up
-- Billing (docs/api.md, Billing). Every billable thing has a meter; a metering pass charges
-- each meter's hours as they start. The ledger (transactions) is append-only.

-- The monthly budget the holder set (NULL: none).
ALTER TABLE accounts ADD COLUMN budget INTEGER;

-- servers.suspended is now a set of reasons: 1 an operator's decision, 2 exhausted
-- credit (lifted by a top-up). Existing suspensions were operators'.

-- The hour a charge pays for, and the name of what it paid for at the time.
ALTER TABLE transactions ADD COLUMN period_start INTEGER;
ALTER TABLE transactions ADD COLUMN resource_name TEXT NOT NULL DEFAULT '';
-- Each (resource, hour) is charged once: the database refuses a second charge.
CREATE UNIQUE INDEX transactions_charge_once ON transactions(resource_type, resource_id, period_start) WHERE type = 'charge';
CREATE INDEX transactions_account_period ON transactions(account_id, period_start);

CREATE TABLE meters (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id    INTEGER NOT NULL REFERENCES accounts(id),
    resource_type TEXT    NOT NULL,
    resource_id   INTEGER NOT NULL,
    resource_name TEXT    NOT NULL,
    -- price of one hour, and the most charged per calendar month (NULL: no cap)
    rate          INTEGER NOT NULL,
    monthly_cap   INTEGER,
    started_at    INTEGER NOT NULL,
    -- start of the next hour to charge; NULL once the meter is finished
    next_at       INTEGER,
    -- no hour starting at or after it is charged (the resource was deleted)
    stopped_at    INTEGER,
    -- what was charged in the calendar month starting at month_start
    month_start   INTEGER NOT NULL,
    month_charged INTEGER NOT NULL,
    UNIQUE (resource_type, resource_id)
);
CREATE INDEX meters_next ON meters(next_at) WHERE next_at IS NOT NULL;
CREATE INDEX meters_account ON meters(account_id);

-- What exists already is billed from now on: its first hour is due at once.
INSERT INTO meters (account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at, next_at, month_start, month_charged)
SELECT s.account_id, 'server', s.id, s.name, p.price_hourly, p.price_monthly, s.created_at,
       CAST(strftime('%s', 'now') AS INTEGER) * 1000, CAST(strftime('%s', 'now', 'start of month') AS INTEGER) * 1000, 0
FROM servers s JOIN plans p ON p.id = s.plan_id
WHERE s.deleted_at IS NULL AND s.status <> 'error';
INSERT INTO meters (account_id, resource_type, resource_id, resource_name, rate, monthly_cap, started_at, next_at, month_start, month_charged)
SELECT n.account_id, 'snapshot', n.id, n.name, n.size_gb * l.snapshot_price_gb_hour, NULL, n.created_at,
       CAST(strftime('%s', 'now') AS INTEGER) * 1000, CAST(strftime('%s', 'now', 'start of month') AS INTEGER) * 1000, 0
FROM snapshots n JOIN servers s ON s.id = n.server_id JOIN locations l ON l.id = s.location_id
WHERE n.deleted_at IS NULL AND n.status <> 'creating';

-- A metering pass stages the hours it charges here, inside its transaction.
CREATE TABLE charge_batch (
    meter_id      INTEGER PRIMARY KEY,
    account_id    INTEGER NOT NULL,
    resource_type TEXT    NOT NULL,
    resource_id   INTEGER NOT NULL,
    resource_name TEXT    NOT NULL,
    period_start  INTEGER NOT NULL,
    amount        INTEGER NOT NULL
);
CREATE INDEX charge_batch_account ON charge_batch(account_id);

-- +goose Down
DROP TABLE charge_batch;
DROP TABLE meters;
DROP INDEX transactions_account_period;
DROP INDEX transactions_charge_once;
ALTER TABLE transactions DROP COLUMN resource_name;
ALTER TABLE transactions DROP COLUMN period_start;
ALTER TABLE accounts DROP COLUMN budget;
