-- +goose Up
-- A metering step's staged hours carry their UTC day (period_start / 86,400,000),
-- as SQLite's TEMP charge_batch does, and are indexed by account and day: the
-- step's account_spend rows are then a walk of that index rather than a sort of
-- the batch, and its ledger is written in (account, day, meter) order. The table is
-- empty outside a metering transaction; the default only lets the column be added
-- whatever it holds.
ALTER TABLE charge_batch ADD COLUMN day BIGINT NOT NULL DEFAULT 0;
ALTER TABLE charge_batch ALTER COLUMN day DROP DEFAULT;
DROP INDEX charge_batch_account;
CREATE INDEX charge_batch_account ON charge_batch(account_id, day);

-- +goose Down
DROP INDEX charge_batch_account;
CREATE INDEX charge_batch_account ON charge_batch(account_id);
ALTER TABLE charge_batch DROP COLUMN day;
