-- +goose Up
-- Snapshots of servers. deleted_at marks a deleted one (kept for billing's history);
-- delete_scheduled asks for its deletion when the server's current operation ends.
CREATE TABLE snapshots (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id       INTEGER NOT NULL REFERENCES accounts(id),
    server_id        INTEGER NOT NULL REFERENCES servers(id),
    name             TEXT    NOT NULL,
    name_key         TEXT    NOT NULL,
    include_memory   INTEGER NOT NULL,
    size_gb          INTEGER NOT NULL DEFAULT 0,
    status           TEXT    NOT NULL,
    delete_scheduled INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    deleted_at       INTEGER
);
-- A name is unique per server among live snapshots, case-insensitively (name_key is lower-cased).
CREATE UNIQUE INDEX snapshots_server_name ON snapshots(server_id, name_key) WHERE deleted_at IS NULL;

-- Which snapshot an operation works on (snapshot, restore) and what it asks for.
ALTER TABLE operations ADD COLUMN snapshot_id INTEGER;
ALTER TABLE operations ADD COLUMN image_id INTEGER;
ALTER TABLE operations ADD COLUMN plan_id INTEGER;
ALTER TABLE operations ADD COLUMN upgrade_disk INTEGER NOT NULL DEFAULT 0;
ALTER TABLE operations ADD COLUMN after_status TEXT NOT NULL DEFAULT '';

-- Snapshots of the simulated driver's machines.
CREATE TABLE sim_snapshots (
    machine    TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    memory     INTEGER NOT NULL,
    size_gb    INTEGER NOT NULL,
    vcpus      INTEGER NOT NULL,
    memory_mb  INTEGER NOT NULL,
    disk_gb    INTEGER NOT NULL,
    image      TEXT    NOT NULL,
    ready_at   INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (machine, name)
);

-- +goose Down
DROP TABLE sim_snapshots;
ALTER TABLE operations DROP COLUMN after_status;
ALTER TABLE operations DROP COLUMN upgrade_disk;
ALTER TABLE operations DROP COLUMN plan_id;
ALTER TABLE operations DROP COLUMN image_id;
ALTER TABLE operations DROP COLUMN snapshot_id;
DROP TABLE snapshots;
