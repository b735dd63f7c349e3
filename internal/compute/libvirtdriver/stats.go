package libvirtdriver

import (
	"context"
	"strings"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute"
)

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
	recs, err := l.ConnectGetAllDomainStats([]libvirt.Domain{dom},
		uint32(libvirt.DomainStatsState|libvirt.DomainStatsCPUTotal|libvirt.DomainStatsVCPU|libvirt.DomainStatsInterface|libvirt.DomainStatsBlock), 0)
	if err != nil {
		return compute.Stats{}, false, d.lv(h, "domain stats", err)
	}
	st := compute.Stats{At: d.now()}
	if len(recs) == 0 {
		return st, false, nil
	}
	for _, p := range recs[0].Params {
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
	return st, st.Running, nil
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
