-- +goose Up
-- Plan limits (issue 17): a plan may cap a server's network (megabits per second,
-- each direction), its disk's operations per second and its disk's megabytes per
-- second. NULL is no limit. The libvirt driver keeps each machine's limits with its
-- size, so that every definition it writes again (a resize, a restore) carries them.
ALTER TABLE plans ADD COLUMN network_mbps BIGINT;
ALTER TABLE plans ADD COLUMN disk_iops BIGINT;
ALTER TABLE plans ADD COLUMN disk_mbps BIGINT;
ALTER TABLE libvirt_machines ADD COLUMN network_mbps BIGINT NOT NULL DEFAULT 0; -- 0: none
ALTER TABLE libvirt_machines ADD COLUMN disk_iops BIGINT NOT NULL DEFAULT 0;
ALTER TABLE libvirt_machines ADD COLUMN disk_mbps BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE libvirt_machines DROP COLUMN disk_mbps;
ALTER TABLE libvirt_machines DROP COLUMN disk_iops;
ALTER TABLE libvirt_machines DROP COLUMN network_mbps;
ALTER TABLE plans DROP COLUMN disk_mbps;
ALTER TABLE plans DROP COLUMN disk_iops;
ALTER TABLE plans DROP COLUMN network_mbps;
