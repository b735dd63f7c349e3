-- +goose Up
-- The networks of a server's addresses that Berth's nameserver serves reverse zones
-- for (docs/operating.md, DNS): ipv4_net the /24 of ipv4 ("192.0.2.0/24"), ipv6_net
-- the /64 of ipv6 ("2001:db8:1::/64"), written with the addresses
-- (SetServerAddresses; rows from before are filled at the next start). A query for a
-- reverse name finds the live servers of one network, and one address, by index.
ALTER TABLE servers ADD COLUMN ipv4_net TEXT;
ALTER TABLE servers ADD COLUMN ipv6_net TEXT;
CREATE INDEX servers_ipv4_net ON servers(ipv4_net, ipv4) WHERE deleted_at IS NULL;
CREATE INDEX servers_ipv6_net ON servers(ipv6_net, ipv6) WHERE deleted_at IS NULL;

-- +goose Down
DROP INDEX servers_ipv6_net;
DROP INDEX servers_ipv4_net;
ALTER TABLE servers DROP COLUMN ipv6_net;
ALTER TABLE servers DROP COLUMN ipv4_net;
