package libvirtdriver_test

import (
	"context"
	"testing"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/computetest"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

func TestStorage(t *testing.T) {
	t.Parallel()
	computetest.ExerciseStorage(t, libvirtdriver.Storage())
}

// HostUsage (compute.Hosted) reads the hosts and their machines from the database
// alone: capacity, use, and the host part of the URI (never its user, port or
// parameters, which may name key files). A host this process has not tried is
// reachable.
func TestHostUsage(t *testing.T) {
	t.Parallel()
	db := sqlstoretest.SQLite(t, t.TempDir(), libvirtdriver.Storage())
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO libvirt_hosts (id, location_id, uri, vcpus, memory_mb, disk_gb, pool, bridge, console_dir, draining, created_at)
			VALUES (2, 1, 'qemu+ssh://root@host-a.example:2222/system?keyfile=/etc/berth/key', 16, 65536, 500, 'berth', 'br0', '', 1, 1)`,
		`INSERT INTO libvirt_hosts (id, location_id, uri, vcpus, memory_mb, disk_gb, pool, bridge, console_dir, created_at)
			VALUES (5, 2, 'qemu:///system', 4, 8192, 100, 'berth', 'br0', '', 1)`,
		`INSERT INTO libvirt_machines (name, domain, host_id, location_id, vcpus, memory_mb, disk_gb, image, mac, ipv4, ipv6, created_at)
			VALUES ('server-a', 'berth-server-a', 2, 1, 2, 2048, 20, 'image-1', '52:54:00:00:00:01', '192.0.2.10/24', '', 1)`,
		`INSERT INTO libvirt_machines (name, domain, host_id, location_id, vcpus, memory_mb, disk_gb, image, mac, ipv4, ipv6, created_at, destroyed_at)
			VALUES ('server-gone', 'berth-server-gone', 2, 1, 4, 4096, 40, 'image-1', '52:54:00:00:00:02', '192.0.2.11/24', '', 1, 2)`,
	} {
		if _, err := db.WriteDB().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	d := libvirtdriver.New(db.WriteDB(), nil, db.Rebind, libvirtdriver.Options{})
	got, err := d.HostUsage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []compute.HostUsage{
		{ID: 2, LocationID: 1, Address: "host-a.example", VCPUs: 16, UsedVCPUs: 2, MemoryMB: 65536, UsedMemoryMB: 2048,
			DiskGB: 500, UsedDiskGB: 20, Machines: 1, Draining: true, Reachable: true},
		{ID: 5, LocationID: 2, Address: "local", VCPUs: 4, MemoryMB: 8192, DiskGB: 100, Reachable: true},
	}
	if len(got) != len(want) {
		t.Fatalf("HostUsage = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("host %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
