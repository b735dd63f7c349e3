-- +goose Up
-- The ledger's reference to its account is checked when the transaction commits
-- instead of at each row (DEFERRABLE INITIALLY DEFERRED), as PostgreSQL allows too.
-- Why: SQLite gives a statement that writes many rows and may fail halfway (an
-- immediate foreign key is such a failure) a statement journal, a copy of every
-- page the statement is the first to change, so that it can undo itself. A metering
-- step's ledger INSERT changes a page of transactions_charge_once for nearly every
-- hour it charges; that copy was a third of the step's time (bench/metering). The
-- rule is the same, checked later: a transaction that leaves a charge without its
-- account does not commit.
--
-- SQLite cannot alter a constraint. The table's definition is edited in place, as
-- SQLite documents for a change that leaves the stored rows and indexes as they are
-- (lang_altertable.html, "Making Other Kinds Of Table Schema Changes"): the ledger
-- is not copied, however long it is. RESET makes this connection parse the new
-- definition at once. The schema cookie is left alone: the old definition holds the
-- same rule, so a connection that parsed it before (a reader, which never writes) is
-- as right as one that parses the new one, which every connection does at the next
-- change of the schema or start.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
SET sql = replace(sql, 'account_id    INTEGER NOT NULL REFERENCES accounts(id),',
    'account_id    INTEGER NOT NULL REFERENCES accounts(id) DEFERRABLE INITIALLY DEFERRED,')
WHERE type = 'table' AND name = 'transactions';
PRAGMA writable_schema = RESET;

-- +goose Down
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
SET sql = replace(sql, 'account_id    INTEGER NOT NULL REFERENCES accounts(id) DEFERRABLE INITIALLY DEFERRED,',
    'account_id    INTEGER NOT NULL REFERENCES accounts(id),')
WHERE type = 'table' AND name = 'transactions';
PRAGMA writable_schema = RESET;
