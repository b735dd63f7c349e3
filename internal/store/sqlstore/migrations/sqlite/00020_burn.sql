-- +goose Up
-- An account's hourly burn: the sum of the rates of its active meters (started, not
-- stopped), which billing.Summarize counts too. Kept by each statement that opens,
-- restarts, stops or re-rates a meter, so that a metering step finds the accounts it
-- takes below hosting.CreditLowDays of their burn from their own rows, not from a
-- read of every meter of theirs at each step (issue 34: the cost of a step grows with
-- the meters it charges, not with the installation).
ALTER TABLE accounts ADD COLUMN burn INTEGER NOT NULL DEFAULT 0;
UPDATE accounts SET burn = COALESCE((SELECT SUM(rate) FROM meters
    WHERE meters.account_id = accounts.id AND meters.next_at IS NOT NULL AND meters.stopped_at IS NULL), 0);

-- +goose Down
ALTER TABLE accounts DROP COLUMN burn;
