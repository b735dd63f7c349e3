// Package libvirttest is the libvirt test tier's setup: it finds libvirtd and the test
// image (scripts/libvirt-setup.sh and scripts/build-test-image.sh make them), and skips
// the test LOUDLY when they are missing — or fails it when BERTH_LIBVIRT_REQUIRED=1,
// as .ci/run sets, so that CI cannot pass without running them.
package libvirttest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute/libvirtdriver"
)

// Env is what the tier runs on.
type Env struct {
	URI    string // libvirt URI of the local host
	Image  string // the test image (qcow2)
	Pool   string // storage pool
	Bridge string
	// Prefix names this test process's domains and volumes.
	Prefix string
}

var (
	once    sync.Once
	env     Env
	missing string
)

// Require returns the environment, or skips (fails, when required) the test.
func Require(t testing.TB) Env {
	t.Helper()
	once.Do(func() { env, missing = probe() })
	if missing != "" {
		msg := fmt.Sprintf("\n"+strings.Repeat("!", 78)+"\n!! LIBVIRT TIER NOT RUN: %s\n!! Run scripts/libvirt-setup.sh and scripts/build-test-image.sh as root (.ci/run does).\n"+strings.Repeat("!", 78), missing)
		if os.Getenv("BERTH_LIBVIRT_REQUIRED") == "1" {
			t.Fatal(msg)
		}
		fmt.Fprintln(os.Stderr, msg)
		t.Skip(msg)
	}
	return env
}

func probe() (Env, string) {
	e := Env{URI: os.Getenv("BERTH_TEST_LIBVIRT_URI"), Image: os.Getenv("BERTH_TEST_IMAGE"), Pool: "berth", Bridge: "berth0",
		Prefix: fmt.Sprintf("berthtest%d-", os.Getpid())}
	if e.URI == "" {
		e.URI = "qemu:///system"
	}
	if e.Image == "" {
		e.Image = "/var/lib/berth/test-image.qcow2"
	}
	if _, err := os.Stat(e.Image); err != nil {
		return e, "no test image at " + e.Image
	}
	l, err := libvirtdriver.Dial(e.URI)
	if err != nil {
		return e, fmt.Sprintf("libvirtd not reachable at %s: %v", e.URI, err)
	}
	defer l.Disconnect()
	if _, err := l.StoragePoolLookupByName(e.Pool); err != nil {
		return e, fmt.Sprintf("no storage pool %q: %v", e.Pool, err)
	}
	if _, err := os.Stat("/sys/class/net/" + e.Bridge); err != nil {
		return e, "no bridge " + e.Bridge
	}
	sweep(l, e.Pool)
	return e, ""
}

// sweep removes what earlier test processes that died left behind: domains and
// volumes named berthtest<pid>- of a process that is gone.
func sweep(l *libvirt.Libvirt, poolName string) {
	gone := func(name string) bool {
		rest, ok := strings.CutPrefix(name, "berthtest")
		if !ok {
			return false
		}
		pid, _, ok := strings.Cut(rest, "-")
		if !ok || pid == fmt.Sprint(os.Getpid()) {
			return false
		}
		_, err := os.Stat("/proc/" + pid)
		return err != nil
	}
	doms, _, _ := l.ConnectListAllDomains(1, 0)
	for _, d := range doms {
		if gone(d.Name) {
			_ = l.DomainDestroy(d)
			_ = l.DomainUndefineFlags(d, libvirt.DomainUndefineSnapshotsMetadata)
		}
	}
	if logs, err := filepath.Glob("/var/log/libvirt/qemu/berthtest*-console.log"); err == nil {
		for _, f := range logs {
			if gone(filepath.Base(f)) {
				_ = os.Remove(f)
			}
		}
	}
	if pool, err := l.StoragePoolLookupByName(poolName); err == nil {
		_ = l.StoragePoolRefresh(pool, 0)
		vols, _, _ := l.StoragePoolListAllVolumes(pool, 1, 0)
		for _, v := range vols {
			if gone(v.Name) {
				_ = l.StorageVolDelete(v, 0)
			}
		}
	}
}

// Setup gives a driver its test host (location 1, room for many machines), an address
// pool on the bridge (10.77.0.first-last, IPv6 fd77::/64) and the test image as
// image-1 and image-2. Machines it still has when the test ends are destroyed.
func Setup(t testing.TB, e Env, d *libvirtdriver.Driver, first, last string) {
	t.Helper()
	ctx := context.Background()
	if _, err := d.AddHost(ctx, libvirtdriver.HostSpec{LocationID: 1, URI: e.URI, VCPUs: 64, MemoryMB: 64 << 10, DiskGB: 1000,
		Pool: e.Pool, Bridge: e.Bridge}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.AddPool(ctx, libvirtdriver.PoolSpec{LocationID: 1, CIDR: "10.77.0.0/24", Gateway: "10.77.0.1",
		First: first, Last: last, IPv6Prefix: "fd77::/64"}); err != nil {
		t.Fatal(err)
	}
	for _, img := range []string{"image-1", "image-2"} {
		if _, err := d.ImportImage(ctx, 1, img, e.Image); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		names, err := d.Machines(ctx)
		if err != nil {
			t.Errorf("cleanup: %v", err)
		}
		for _, n := range names {
			if err := d.Destroy(ctx, "test-cleanup", n); err != nil {
				t.Errorf("cleanup of %s: %v", n, err)
			}
		}
		d.Close()
	})
}
