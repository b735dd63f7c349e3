-- +goose Up
-- Open connections to servers' serial consoles (issue 26), counted against the caps
-- per server and per account (docs/SECURITY.md, API4). A session holds its place until
-- expires_at (Unix ms), which the berthd serving it (holder) moves on while the
-- connection lasts and removes when it ends: a process that dies stops moving it, and
-- its sessions stop counting once their lease runs out.
CREATE TABLE console_sessions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    server_id  INTEGER NOT NULL REFERENCES servers(id),
    holder     TEXT    NOT NULL,
    started_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX console_sessions_account ON console_sessions(account_id, expires_at);
CREATE INDEX console_sessions_server ON console_sessions(server_id, expires_at);
CREATE INDEX console_sessions_expires ON console_sessions(expires_at);

-- +goose Down
DROP TABLE console_sessions;
