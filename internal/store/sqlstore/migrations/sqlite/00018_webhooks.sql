-- +goose Up
-- Webhooks (issue 28, docs/webhooks.md): where an account's events are sent. The
-- secrets are kept readable, as an HMAC needs its key (docs/SECURITY.md, "Secrets at
-- rest"); previous_secret signs too until previous_until (Unix ms), 24 h after a
-- rotation. event_types are the patterns, comma-separated.
CREATE TABLE webhooks (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id      INTEGER NOT NULL REFERENCES accounts(id),
    url             TEXT    NOT NULL,
    event_types     TEXT    NOT NULL,
    enabled         INTEGER NOT NULL DEFAULT 1,
    disabled_reason TEXT    NOT NULL DEFAULT '',
    secret          TEXT    NOT NULL,
    previous_secret TEXT    NOT NULL DEFAULT '',
    previous_until  INTEGER,
    created_at      INTEGER NOT NULL
);
CREATE INDEX webhooks_account ON webhooks(account_id, id);

-- One event sent to one webhook. It goes with its webhook, and with its event when
-- the events are pruned (30 days).
-- account_id and webhook_id without a foreign key, as events' account_id: a delivery
-- is written with its event, last in the transaction, under the account's turn for
-- events, where a key check would wait on a row another transaction holds while it
-- waits for that turn (a webhook being deleted). A webhook's deliveries are deleted
-- with it (DeleteWebhook); one its fan-out wrote as it went ends unsent.
CREATE TABLE webhook_deliveries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id      INTEGER NOT NULL,
    webhook_id      INTEGER NOT NULL,
    event_id        INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    event_type      TEXT    NOT NULL,
    state           TEXT    NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    created_at      INTEGER NOT NULL
);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries(webhook_id, id);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);

-- Each attempt of a delivery: the answer's status (0: none), latency, the first 1 KiB
-- of its body as text, and why it failed.
CREATE TABLE webhook_attempts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id INTEGER NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    at          INTEGER NOT NULL,
    status      INTEGER NOT NULL,
    latency_ms  INTEGER NOT NULL,
    answer      TEXT    NOT NULL,
    reason      TEXT    NOT NULL
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, id);

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
