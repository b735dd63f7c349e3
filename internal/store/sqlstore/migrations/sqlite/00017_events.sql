-- +goose Up
-- What happened to an account (issue 28, docs/api.md, Events): one row per change,
-- written in the change's transaction. An account's rows get ids in commit order, so
-- GET /events can page on id; kept 30 days (created_at, Unix ms). data is the event's
-- JSON object.
-- account_id names the account without a foreign key: the row is written last in
-- its transaction, under the account's turn for events (docs/api.md, Events), and a
-- key check would lock the account's row there, behind a transaction that holds that
-- row and waits for the same turn (PostgreSQL found the deadlock; accounts are never
-- deleted).
CREATE TABLE events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id    INTEGER NOT NULL,
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
