-- +goose Up
-- Rate limits every berthd process shares (API-DECISIONS §4: the limits hold for the
-- whole deployment). A key's row holds the times (Unix microseconds, oldest first)
-- of its requests counted within the window; berth_rate_take counts one more, or
-- refuses it, under the row's lock, so that processes asking at once never let
-- through more than the limit.
CREATE TABLE rate_limits (
    key     TEXT     PRIMARY KEY,
    times   BIGINT[] NOT NULL,
    touched BIGINT   NOT NULL
);
CREATE INDEX rate_limits_touched ON rate_limits(touched);

-- +goose StatementBegin
CREATE FUNCTION berth_rate_take(k TEXT, lim INT, win BIGINT, at BIGINT, count BOOLEAN,
    OUT allowed BOOLEAN, OUT n INT, OUT oldest BIGINT, OUT newest BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    t BIGINT[];
BEGIN
    -- A count lost in a crash of the database costs nothing; waiting for the disk on
    -- every request would.
    PERFORM set_config('synchronous_commit', 'off', true);
    IF count THEN
        INSERT INTO rate_limits (key, times, touched) VALUES (k, '{}', at) ON CONFLICT (key) DO NOTHING;
        SELECT r.times INTO t FROM rate_limits r WHERE r.key = k FOR UPDATE;
    ELSE
        SELECT r.times INTO t FROM rate_limits r WHERE r.key = k;
    END IF;
    t := ARRAY(SELECT x FROM unnest(COALESCE(t, '{}'::BIGINT[])) AS x WHERE x > at - win ORDER BY x);
    allowed := cardinality(t) < lim;
    IF allowed AND count THEN
        t := t || at;
    END IF;
    IF count THEN
        -- An upsert: the row may have been swept away as idle meanwhile.
        INSERT INTO rate_limits (key, times, touched) VALUES (k, t, at)
            ON CONFLICT (key) DO UPDATE SET times = EXCLUDED.times, touched = EXCLUDED.touched;
    END IF;
    n := cardinality(t);
    oldest := t[1];
    newest := t[n];
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION berth_rate_take;
DROP TABLE rate_limits;
