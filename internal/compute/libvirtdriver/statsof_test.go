package libvirtdriver_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/compute/libvirtdriver/libvirttest"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

// TestStatsOfHostDown (libvirt tier): StatsOf (and StatesOf) reads a round's machines one call a
// host; a host that cannot be reached fails its own machines only. The machine on
// the host that answers has no running domain, so it answers its kept counters (as
// Stats does) without a guest to boot; a destroyed or unknown machine is in neither
// map.
func TestStatsOfHostDown(t *testing.T) {
	t.Parallel()
	e := libvirttest.Require(t)
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir(), libvirtdriver.Storage())
	d := libvirtdriver.New(db.WriteDB(), nil, db.Rebind, libvirtdriver.Options{Prefix: e.Prefix + "so-", MaxMemoryMB: 256})
	up := libvirttest.Setup(t, e, d, "10.77.0.232", "10.77.0.233")
	for _, q := range []string{
		// Nothing listens on port 1: the dial is refused at once. Straight into the
		// table, as AddHost would refuse a host it cannot reach.
		`INSERT INTO libvirt_hosts (id, location_id, uri, vcpus, memory_mb, disk_gb, pool, bridge, console_dir, created_at)
			VALUES (900, 1, 'qemu+tcp://127.0.0.1:1/system', 4, 8192, 100, 'berth', 'berth0', '', 1)`,
		`INSERT INTO libvirt_machines (name, domain, host_id, location_id, vcpus, memory_mb, disk_gb, image, mac, ipv4, ipv6, created_at, cpu_ns, net_rx)
			VALUES ('server-so-up', '` + e.Prefix + `so-server-so-up', ?, 1, 2, 256, 1, 'image-1', '52:54:00:00:09:01', '10.77.0.232/24', '', 1, 123, 456)`,
		`INSERT INTO libvirt_machines (name, domain, host_id, location_id, vcpus, memory_mb, disk_gb, image, mac, ipv4, ipv6, created_at)
			VALUES ('server-so-down', '` + e.Prefix + `so-server-so-down', 900, 1, 1, 256, 1, 'image-1', '52:54:00:00:09:02', '10.77.0.233/24', '', 1)`,
		`INSERT INTO libvirt_machines (name, domain, host_id, location_id, vcpus, memory_mb, disk_gb, image, mac, ipv4, ipv6, created_at, destroyed_at)
			VALUES ('server-so-gone', '` + e.Prefix + `so-server-so-gone', ?, 1, 1, 256, 1, 'image-1', '52:54:00:00:09:03', '10.77.0.234/24', '', 1, 2)`,
	} {
		var args []any
		if strings.Contains(q, "?") {
			args = []any{up.ID}
		}
		if _, err := db.WriteDB().ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { // before Setup's cleanup, which destroys what is left: the host is gone
		if _, err := db.WriteDB().Exec(`UPDATE libvirt_machines SET destroyed_at = 3 WHERE host_id = 900`); err != nil {
			t.Error(err)
		}
	})
	start := time.Now()
	got, failed := d.StatsOf(ctx, []string{"server-so-up", "server-so-down", "server-so-gone", "server-absent"})
	if st, ok := got["server-so-up"]; !ok || st.Running || st.VCPUs != 2 || st.CPUTimeNS != 123 || st.NetRxBytes != 456 {
		t.Errorf("the machine on the host that answers: %+v (%v); want its kept counters", st, ok)
	}
	if err := failed["server-so-down"]; !errors.Is(err, compute.ErrUnavailable) {
		t.Errorf("the machine on the host that cannot be reached: %v; want ErrUnavailable", err)
	}
	if len(got) != 1 || len(failed) != 1 {
		t.Errorf("read %v, failed %v; want one of each (the destroyed and the unknown machine in neither)", got, failed)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("StatsOf took %s", d)
	}
	one, err := d.Stats(ctx, "server-so-up")
	if err != nil || one.CPUTimeNS != 123 || one.Running {
		t.Errorf("Stats of the same machine: %+v, %v", one, err)
	}

	// The power states, the same way: one call a host, the host down failing its own.
	states, sfailed := d.StatesOf(ctx, []string{"server-so-up", "server-so-down", "server-so-gone", "server-absent"})
	if st, ok := states["server-so-up"]; !ok || st != compute.StateStopped {
		t.Errorf("the state of the machine on the host that answers: %q (%v); want stopped (it has no domain)", st, ok)
	}
	if err := sfailed["server-so-down"]; !errors.Is(err, compute.ErrUnavailable) {
		t.Errorf("the state of the machine on the host that cannot be reached: %v; want ErrUnavailable", err)
	}
	if len(states) != 1 || len(sfailed) != 1 {
		t.Errorf("states %v, failed %v; want one of each", states, sfailed)
	}
}
