-- +goose Up
-- How each libvirt host runs its guests (issue 17): accel is what its domains use,
-- 'kvm' or 'tcg' (QEMU's emulation); accel_mode what the operator asked for when
-- adding it: 'auto' (KVM when the host has a usable one), 'kvm' or 'tcg'. Hosts added
-- before ran every guest under TCG, and keep doing so.
ALTER TABLE libvirt_hosts ADD COLUMN accel TEXT NOT NULL DEFAULT 'tcg';
ALTER TABLE libvirt_hosts ADD COLUMN accel_mode TEXT NOT NULL DEFAULT 'tcg';

-- +goose Down
ALTER TABLE libvirt_hosts DROP COLUMN accel_mode;
ALTER TABLE libvirt_hosts DROP COLUMN accel;
