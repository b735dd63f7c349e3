-- +goose Up
-- The simulated driver's volumes (docs/drivers.md, Volumes): block volumes that live
-- apart from the machines they are attached to.

-- A volume, attached to machine (a sim_machines name) or detached (NULL). lun is its
-- place on the machine's SCSI bus, which names the disk the guest sees; attached_at is
-- when the guest sees it (Unix ms), ready_at when the volume's last change ends.
CREATE TABLE sim_volumes (
    name        TEXT    PRIMARY KEY,
    serial      INTEGER NOT NULL,
    location_id INTEGER NOT NULL,
    size_gb     INTEGER NOT NULL,
    format      TEXT    NOT NULL,
    machine     TEXT,
    lun         INTEGER,
    automount   INTEGER NOT NULL DEFAULT 0,
    attached_at INTEGER,
    ready_at    INTEGER NOT NULL,
    created_at  INTEGER NOT NULL
);

CREATE UNIQUE INDEX sim_volumes_lun ON sim_volumes (machine, lun) WHERE machine IS NOT NULL;

-- Every change to a volume the simulated driver applied, by its key (a key is applied
-- once, as sim_events does for machines).
CREATE TABLE sim_volume_events (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    volume TEXT    NOT NULL,
    event  TEXT    NOT NULL,
    op_key TEXT    NOT NULL,
    at     INTEGER NOT NULL,
    UNIQUE (volume, op_key)
);

-- +goose Down
DROP TABLE sim_volume_events;
DROP TABLE sim_volumes;
