package simdriver

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/berthhq/berth/internal/compute"
)

// A sandbox (serve --sandbox) makes and removes machines and volumes at once, inside
// the store transaction that writes their servers and volumes: a seeded server
// appears in its status without being provisioned, and a reset account's servers and
// volumes are gone at once. Only this driver can, its machines and volumes being rows
// of Berth's own database.

// PlaceTx makes a machine of spec at once, in tx, already in state (running or
// stopped), as if it had been created and powered so; it returns the machine with
// its addresses. A name that has a machine already is an error.
func (d *Driver) PlaceTx(ctx context.Context, tx *sql.Tx, spec compute.Spec, state compute.State) (compute.Machine, error) {
	if state != compute.StateRunning && state != compute.StateStopped {
		return compute.Machine{}, fmt.Errorf("simdriver: %s: cannot place a machine %s", spec.Name, state)
	}
	now := d.now().UnixMilli()
	var rowid int64
	err := tx.QueryRowContext(ctx, d.rebind(`INSERT INTO sim_machines (name, state, vcpus, memory_mb, disk_gb, image, ready_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING rowid`),
		spec.Name, string(state), spec.VCPUs, spec.MemoryMB, spec.DiskGB, spec.Image, now, now).Scan(&rowid)
	if err != nil {
		return compute.Machine{}, err
	}
	if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO sim_events (machine, event, op_key, at) VALUES (?, 'place', 'place', ?)`),
		spec.Name, now); err != nil {
		return compute.Machine{}, err
	}
	m := compute.Machine{Name: spec.Name, State: state, VCPUs: spec.VCPUs, MemoryMB: spec.MemoryMB, DiskGB: spec.DiskGB}
	m.IPv4, m.IPv6 = addresses(rowid)
	return m, nil
}

// RemoveTx destroys the named machines at once, in tx, with their snapshots and
// counters, their volumes left detached, as Destroy does but without its duration; names without a machine (or
// whose machine is destroyed already) are left alone.
func (d *Driver) RemoveTx(ctx context.Context, tx *sql.Tx, names []string) error {
	now := d.now().UnixMilli()
	for _, name := range names {
		for _, w := range []struct {
			stmt string
			args []any
		}{
			{`UPDATE sim_machines SET state = ?, destroyed_at = ?, ready_at = ? WHERE name = ? AND destroyed_at IS NULL`,
				[]any{string(compute.StateAbsent), now, now, name}},
			{`DELETE FROM sim_snapshots WHERE machine = ?`, []any{name}},
			{`DELETE FROM sim_counters WHERE machine = ?`, []any{name}},
		} {
			if _, err := tx.ExecContext(ctx, d.rebind(w.stmt), w.args...); err != nil {
				return err
			}
		}
		if err := d.detachAll(ctx, tx, name); err != nil {
			return err
		}
	}
	return nil
}

var ipv4Base = netip.MustParseAddr("100.64.0.0")

// addresses are the IPv4 and IPv6 addresses of the machine of row rowid. The IPv6
// one is 2001:db8:<rowid's low 16 bits>::<the bits above them>:1, which is
// 2001:db8:<rowid>::1 up to row 65,535 (as it always was) and a distinct, valid
// address past it (where "2001:db8:10000::1" was none).
func addresses(rowid int64) (ipv4, ipv6 string) {
	b := ipv4Base.As4()
	n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	n += uint32(rowid)
	v6 := [16]byte{0x20, 0x01, 0x0d, 0xb8, byte(rowid >> 8), byte(rowid)}
	binary.BigEndian.PutUint64(v6[6:14], uint64(rowid)>>16)
	v6[15] = 1
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}).String(), netip.AddrFrom16(v6).String()
}

// PlaceVolumeTx makes a volume of spec at once, in tx, as if it had been created,
// attached to machine (a machine of the driver's, placed in tx or before) when
// machine is not "", with automount as asked. A name that has a volume already is an
// error, as is a machine that does not exist.
func (d *Driver) PlaceVolumeTx(ctx context.Context, tx *sql.Tx, spec compute.VolumeSpec, machine string, automount bool) error {
	now := d.now().UnixMilli()
	if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO sim_volumes (name, serial, location_id, size_gb, format, ready_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`), spec.Name, spec.ID, spec.LocationID, spec.SizeGB, spec.Format, now, now); err != nil {
		return err
	}
	if machine == "" {
		return nil
	}
	if _, _, _, _, _, err := d.live(ctx, tx, machine); err != nil {
		return fmt.Errorf("simdriver: %s: cannot place a volume on %s: %w", spec.Name, machine, err)
	}
	lun, err := d.freeLUN(ctx, tx, machine)
	if err != nil {
		return err
	}
	mount := 0
	if automount {
		mount = 1
	}
	_, err = tx.ExecContext(ctx, d.rebind(`UPDATE sim_volumes SET machine = ?, lun = ?, automount = ?, attached_at = ? WHERE name = ?`),
		machine, lun, mount, now, spec.Name)
	return err
}

// RemoveVolumesTx deletes the named volumes at once, in tx, attached or not (a
// sandbox's reset removes everything of an account); names without a volume are left
// alone.
func (d *Driver) RemoveVolumesTx(ctx context.Context, tx *sql.Tx, names []string) error {
	for _, name := range names {
		if _, err := tx.ExecContext(ctx, d.rebind(`DELETE FROM sim_volumes WHERE name = ?`), name); err != nil {
			return err
		}
	}
	return nil
}
