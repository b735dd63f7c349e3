-- +goose Up
-- The last serial of each zone name no zone of that name holds now (a deleted zone's,
-- DeleteDomain and ResetAccount): a zone made again under the name starts above it
-- (CreateDomain), so that a zone's serial only ever grows under its name, as a
-- secondary and Berth's PowerDNS publisher (docs/operating.md, DNS) need.
CREATE TABLE zone_serials (
    name TEXT PRIMARY KEY,
    serial BIGINT NOT NULL
);

-- +goose Down
DROP TABLE zone_serials;
