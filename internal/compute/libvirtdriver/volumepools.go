package libvirtdriver

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute"
)

// VolumePool is the storage pool that holds a location's volumes.
type VolumePool struct {
	LocationID int64
	Pool       string
	// Type is the pool's type as the location's first host reports it (dir, netfs,
	// rbd, ...; set by SetVolumePool only).
	Type string
	// Volumes is how many volumes (not deleted) the location keeps in it.
	Volumes int
	SetAt   time.Time
}

// volumePoolCommand is what an operator runs to name a location's pool.
const volumePoolCommand = "berthd admin volume-pool set --location %d --pool NAME"

// volumePool is the pool of a location's new volumes; compute.ErrFailed naming the
// command that sets it when there is none.
func (d *Driver) volumePool(ctx context.Context, locationID int64) (string, error) {
	var pool string
	err := d.db.QueryRowContext(ctx, d.rebind(`SELECT pool FROM libvirt_volume_pools WHERE location_id = ?`), locationID).Scan(&pool)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("%w: location %d has no storage pool for volumes ("+volumePoolCommand+")", compute.ErrFailed, locationID, locationID)
	}
	return pool, err
}

// SetVolumePool names the storage pool that holds a location's new volumes (volumes
// made before stay in theirs). The pool must be active on every host of the location
// and shared by them: when the location has several hosts, a probe volume made
// through the first must be seen by every other (a dir pool is shared only by the
// hosts that mount its directory from one place).
func (d *Driver) SetVolumePool(ctx context.Context, locationID int64, pool string) (VolumePool, error) {
	if pool == "" || strings.ContainsAny(pool, `'"<>&/`) {
		return VolumePool{}, fmt.Errorf("--pool %q: a libvirt storage pool's name", pool)
	}
	hs, err := d.Hosts(ctx, locationID)
	if err != nil {
		return VolumePool{}, err
	}
	if len(hs) == 0 {
		return VolumePool{}, fmt.Errorf("location %d has no hosts (admin host add)", locationID)
	}
	kind, err := d.checkShared(ctx, hs, pool)
	if err != nil {
		return VolumePool{}, err
	}
	_, err = d.db.ExecContext(ctx, d.rebind(`INSERT INTO libvirt_volume_pools (location_id, pool, set_at) VALUES (?, ?, ?)
		ON CONFLICT (location_id) DO UPDATE SET pool = excluded.pool, set_at = excluded.set_at`), locationID, pool, d.now().UnixMilli())
	if err != nil {
		return VolumePool{}, err
	}
	ps, err := d.VolumePools(ctx, locationID)
	if err != nil || len(ps) == 0 {
		return VolumePool{}, err
	}
	ps[0].Type = kind
	return ps[0], nil
}

// checkShared checks that every host has the pool active and sees a volume made
// through the first one; it answers the pool's type.
func (d *Driver) checkShared(ctx context.Context, hs []Host, pool string) (string, error) {
	type reached struct {
		h    host
		l    *libvirt.Libvirt
		pool libvirt.StoragePool
	}
	var all []reached
	for _, hh := range hs {
		h, err := d.host(ctx, hh.ID)
		if err != nil {
			return "", err
		}
		l, err := d.conn(ctx, h)
		if err != nil {
			return "", err
		}
		p, err := l.StoragePoolLookupByName(pool)
		if err == nil {
			var state uint8
			if state, _, _, _, err = l.StoragePoolGetInfo(p); err == nil && libvirt.StoragePoolState(state) != libvirt.StoragePoolRunning {
				err = errors.New("it is not active (virsh pool-start)")
			}
		}
		if err != nil {
			return "", fmt.Errorf("storage pool %q on host %d (%s): %v", pool, h.ID, h.URI, err)
		}
		all = append(all, reached{h, l, p})
	}
	kind, err := poolType(all[0].l, all[0].pool)
	if err != nil || len(all) == 1 {
		return kind, err
	}
	probe := d.opt.Prefix + "pool-probe-" + randomHex(6)
	first := all[0]
	vol, err := first.l.StorageVolCreateXML(first.pool, sparseVolumeXML(probe, 1<<20), 0)
	if err != nil {
		return kind, d.lv(first.h, "create probe volume in "+pool, err)
	}
	defer first.l.StorageVolDelete(vol, 0)
	for _, r := range all[1:] {
		if err := refreshPool(r.l, r.pool); err != nil {
			return kind, d.lv(r.h, "refresh pool "+pool, err)
		}
		if _, err := r.l.StorageVolLookupByName(r.pool, probe); err != nil {
			return kind, fmt.Errorf("storage pool %q (%s) of host %d does not see a volume made through host %d: it is not shared (%v)",
				pool, kind, r.h.ID, first.h.ID, err)
		}
	}
	return kind, nil
}

// poolType reads a pool's type from its definition.
func poolType(l *libvirt.Libvirt, p libvirt.StoragePool) (string, error) {
	x, err := l.StoragePoolGetXMLDesc(p, 0)
	if err != nil {
		return "", err
	}
	var def struct {
		Type string `xml:"type,attr"`
	}
	err = xml.Unmarshal([]byte(x), &def)
	return def.Type, err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// VolumePools lists the locations' volume pools (of one location; 0: all) with how
// many volumes each keeps there.
func (d *Driver) VolumePools(ctx context.Context, locationID int64) ([]VolumePool, error) {
	rows, err := d.db.QueryContext(ctx, d.rebind(`SELECT p.location_id, p.pool, p.set_at,
		(SELECT COUNT(*) FROM libvirt_volumes v WHERE v.location_id = p.location_id AND v.pool = p.pool AND v.deleted_at IS NULL)
		FROM libvirt_volume_pools p WHERE CAST(? AS BIGINT) = 0 OR p.location_id = ? ORDER BY p.location_id`), locationID, locationID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []VolumePool{}
	for rows.Next() {
		var p VolumePool
		var at int64
		if err := rows.Scan(&p.LocationID, &p.Pool, &at, &p.Volumes); err != nil {
			return nil, err
		}
		p.SetAt = time.UnixMilli(at).UTC()
		out = append(out, p)
	}
	return out, rows.Err()
}

// poolHost is a host of the location to reach its volume pool through: the first
// that answers, those this process reached last time first.
func (d *Driver) poolHost(ctx context.Context, locationID int64) (host, *libvirt.Libvirt, error) {
	hs, err := d.Hosts(ctx, locationID)
	if err != nil {
		return host{}, nil, err
	}
	if len(hs) == 0 {
		return host{}, nil, fmt.Errorf("%w: location %d has no hosts", compute.ErrFailed, locationID)
	}
	var errs []error
	for _, reachable := range []bool{true, false} {
		for _, hh := range hs {
			if d.Reachable(hh.ID) != reachable {
				continue
			}
			h, err := d.host(ctx, hh.ID)
			if err != nil {
				return h, nil, err
			}
			l, err := d.conn(ctx, h)
			if err == nil {
				return h, l, nil
			}
			errs = append(errs, err)
		}
	}
	return host{}, nil, errors.Join(errs...)
}

// sparseVolumeXML is a raw volume of capacity bytes with nothing allocated.
func sparseVolumeXML(name string, capacity uint64) string {
	var b strings.Builder
	b.WriteString("<volume><name>")
	_ = xml.EscapeText(&b, []byte(name))
	fmt.Fprintf(&b, "</name><capacity unit='bytes'>%d</capacity><allocation unit='bytes'>0</allocation><target><format type='raw'/></target></volume>", capacity)
	return b.String()
}
