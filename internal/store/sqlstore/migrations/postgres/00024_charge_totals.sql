-- +goose Up
-- A metering step's charges summed by account, once, for the statements that move
-- the accounts' credit and tell which crossed a line (billing.go: chargeStatements);
-- empty between transactions, as charge_batch.
CREATE TABLE charge_totals (
    account_id BIGINT PRIMARY KEY,
    charged    BIGINT NOT NULL
);

-- +goose Down
DROP TABLE charge_totals;
