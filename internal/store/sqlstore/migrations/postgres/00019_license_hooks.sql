-- +goose Up
-- A webhook license's hook (docs/operating.md, Licenses): the operator's URL and the
-- secrets that sign each delivery to it (newline-separated: the current one, then
-- during a rotation the old one), from the catalog's webhook_url and
-- webhook_secret_file. Never listed: only a delivery reads them.
ALTER TABLE licenses ADD COLUMN webhook_url TEXT NOT NULL DEFAULT '';
ALTER TABLE licenses ADD COLUMN webhook_secrets TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE licenses DROP COLUMN webhook_secrets;
ALTER TABLE licenses DROP COLUMN webhook_url;
