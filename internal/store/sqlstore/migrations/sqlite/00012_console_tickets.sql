-- +goose Up
-- Server console tickets (issue 17): each lets one WebSocket connection attach to a
-- server's serial console. Like tokens and sessions, only the secret's SHA-256 hash
-- is stored. A ticket is spent by setting used_at, in the one statement that checks
-- it is unused and unexpired (Unix ms), so that of several processes only one spends
-- it.
CREATE TABLE console_tickets (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    server_id  INTEGER NOT NULL REFERENCES servers(id),
    hash       BLOB    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
CREATE INDEX console_tickets_expires ON console_tickets(expires_at);

-- +goose Down
DROP TABLE console_tickets;
