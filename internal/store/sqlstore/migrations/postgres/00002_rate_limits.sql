-- +goose Up
-- Rate limits every berthd process shares (docs/api.md, Rate limits: the limits hold for the
-- whole deployment). An exact sliding window, as the in-memory limiter keeps: a key's
-- requests counted within the window are rows of rate_events (Unix microseconds);
-- rate_limits holds how many there are, and its row's lock makes one key's takes one
-- at a time across processes. A take costs a few index operations whatever the limit.
-- Both tables are UNLOGGED: no WAL for a write every request makes; a crash of the
-- database empties them, which forgets at most a minute of counting.
CREATE UNLOGGED TABLE rate_limits (
    key     TEXT   PRIMARY KEY,
    counted INT    NOT NULL,
    touched BIGINT NOT NULL
);
CREATE INDEX rate_limits_touched ON rate_limits(touched);

CREATE UNLOGGED TABLE rate_events (
    key TEXT   NOT NULL,
    at  BIGINT NOT NULL,
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (key, at, seq)
);

-- berth_rate_take counts a request of key k at p_at (when p_count and the window has
-- room) or only says whether it would be allowed, and returns the key's count and the
-- oldest and newest times counted.
-- +goose StatementBegin
CREATE FUNCTION berth_rate_take(k TEXT, p_lim INT, p_win BIGINT, p_at BIGINT, p_count BOOLEAN,
    OUT allowed BOOLEAN, OUT n INT, OUT oldest BIGINT, OUT newest BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    cnt INT;
    expired INT;
BEGIN
    -- A count lost in a crash of the database costs nothing; waiting for the disk on
    -- every request would.
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
    -- No row: swept away as idle (all its requests had left the window).
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

-- +goose Down
DROP FUNCTION berth_rate_take;
DROP TABLE rate_events;
DROP TABLE rate_limits;
