-- +goose Up
-- The sandbox's test clocks (docs/api.md, The sandbox): how far each account's clock is
-- ahead of the system clock. An account without a row runs on the system clock; the
-- offset only grows.
CREATE TABLE account_clocks (
    account_id BIGINT PRIMARY KEY REFERENCES accounts(id),
    offset_ms  BIGINT NOT NULL CHECK (offset_ms >= 0)
);

-- +goose Down
DROP TABLE account_clocks;
