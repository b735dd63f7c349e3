-- +goose Up
-- One sample a sampling interval per server: rates over the interval that ends at
-- `at` (Unix seconds). Kept compact (about 1,440 rows per server and day, 7 days):
-- integers only, clustered on the key, no rowid. cpu is percent × 100 (0–10000); the
-- other columns are bytes per second. No foreign key: a deleted server's samples
-- simply age out with the others.
CREATE TABLE metric_samples (
    server_id  INTEGER NOT NULL,
    at         INTEGER NOT NULL,
    cpu        INTEGER NOT NULL,
    net_in     INTEGER NOT NULL,
    net_out    INTEGER NOT NULL,
    disk_read  INTEGER NOT NULL,
    disk_write INTEGER NOT NULL,
    PRIMARY KEY (server_id, at)
) WITHOUT ROWID;

-- The simulated driver's cumulative counters per machine, as of `at` (Unix ms), so
-- that they keep growing across a restart.
CREATE TABLE sim_counters (
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
DROP TABLE metric_samples;
