package libvirtdriver_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

// benchHostURI is libvirtd's test hypervisor, reached through the daemon as a qemu
// host is: its domains are records in libvirtd's memory, so ten thousand of them
// "run" on a machine that could boot a handful of guests, behind the same RPC and
// the same driver code.
const benchHostURI = "test+unix:///default"

// BenchmarkBatchOneHost: the libvirt driver's batched reads over
// BERTH_BENCH_DOMAINS (default 10,000) running domains of one host (issue 34: the
// metrics sampler's StatsOf, one ConnectGetAllDomainStats a host, and the reconcile
// loop's StatesOf, one ConnectListAllDomains a host), machine rows read from SQLite
// as berthd reads them. Skips when libvirtd does not answer.
//
//	go test -run '^$' -bench BenchmarkBatchOneHost -benchtime 5x ./internal/compute/libvirtdriver/
func BenchmarkBatchOneHost(b *testing.B) {
	n := 10_000
	if v, err := strconv.Atoi(os.Getenv("BERTH_BENCH_DOMAINS")); err == nil && v > 0 {
		n = v
	}
	l, err := libvirtdriver.Dial(benchHostURI)
	if err != nil {
		b.Skipf("libvirtd's test hypervisor (%s) does not answer: %v", benchHostURI, err)
	}
	b.Cleanup(func() { _ = l.Disconnect() })
	prefix := fmt.Sprintf("berthbench%d-", os.Getpid())
	start := time.Now()
	var doms []libvirt.Domain
	b.Cleanup(func() {
		for _, dom := range doms {
			_ = l.DomainDestroy(dom)
			_ = l.DomainUndefine(dom)
		}
	})
	for i := range n {
		dom, err := l.DomainDefineXML(fmt.Sprintf(`<domain type='test'><name>%sserver-%d</name>`+
			`<metadata><berth:machine xmlns:berth='%s' name='server-%d' generation='1'/></metadata>`+
			`<memory unit='MiB'>128</memory><vcpu>1</vcpu><os><type arch='x86_64'>hvm</type></os></domain>`, prefix, i, libvirtdriver.MarkerNS, i))
		if err != nil {
			b.Fatalf("define domain %d: %v", i, err)
		}
		doms = append(doms, dom)
		if err := l.DomainCreate(dom); err != nil {
			b.Fatalf("start domain %d: %v", i, err)
		}
	}
	b.Logf("%d domains defined and started on %s in %s", n, benchHostURI, time.Since(start).Round(time.Millisecond))

	ctx := context.Background()
	db := sqlstoretest.SQLite(b, b.TempDir(), libvirtdriver.Storage())
	// The test hypervisor has no network filters: the driver logs it once, not for us.
	d := libvirtdriver.New(db.WriteDB(), nil, db.Rebind, libvirtdriver.Options{Prefix: prefix, Log: slog.New(slog.DiscardHandler)})
	for _, q := range []string{
		`INSERT INTO libvirt_hosts (id, location_id, uri, vcpus, memory_mb, disk_gb, pool, bridge, console_dir, created_at)
			VALUES (1, 1, '` + benchHostURI + `', 100000, 100000000, 100000, 'berth', 'berth0', '', 1)`,
		`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 - 1)
			INSERT INTO libvirt_machines (name, domain, host_id, location_id, vcpus, memory_mb, disk_gb, image, mac, ipv4, ipv6, created_at)
			SELECT 'server-' || i, '` + prefix + `server-' || i, 1, 1, 1, 128, 1, 'image-1',
				printf('52:54:00:%02x:%02x:%02x', i / 65536, (i / 256) % 256, i % 256),
				printf('10.%d.%d.%d/8', i / 65536, (i / 256) % 256, i % 256), '', 1 FROM n`,
	} {
		if _, err := db.WriteDB().ExecContext(ctx, q, n); err != nil {
			b.Fatalf("seed: %v", err)
		}
	}
	b.Cleanup(func() { // the machines' domains are the benchmark's to remove, not the driver's
		_, _ = db.WriteDB().Exec(`UPDATE libvirt_machines SET destroyed_at = 2`)
	})
	names := make([]string, n)
	for i := range names {
		names[i] = "server-" + strconv.Itoa(i)
	}

	b.Run(fmt.Sprintf("domains=%d/StatsOf", n), func(b *testing.B) {
		for b.Loop() {
			got, failed := d.StatsOf(ctx, names)
			if len(got) != n || len(failed) != 0 {
				b.Fatalf("StatsOf read %d machines of %d, failed %d: %v", len(got), n, len(failed), firstError(failed))
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "machines/s")
	})
	b.Run(fmt.Sprintf("domains=%d/StatesOf", n), func(b *testing.B) {
		for b.Loop() {
			got, failed := d.StatesOf(ctx, names)
			if len(got) != n || len(failed) != 0 {
				b.Fatalf("StatesOf read %d machines of %d, failed %d: %v", len(got), n, len(failed), firstError(failed))
			}
			for name, st := range got {
				if st != "running" {
					b.Fatalf("%s: %s, want running", name, st)
				}
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "machines/s")
	})
	// What the batches replace: a machine read alone (lookup, marker, state), for 1%
	// of them; the figure per machine is the one to compare.
	b.Run(fmt.Sprintf("domains=%d/Machine-each", n), func(b *testing.B) {
		for b.Loop() {
			for _, name := range names[:max(n/100, 1)] {
				if m, err := d.Machine(ctx, name); err != nil || m.State != "running" {
					b.Fatalf("Machine(%s): %+v, %v", name, m, err)
				}
			}
		}
		b.ReportMetric(float64(max(n/100, 1))*float64(b.N)/b.Elapsed().Seconds(), "machines/s")
	})
}

func firstError(m map[string]error) error {
	for _, err := range m {
		return err
	}
	return nil
}
