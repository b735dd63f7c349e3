-- +goose Up
-- Console sign-ins (issue 7). Like tokens, a session's secret is stored only as its
-- SHA-256 hash; expires_at is absolute (Unix ms).
CREATE TABLE sessions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    hash       BLOB    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX sessions_account ON sessions(account_id);
CREATE INDEX sessions_expires ON sessions(expires_at);

-- +goose Down
DROP TABLE sessions;
