-- +goose Up
-- What each account spent on each UTC day (the hours' period_start; charges net of
-- refunds, signed as in the ledger), written with the ledger's rows in the same
-- statement batch (billing.go: writeTransaction, a charge step's spend):
-- GET /billing's month_to_date and the console's spend chart read at most 31 rows
-- here instead of summing every hour of the month (an account of 1,000 servers has
-- 720,000 of them), and a metering pass no longer writes the index
-- transactions_account_period, a sixth of its time (bench/metering.sh).
CREATE TABLE account_spend (
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    day        INTEGER NOT NULL, -- period_start / 86,400,000
    amount     INTEGER NOT NULL,
    PRIMARY KEY (account_id, day)
) WITHOUT ROWID;

INSERT INTO account_spend (account_id, day, amount)
SELECT account_id, period_start / 86400000, SUM(amount) FROM transactions
WHERE type IN ('charge', 'refund') AND period_start IS NOT NULL
GROUP BY account_id, period_start / 86400000;

DROP INDEX transactions_account_period;

-- +goose Down
CREATE INDEX transactions_account_period ON transactions(account_id, period_start);
DROP TABLE account_spend;
