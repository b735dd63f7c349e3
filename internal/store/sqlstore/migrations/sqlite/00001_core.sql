-- +goose Up
-- Times are Unix milliseconds (UTC); money is an integer in ten-thousandths; booleans 0/1.
CREATE TABLE accounts (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    email         TEXT    NOT NULL UNIQUE,
    name          TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,
    language      TEXT    NOT NULL DEFAULT 'en',
    currency      TEXT    NOT NULL DEFAULT 'EUR',
    credit        INTEGER NOT NULL DEFAULT 0,
    blocked       INTEGER NOT NULL DEFAULT 0,
    server_quota  INTEGER NOT NULL,
    created_at    INTEGER NOT NULL
);

CREATE TABLE tokens (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id   INTEGER NOT NULL REFERENCES accounts(id),
    name         TEXT    NOT NULL,
    hash         BLOB    NOT NULL UNIQUE,
    scopes       TEXT    NOT NULL,
    expires_at   INTEGER,
    last_used_at INTEGER,
    revoked_at   INTEGER,
    created_at   INTEGER NOT NULL
);
CREATE INDEX tokens_account ON tokens(account_id);

CREATE TABLE locations (
    id                     INTEGER PRIMARY KEY,
    name                   TEXT    NOT NULL,
    city                   TEXT    NOT NULL,
    country                TEXT    NOT NULL,
    snapshot_price_gb_hour INTEGER NOT NULL,
    active                 INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE plans (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL,
    vcpus         INTEGER NOT NULL,
    memory_mb     INTEGER NOT NULL,
    disk_gb       INTEGER NOT NULL,
    price_hourly  INTEGER NOT NULL,
    price_monthly INTEGER NOT NULL,
    active        INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE images (
    id      INTEGER PRIMARY KEY,
    name    TEXT    NOT NULL,
    os      TEXT    NOT NULL,
    version TEXT    NOT NULL,
    active  INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE apps (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL,
    description TEXT    NOT NULL,
    version     TEXT    NOT NULL,
    script      TEXT    NOT NULL DEFAULT '',
    active      INTEGER NOT NULL DEFAULT 1
);

-- What each location offers. capacity: how many servers of the plan fit (NULL: no limit).
CREATE TABLE location_plans (
    location_id INTEGER NOT NULL REFERENCES locations(id),
    plan_id     INTEGER NOT NULL REFERENCES plans(id),
    capacity    INTEGER,
    PRIMARY KEY (location_id, plan_id)
);

CREATE TABLE location_images (
    location_id INTEGER NOT NULL REFERENCES locations(id),
    image_id    INTEGER NOT NULL REFERENCES images(id),
    PRIMARY KEY (location_id, image_id)
);

CREATE TABLE ssh_keys (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id  INTEGER NOT NULL REFERENCES accounts(id),
    name        TEXT    NOT NULL,
    public_key  TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (account_id, fingerprint)
);

CREATE TABLE projects (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    name       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (account_id, name)
);

CREATE TABLE recipes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    name       TEXT    NOT NULL,
    script     TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX recipes_account ON recipes(account_id);

CREATE TABLE servers (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id      INTEGER NOT NULL REFERENCES accounts(id),
    name            TEXT    NOT NULL UNIQUE,
    display_name    TEXT    NOT NULL,
    project_id      INTEGER REFERENCES projects(id),
    status          TEXT    NOT NULL,
    suspended       INTEGER NOT NULL DEFAULT 0,
    operation_id    INTEGER,
    location_id     INTEGER NOT NULL REFERENCES locations(id),
    plan_id         INTEGER NOT NULL REFERENCES plans(id),
    image_id        INTEGER NOT NULL REFERENCES images(id),
    app_id          INTEGER REFERENCES apps(id),
    recipe_id       INTEGER,
    vcpus           INTEGER NOT NULL,
    memory_mb       INTEGER NOT NULL,
    disk_gb         INTEGER NOT NULL,
    ipv4            TEXT,
    ipv6            TEXT,
    root_pass_hash  TEXT    NOT NULL DEFAULT '',
    ssh_key_ids     TEXT    NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    deleted_at      INTEGER
);
CREATE INDEX servers_account ON servers(account_id, deleted_at);
CREATE INDEX servers_location_plan ON servers(location_id, plan_id, deleted_at);

-- The keys a server was built with: copies, so deleting a stored key changes nothing.
CREATE TABLE server_keys (
    server_id   INTEGER NOT NULL REFERENCES servers(id),
    position    INTEGER NOT NULL,
    ssh_key_id  INTEGER NOT NULL,
    name        TEXT    NOT NULL,
    public_key  TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,
    PRIMARY KEY (server_id, position)
);

CREATE TABLE operations (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id  INTEGER NOT NULL REFERENCES accounts(id),
    server_id   INTEGER NOT NULL REFERENCES servers(id),
    type        TEXT    NOT NULL,
    action      TEXT    NOT NULL DEFAULT '',
    status      TEXT    NOT NULL,
    error       TEXT    NOT NULL DEFAULT '',
    started_at  INTEGER NOT NULL,
    finished_at INTEGER
);
CREATE INDEX operations_server ON operations(server_id);

CREATE TABLE transactions (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id    INTEGER NOT NULL REFERENCES accounts(id),
    type          TEXT    NOT NULL,
    amount        INTEGER NOT NULL,
    balance_after INTEGER NOT NULL,
    description   TEXT    NOT NULL,
    resource_type TEXT    NOT NULL DEFAULT '',
    resource_id   INTEGER,
    created_at    INTEGER NOT NULL
);
CREATE INDEX transactions_account ON transactions(account_id, id);

-- Machines of the simulated compute driver, persisted so a restart keeps them.
CREATE TABLE sim_machines (
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
CREATE TABLE sim_events (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    machine TEXT    NOT NULL,
    event   TEXT    NOT NULL,
    op_key  TEXT    NOT NULL,
    at      INTEGER NOT NULL,
    UNIQUE (machine, op_key)
);

-- +goose Down
DROP TABLE sim_events;
DROP TABLE sim_machines;
DROP TABLE transactions;
DROP TABLE operations;
DROP TABLE server_keys;
DROP TABLE servers;
DROP TABLE recipes;
DROP TABLE projects;
DROP TABLE ssh_keys;
DROP TABLE location_images;
DROP TABLE location_plans;
DROP TABLE apps;
DROP TABLE images;
DROP TABLE plans;
DROP TABLE locations;
DROP TABLE tokens;
DROP TABLE accounts;
