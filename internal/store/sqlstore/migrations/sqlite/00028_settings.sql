-- +goose Up
-- Settings of the installation that a process other than serve must know, written
-- by serve as it starts (docs/operating.md, Mail): e.g. "mail", the sender, support
-- address and link base mails are made with, so that a mail an admin command
-- enqueues (berthd admin ticket reply) says what serve's would. value is JSON.
CREATE TABLE settings (
    name       TEXT    PRIMARY KEY,
    value      TEXT    NOT NULL,
    updated_at INTEGER  NOT NULL
);

-- +goose Down
DROP TABLE settings;
