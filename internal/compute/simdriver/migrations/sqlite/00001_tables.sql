-- +goose Up
-- The simulated driver's tables as they stood when its migrations moved beside it
-- (docs/drivers.md). A database migrated before then has them already, made by the
-- store's migrations 00001, 00002 and 00003, which stay in the store's line: IF NOT
-- EXISTS leaves those as they are. Every later change to them is a migration of this
-- line.

-- Machines of the simulated driver, persisted so a restart keeps them. Their
-- addresses derive from the rowid.
CREATE TABLE IF NOT EXISTS sim_machines (
    name         TEXT    PRIMARY KEY,
    state        TEXT    NOT NULL,
    vcpus        INTEGER NOT NULL,
    memory_mb    INTEGER NOT NULL,
    disk_gb      INTEGER NOT NULL,
    image        TEXT    NOT NULL,
    ready_at     INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    destroyed_at INTEGER
);

-- Every change the simulated driver applied, so tests can prove each happened once.
CREATE TABLE IF NOT EXISTS sim_events (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    machine TEXT    NOT NULL,
    event   TEXT    NOT NULL,
    op_key  TEXT    NOT NULL,
    at      INTEGER NOT NULL,
    UNIQUE (machine, op_key)
);

-- Snapshots of the simulated machines.
CREATE TABLE IF NOT EXISTS sim_snapshots (
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

-- The cumulative counters per machine, as of `at` (Unix ms), so that they keep
-- growing across a restart.
CREATE TABLE IF NOT EXISTS sim_counters (
    machine    TEXT    PRIMARY KEY,
    at         INTEGER NOT NULL,
    cpu_ns     INTEGER NOT NULL,
    net_rx     INTEGER NOT NULL,
    net_tx     INTEGER NOT NULL,
    disk_read  INTEGER NOT NULL,
    disk_write INTEGER NOT NULL
);

-- +goose Down
DROP TABLE sim_counters;
DROP TABLE sim_snapshots;
DROP TABLE sim_events;
DROP TABLE sim_machines;
