package libvirtdriver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/compute"
)

// HostSpec is a hypervisor host to add.
type HostSpec struct {
	LocationID int64
	URI        string
	// What Berth may place there; 0 takes what the host reports (its CPUs, its memory
	// less 1 GiB for itself, its pool's capacity).
	VCPUs, MemoryMB, DiskGB int
	Pool                    string // storage pool (default "berth")
	Bridge                  string // bridge for the guests' NICs (default "berth0")
	ConsoleDir              string // serial logs on the host (default /var/log/libvirt/qemu; "-" none)
	// Accel is how the host runs its guests: AccelAuto (the default: KVM when the
	// host has a usable one, else TCG), AccelKVM or AccelTCG.
	Accel string
}

// Host is a host with what is placed on it.
type Host struct {
	ID, LocationID                    int64
	URI                               string
	VCPUs, MemoryMB, DiskGB           int
	UsedVCPUs, UsedMemoryMB, UsedDisk int
	Machines                          int
	Pool, Bridge, ConsoleDir          string
	Draining                          bool
	// Accel is what the host's guests run with (AccelKVM or AccelTCG), AccelMode
	// what the operator asked for when adding it.
	Accel, AccelMode string
	// AccelNote says, when a host is added, why KVM is not used or why it is doubted.
	AccelNote string
}

// AddHost checks that Berth can reach a host and use its pool, decides how it runs
// its guests (KVM or TCG), defines Berth's network filters there, then records it.
func (d *Driver) AddHost(ctx context.Context, s HostSpec) (Host, error) {
	if s.LocationID <= 0 || s.URI == "" {
		return Host{}, errors.New("a host needs a location and a URI")
	}
	if s.Accel == "" {
		s.Accel = AccelAuto
	}
	if _, err := chooseAccel(s.Accel, kvmProbe{}); err != nil {
		return Host{}, err
	}
	if s.Pool == "" {
		s.Pool = "berth"
	}
	if s.Bridge == "" {
		s.Bridge = "berth0"
	}
	switch s.ConsoleDir {
	case "":
		s.ConsoleDir = "/var/log/libvirt/qemu"
	case "-":
		s.ConsoleDir = ""
	}
	l, err := Dial(s.URI)
	if err != nil {
		return Host{}, fmt.Errorf("%w: %s: %v", compute.ErrUnavailable, s.URI, err)
	}
	defer l.Disconnect()
	_, memKiB, cpus, _, _, _, _, _, err := l.NodeGetInfo()
	if err != nil {
		return Host{}, fmt.Errorf("node info of %s: %w", s.URI, err)
	}
	pool, err := l.StoragePoolLookupByName(s.Pool)
	if err != nil {
		return Host{}, fmt.Errorf("storage pool %q on %s: %w (define and start it first)", s.Pool, s.URI, err)
	}
	_, capacity, _, _, err := l.StoragePoolGetInfo(pool)
	if err != nil {
		return Host{}, fmt.Errorf("storage pool %q on %s: %w", s.Pool, s.URI, err)
	}
	if s.VCPUs <= 0 {
		s.VCPUs = int(cpus)
	}
	if s.MemoryMB <= 0 {
		s.MemoryMB = max(int(memKiB>>10)-1024, 256)
	}
	if s.DiskGB <= 0 {
		s.DiskGB = int(capacity / gib)
	}
	accel, note, err := decideAccel(l, s.URI, s.Accel)
	if err != nil {
		return Host{}, err
	}
	if err := defineFilters(l); err != nil {
		return Host{}, fmt.Errorf("%s: %w", s.URI, err)
	}
	for _, v := range []string{s.Pool, s.Bridge, s.ConsoleDir} {
		if strings.ContainsAny(v, `'"<>&`) {
			return Host{}, fmt.Errorf("%q: quotes and markup are not allowed", v)
		}
	}
	// RETURNING, not LastInsertId: PostgreSQL's driver has no last insert id.
	var id int64
	err = d.db.QueryRowContext(ctx, d.rebind(`INSERT INTO libvirt_hosts (location_id, uri, vcpus, memory_mb, disk_gb, pool, bridge, console_dir, accel, accel_mode, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`), s.LocationID, s.URI, s.VCPUs, s.MemoryMB, s.DiskGB, s.Pool, s.Bridge, s.ConsoleDir,
		accel, s.Accel, d.now().UnixMilli()).Scan(&id)
	if err != nil {
		if strings.Contains(strings.ToLower(err.Error()), "unique") {
			return Host{}, fmt.Errorf("host %s is added already", s.URI)
		}
		return Host{}, err
	}
	if note != "" {
		d.opt.Log.Warn("libvirt: host added", "host", id, "uri", s.URI, "accel", accel, "note", note)
	}
	h, err := d.Host(ctx, id)
	h.AccelNote = note
	return h, err
}

// Hosts lists the hosts (of one location; 0: all) with their use.
func (d *Driver) Hosts(ctx context.Context, locationID int64) ([]Host, error) {
	rows, err := d.db.QueryContext(ctx, d.rebind(`SELECT h.id, h.location_id, h.uri, h.vcpus, h.memory_mb, h.disk_gb, h.pool, h.bridge, h.console_dir, h.draining, h.accel, h.accel_mode,
		COALESCE(SUM(m.vcpus), 0), COALESCE(SUM(m.memory_mb), 0), COALESCE(SUM(m.disk_gb), 0), COUNT(m.name)
		FROM libvirt_hosts h LEFT JOIN libvirt_machines m ON m.host_id = h.id AND m.destroyed_at IS NULL
		WHERE CAST(? AS BIGINT) = 0 OR h.location_id = ? GROUP BY h.id ORDER BY h.id`), locationID, locationID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Host{}
	for rows.Next() {
		var h Host
		if err := rows.Scan(&h.ID, &h.LocationID, &h.URI, &h.VCPUs, &h.MemoryMB, &h.DiskGB, &h.Pool, &h.Bridge, &h.ConsoleDir, &h.Draining, &h.Accel, &h.AccelMode,
			&h.UsedVCPUs, &h.UsedMemoryMB, &h.UsedDisk, &h.Machines); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// Host returns one host with its use.
func (d *Driver) Host(ctx context.Context, id int64) (Host, error) {
	hs, err := d.Hosts(ctx, 0)
	if err != nil {
		return Host{}, err
	}
	for _, h := range hs {
		if h.ID == id {
			return h, nil
		}
	}
	return Host{}, fmt.Errorf("no host %d", id)
}

// ConnectHosts connects to every host (each within 30 s); a new connection defines
// Berth's network filters there. It answers what could not be reached.
func (d *Driver) ConnectHosts(ctx context.Context) error {
	hs, err := d.Hosts(ctx, 0)
	if err != nil {
		return err
	}
	var errs []error
	for _, hh := range hs {
		h, err := d.host(ctx, hh.ID)
		if err == nil {
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			_, err = d.conn(cctx, h)
			cancel()
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// HostUsage implements compute.Hosted: every host with its use, and whether this
// process reached it when it last tried.
func (d *Driver) HostUsage(ctx context.Context) ([]compute.HostUsage, error) {
	hs, err := d.Hosts(ctx, 0)
	if err != nil {
		return nil, err
	}
	out := make([]compute.HostUsage, 0, len(hs))
	for _, h := range hs {
		out = append(out, compute.HostUsage{ID: h.ID, LocationID: h.LocationID, Address: uriHost(h.URI),
			VCPUs: h.VCPUs, UsedVCPUs: h.UsedVCPUs, MemoryMB: h.MemoryMB, UsedMemoryMB: h.UsedMemoryMB,
			DiskGB: h.DiskGB, UsedDiskGB: h.UsedDisk, Machines: h.Machines, Draining: h.Draining, Reachable: d.Reachable(h.ID)})
	}
	return out, nil
}

// uriHost is the host of a libvirt URI without its user, port or parameters (which
// may name key files): "local" for a local socket.
func uriHost(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Hostname() == "" {
		return "local"
	}
	return u.Hostname()
}

// Reachable reports whether a host answered Berth's last attempt to reach it from this
// process (a host not tried yet counts as reachable; the reconcile loop tries every
// host with machines every few seconds). It never dials.
func (d *Driver) Reachable(id int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, down := d.down[id]
	return !down
}

// SetAccel changes how a host runs guests (mode auto, kvm or tcg, as AddHost takes
// it): it probes the host again unless mode is tcg. Guests defined from then on (new
// servers) run with it; one defined before keeps what it was defined with. Every
// berthd process reads it from the database at each use.
func (d *Driver) SetAccel(ctx context.Context, id int64, mode string) (Host, error) {
	if _, err := chooseAccel(mode, kvmProbe{}); err != nil {
		return Host{}, err
	}
	h, err := d.host(ctx, id)
	if errors.Is(err, compute.ErrFailed) {
		return Host{}, fmt.Errorf("no host %d", id)
	} else if err != nil {
		return Host{}, err
	}
	l, err := Dial(h.URI)
	if err != nil {
		return Host{}, fmt.Errorf("%w: %s: %v", compute.ErrUnavailable, h.URI, err)
	}
	defer l.Disconnect()
	accel, note, err := decideAccel(l, h.URI, mode)
	if err != nil {
		return Host{}, err
	}
	if _, err := d.db.ExecContext(ctx, d.rebind(`UPDATE libvirt_hosts SET accel = ?, accel_mode = ? WHERE id = ?`), accel, mode, id); err != nil {
		return Host{}, err
	}
	d.opt.Log.Info("libvirt: host accel set", "host", id, "uri", h.URI, "accel", accel, "mode", mode, "note", note)
	out, err := d.Host(ctx, id)
	out.AccelNote = note
	return out, err
}

// SetDraining stops (or resumes) placing new machines on a host; the machines on it
// stay and keep working.
func (d *Driver) SetDraining(ctx context.Context, id int64, draining bool) (Host, error) {
	res, err := d.db.ExecContext(ctx, d.rebind(`UPDATE libvirt_hosts SET draining = ? WHERE id = ?`), draining, id)
	if err != nil {
		return Host{}, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Host{}, fmt.Errorf("no host %d", id)
	}
	return d.Host(ctx, id)
}

// HasRoom reports whether a host of the location (not draining) has room for a
// machine of that size: what in_stock shows. It reads outside any write transaction.
func (d *Driver) HasRoom(ctx context.Context, locationID int64, vcpus, memoryMB, diskGB int) (bool, error) {
	var n int
	err := d.read.QueryRowContext(ctx, d.rebind(`SELECT COUNT(*) FROM (
		SELECT h.id FROM libvirt_hosts h LEFT JOIN libvirt_machines m ON m.host_id = h.id AND m.destroyed_at IS NULL
		WHERE h.draining = 0 AND h.location_id = ?
		GROUP BY h.id
		HAVING h.vcpus - COALESCE(SUM(m.vcpus), 0) >= ? AND h.memory_mb - COALESCE(SUM(m.memory_mb), 0) >= ?
		   AND h.disk_gb - COALESCE(SUM(m.disk_gb), 0) >= ?) AS roomy`), locationID, vcpus, memoryMB, diskGB).Scan(&n)
	return n > 0, err
}

// place picks the host for a new machine — of its location, not draining, holding
// its image, with room, the most free memory first — takes an address from the
// location's pool and records the machine, in one transaction.
func (d *Driver) place(ctx context.Context, spec compute.Spec) (machine, error) {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return machine{}, err
	}
	defer tx.Rollback()
	if d.opt.ForUpdate != "" {
		// Room is read, then taken: no other placement may read it in between.
		rows, err := tx.QueryContext(ctx, d.rebind(`SELECT id FROM libvirt_hosts WHERE (CAST(? AS BIGINT) = 0 OR location_id = ?) ORDER BY id`+d.opt.ForUpdate),
			spec.LocationID, spec.LocationID)
		if err != nil {
			return machine{}, err
		}
		rows.Close()
	}
	var hostID, locationID int64
	err = tx.QueryRowContext(ctx, d.rebind(`SELECT h.id, h.location_id FROM libvirt_hosts h
		LEFT JOIN libvirt_machines m ON m.host_id = h.id AND m.destroyed_at IS NULL
		WHERE h.draining = 0 AND (CAST(? AS BIGINT) = 0 OR h.location_id = ?)
		  AND EXISTS (SELECT 1 FROM libvirt_images i WHERE i.host_id = h.id AND i.image = ?)
		GROUP BY h.id
		HAVING h.vcpus - COALESCE(SUM(m.vcpus), 0) >= ? AND h.memory_mb - COALESCE(SUM(m.memory_mb), 0) >= ?
		   AND h.disk_gb - COALESCE(SUM(m.disk_gb), 0) >= ?
		ORDER BY h.memory_mb - COALESCE(SUM(m.memory_mb), 0) DESC, h.id LIMIT 1`),
		spec.LocationID, spec.LocationID, spec.Image, spec.VCPUs, spec.MemoryMB, spec.DiskGB).Scan(&hostID, &locationID)
	if errors.Is(err, sql.ErrNoRows) {
		return machine{}, fmt.Errorf("%w: no host of location %d holds image %s and has room for %d vCPUs, %d MB, %d GB",
			compute.ErrFailed, spec.LocationID, spec.Image, spec.VCPUs, spec.MemoryMB, spec.DiskGB)
	}
	if err != nil {
		return machine{}, err
	}
	m := machine{Name: spec.Name, Domain: d.opt.Prefix + spec.Name, HostID: hostID, LocationID: locationID,
		VCPUs: spec.VCPUs, MemoryMB: spec.MemoryMB, DiskGB: spec.DiskGB, Image: spec.Image, Gen: 1, Limits: spec.Limits}
	m.MAC = mac(m.Domain)
	if m.IPv4, m.IPv6, err = d.allocate(ctx, tx, locationID, m.Name); err != nil {
		return machine{}, err
	}
	_, err = tx.ExecContext(ctx, d.rebind(`INSERT INTO libvirt_machines (name, domain, host_id, location_id, vcpus, memory_mb, disk_gb, image, generation, mac, ipv4, ipv6,
		network_mbps, disk_iops, disk_mbps, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), m.Name, m.Domain, m.HostID, m.LocationID, m.VCPUs, m.MemoryMB, m.DiskGB, m.Image, m.Gen,
		m.MAC, m.IPv4, m.IPv6, m.Limits.NetworkMbps, m.Limits.DiskIOPS, m.Limits.DiskMBps, d.now().UnixMilli())
	if err != nil {
		return machine{}, err
	}
	return m, tx.Commit()
}

// PoolSpec is a range of static addresses of a location.
type PoolSpec struct {
	LocationID  int64
	CIDR        string   // the network, e.g. 10.77.0.0/24
	Gateway     string   // e.g. 10.77.0.1
	First, Last string   // the range handed out (default: the whole network but network, gateway and broadcast)
	IPv6Prefix  string   // optional, e.g. fd77::/64: a machine gets the prefix + its IPv4 address
	DNS         []string // nameservers written into the seed
}

// Pool is an address pool with its use.
type Pool struct {
	ID, LocationID          int64
	CIDR, Gateway           string
	First, Last, IPv6Prefix string
	DNS                     []string
	Size, Used              int
}

// AddPool records an address pool of a location.
func (d *Driver) AddPool(ctx context.Context, s PoolSpec) (Pool, error) {
	pfx, err := netip.ParsePrefix(s.CIDR)
	if err != nil || !pfx.Addr().Is4() {
		return Pool{}, fmt.Errorf("--cidr %q: an IPv4 network such as 10.77.0.0/24", s.CIDR)
	}
	pfx = pfx.Masked()
	gw, err := netip.ParseAddr(s.Gateway)
	if err != nil || !pfx.Contains(gw) {
		return Pool{}, fmt.Errorf("--gateway %q: an address in %s", s.Gateway, pfx)
	}
	first, last := pfx.Addr().Next(), lastAddr(pfx).Prev()
	if s.First != "" {
		if first, err = netip.ParseAddr(s.First); err != nil || !pfx.Contains(first) {
			return Pool{}, fmt.Errorf("--first %q: an address in %s", s.First, pfx)
		}
	}
	if s.Last != "" {
		if last, err = netip.ParseAddr(s.Last); err != nil || !pfx.Contains(last) {
			return Pool{}, fmt.Errorf("--last %q: an address in %s", s.Last, pfx)
		}
	}
	if last.Less(first) {
		return Pool{}, fmt.Errorf("the range %s-%s is empty", first, last)
	}
	if s.IPv6Prefix != "" {
		p6, err := netip.ParsePrefix(s.IPv6Prefix)
		if err != nil || !p6.Addr().Is6() || p6.Bits() > 96 {
			return Pool{}, fmt.Errorf("--ipv6-prefix %q: an IPv6 prefix of at most /96", s.IPv6Prefix)
		}
		s.IPv6Prefix = p6.Masked().String()
	}
	for _, n := range s.DNS {
		if _, err := netip.ParseAddr(n); err != nil {
			return Pool{}, fmt.Errorf("--dns %q: an address", n)
		}
	}
	var id int64
	err = d.db.QueryRowContext(ctx, d.rebind(`INSERT INTO libvirt_address_pools (location_id, cidr, gateway, first_ip, last_ip, ipv6_prefix, dns, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`), s.LocationID, pfx.String(), gw.String(), first.String(), last.String(), s.IPv6Prefix,
		strings.Join(s.DNS, ","), d.now().UnixMilli()).Scan(&id)
	if err != nil {
		return Pool{}, err
	}
	ps, err := d.Pools(ctx, 0)
	for _, p := range ps {
		if p.ID == id {
			return p, err
		}
	}
	return Pool{}, err
}

// Pools lists the address pools (of one location; 0: all).
func (d *Driver) Pools(ctx context.Context, locationID int64) ([]Pool, error) {
	return d.pools(ctx, d.db, locationID)
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (d *Driver) pools(ctx context.Context, q querier, locationID int64) ([]Pool, error) {
	rows, err := q.QueryContext(ctx, d.rebind(`SELECT p.id, p.location_id, p.cidr, p.gateway, p.first_ip, p.last_ip, p.ipv6_prefix, p.dns,
		(SELECT COUNT(*) FROM libvirt_addresses a WHERE a.pool_id = p.id)
		FROM libvirt_address_pools p WHERE CAST(? AS BIGINT) = 0 OR p.location_id = ? ORDER BY p.id`), locationID, locationID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Pool{}
	for rows.Next() {
		var p Pool
		var dns string
		if err := rows.Scan(&p.ID, &p.LocationID, &p.CIDR, &p.Gateway, &p.First, &p.Last, &p.IPv6Prefix, &dns, &p.Used); err != nil {
			return nil, err
		}
		if dns != "" {
			p.DNS = strings.Split(dns, ",")
		}
		f, _ := netip.ParseAddr(p.First)
		l, _ := netip.ParseAddr(p.Last)
		p.Size = int(addrNum(l)-addrNum(f)) + 1
		out = append(out, p)
	}
	return out, rows.Err()
}

func addrNum(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func numAddr(n uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

func lastAddr(p netip.Prefix) netip.Addr {
	return numAddr(addrNum(p.Addr()) | (1<<(32-p.Bits()) - 1))
}

// allocate takes the lowest free address of the location's pools for a machine. An
// address is held by one machine at a time (the table's key); it is free again once
// that machine is destroyed.
func (d *Driver) allocate(ctx context.Context, tx *sql.Tx, locationID int64, name string) (ipv4, ipv6 string, err error) {
	ps, err := d.pools(ctx, tx, locationID)
	if err != nil {
		return "", "", err
	}
	for _, p := range ps {
		if p.Used >= p.Size || p.Gateway == "" {
			continue
		}
		rows, err := tx.QueryContext(ctx, d.rebind(`SELECT ip_index FROM libvirt_addresses WHERE pool_id = ? ORDER BY ip_index`), p.ID)
		if err != nil {
			return "", "", err
		}
		idx := 0
		for rows.Next() {
			var used int
			if err := rows.Scan(&used); err != nil {
				rows.Close()
				return "", "", err
			}
			if used == idx {
				idx++
			} else if used > idx {
				break
			}
		}
		rows.Close()
		f, _ := netip.ParseAddr(p.First)
		for idx < p.Size && numAddr(addrNum(f)+uint32(idx)).String() == p.Gateway {
			idx++
		}
		if idx >= p.Size {
			continue
		}
		if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO libvirt_addresses (pool_id, ip_index, machine) VALUES (?, ?, ?)`), p.ID, idx, name); err != nil {
			return "", "", err
		}
		addr := numAddr(addrNum(f) + uint32(idx))
		pfx, _ := netip.ParsePrefix(p.CIDR)
		ipv4 = netip.PrefixFrom(addr, pfx.Bits()).String()
		if p.IPv6Prefix != "" {
			p6, _ := netip.ParsePrefix(p.IPv6Prefix)
			b := p6.Addr().As16()
			copy(b[12:], addr.AsSlice())
			ipv6 = netip.PrefixFrom(netip.AddrFrom16(b), max(p6.Bits(), 64)).String()
		}
		return ipv4, ipv6, nil
	}
	return "", "", fmt.Errorf("%w: no address left in the pools of location %d (admin pool add)", compute.ErrFailed, locationID)
}

type netConfig struct {
	ipv4, ipv6, gateway string
	dns                 []string
}

// network is what the seed tells the guest about its network.
func (d *Driver) network(ctx context.Context, m machine) (netConfig, error) {
	n := netConfig{ipv4: m.IPv4, ipv6: m.IPv6}
	var gw, dns string
	err := d.db.QueryRowContext(ctx, d.rebind(`SELECT p.gateway, p.dns FROM libvirt_addresses a JOIN libvirt_address_pools p ON p.id = a.pool_id WHERE a.machine = ?`), m.Name).Scan(&gw, &dns)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return n, err
	}
	n.gateway = gw
	if dns != "" {
		n.dns = strings.Split(dns, ",")
	}
	return n, nil
}

// forget records a destroyed machine and releases its addresses and volumes.
func (d *Driver) forget(ctx context.Context, m machine, key string) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, d.rebind(`UPDATE libvirt_machines SET destroyed_at = ? WHERE name = ? AND destroyed_at IS NULL`), d.now().UnixMilli(), m.Name); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, d.rebind(`DELETE FROM libvirt_addresses WHERE machine = ?`), m.Name); err != nil {
		return err
	}
	// Its volumes stay, detached: the domain that held them is gone.
	if _, err := tx.ExecContext(ctx, d.rebind(`UPDATE libvirt_volumes SET machine = '', automount = 0 WHERE machine = ?`), m.Name); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO libvirt_keys (machine, op_key, event, result, at) VALUES (?, ?, 'destroy', '', ?)
		ON CONFLICT (machine, op_key) DO NOTHING`), m.Name, key, d.now().UnixMilli()); err != nil {
		return err
	}
	return tx.Commit()
}

type baseVolume struct {
	path string
	size uint64
}

// baseImage is the base volume of an image on a host.
func (d *Driver) baseImage(ctx context.Context, h host, image string) (baseVolume, error) {
	var b baseVolume
	var size int64
	err := d.db.QueryRowContext(ctx, d.rebind(`SELECT path, size_bytes FROM libvirt_images WHERE host_id = ? AND image = ?`), h.ID, image).Scan(&b.path, &size)
	if errors.Is(err, sql.ErrNoRows) {
		return b, fmt.Errorf("%w: image %s is not imported on host %d (admin image import)", compute.ErrFailed, image, h.ID)
	}
	b.size = uint64(size)
	return b, err
}

// ImportedImage is a base image on one host.
type ImportedImage struct {
	HostID    int64
	Image     string
	Volume    string
	Path      string
	SizeBytes int64
	SHA256    string
}

// ImportImage uploads a base disk image (qcow2) as Berth's image (e.g. "image-1")
// into the pool of every host of a location (0: every host). The volume's name holds
// the content's hash: importing the same file again uploads nothing, and a new
// version goes beside the old, which the disks made from it keep using.
func (d *Driver) ImportImage(ctx context.Context, locationID int64, image, file string) ([]ImportedImage, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(data, []byte("QFI\xfb")) {
		return nil, fmt.Errorf("%s is not a qcow2 image", file)
	}
	sum := sha256.Sum256(data)
	hexsum := hex.EncodeToString(sum[:])
	hs, err := d.Hosts(ctx, locationID)
	if err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, fmt.Errorf("location %d has no hosts (admin host add)", locationID)
	}
	vol := fmt.Sprintf("berth-base-%s-%s.qcow2", image, hexsum[:12])
	out := []ImportedImage{}
	for _, hh := range hs {
		h, err := d.host(ctx, hh.ID)
		if err != nil {
			return out, err
		}
		l, err := d.conn(ctx, h)
		if err != nil {
			return out, err
		}
		pool, err := l.StoragePoolLookupByName(h.Pool)
		if err != nil {
			return out, d.lv(h, "storage pool", err)
		}
		var known string
		_ = d.db.QueryRowContext(ctx, d.rebind(`SELECT volume FROM libvirt_images WHERE host_id = ? AND image = ?`), h.ID, image).Scan(&known)
		// A volume of that name not yet recorded may be an interrupted upload, unless
		// another installation recorded it: its name holds its content's hash, so a
		// complete one is kept.
		if known != vol {
			if v, err := l.StorageVolLookupByName(pool, vol); err == nil {
				if _, _, alloc, err := l.StorageVolGetInfo(v); err != nil || alloc < uint64(len(data)) {
					_ = l.StorageVolDelete(v, 0)
				}
			}
		}
		if err := d.upload(l, h, pool, vol, "raw", data, false); err != nil {
			return out, err
		}
		v, err := l.StorageVolLookupByName(pool, vol)
		if err != nil {
			return out, d.lv(h, "volume "+vol, err)
		}
		path, err := l.StorageVolGetPath(v)
		if err != nil {
			return out, d.lv(h, "volume path", err)
		}
		size, err := qcow2Size(data)
		if err != nil {
			return out, err
		}
		_, err = d.db.ExecContext(ctx, d.rebind(`INSERT INTO libvirt_images (host_id, image, volume, path, size_bytes, sha256, imported_at) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (host_id, image) DO UPDATE SET volume = excluded.volume, path = excluded.path, size_bytes = excluded.size_bytes,
			sha256 = excluded.sha256, imported_at = excluded.imported_at`), h.ID, image, vol, path, int64(size), hexsum, d.now().UnixMilli())
		if err != nil {
			return out, err
		}
		out = append(out, ImportedImage{HostID: h.ID, Image: image, Volume: vol, Path: path, SizeBytes: int64(size), SHA256: hexsum})
	}
	return out, nil
}

// qcow2Size reads the virtual size from a qcow2 header (bytes 24..31, big endian).
func qcow2Size(data []byte) (uint64, error) {
	if len(data) < 32 {
		return 0, errors.New("qcow2 header too short")
	}
	var n uint64
	for _, b := range data[24:32] {
		n = n<<8 | uint64(b)
	}
	return n, nil
}

// Machines lists the names of the machines Berth has (not destroyed), oldest first.
func (d *Driver) Machines(ctx context.Context) ([]string, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT name FROM libvirt_machines WHERE destroyed_at IS NULL ORDER BY created_at, name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
