-- +goose Up
-- An Idempotency-Key's record is now written once, with the request's answer, in the
-- same transaction as the request's change. A 'pending' record was claimed by a
-- request whose change never committed (the old 'applied' mark committed with the
-- change): its key is free to run again. 'applied' records stay until they expire:
-- their change committed and their answer is lost, so they must never run again.
DELETE FROM idempotency_keys WHERE state = 'pending';

-- +goose Down
SELECT 1;
