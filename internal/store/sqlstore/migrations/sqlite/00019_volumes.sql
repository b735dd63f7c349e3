-- +goose Up
-- Volumes (issue 29, docs/api.md, Volumes): block storage an account keeps in a
-- location and attaches to at most one of its servers there. A deleted volume keeps
-- its row (deleted_at) for the ledger and the events that name it; a live name is
-- unique in the account.
CREATE TABLE volumes (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id   INTEGER NOT NULL REFERENCES accounts(id),
    name         TEXT    NOT NULL,
    size_gb      INTEGER NOT NULL,
    location_id  INTEGER NOT NULL REFERENCES locations(id),
    project_id   INTEGER,
    server_id    INTEGER REFERENCES servers(id),
    format       TEXT    NOT NULL DEFAULT '',
    status       TEXT    NOT NULL,
    operation_id INTEGER,
    created_at   INTEGER NOT NULL,
    deleted_at   INTEGER
);
CREATE UNIQUE INDEX volumes_name ON volumes(account_id, name) WHERE deleted_at IS NULL;
CREATE INDEX volumes_account ON volumes(account_id, id) WHERE deleted_at IS NULL;
CREATE INDEX volumes_server ON volumes(server_id) WHERE server_id IS NOT NULL;

-- A volume's operation names its volume, and its server only when it concerns one
-- (the creation of a detached volume does not): server_id may be NULL now. SQLite
-- cannot drop a NOT NULL, so the table is made anew; no table refers to it.
CREATE TABLE operations_new (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id   INTEGER NOT NULL REFERENCES accounts(id),
    server_id    INTEGER REFERENCES servers(id),
    type         TEXT    NOT NULL,
    action       TEXT    NOT NULL DEFAULT '',
    status       TEXT    NOT NULL,
    error        TEXT    NOT NULL DEFAULT '',
    started_at   INTEGER NOT NULL,
    finished_at  INTEGER,
    snapshot_id  INTEGER,
    image_id     INTEGER,
    plan_id      INTEGER,
    upgrade_disk INTEGER NOT NULL DEFAULT 0,
    after_status TEXT    NOT NULL DEFAULT '',
    volume_id    INTEGER,
    size_gb      INTEGER NOT NULL DEFAULT 0,
    automount    INTEGER NOT NULL DEFAULT 0
);
INSERT INTO operations_new (id, account_id, server_id, type, action, status, error, started_at, finished_at,
    snapshot_id, image_id, plan_id, upgrade_disk, after_status)
SELECT id, account_id, server_id, type, action, status, error, started_at, finished_at,
    snapshot_id, image_id, plan_id, upgrade_disk, after_status FROM operations;
-- Ids are never given twice (AUTOINCREMENT): the new table goes on from the old one's
-- sequence, which may be past the highest id left (a sandbox reset deletes rows).
INSERT INTO sqlite_sequence (name, seq) SELECT 'operations_new', 0
    WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'operations_new');
UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'operations'), 0))
    WHERE name = 'operations_new';
DROP TABLE operations;
ALTER TABLE operations_new RENAME TO operations;
CREATE INDEX operations_server ON operations(server_id);
CREATE INDEX operations_account ON operations(account_id, id);
CREATE INDEX operations_volume ON operations(volume_id) WHERE volume_id IS NOT NULL;

-- What a volume costs in each location: each started hour at size × the hourly price,
-- at most size × the monthly price a calendar month (docs/api.md, Billing). Set by
-- `berthd admin catalog apply`; 0 until then.
ALTER TABLE locations ADD COLUMN volume_price_gb_hour INTEGER NOT NULL DEFAULT 0;
ALTER TABLE locations ADD COLUMN volume_price_gb_month INTEGER NOT NULL DEFAULT 0;

ALTER TABLE accounts ADD COLUMN quota_volumes INTEGER NOT NULL DEFAULT 100;
ALTER TABLE accounts ADD COLUMN quota_volume_gb INTEGER NOT NULL DEFAULT 10240;

-- +goose Down
ALTER TABLE accounts DROP COLUMN quota_volume_gb;
ALTER TABLE accounts DROP COLUMN quota_volumes;
ALTER TABLE locations DROP COLUMN volume_price_gb_month;
ALTER TABLE locations DROP COLUMN volume_price_gb_hour;
DELETE FROM operations WHERE server_id IS NULL;
CREATE TABLE operations_old (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id   INTEGER NOT NULL REFERENCES accounts(id),
    server_id    INTEGER NOT NULL REFERENCES servers(id),
    type         TEXT    NOT NULL,
    action       TEXT    NOT NULL DEFAULT '',
    status       TEXT    NOT NULL,
    error        TEXT    NOT NULL DEFAULT '',
    started_at   INTEGER NOT NULL,
    finished_at  INTEGER,
    snapshot_id  INTEGER,
    image_id     INTEGER,
    plan_id      INTEGER,
    upgrade_disk INTEGER NOT NULL DEFAULT 0,
    after_status TEXT    NOT NULL DEFAULT ''
);
INSERT INTO operations_old SELECT id, account_id, server_id, type, action, status, error, started_at, finished_at,
    snapshot_id, image_id, plan_id, upgrade_disk, after_status FROM operations;
DROP TABLE operations;
ALTER TABLE operations_old RENAME TO operations;
CREATE INDEX operations_server ON operations(server_id);
CREATE INDEX operations_account ON operations(account_id, id);
DROP TABLE volumes;
