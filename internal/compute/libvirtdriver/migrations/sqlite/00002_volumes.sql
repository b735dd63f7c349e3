-- +goose Up
-- Block volumes (docs/drivers.md, "libvirt: volumes"). A location keeps its volumes in
-- one libvirt storage pool that every host of the location reaches, named by the
-- operator (berthd admin volume-pool set). A volume records the pool it was made in:
-- naming another pool for the location later leaves the volumes already made where
-- they are. Its operation-step keys go into libvirt_keys under the volume's name
-- ("volume-<id>"), beside the machines' ("server-..."): the names never meet.

CREATE TABLE libvirt_volume_pools (
    location_id INTEGER PRIMARY KEY,
    pool        TEXT    NOT NULL,
    set_at      INTEGER NOT NULL
);

CREATE TABLE libvirt_volumes (
    name        TEXT    PRIMARY KEY,  -- Berth's name, volume-<id>
    volume_id   INTEGER NOT NULL,     -- the serial the guest sees
    location_id INTEGER NOT NULL,
    pool        TEXT    NOT NULL,     -- the libvirt pool holding it
    pool_volume TEXT    NOT NULL,     -- its name in the pool (prefix + name)
    size_gb     INTEGER NOT NULL,
    format      TEXT    NOT NULL,     -- ext4, xfs or '' (none)
    ready       INTEGER NOT NULL DEFAULT 0, -- 1 once made (and formatted)
    machine     TEXT    NOT NULL DEFAULT '', -- the machine it is attached to, '' none
    automount   INTEGER NOT NULL DEFAULT 0,  -- that attach asked the guest to mount it
    created_at  INTEGER NOT NULL,
    deleted_at  INTEGER
);
CREATE INDEX libvirt_volumes_machine ON libvirt_volumes(machine) WHERE machine <> '';

-- +goose Down
DROP TABLE libvirt_volumes;
DROP TABLE libvirt_volume_pools;
