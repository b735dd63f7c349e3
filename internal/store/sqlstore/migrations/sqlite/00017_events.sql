-- +goose Up
-- What happened to an account (issue 28, docs/api.md, Events): one row per change,
-- written in the change's transaction. An account's rows get ids in commit order, so
-- GET /events can page on id; kept 30 days (created_at, Unix ms). data is the event's
-- JSON object.
CREATE TABLE events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id    INTEGER NOT NULL REFERENCES accounts(id),
    type          TEXT    NOT NULL,
    resource_type TEXT    NOT NULL,
    resource_id   INTEGER NOT NULL,
    data          TEXT    NOT NULL,
    request_id    TEXT    NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL
);
CREATE INDEX events_account ON events(account_id, id);
CREATE INDEX events_resource ON events(account_id, resource_type, resource_id, id);
CREATE INDEX events_created ON events(created_at);

-- +goose Down
DROP TABLE events;
