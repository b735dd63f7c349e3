package sqlstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/simdriver"
	"github.com/berthhq/berth/internal/testpg"
)

// TestCopyDriverTables: a copy to PostgreSQL writes the drivers' tables, which it
// learns from the drivers (compute.Storage): the simulated machines keep their
// addresses (they derive from SQLite's implicit rowid, which PostgreSQL's schema
// spells out), a libvirt host keeps its id and the ids after it continue. A target
// that holds only a driver's row is not empty, and a source opened without a driver
// whose tables it holds is refused rather than copied without them.
func TestCopyDriverTables(t *testing.T) {
	t.Parallel()
	testpg.Require(t)
	ctx := context.Background()
	pg := kinds()[1]
	dir := t.TempDir()
	src := openMigrated(t, dir, drivers()...)
	sim := simdriver.New(src.WriteDB(), 0, src.Rebind)
	for _, name := range []string{"server-c1", "server-c2", "server-c3"} {
		if _, err := sim.Create(ctx, "create", compute.Spec{Name: name, VCPUs: 1, MemoryMB: 512, DiskGB: 10, Image: "image-1"}); err != nil {
			t.Fatal(err)
		}
	}
	// A gap in the rowids, as a deleted row leaves.
	if _, err := src.WriteDB().Exec(`DELETE FROM sim_machines WHERE name = 'server-c2'`); err != nil {
		t.Fatal(err)
	}
	if _, err := src.WriteDB().Exec(`INSERT INTO libvirt_hosts (id, location_id, uri, vcpus, memory_mb, disk_gb, pool, bridge, console_dir, created_at)
		VALUES (7, 1, 'qemu:///system', 4, 8192, 100, 'berth', 'br0', '', 1)`); err != nil {
		t.Fatal(err)
	}

	dst := pg.migrated(t, pg.fresh(t), drivers()...)
	counts, err := src.CopyTo(ctx, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if counts["sim_machines"] != 2 || counts["sim_events"] != 3 || counts["libvirt_hosts"] != 1 {
		t.Errorf("copied %v", counts)
	}
	onPG := simdriver.New(dst.WriteDB(), 0, dst.Rebind)
	for _, name := range []string{"server-c1", "server-c3"} {
		want, err := sim.Machine(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := onPG.Machine(ctx, name); err != nil || got != want {
			t.Errorf("machine %s on PostgreSQL = %+v, %v; want %+v as on SQLite", name, got, err, want)
		}
	}
	var id int64
	if err := dst.WriteDB().QueryRow(`INSERT INTO libvirt_hosts (location_id, uri, vcpus, memory_mb, disk_gb, pool, bridge, console_dir, created_at)
		VALUES (1, 'qemu+ssh://b/system', 4, 8192, 100, 'berth', 'br0', '', 1) RETURNING id`).Scan(&id); err != nil || id != 8 {
		t.Errorf("a host added after the copy got id %d, %v; want 8", id, err)
	}

	only := pg.migrated(t, pg.fresh(t), drivers()...)
	if _, err := only.WriteDB().Exec(`INSERT INTO libvirt_hosts (location_id, uri, vcpus, memory_mb, disk_gb, pool, bridge, console_dir, created_at)
		VALUES (1, 'qemu:///system', 4, 8192, 100, 'berth', 'br0', '', 1)`); err != nil {
		t.Fatal(err)
	}
	if table, err := only.Empty(ctx); err != nil || table != "libvirt_hosts" {
		t.Errorf("Empty of a database with a libvirt host = %q, %v", table, err)
	}

	src.Close()
	simOnly := openMigrated(t, dir, simdriver.Storage())
	if _, err := simOnly.CopyTo(ctx, pg.migrated(t, pg.fresh(t), drivers()...), nil); err == nil || !strings.Contains(err.Error(), "libvirt_") {
		t.Errorf("copy of a source opened without the libvirt driver = %v, want its tables unknown", err)
	}
}
