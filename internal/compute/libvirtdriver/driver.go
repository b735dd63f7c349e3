// Package libvirtdriver is the compute driver for real guests: QEMU machines on any
// number of hypervisor hosts per location, driven through libvirt's RPC protocol
// (github.com/digitalocean/go-libvirt, no cgo).
//
// What it keeps where:
//   - Berth's database (tables libvirt_*, the driver's own migration line): hosts,
//     imported base images, address pools and the addresses held, every machine Berth
//     created (host, size, addresses, the install generation), each location's volume
//     pool and every volume (its pool, size, the machine it is attached to), and the
//     operation-step keys applied.
//   - Each host: a domain per machine named Prefix+name and carrying Berth's metadata
//     element, and in the host's storage pool the machine's disk (a qcow2 overlay on the
//     base image, sized to the plan) and its cloud-init NoCloud seed (an ISO9660 volume).
//     Snapshots are libvirt internal snapshots (with memory when asked).
//   - Each location's volume pool (shared by its hosts): the volumes, raw, attached to
//     a domain as a virtio-scsi controller and disk each (docs/drivers.md, "libvirt:
//     volumes").
//
// A domain is touched only when Berth's database has its machine and the domain
// carries the marker: domains Berth did not create are never changed.
//
// Errors: a host that cannot be reached is compute.ErrUnavailable (the operation is
// retried later; nothing is lost); what cannot succeed however often it is tried (no
// host with room, an image not imported, no address left) is compute.ErrFailed.
package libvirtdriver

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute"
)

// MarkerNS is the XML namespace of the metadata element every domain Berth creates
// carries.
const MarkerNS = "https://berth.dev/xmlns/libvirt/1"

// Options tune the driver.
type Options struct {
	// Prefix starts the name of every domain and volume of a machine (default
	// "berth-"). Two Berth installations sharing hosts need different prefixes.
	Prefix string
	// MaxMemoryMB caps the memory a guest really gets (0: the plan's). Tests and
	// small demo hosts use it to run plans of several GB in 256 MiB; capacity is still
	// counted at the plan's size.
	MaxMemoryMB int
	// Poll is how often a waiting call looks at a domain again (default 200 ms);
	// a graceful shutdown re-sends ACPI every 10 polls.
	Poll time.Duration
	// Machine is the QEMU machine type (default "pc").
	Machine string
	// ForUpdate is the database's clause that locks the rows a SELECT reads (" FOR
	// UPDATE" on PostgreSQL, where several processes place machines at once; "" on
	// SQLite, whose write transactions run one at a time).
	ForUpdate string
	// NoTrafficFilter leaves guest NICs without Berth's network filter: for tests
	// that show what the filter stops, never for tenants.
	NoTrafficFilter bool
	// CreateFault fails a step of making a machine, for tests of what a failed
	// creation leaves (nil: none).
	CreateFault compute.CreateFault
	Log         *slog.Logger
}

// Driver is the libvirt driver.
type Driver struct {
	db     *sql.DB // writes (and reads that must see them)
	read   *sql.DB // reads outside any write (capacity for in_stock)
	rebind func(string) string
	opt    Options
	now    func() time.Time

	mu    sync.Mutex
	conns map[int64]*libvirt.Libvirt
	// down holds the hosts whose last attempt failed to reach them, and when.
	down map[int64]time.Time
}

var (
	_ compute.Driver       = (*Driver)(nil)
	_ compute.Hosted       = (*Driver)(nil)
	_ compute.Placer       = (*Driver)(nil)
	_ compute.Reachability = (*Driver)(nil)
)

// Open returns a driver keeping its records in env's database (its tables, Storage),
// tuned by opt (berthd serve's --libvirt-* flags). On PostgreSQL, where several
// processes place machines at once, it locks the rows it places by (ForUpdate); its
// log is env's unless opt names one.
func Open(env compute.Env, opt Options) *Driver {
	if env.Dialect == compute.DialectPostgres {
		opt.ForUpdate = " FOR UPDATE"
	}
	if opt.Log == nil {
		opt.Log = env.Log
	}
	return New(env.DB, env.Read, env.Rebind, opt)
}

// New returns a driver keeping its records in Berth's database: db for writes, read
// for reads beside a write transaction (may be db).
func New(db, read *sql.DB, rebind func(string) string, opt Options) *Driver {
	if read == nil {
		read = db
	}
	if rebind == nil {
		rebind = func(q string) string { return q }
	}
	if opt.Prefix == "" {
		opt.Prefix = "berth-"
	}
	if opt.Poll <= 0 {
		opt.Poll = 200 * time.Millisecond
	}
	if opt.Machine == "" {
		opt.Machine = "pc"
	}
	if opt.Log == nil {
		opt.Log = slog.Default()
	}
	return &Driver{db: db, read: read, rebind: rebind, opt: opt, now: time.Now, conns: map[int64]*libvirt.Libvirt{}, down: map[int64]time.Time{}}
}

// Close disconnects from every host.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, l := range d.conns {
		_ = l.Disconnect()
		delete(d.conns, id)
	}
	return nil
}

// host is a row of libvirt_hosts.
type host struct {
	ID, LocationID          int64
	URI                     string
	VCPUs, MemoryMB, DiskGB int
	Pool, Bridge            string
	ConsoleDir              string
	Draining                bool
	Accel                   string // AccelKVM or AccelTCG
}

func (d *Driver) host(ctx context.Context, id int64) (host, error) {
	var h host
	err := d.db.QueryRowContext(ctx, d.rebind(`SELECT id, location_id, uri, vcpus, memory_mb, disk_gb, pool, bridge, console_dir, draining, accel
		FROM libvirt_hosts WHERE id = ?`), id).Scan(&h.ID, &h.LocationID, &h.URI, &h.VCPUs, &h.MemoryMB, &h.DiskGB, &h.Pool, &h.Bridge, &h.ConsoleDir, &h.Draining, &h.Accel)
	if errors.Is(err, sql.ErrNoRows) {
		return h, fmt.Errorf("%w: libvirt host %d is not known", compute.ErrFailed, id)
	}
	return h, err
}

// Dial connects to a libvirt URI: qemu:///system (the local unix socket,
// /var/run/libvirt/libvirt-sock; ?socket=PATH for another), qemu+unix:///system,
// qemu+tcp://HOST[:16509]/system, qemu+tls://HOST[:16514]/system (?pkipath=DIR) and
// qemu+ssh://USER@HOST[:22]/system (Go's SSH client: ~/.ssh keys and known_hosts;
// ?keyfile=, ?known_hosts=, ?no_verify=1, ?socket= for the remote socket).
func Dial(uri string) (*libvirt.Libvirt, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("libvirt URI %q: %w", uri, err)
	}
	return libvirt.ConnectToURI(u)
}

// conn returns a connection to a host, dialing when there is none (or it broke). A
// new connection first brings Berth's network filters on the host up to date: a new
// Berth version updates them as it starts using a host.
func (d *Driver) conn(ctx context.Context, h host) (*libvirt.Libvirt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	l := d.conns[h.ID]
	d.mu.Unlock()
	if l != nil && l.IsConnected() {
		return l, nil
	}
	type res struct {
		l   *libvirt.Libvirt
		err error
	}
	ch := make(chan res, 1)
	go func() {
		l, err := Dial(h.URI)
		if err == nil {
			if ferr := defineFilters(l); ferr != nil {
				// Guests using a filter the host lacks will not start, and say why.
				d.opt.Log.Error("libvirt: network filters not defined", "host", h.ID, "err", ferr)
			}
		}
		ch <- res{l, err}
	}()
	var r res
	select {
	case r = <-ch:
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.l != nil {
				_ = r.l.Disconnect()
			}
		}()
		return nil, ctx.Err()
	}
	if r.err != nil {
		d.mu.Lock()
		d.down[h.ID] = time.Now()
		d.mu.Unlock()
		return nil, fmt.Errorf("%w: host %d (%s): %v", compute.ErrUnavailable, h.ID, h.URI, r.err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.down, h.ID)
	if old := d.conns[h.ID]; old != nil && old.IsConnected() {
		// Another call dialed meanwhile and may be using its connection: keep it.
		_ = r.l.Disconnect()
		return old, nil
	}
	d.conns[h.ID] = r.l
	return r.l, nil
}

// lv classifies an error of a libvirt call: an answer of libvirtd (libvirt.Error)
// stays as it is; anything else means the connection to the host broke, which is
// compute.ErrUnavailable (and the connection is dropped, to be dialed again).
func (d *Driver) lv(h host, what string, err error) error {
	if err == nil {
		return nil
	}
	var le libvirt.Error
	if errors.As(err, &le) {
		return fmt.Errorf("libvirt %s on host %d: %w", what, h.ID, err)
	}
	if errors.Is(err, compute.ErrUnavailable) || errors.Is(err, compute.ErrFailed) || errors.Is(err, compute.ErrNotFound) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	d.mu.Lock()
	if l := d.conns[h.ID]; l != nil {
		_ = l.Disconnect()
		delete(d.conns, h.ID)
	}
	d.down[h.ID] = time.Now()
	d.mu.Unlock()
	return fmt.Errorf("%w: host %d (%s): %s: %v", compute.ErrUnavailable, h.ID, h.URI, what, err)
}

// Unreachable reports whether the host of a machine could not be reached the last
// time Berth tried (the reconcile loop tries every few seconds). It never dials, so
// the API can ask it inside a request.
func (d *Driver) Unreachable(ctx context.Context, name string) bool {
	var hostID int64
	if err := d.read.QueryRowContext(ctx, d.rebind(`SELECT host_id FROM libvirt_machines WHERE name = ? AND destroyed_at IS NULL`), name).Scan(&hostID); err != nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	_, down := d.down[hostID]
	return down
}

func isCode(err error, code libvirt.ErrorNumber) bool {
	var le libvirt.Error
	return errors.As(err, &le) && le.Code == uint32(code)
}

// machine is a row of libvirt_machines.
type machine struct {
	Name, Domain            string
	HostID, LocationID      int64
	VCPUs, MemoryMB, DiskGB int
	Image                   string
	Gen                     int
	MAC, IPv4, IPv6         string
	Limits                  compute.Limits
	Destroyed               bool
	Counters                compute.Stats
	// Volumes are the volumes attached to it, which its definition holds: set by
	// withVolumes before a definition is written.
	Volumes []volume
}

func (m machine) diskVolume() string { return fmt.Sprintf("%s-disk-%d.qcow2", m.Domain, m.Gen) }
func (m machine) seedVolume() string { return fmt.Sprintf("%s-seed-%d.iso", m.Domain, m.Gen) }

func (d *Driver) machine(ctx context.Context, name string) (machine, error) {
	var m machine
	var destroyed sql.NullInt64
	var cpu, rx, tx, rd, wr int64
	err := d.db.QueryRowContext(ctx, d.rebind(`SELECT name, domain, host_id, location_id, vcpus, memory_mb, disk_gb, image, generation,
		mac, ipv4, ipv6, destroyed_at, cpu_ns, net_rx, net_tx, disk_read, disk_write, network_mbps, disk_iops, disk_mbps
		FROM libvirt_machines WHERE name = ?`), name).
		Scan(&m.Name, &m.Domain, &m.HostID, &m.LocationID, &m.VCPUs, &m.MemoryMB, &m.DiskGB, &m.Image, &m.Gen,
			&m.MAC, &m.IPv4, &m.IPv6, &destroyed, &cpu, &rx, &tx, &rd, &wr, &m.Limits.NetworkMbps, &m.Limits.DiskIOPS, &m.Limits.DiskMBps)
	if errors.Is(err, sql.ErrNoRows) {
		return m, compute.ErrNotFound
	}
	if err != nil {
		return m, err
	}
	m.Destroyed = destroyed.Valid
	m.Counters = compute.Stats{CPUTimeNS: uint64(cpu), NetRxBytes: uint64(rx), NetTxBytes: uint64(tx),
		DiskReadBytes: uint64(rd), DiskWriteBytes: uint64(wr)}
	return m, nil
}

// live returns a machine that exists (compute.ErrNotFound otherwise), its host and a
// connection to the host.
func (d *Driver) live(ctx context.Context, name string) (machine, host, *libvirt.Libvirt, error) {
	if err := ctx.Err(); err != nil {
		return machine{}, host{}, nil, err
	}
	m, err := d.machine(ctx, name)
	if err == nil && m.Destroyed {
		err = compute.ErrNotFound
	}
	if err != nil {
		return m, host{}, nil, err
	}
	h, err := d.host(ctx, m.HostID)
	if err != nil {
		return m, h, nil, err
	}
	l, err := d.conn(ctx, h)
	return m, h, l, err
}

// domain looks up a machine's domain; ok is false when it is not defined (yet, or
// any more). A domain of that name without Berth's marker is refused, never touched.
func (d *Driver) domain(l *libvirt.Libvirt, h host, m machine) (dom libvirt.Domain, ok bool, err error) {
	dom, err = l.DomainLookupByName(m.Domain)
	if libvirt.IsNotFound(err) {
		return dom, false, nil
	}
	if err != nil {
		return dom, false, d.lv(h, "lookup domain", err)
	}
	meta, err := l.DomainGetMetadata(dom, int32(libvirt.DomainMetadataElement), libvirt.OptString{MarkerNS}, 0)
	if err != nil || !markerMatches(meta, m.Name) {
		if err != nil {
			var le libvirt.Error
			if !errors.As(err, &le) {
				return dom, false, d.lv(h, "domain metadata", err)
			}
		}
		return dom, false, fmt.Errorf("%w: domain %s on host %d was not created by Berth for %s; it is left alone",
			compute.ErrFailed, m.Domain, h.ID, m.Name)
	}
	return dom, true, nil
}

// active reports whether a domain runs (running, paused, blocked, suspended).
func (d *Driver) active(l *libvirt.Libvirt, h host, dom libvirt.Domain) (bool, error) {
	st, _, err := l.DomainGetState(dom, 0)
	if err != nil {
		return false, d.lv(h, "domain state", err)
	}
	switch libvirt.DomainState(st) {
	case libvirt.DomainShutoff, libvirt.DomainCrashed, libvirt.DomainNostate:
		return false, nil
	}
	return true, nil
}

// ---- keys ----

// applied reports whether a step key was applied to a machine, and what it returned.
func (d *Driver) applied(ctx context.Context, name, key string) (result string, ok bool, err error) {
	err = d.db.QueryRowContext(ctx, d.rebind(`SELECT result FROM libvirt_keys WHERE machine = ? AND op_key = ?`), name, key).Scan(&result)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return result, err == nil, err
}

// record marks a step key applied (or updates what it returned).
func (d *Driver) record(ctx context.Context, name, key, event, result string) error {
	_, err := d.db.ExecContext(ctx, d.rebind(`INSERT INTO libvirt_keys (machine, op_key, event, result, at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (machine, op_key) DO UPDATE SET result = excluded.result`), name, key, event, result, d.now().UnixMilli())
	return err
}

// wait polls until done answers true, ctx ends or timeout passes (false, nil).
func (d *Driver) wait(ctx context.Context, timeout time.Duration, done func(i int) (bool, error)) (bool, error) {
	deadline := time.Now().Add(timeout)
	for i := 0; ; i++ {
		ok, err := done(i)
		if err != nil || ok {
			return ok, err
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		t := time.NewTimer(d.opt.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-t.C:
		}
	}
}

// mac derives a stable locally administered MAC address (QEMU's 52:54:00 range) for
// a domain.
func mac(domain string) string {
	h := sha256.Sum256([]byte(domain))
	return fmt.Sprintf("52:54:00:%02x:%02x:%02x", h[0], h[1], h[2])
}
