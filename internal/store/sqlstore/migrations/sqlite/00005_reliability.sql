-- +goose Up
-- Idempotency-Key (docs/api.md, Idempotency and operations): one row per (account, key) for 24 hours. A row is
-- pending while its request runs, applied once the request's change committed (in the
-- same transaction as the change), done once its response is stored for replays.
CREATE TABLE idempotency_keys (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id   INTEGER NOT NULL REFERENCES accounts(id),
    key          TEXT    NOT NULL,
    request_hash BLOB    NOT NULL,
    state        TEXT    NOT NULL,
    status       INTEGER NOT NULL DEFAULT 0,
    content_type TEXT    NOT NULL DEFAULT '',
    body         BLOB,
    created_at   INTEGER NOT NULL,
    UNIQUE (account_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);

-- The audit log: every state-changing request, append-only.
CREATE TABLE audit_log (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    at              INTEGER NOT NULL,
    actor           TEXT    NOT NULL,  -- 'api' or 'operator'
    account_id      INTEGER,
    token_id        INTEGER,
    action          TEXT    NOT NULL,  -- 'POST /v1/servers/{id}/power', 'admin credit add'
    target          TEXT    NOT NULL DEFAULT '',
    status          INTEGER NOT NULL,
    code            TEXT    NOT NULL DEFAULT '',
    client          TEXT    NOT NULL DEFAULT '',
    idempotency_key TEXT    NOT NULL DEFAULT '',
    replayed        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX audit_log_account ON audit_log(account_id, id);

-- +goose Down
DROP TABLE audit_log;
DROP TABLE idempotency_keys;
