-- +goose Up
-- Licenses (issue 32, docs/api.md, Licenses): the catalog's license products, the
-- images that require each, the operator's pool of activation keys (each sealed with
-- the operator's key, docs/SECURITY.md), and the licenses servers hold, each billed
-- by the calendar month: paid_through is the first of the month after the last one
-- charged, which the metering pass charges when it starts.
CREATE TABLE licenses (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL,
    vendor        TEXT    NOT NULL,
    per           TEXT    NOT NULL,
    price_monthly INTEGER NOT NULL,
    provisioning  TEXT    NOT NULL,
    active        INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE license_images (
    license_id INTEGER NOT NULL REFERENCES licenses(id),
    image_id   INTEGER NOT NULL REFERENCES images(id),
    PRIMARY KEY (license_id, image_id)
);
CREATE TABLE server_licenses (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id    INTEGER NOT NULL REFERENCES accounts(id),
    server_id     INTEGER NOT NULL REFERENCES servers(id),
    license_id    INTEGER NOT NULL REFERENCES licenses(id),
    name          TEXT    NOT NULL,
    status        TEXT    NOT NULL,
    started_at    INTEGER NOT NULL,
    paid_through  INTEGER NOT NULL,
    charged_vcpus INTEGER NOT NULL,
    cancelled_at  INTEGER
);
CREATE INDEX server_licenses_server ON server_licenses(server_id, id);
-- The metering pass finds the held licenses whose paid month has ended.
CREATE INDEX server_licenses_due ON server_licenses(paid_through, id) WHERE status IN ('pending', 'active');
CREATE TABLE license_keys (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    license_id        INTEGER NOT NULL REFERENCES licenses(id),
    sealed            BLOB    NOT NULL,
    server_license_id INTEGER REFERENCES server_licenses(id),
    created_at        INTEGER NOT NULL
);
CREATE INDEX license_keys_free ON license_keys(license_id, id) WHERE server_license_id IS NULL;
CREATE UNIQUE INDEX license_keys_held ON license_keys(server_license_id) WHERE server_license_id IS NOT NULL;

-- The most vCPUs each license's server had in each calendar month it was held
-- (month: the month's first millisecond), for the operator's monthly report
-- (berthd admin license report, SPLA-style).
CREATE TABLE license_usage (
    server_license_id INTEGER NOT NULL REFERENCES server_licenses(id),
    month             INTEGER NOT NULL,
    max_vcpus         INTEGER NOT NULL,
    PRIMARY KEY (server_license_id, month)
);
CREATE INDEX license_usage_month ON license_usage(month);

-- +goose Down
DROP TABLE license_usage;
DROP TABLE license_keys;
DROP TABLE server_licenses;
DROP TABLE license_images;
DROP TABLE licenses;
