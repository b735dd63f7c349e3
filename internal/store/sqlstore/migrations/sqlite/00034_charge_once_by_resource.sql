-- +goose Up
-- transactions_charge_once led by the resource again, as it was before 00033. One
-- query reads the ledger by resource: Charged, what a resource was charged, which
-- a refund reads when a server's provisioning fails, a volume is never made or a
-- license fails. Led by the period, SQLite could only walk the whole index for it
-- (berthd never runs ANALYZE, so no skip-scan): a read of every charge of the
-- installation, in the only write transaction, growing with the ledger. What 00033
-- saved on metering passes over a grown ledger (5-10 %, bench/README.md) is worth
-- less than that. TestChargedReadsOneResource holds the query to the index.
DROP INDEX transactions_charge_once;
CREATE UNIQUE INDEX transactions_charge_once ON transactions(resource_type, resource_id, period_start) WHERE type = 'charge';

-- +goose Down
DROP INDEX transactions_charge_once;
CREATE UNIQUE INDEX transactions_charge_once ON transactions(period_start, resource_type, resource_id) WHERE type = 'charge';
