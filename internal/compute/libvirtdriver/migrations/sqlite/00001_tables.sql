-- +goose Up
-- The libvirt driver's tables as they stood when its migrations moved beside it
-- (docs/drivers.md): hypervisor hosts per location, base images imported onto them,
-- per-location address pools, the machines Berth created and the operation-step keys
-- it applied to them. A database migrated before then has them already, made by the
-- store's migrations 00007, 00013 and 00014, which stay in the store's line: IF NOT
-- EXISTS leaves those as they are. Every later change to them is a migration of this
-- line.

CREATE TABLE IF NOT EXISTS libvirt_hosts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    location_id INTEGER NOT NULL,
    uri         TEXT    NOT NULL UNIQUE,
    -- what the host may hold: the sum of its machines' sizes stays within these
    vcpus       INTEGER NOT NULL,
    memory_mb   INTEGER NOT NULL,
    disk_gb     INTEGER NOT NULL,
    pool        TEXT    NOT NULL,   -- libvirt storage pool for images, disks, seeds
    bridge      TEXT    NOT NULL,   -- Linux bridge the guests' NICs join
    console_dir TEXT    NOT NULL,   -- where the host writes guests' serial logs ('' none)
    draining    INTEGER NOT NULL DEFAULT 0, -- 1: no new machines are placed here
    created_at  INTEGER NOT NULL,
    -- what its domains run with, 'kvm' or 'tcg' (QEMU's emulation), and what the
    -- operator asked for when adding it: 'auto' (KVM when the host has a usable one),
    -- 'kvm' or 'tcg'
    accel       TEXT    NOT NULL DEFAULT 'tcg',
    accel_mode  TEXT    NOT NULL DEFAULT 'tcg'
);
CREATE INDEX IF NOT EXISTS libvirt_hosts_location ON libvirt_hosts(location_id);

-- A base image (Berth's image-N) on a host: a volume in the host's pool.
CREATE TABLE IF NOT EXISTS libvirt_images (
    host_id     INTEGER NOT NULL REFERENCES libvirt_hosts(id),
    image       TEXT    NOT NULL,
    volume      TEXT    NOT NULL,
    path        TEXT    NOT NULL,
    size_bytes  INTEGER NOT NULL,
    sha256      TEXT    NOT NULL,
    imported_at INTEGER NOT NULL,
    PRIMARY KEY (host_id, image)
);

-- Static addresses a location hands out: first..last of an IPv4 network, and the same
-- offset in an IPv6 prefix when there is one.
CREATE TABLE IF NOT EXISTS libvirt_address_pools (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    location_id INTEGER NOT NULL,
    cidr        TEXT    NOT NULL,
    gateway     TEXT    NOT NULL,
    first_ip    TEXT    NOT NULL,
    last_ip     TEXT    NOT NULL,
    ipv6_prefix TEXT    NOT NULL DEFAULT '',
    dns         TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL
);
-- An address held by a machine; the row goes when the machine is destroyed. The
-- primary key makes it impossible to hand one address to two machines.
CREATE TABLE IF NOT EXISTS libvirt_addresses (
    pool_id INTEGER NOT NULL REFERENCES libvirt_address_pools(id),
    ip_index INTEGER NOT NULL,  -- 0 is first_ip
    machine TEXT    NOT NULL,
    PRIMARY KEY (pool_id, ip_index)
);
CREATE UNIQUE INDEX IF NOT EXISTS libvirt_addresses_machine ON libvirt_addresses(machine);

-- Machines Berth created. A domain is touched only when it has a row here (and
-- carries Berth's metadata marker).
CREATE TABLE IF NOT EXISTS libvirt_machines (
    name         TEXT    PRIMARY KEY,  -- Berth's name (the server's)
    domain       TEXT    NOT NULL,     -- libvirt domain name (prefix + name)
    host_id      INTEGER NOT NULL REFERENCES libvirt_hosts(id),
    location_id  INTEGER NOT NULL,
    vcpus        INTEGER NOT NULL,
    memory_mb    INTEGER NOT NULL,
    disk_gb      INTEGER NOT NULL,
    image        TEXT    NOT NULL,
    generation   INTEGER NOT NULL DEFAULT 1, -- install count: names the disk and seed volumes
    mac          TEXT    NOT NULL,
    ipv4         TEXT    NOT NULL,
    ipv6         TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    destroyed_at INTEGER,
    -- the last counters read while it ran (a stopped domain reports none)
    cpu_ns       INTEGER NOT NULL DEFAULT 0,
    net_rx       INTEGER NOT NULL DEFAULT 0,
    net_tx       INTEGER NOT NULL DEFAULT 0,
    disk_read    INTEGER NOT NULL DEFAULT 0,
    disk_write   INTEGER NOT NULL DEFAULT 0,
    -- its plan's limits, written into every definition of it (0: none)
    network_mbps INTEGER NOT NULL DEFAULT 0,
    disk_iops    INTEGER NOT NULL DEFAULT 0,
    disk_mbps    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS libvirt_machines_host ON libvirt_machines(host_id) WHERE destroyed_at IS NULL;

-- Operation-step keys applied to a machine, with what the step returned.
CREATE TABLE IF NOT EXISTS libvirt_keys (
    machine TEXT    NOT NULL,
    op_key  TEXT    NOT NULL,
    event   TEXT    NOT NULL,
    result  TEXT    NOT NULL DEFAULT '',
    at      INTEGER NOT NULL,
    PRIMARY KEY (machine, op_key)
);

-- +goose Down
DROP TABLE libvirt_keys;
DROP TABLE libvirt_machines;
DROP TABLE libvirt_addresses;
DROP TABLE libvirt_address_pools;
DROP TABLE libvirt_images;
DROP TABLE libvirt_hosts;
