-- +goose Up
-- Support tickets (issue 31; api/openapi.yaml, Support): an account's tickets, their messages
-- (the customer's, staff replies, and staff's internal notes that the customer never
-- sees), and the files attached to messages.
--
-- Attachments are kept in the store itself (data), at most 5 MiB each and 100 MiB an
-- account by default (quota_attachment_mb), not in the data dir: one place to back up
-- (a backup of the database has the tickets and their files together, never one
-- without the other), the same on SQLite and PostgreSQL (berthd admin copy moves them
-- with everything else), and every process that serves the API reads them, on one
-- machine or several, with no shared file system to set up. The bound keeps a row
-- small enough to read whole.
CREATE TABLE tickets (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id  INTEGER NOT NULL REFERENCES accounts(id),
    subject     TEXT    NOT NULL,
    status      TEXT    NOT NULL,
    priority    TEXT    NOT NULL,
    server_id   INTEGER REFERENCES servers(id),
    -- The staff account the ticket is assigned to (null: nobody).
    assignee_id INTEGER REFERENCES accounts(id),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    closed_at   INTEGER
);
-- An account's list, latest activity first; the staff queue by status.
CREATE INDEX tickets_account ON tickets(account_id, updated_at, id);
CREATE INDEX tickets_status ON tickets(status, updated_at, id);

-- kind: customer, staff (a reply the customer sees) or note (staff's internal note,
-- never shown to the customer, never mailed). author_id is the account that wrote
-- it (null: staff acting from the command line); author_name what the customer sees.
CREATE TABLE ticket_messages (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    ticket_id   INTEGER NOT NULL REFERENCES tickets(id),
    kind        TEXT    NOT NULL,
    author_id   INTEGER REFERENCES accounts(id),
    author_name TEXT    NOT NULL,
    body        TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX ticket_messages_ticket ON ticket_messages(ticket_id, id);

-- An attachment is uploaded first (message_id null) and then named by one message;
-- one left unattached for a day may be removed.
CREATE TABLE attachments (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id   INTEGER NOT NULL REFERENCES accounts(id),
    message_id   INTEGER REFERENCES ticket_messages(id),
    filename     TEXT    NOT NULL,
    content_type TEXT    NOT NULL,
    size         INTEGER NOT NULL,
    data         BLOB    NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX attachments_account ON attachments(account_id, id);
CREATE INDEX attachments_message ON attachments(message_id) WHERE message_id IS NOT NULL;
CREATE INDEX attachments_unattached ON attachments(created_at) WHERE message_id IS NULL;

-- Staff (berthd admin staff add) answer every account's tickets; quotas of open
-- tickets and of attachment MiB.
ALTER TABLE accounts ADD COLUMN staff INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN quota_tickets INTEGER NOT NULL DEFAULT 20;
ALTER TABLE accounts ADD COLUMN quota_attachment_mb INTEGER NOT NULL DEFAULT 100;

-- +goose Down
ALTER TABLE accounts DROP COLUMN quota_attachment_mb;
ALTER TABLE accounts DROP COLUMN quota_tickets;
ALTER TABLE accounts DROP COLUMN staff;
DROP TABLE attachments;
DROP TABLE ticket_messages;
DROP TABLE tickets;
