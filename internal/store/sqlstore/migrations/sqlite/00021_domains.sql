-- +goose Up
-- DNS zones (issue 30, docs/api.md, Domains). A zone's name is unique across every
-- account (one zone answers for a name); a deleted zone is removed with its RRsets,
-- so that its name is free again. serial is the SOA's (hosting.NextZoneSerial),
-- rrset_count the RRsets it holds, kept by each change of them. rname is the name's
-- labels from the right ("com.example."), so that the zones under a name are one
-- range of its index (sqlstore's ZoneRelated), not a scan of every zone.
CREATE TABLE zones (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id  INTEGER NOT NULL REFERENCES accounts(id),
    name        TEXT    NOT NULL UNIQUE,
    rname       TEXT    NOT NULL,
    ttl         INTEGER NOT NULL,
    serial      INTEGER NOT NULL,
    rrset_count INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL
);
CREATE INDEX zones_account ON zones(account_id, id);
CREATE INDEX zones_rname ON zones(rname);

-- An RRset: every record of one name (relative, "@" the apex) and one type. records
-- is a JSON array of {"value", "comment"} in the order they were given; ttl NULL is
-- the zone's.
CREATE TABLE zone_rrsets (
    zone_id INTEGER NOT NULL REFERENCES zones(id),
    name    TEXT    NOT NULL,
    type    TEXT    NOT NULL,
    ttl     INTEGER,
    records TEXT    NOT NULL,
    PRIMARY KEY (zone_id, name, type)
);

-- Reverse DNS (issue 30; docs/api.md, What is planned): the PTR an account set for
-- an address of its server; removed with the server's deletion.
CREATE TABLE server_ptrs (
    server_id INTEGER NOT NULL REFERENCES servers(id),
    ip        TEXT    NOT NULL,
    ptr       TEXT    NOT NULL,
    PRIMARY KEY (server_id, ip)
);
CREATE INDEX server_ptrs_ip ON server_ptrs(ip);

ALTER TABLE accounts ADD COLUMN quota_zones INTEGER NOT NULL DEFAULT 100;

-- +goose Down
ALTER TABLE accounts DROP COLUMN quota_zones;
DROP TABLE server_ptrs;
DROP TABLE zone_rrsets;
DROP TABLE zones;
