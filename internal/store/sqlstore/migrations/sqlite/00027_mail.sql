-- +goose Up
-- Password resets asked for on the console's sign-in page (issue 31,
-- docs/operating.md, Mail): the link's token is mailed, only its SHA-256 hash is kept.
-- A reset is spent once (used_at), and not after expires_at (Unix ms; an hour after
-- it was asked for). Spending one spends every other open reset of its account.
CREATE TABLE password_resets (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    hash       BLOB    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
CREATE INDEX password_resets_account ON password_resets(account_id);
CREATE INDEX password_resets_expires ON password_resets(expires_at);

-- +goose Down
DROP TABLE password_resets;
