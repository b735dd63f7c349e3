package libvirtdriver

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute"
)

var _ compute.StatsBatcher = (*Driver)(nil)

// Stats implements compute.Driver from libvirt's domain stats (cpu.time, net.N.rx/tx
// .bytes, block.N.rd/wr.bytes). A stopped domain reports no counters: the last ones
// read while it ran are kept in Berth's database and answered instead.
func (d *Driver) Stats(ctx context.Context, name string) (compute.Stats, error) {
	m, h, l, err := d.live(ctx, name)
	if err != nil {
		return compute.Stats{}, err
	}
	out := m.Counters
	out.At, out.VCPUs = d.now(), m.VCPUs
	dom, ok, err := d.domain(l, h, m)
	if err != nil || !ok {
		return out, err
	}
	st, ok, err := d.readStats(l, h, dom)
	if err != nil || !ok {
		return out, err
	}
	d.saveCounters(ctx, m, st)
	return st, nil
}

// readStats reads a running domain's counters; ok is false when it is not running.
func (d *Driver) readStats(l *libvirt.Libvirt, h host, dom libvirt.Domain) (compute.Stats, bool, error) {
	recs, err := l.ConnectGetAllDomainStats([]libvirt.Domain{dom}, statsFlags, 0)
	if err != nil {
		return compute.Stats{}, false, d.lv(h, "domain stats", err)
	}
	if len(recs) == 0 {
		return compute.Stats{At: d.now()}, false, nil
	}
	st := parseStats(recs[0].Params, d.now())
	return st, st.Running, nil
}

// statsFlags are the groups of domain stats Berth reads.
const statsFlags = uint32(libvirt.DomainStatsState | libvirt.DomainStatsCPUTotal | libvirt.DomainStatsVCPU | libvirt.DomainStatsInterface |
	libvirt.DomainStatsBlock)

// parseStats reads a domain's stats record (cpu.time, net.N.rx/tx.bytes,
// block.N.rd/wr.bytes) into Stats at at.
func parseStats(params []libvirt.TypedParam, at time.Time) compute.Stats {
	st := compute.Stats{At: at}
	for _, p := range params {
		v := uintValue(p.Value)
		f := p.Field
		switch {
		case f == "state.state":
			st.Running = libvirt.DomainState(v) == libvirt.DomainRunning || libvirt.DomainState(v) == libvirt.DomainPaused ||
				libvirt.DomainState(v) == libvirt.DomainBlocked
		case f == "cpu.time":
			st.CPUTimeNS = v
		case f == "vcpu.current":
			st.VCPUs = int(v)
		case strings.HasPrefix(f, "net.") && strings.HasSuffix(f, ".rx.bytes"):
			st.NetRxBytes += v
		case strings.HasPrefix(f, "net.") && strings.HasSuffix(f, ".tx.bytes"):
			st.NetTxBytes += v
		case strings.HasPrefix(f, "block.") && strings.HasSuffix(f, ".rd.bytes"):
			st.DiskReadBytes += v
		case strings.HasPrefix(f, "block.") && strings.HasSuffix(f, ".wr.bytes"):
			st.DiskWriteBytes += v
		}
	}
	return st
}

// statsChunk is how many machines StatsOf looks up in one query.
const statsChunk = 500

// statsHosts is how many hosts StatsOf reads at once: a slow host delays only its
// own machines' reading.
const statsHosts = 16

// StatsOf implements compute.StatsBatcher: one ConnectGetAllDomainStats a host, for
// every running domain on it, instead of a lookup, a metadata read and a stats call
// a machine; the hosts read in parallel. A machine whose domain is not running (or
// not defined) answers its kept counters, as Stats does. A host that cannot be
// reached fails its machines only. The domains are matched by name (Berth's prefix
// and the machine's): unlike Stats, the batch reads no domain's marker, as reading
// a foreign domain's counters changes nothing.
func (d *Driver) StatsOf(ctx context.Context, names []string) (map[string]compute.Stats, map[string]error) {
	return perHost(ctx, d, names, d.hostStats)
}

var _ compute.StatesBatcher = (*Driver)(nil)

// StatesOf implements compute.StatesBatcher: one ConnectListAllDomains a host, of
// its running domains, instead of a lookup, a marker read and a state read a
// machine. A domain is matched by name only (its marker is not read): the reconcile
// loop confirms with Machine what it acts on.
func (d *Driver) StatesOf(ctx context.Context, names []string) (map[string]compute.State, map[string]error) {
	return perHost(ctx, d, names, d.hostStates)
}

// perHost reads names' machines grouped by host, read(host, its machines) for each,
// statsHosts hosts at once. A machine of a host whose read failed, or that could not
// be found in the store, is in failed; one that does not exist in neither map.
func perHost[T any](ctx context.Context, d *Driver, names []string, read func(context.Context, int64, []machine) (map[string]T, error)) (map[string]T, map[string]error) {
	got, failed := make(map[string]T, len(names)), map[string]error{}
	byHost := map[int64][]machine{}
	for len(names) > 0 {
		n := min(len(names), statsChunk)
		ms, err := d.liveMachines(ctx, names[:n])
		if err != nil {
			for _, name := range names[:n] {
				failed[name] = err
			}
		}
		for _, m := range ms {
			byHost[m.HostID] = append(byHost[m.HostID], m)
		}
		names = names[n:]
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, statsHosts)
	for hostID, ms := range byHost {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			st, err := read(ctx, hostID, ms)
			mu.Lock()
			defer mu.Unlock()
			for _, m := range ms {
				if err != nil {
					failed[m.Name] = err
				} else {
					got[m.Name] = st[m.Name]
				}
			}
		})
	}
	wg.Wait()
	return got, failed
}

// hostConn is a host and a connection to it.
func (d *Driver) hostConn(ctx context.Context, hostID int64) (host, *libvirt.Libvirt, error) {
	h, err := d.host(ctx, hostID)
	if err != nil {
		return h, nil, err
	}
	l, err := d.conn(ctx, h)
	return h, l, err
}

// hostStates reads which of a host's machines run, in one call.
func (d *Driver) hostStates(ctx context.Context, hostID int64, ms []machine) (map[string]compute.State, error) {
	h, l, err := d.hostConn(ctx, hostID)
	if err != nil {
		return nil, err
	}
	doms, _, err := l.ConnectListAllDomains(1, libvirt.ConnectListDomainsActive)
	if err != nil {
		return nil, d.lv(h, "list domains", err)
	}
	running := make(map[string]bool, len(doms))
	for _, dom := range doms {
		running[dom.Name] = true
	}
	out := make(map[string]compute.State, len(ms))
	for _, m := range ms {
		out[m.Name] = compute.StateStopped
		if running[m.Domain] {
			out[m.Name] = compute.StateRunning
		}
	}
	return out, nil
}

// liveMachines are the machines of names that exist (not destroyed), with their
// kept counters.
func (d *Driver) liveMachines(ctx context.Context, names []string) ([]machine, error) {
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	rows, err := d.read.QueryContext(ctx, d.rebind(`SELECT name, domain, host_id, vcpus, cpu_ns, net_rx, net_tx, disk_read, disk_write
		FROM libvirt_machines WHERE destroyed_at IS NULL AND name IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ")+`)`), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []machine
	for rows.Next() {
		var m machine
		var cpu, rx, tx, rd, wr int64
		if err := rows.Scan(&m.Name, &m.Domain, &m.HostID, &m.VCPUs, &cpu, &rx, &tx, &rd, &wr); err != nil {
			return nil, err
		}
		m.Counters = compute.Stats{CPUTimeNS: uint64(cpu), NetRxBytes: uint64(rx), NetTxBytes: uint64(tx),
			DiskReadBytes: uint64(rd), DiskWriteBytes: uint64(wr)}
		out = append(out, m)
	}
	return out, rows.Err()
}

// hostStats reads the counters of a host's machines in one call and keeps those of
// the running ones.
func (d *Driver) hostStats(ctx context.Context, hostID int64, ms []machine) (map[string]compute.Stats, error) {
	h, l, err := d.hostConn(ctx, hostID)
	if err != nil {
		return nil, err
	}
	recs, err := l.ConnectGetAllDomainStats(nil, statsFlags, uint32(libvirt.ConnectGetAllDomainsStatsActive))
	if err != nil {
		return nil, d.lv(h, "all domain stats", err)
	}
	now := d.now()
	running := make(map[string]compute.Stats, len(recs))
	for _, r := range recs {
		if st := parseStats(r.Params, now); st.Running {
			running[r.Dom.Name] = st
		}
	}
	out := make(map[string]compute.Stats, len(ms))
	var keep []machine
	for _, m := range ms {
		st, ok := running[m.Domain]
		if !ok {
			st = m.Counters
			st.At, st.VCPUs = now, m.VCPUs
		} else {
			m.Counters = st
			keep = append(keep, m)
		}
		out[m.Name] = st
	}
	d.saveAllCounters(ctx, keep)
	return out, nil
}

// saveAllCounters is saveCounters of many machines, in one transaction.
func (d *Driver) saveAllCounters(ctx context.Context, ms []machine) {
	if len(ms) == 0 {
		return
	}
	err := func() error {
		tx, err := d.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		st, err := tx.PrepareContext(ctx, d.rebind(`UPDATE libvirt_machines SET cpu_ns = ?, net_rx = ?, net_tx = ?, disk_read = ?, disk_write = ? WHERE name = ?`))
		if err != nil {
			return err
		}
		defer st.Close()
		for _, m := range ms {
			c := m.Counters
			if _, err := st.ExecContext(ctx, int64(c.CPUTimeNS), int64(c.NetRxBytes), int64(c.NetTxBytes), int64(c.DiskReadBytes), int64(c.DiskWriteBytes), m.Name); err != nil {
				return err
			}
		}
		return tx.Commit()
	}()
	if err != nil {
		d.opt.Log.Warn("libvirt: counters not kept", "machines", len(ms), "err", err)
	}
}

func uintValue(v libvirt.TypedParamValue) uint64 {
	switch x := v.I.(type) {
	case int32:
		return uint64(max(x, 0))
	case uint32:
		return uint64(x)
	case int64:
		return uint64(max(x, 0))
	case uint64:
		return x
	case float64:
		return uint64(max(x, 0))
	}
	return 0
}

func (d *Driver) saveCounters(ctx context.Context, m machine, st compute.Stats) {
	_, err := d.db.ExecContext(ctx, d.rebind(`UPDATE libvirt_machines SET cpu_ns = ?, net_rx = ?, net_tx = ?, disk_read = ?, disk_write = ? WHERE name = ?`),
		int64(st.CPUTimeNS), int64(st.NetRxBytes), int64(st.NetTxBytes), int64(st.DiskReadBytes), int64(st.DiskWriteBytes), m.Name)
	if err != nil {
		d.opt.Log.Warn("libvirt: counters not kept", "machine", m.Name, "err", err)
	}
}

// keepCounters saves a running domain's counters before it stops, so a stopped
// machine's counters stay where they were.
func (d *Driver) keepCounters(ctx context.Context, m machine, h host, l *libvirt.Libvirt, dom libvirt.Domain) {
	if st, ok, err := d.readStats(l, h, dom); err == nil && ok {
		d.saveCounters(ctx, m, st)
	}
}
