-- +goose Up
-- Two things that let a berthd process answer most reads without a write or a
-- query of its own, yet exactly as the database would (cache.go, ratelimit.go).
--
-- 1. Change counters. A write transaction that changed what the read cache holds
--    (servers and their operations; tokens and accounts) adds one to its kinds'
--    counters in the same transaction, just before it commits, so that the counters
--    change exactly when what they count does, for every reader. A process reads
--    them (one small query for all the requests waiting at that moment) before it
--    answers a read from memory, so that a write reported done by any process is
--    seen by the next read on every other. Each counter is the sum of its column
--    over berth_gen_shards rows: a transaction adds to one row, chosen at random, so
--    that concurrent writers seldom wait for each other's row lock.
CREATE TABLE berth_gens (
    shard    INT    PRIMARY KEY,
    anything BIGINT NOT NULL DEFAULT 0,
    servers  BIGINT NOT NULL DEFAULT 0,
    tokens   BIGINT NOT NULL DEFAULT 0
);
INSERT INTO berth_gens (shard) SELECT generate_series(0, 31);

-- 2. Rate-limit grants. A take may ask for several requests' worth at once (a
--    process that serves many requests of one key uses them over the next second),
--    and is given them only while the key is far from its limit: at least 64 times
--    the grant must remain, so that near the limit every request is counted on its
--    own, exactly. A grant is one row of rate_events, of weight n, counted at the
--    end of the time it may be used in, so that it leaves the window no earlier
--    than the last request it allowed.
ALTER TABLE rate_events ADD COLUMN n INT NOT NULL DEFAULT 1;
DROP FUNCTION berth_rate_take;

-- berth_rate_take counts up to p_want requests of key k at p_at (when p_count and the
-- window has room; more than one only far from the limit, at p_at + p_lease) or only
-- says whether one would be allowed, and returns how many it granted, the key's
-- count, and the oldest and newest times counted.
-- +goose StatementBegin
CREATE FUNCTION berth_rate_take(k TEXT, p_lim INT, p_win BIGINT, p_at BIGINT, p_count BOOLEAN,
    p_want INT, p_lease BIGINT,
    OUT granted INT, OUT n INT, OUT oldest BIGINT, OUT newest BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    cnt INT;
    expired INT;
    stamp BIGINT := p_at;
BEGIN
    -- A count lost in a crash of the database costs nothing; waiting for the disk on
    -- every take would.
    PERFORM set_config('synchronous_commit', 'off', true);
    granted := 0;
    IF p_count THEN
        INSERT INTO rate_limits (key, counted, touched) VALUES (k, 0, p_at) ON CONFLICT (key) DO NOTHING;
        SELECT r.counted INTO cnt FROM rate_limits r WHERE r.key = k FOR UPDATE;
        WITH d AS (DELETE FROM rate_events e WHERE e.key = k AND e.at <= p_at - p_win RETURNING e.n)
            SELECT COALESCE(sum(d.n), 0) INTO expired FROM d;
    ELSE
        SELECT r.counted INTO cnt FROM rate_limits r WHERE r.key = k;
        SELECT COALESCE(sum(e.n), 0) INTO expired FROM rate_events e WHERE e.key = k AND e.at <= p_at - p_win;
    END IF;
    -- No row: swept away as idle (all its requests had left the window).
    cnt := greatest(COALESCE(cnt, 0) - expired, 0);
    IF cnt < p_lim THEN
        granted := 1;
        IF p_want > 1 AND p_lim - cnt >= 64 * p_want THEN
            granted := p_want;
            stamp := p_at + p_lease;
        END IF;
    END IF;
    IF granted > 0 AND p_count THEN
        INSERT INTO rate_events (key, at, n) VALUES (k, stamp, granted);
        cnt := cnt + granted;
    END IF;
    IF p_count THEN
        INSERT INTO rate_limits (key, counted, touched) VALUES (k, cnt, stamp)
            ON CONFLICT (key) DO UPDATE SET counted = EXCLUDED.counted,
                touched = greatest(rate_limits.touched, EXCLUDED.touched);
    END IF;
    n := cnt;
    SELECT min(e.at), max(e.at) INTO oldest, newest FROM rate_events e WHERE e.key = k AND e.at > p_at - p_win;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION berth_rate_take(TEXT, INT, BIGINT, BIGINT, BOOLEAN, INT, BIGINT);
ALTER TABLE rate_events DROP COLUMN n;
-- +goose StatementBegin
CREATE FUNCTION berth_rate_take(k TEXT, p_lim INT, p_win BIGINT, p_at BIGINT, p_count BOOLEAN,
    OUT allowed BOOLEAN, OUT n INT, OUT oldest BIGINT, OUT newest BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    cnt INT;
    expired INT;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    IF p_count THEN
        INSERT INTO rate_limits (key, counted, touched) VALUES (k, 0, p_at) ON CONFLICT (key) DO NOTHING;
        SELECT r.counted INTO cnt FROM rate_limits r WHERE r.key = k FOR UPDATE;
        WITH d AS (DELETE FROM rate_events e WHERE e.key = k AND e.at <= p_at - p_win RETURNING 1)
            SELECT count(*) INTO expired FROM d;
    ELSE
        SELECT r.counted INTO cnt FROM rate_limits r WHERE r.key = k;
        SELECT count(*) INTO expired FROM rate_events e WHERE e.key = k AND e.at <= p_at - p_win;
    END IF;
    cnt := greatest(COALESCE(cnt, 0) - expired, 0);
    allowed := cnt < p_lim;
    IF allowed AND p_count THEN
        INSERT INTO rate_events (key, at) VALUES (k, p_at);
        cnt := cnt + 1;
    END IF;
    IF p_count THEN
        INSERT INTO rate_limits (key, counted, touched) VALUES (k, cnt, p_at)
            ON CONFLICT (key) DO UPDATE SET counted = EXCLUDED.counted, touched = EXCLUDED.touched;
    END IF;
    n := cnt;
    SELECT min(e.at), max(e.at) INTO oldest, newest FROM rate_events e WHERE e.key = k AND e.at > p_at - p_win;
END
$$;
-- +goose StatementEnd
DROP TABLE berth_gens;
