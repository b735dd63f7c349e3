-- +goose Up
-- A metering step stages its charges in a TEMP table of the write connection now
-- (billing.go: stageSQLite): rows staged and deleted within one transaction had no reason to be
-- written to the WAL and the database file. main.: on the write connection a TEMP
-- table of that name would hide this one.
DROP TABLE main.charge_batch;

-- +goose Down
CREATE TABLE main.charge_batch (
    meter_id      INTEGER PRIMARY KEY,
    account_id    INTEGER NOT NULL,
    resource_type TEXT    NOT NULL,
    resource_id   INTEGER NOT NULL,
    resource_name TEXT    NOT NULL,
    period_start  INTEGER NOT NULL,
    amount        INTEGER NOT NULL
);
CREATE INDEX main.charge_batch_account ON charge_batch(account_id);
