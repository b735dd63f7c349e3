-- +goose Up
-- GET /v1/operations lists an account's operations newest first, 50 a page, with
-- their count: an index by account, in id order, answers both without reading other
-- accounts' operations.
CREATE INDEX operations_account ON operations(account_id, id);

-- +goose Down
DROP INDEX operations_account;
