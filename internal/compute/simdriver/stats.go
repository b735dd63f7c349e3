package simdriver

import (
	"context"
	"database/sql"
	"errors"
	"hash/fnv"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/compute"
)

// Stats implements compute.Driver. The counters of a simulated machine grow by a load
// model (see load) while it runs and stand still while it is stopped or booting. They
// are kept in sim_counters, so they keep growing across a restart; the time between
// two readings is integrated minute by minute, so a gap (berthd was down, nobody
// asked) is filled as if the machine had run on, as a real guest does.
func (d *Driver) Stats(ctx context.Context, name string) (compute.Stats, error) {
	got, failed := d.StatsOf(ctx, []string{name})
	if err := failed[name]; err != nil {
		return compute.Stats{}, err
	}
	st, ok := got[name]
	if !ok {
		return compute.Stats{}, compute.ErrNotFound
	}
	return st, nil
}

// statsChunk is how many machines StatsOf reads and writes in one transaction: a
// sampler round over thousands of machines holds the write lock a little at a time,
// and a chunk's upsert stays far below either database's limit of bound parameters
// (7 a machine).
const statsChunk = 500

// StatsOf implements compute.StatsBatcher: Stats of many machines, in one query and
// one upsert each statsChunk of them, instead of a transaction each. A machine that
// does not exist (or was destroyed) is absent from both maps; the machines of a
// chunk the store failed to read or write are failed, the other chunks' read.
func (d *Driver) StatsOf(ctx context.Context, names []string) (got map[string]compute.Stats, failed map[string]error) {
	got = make(map[string]compute.Stats, len(names))
	// The full chunks' statements are the same text: prepared once a call, before
	// any transaction holds the connection (SQLite's writer has one), not parsed
	// anew each chunk (a sixth of a round's CPU on SQLite).
	stmts := statements{prepared: map[string]*sql.Stmt{}}
	defer stmts.close()
	if len(names) >= 2*statsChunk {
		for _, q := range []string{d.selectStats(statsChunk), d.upsertStats(statsChunk)} {
			if st, err := d.db.PrepareContext(ctx, q); err == nil {
				stmts.prepared[q] = st
			}
		}
	}
	chunk := make(map[string]compute.Stats, min(len(names), statsChunk)) // one a call, emptied each chunk
	for len(names) > 0 {
		n := min(len(names), statsChunk)
		clear(chunk)
		if err := d.statsChunk(ctx, &stmts, names[:n], chunk); err != nil {
			if failed == nil {
				failed = map[string]error{}
			}
			for _, name := range names[:n] {
				failed[name] = err
			}
		} else {
			maps.Copy(got, chunk)
		}
		names = names[n:]
	}
	return got, failed
}

// statements are queries prepared once for many transactions.
type statements struct {
	prepared map[string]*sql.Stmt
}

// in is query for tx: the prepared statement when there is one.
func (s *statements) in(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	if st := s.prepared[query]; st != nil {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, query)
}

func (s *statements) close() {
	for _, st := range s.prepared {
		st.Close()
	}
}

// selectStats reads n machines' state and counters.
func (d *Driver) selectStats(n int) string {
	return d.rebind(`SELECT m.name, m.state, m.vcpus, m.ready_at, c.at, c.cpu_ns, c.net_rx, c.net_tx, c.disk_read, c.disk_write
		FROM sim_machines m LEFT JOIN sim_counters c ON c.machine = m.name
		WHERE m.destroyed_at IS NULL AND m.name IN (` + placeholders(n) + `)`)
}

// upsertStats writes n machines' counters.
func (d *Driver) upsertStats(n int) string {
	values := strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?), ", n), ", ")
	return d.rebind(`INSERT INTO sim_counters (machine, at, cpu_ns, net_rx, net_tx, disk_read, disk_write)
		VALUES ` + values + ` ON CONFLICT (machine) DO UPDATE SET at = excluded.at, cpu_ns = excluded.cpu_ns,
		net_rx = excluded.net_rx, net_tx = excluded.net_tx, disk_read = excluded.disk_read, disk_write = excluded.disk_write`)
}

func (d *Driver) statsChunk(ctx context.Context, stmts *statements, names []string, out map[string]compute.Stats) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	sel, err := stmts.in(ctx, tx, d.selectStats(len(names)))
	if err != nil {
		return err
	}
	rows, err := sel.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	now := d.now()
	nowMS := now.UnixMilli()
	upsert := make([]any, 0, 7*len(names))
	// Scanned into the same variables row after row: declared in the loop, each
	// row's would escape to the heap (Scan takes pointers), 10 allocations a machine.
	var name, state string
	var vcpus int
	var readyAt int64
	var at, cpu, rx, sent, read, write sql.NullInt64
	for rows.Next() {
		if err := rows.Scan(&name, &state, &vcpus, &readyAt, &at, &cpu, &rx, &sent, &read, &write); err != nil {
			rows.Close()
			return err
		}
		c := counters{cpu.Int64, rx.Int64, sent.Int64, read.Int64, write.Int64}
		from := at.Int64
		if !at.Valid {
			from = nowMS // counters start at the first reading, as a guest's start at boot
		}
		running := compute.State(state) == compute.StateRunning && readyAt <= nowMS
		if running && nowMS > from {
			c = c.plus(loadOf(name).integrate(from, nowMS, vcpus))
		}
		upsert = append(upsert, name, max(from, nowMS), c.cpu, c.rx, c.tx, c.read, c.write)
		out[name] = compute.Stats{At: now, Running: running, VCPUs: vcpus, CPUTimeNS: uint64(c.cpu), NetRxBytes: uint64(c.rx),
			NetTxBytes: uint64(c.tx), DiskReadBytes: uint64(c.read), DiskWriteBytes: uint64(c.write)}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(upsert) == 0 {
		return nil
	}
	ins, err := stmts.in(ctx, tx, d.upsertStats(len(upsert)/7))
	if err != nil {
		return err
	}
	if _, err := ins.ExecContext(ctx, upsert...); err != nil {
		return err
	}
	return tx.Commit()
}

// placeholders is "?, ?, ..." n times.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// counters are cumulative: CPU nanoseconds and bytes (int64: what the database keeps).
type counters struct{ cpu, rx, tx, read, write int64 }

func (c counters) plus(o counters) counters {
	return counters{c.cpu + o.cpu, c.rx + o.rx, c.tx + o.tx, c.read + o.read, c.write + o.write}
}

// profile is a kind of workload. Utilisation is the share of the vCPUs in use (0–1);
// network and disk follow it.
type profile struct {
	cpuBase    float64 // utilisation at the quietest hour
	cpuDaily   float64 // added at the daily peak
	burstP     float64 // chance that a 10-minute slot holds a burst
	burstCPU   float64 // utilisation a full burst adds
	netBase    float64 // bytes/s received when idle
	netPerUtil float64 // bytes/s more received at full utilisation
	outRatio   float64 // sent per received
	diskRead   float64 // bytes/s read at full utilisation
	diskWrite  float64 // bytes/s written at full utilisation
}

var profiles = []profile{
	// A web server: follows the day, sends much more than it receives.
	{cpuBase: 0.04, cpuDaily: 0.25, burstP: 0.03, burstCPU: 0.4, netBase: 20e3, netPerUtil: 2e6, outRatio: 6, diskRead: 400e3, diskWrite: 150e3},
	// A database: busier, steadier, heavy on the disk.
	{cpuBase: 0.12, cpuDaily: 0.18, burstP: 0.05, burstCPU: 0.35, netBase: 50e3, netPerUtil: 1.2e6, outRatio: 1.5, diskRead: 6e6, diskWrite: 3e6},
	// Batch work: quiet, with frequent heavy bursts that read and write a lot.
	{cpuBase: 0.02, cpuDaily: 0.04, burstP: 0.12, burstCPU: 0.85, netBase: 5e3, netPerUtil: 400e3, outRatio: 0.3, diskRead: 12e6, diskWrite: 8e6},
	// A personal box: mostly idle.
	{cpuBase: 0.01, cpuDaily: 0.02, burstP: 0.01, burstCPU: 0.2, netBase: 1e3, netPerUtil: 50e3, outRatio: 1, diskRead: 100e3, diskWrite: 60e3},
}

// load is one machine's workload: a profile, the hour of its daily peak and a size,
// all drawn from the hash of its name, so that every machine looks different and the
// same machine looks the same after a restart.
type load struct {
	profile
	seed uint64
	peak float64 // hour of the day (UTC) when it is busiest
	size float64 // multiplies network and disk traffic
}

func loadOf(name string) load {
	h := fnv.New64a()
	h.Write([]byte(name))
	seed := h.Sum64()
	l := load{seed: seed, profile: profiles[seed%uint64(len(profiles))]}
	l.peak = 10 + 11*l.rand(0, 100)
	l.size = 0.5 + l.rand(0, 101)
	return l
}

// rand is a number in [0, 1) fixed by the machine, k and salt (splitmix64).
func (l load) rand(k int64, salt uint64) float64 {
	z := l.seed ^ salt*0x9e3779b97f4a7c15 ^ uint64(k)*0xbf58476d1ce4e5b9
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// noise is smooth value noise in [-1, 1]: a random value at every multiple of
// period (seconds), eased in between. A long period gives a slow drift.
func (l load) noise(t, period float64, salt uint64) float64 {
	k := math.Floor(t / period)
	f := t/period - k
	a, b := l.rand(int64(k), salt), l.rand(int64(k)+1, salt)
	f = f * f * (3 - 2*f)
	return 2*(a+(b-a)*f) - 1
}

// burst is the utilisation a burst adds at t: a 10-minute slot holds one with
// chance burstP, rising and falling within the slot.
func (l load) burst(t float64) float64 {
	const slot = 600
	k := math.Floor(t / slot)
	if l.rand(int64(k), 4) >= l.burstP {
		return 0
	}
	return l.burstCPU * (0.4 + 0.6*l.rand(int64(k), 5)) * math.Sin(math.Pi*(t/slot-k))
}

// util is the utilisation at Unix time t (seconds).
func (l load) util(t float64) float64 {
	day := 0.5 - 0.5*math.Cos(2*math.Pi*(t/3600-l.peak+12)/24) // 1 at the peak hour
	drift := l.noise(t, 3*3600, 1) + 0.5*l.noise(t, 1200, 2)
	base := l.cpuBase*(1+0.4*drift) + l.cpuDaily*day*(1+0.3*drift)
	u := base*(1+0.15*l.noise(t, 60, 3)) + l.burst(t)
	return min(max(u, 0.002), 1)
}

// rates are the load at Unix time t: utilisation, and bytes per second.
func (l load) rates(t float64) (util, rx, tx, read, write float64) {
	util = l.util(t)
	rx = l.size * (l.netBase + l.netPerUtil*util) * (1 + 0.2*l.noise(t, 60, 6))
	tx = rx * l.outRatio * (1 + 0.1*l.noise(t, 300, 7))
	read = l.size * l.diskRead * (0.1 + util) * (1 + 0.5*l.noise(t, 120, 8))
	write = l.size * l.diskWrite * (0.15 + util) * (1 + 0.4*l.noise(t, 180, 9))
	return util, rx, tx, read, write
}

// integrate sums the load between two Unix times (ms) for a machine of vcpus, in
// steps of at most a minute (coarser beyond two weeks).
func (l load) integrate(fromMS, toMS int64, vcpus int) counters {
	secs := float64(toMS-fromMS) / 1000
	n := max(1, min(int(math.Ceil(secs/60)), 20160))
	step := secs / float64(n)
	var u, rx, tx, rd, wr float64
	for i := range n {
		a, b, c, d, e := l.rates(float64(fromMS)/1000 + (float64(i)+0.5)*step)
		u, rx, tx, rd, wr = u+a, rx+b, tx+c, rd+d, wr+e
	}
	return counters{
		cpu: int64(u * step * float64(max(vcpus, 1)) * 1e9), rx: int64(rx * step), tx: int64(tx * step),
		read: int64(rd * step), write: int64(wr * step),
	}
}

// History implements metrics.HistoryReader: the readings of name's counters from
// from to to, step apart (the last at to), had the machine been in its present state
// all that time; counters start at zero at from. A sandbox's test clock fills the
// time it skips with them. compute.ErrNotFound when the machine does not exist.
func (d *Driver) History(ctx context.Context, name string, from, to time.Time, step time.Duration) ([]compute.Stats, error) {
	var state string
	var vcpus int
	var destroyed sql.NullInt64
	err := d.db.QueryRowContext(ctx, d.rebind(`SELECT state, vcpus, destroyed_at FROM sim_machines WHERE name = ?`), name).
		Scan(&state, &vcpus, &destroyed)
	if errors.Is(err, sql.ErrNoRows) || destroyed.Valid {
		return nil, compute.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if step <= 0 || !to.After(from) {
		return nil, nil
	}
	running := compute.State(state) == compute.StateRunning
	l := loadOf(name)
	var c counters
	out := []compute.Stats{{At: from, Running: running, VCPUs: vcpus}}
	for at := from; at.Before(to); {
		next := at.Add(step)
		if next.After(to) {
			next = to
		}
		if running {
			c = c.plus(l.integrate(at.UnixMilli(), next.UnixMilli(), vcpus))
		}
		out = append(out, compute.Stats{At: next, Running: running, VCPUs: vcpus, CPUTimeNS: uint64(c.cpu), NetRxBytes: uint64(c.rx),
			NetTxBytes: uint64(c.tx), DiskReadBytes: uint64(c.read), DiskWriteBytes: uint64(c.write)})
		at = next
	}
	return out, nil
}
