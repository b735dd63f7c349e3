package libvirtdriver_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/compute/libvirtdriver/libvirttest"
	"github.com/berthhq/berth/internal/testenv"
)

// A catalog of plans small enough for TCG guests on a CI machine.
const testCatalog = `
plans:
  - {id: 1, name: tiny-1c-256m, vcpus: 1, memory_mb: 256, disk_gb: 1, price_hourly: "0.0010", price_monthly: "0.5000"}
  - {id: 2, name: tiny-2c-384m, vcpus: 2, memory_mb: 384, disk_gb: 2, price_hourly: "0.0020", price_monthly: "1.0000"}
images:
  - {id: 1, name: ubuntu-24.04, os: ubuntu, version: "24.04"}
  - {id: 2, name: debian-12,    os: debian, version: "12"}
apps: []
locations:
  - id: 1
    name: lab1
    city: Here
    country: DE
    snapshot_price_gb_hour: "0.0001"
    images: [1, 2]
    plans: [{id: 1}, {id: 2}]
`

const testKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl berth-test"

// console follows a guest's serial log on this host.
type console struct {
	t    *testing.T
	path string
}

func (c console) text() string {
	b, _ := os.ReadFile(c.path)
	return string(b)
}

// waitCount waits until line occurs at least n times in the log.
func (c console) waitCount(line string, n int, timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for strings.Count(c.text(), line) < n {
		if time.Now().After(deadline) {
			c.t.Fatalf("console %s: %q seen %d times, want %d; log:\n%s", c.path, line, strings.Count(c.text(), line), n, c.text())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// guestPoll is how often the tests of real guests poll a server: a tight loop would
// take CPU from the guests they wait for.
const guestPoll = 250 * time.Millisecond

// TestServerLifeCycleThroughTheAPI drives one real guest through the HTTP API: order,
// the seed's values on its console, power actions checked against libvirt's own
// domain state, a memory snapshot and its restore, rescale with upgrade_disk,
// reinstall, a guest that powers itself off, and delete. Its deadlines derive from
// its guest's first boot (libvirttest.Pace).
func TestServerLifeCycleThroughTheAPI(t *testing.T) {
	t.Parallel() // the two guests' tests share the host, not their machines
	e := libvirttest.Require(t)
	ctx := context.Background()
	prefix := e.Prefix + "api-"
	env := testenv.New(t, testenv.Options{Driver: "libvirt", RateLimit: 1_000_000,
		Libvirt: libvirtdriver.Options{Prefix: prefix, Poll: 100 * time.Millisecond}})
	c, err := catalog.Parse([]byte(testCatalog))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.App.Service.ApplyCatalog(ctx, c); err != nil {
		t.Fatal(err)
	}
	d := env.App.LibvirtDriver()
	// in_stock follows the hosts: none yet, so nothing is in stock.
	if loc := env.NewAccount("en", "", "").Do("GET", "/locations", nil).Want(t, 200).Map(t)["data"].([]any)[0].(map[string]any); loc["plans"].([]any)[0].(map[string]any)["in_stock"] != false {
		t.Fatalf("in stock without hosts: %v", loc)
	}
	libvirttest.Setup(t, e, d, "10.77.0.150", "10.77.0.199")
	l, err := libvirtdriver.Dial(e.URI)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Disconnect()

	acct := env.NewAccount("en", "100.00", "")
	key := acct.Do("POST", "/ssh-keys", map[string]any{"name": "laptop", "public_key": testKey}).Want(t, 201).Map(t)["data"].(map[string]any)
	start := time.Now()
	srv := acct.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1,
		"ssh_key_ids": []any{key["id"]}, "root_password": "correct horse battery"}).Want(t, 201).Map(t)["data"].(map[string]any)
	name := srv["name"].(string)
	dom := prefix + name
	domain := func() libvirt.Domain {
		t.Helper()
		dd, err := l.DomainLookupByName(dom)
		if err != nil {
			t.Fatalf("domain %s: %v", dom, err)
		}
		return dd
	}
	con := libvirttest.NewConsole(t, dom)
	pace := libvirttest.RunPace()
	srv = acct.WaitStatusEvery(t, name, "running", libvirttest.FirstBoot, guestPoll)
	running := time.Since(start)
	con.WaitCount("BERTH-SEED ipv4=", 1, libvirttest.FirstBoot)
	seeded := time.Since(start)
	con.WaitCount("BERTH-GUEST ready", 1, libvirttest.FirstBoot)
	pace.Saw(time.Since(start) - running)
	t.Logf("POST /servers → status running %.2fs, → seed read on the console %.2fs, → ready %.2fs; deadlines from here: %s a boot",
		running.Seconds(), seeded.Seconds(), time.Since(start).Seconds(), pace.Boots(1))
	for _, want := range []string{"BERTH-SEED hostname=" + name, "BERTH-SEED ssh-key=" + testKey, "BERTH-SEED root-password=set",
		fmt.Sprintf("BERTH-SEED ipv4=%s/24", srv["ipv4"]), fmt.Sprintf("BERTH-SEED ipv6=%s/64", srv["ipv6"])} {
		if !strings.Contains(con.Text(), want) {
			t.Fatalf("console lacks %q:\n%s", want, con.Text())
		}
	}
	// The guest runs as its host does: KVM there, KVM here.
	hosts, err := d.Hosts(ctx, 1)
	if err != nil || len(hosts) != 1 {
		t.Fatalf("hosts: %v, %v", hosts, err)
	}
	wantType := map[string]string{libvirtdriver.AccelKVM: "kvm", libvirtdriver.AccelTCG: "qemu"}[hosts[0].Accel]
	if x, err := l.DomainGetXMLDesc(domain(), 0); err != nil || !strings.HasPrefix(x, "<domain type='"+wantType+"'") {
		t.Fatalf("host accel %s: domain definition %v starts %.40q", hosts[0].Accel, err, x)
	}

	state := func() libvirt.DomainState {
		t.Helper()
		st, _, err := l.DomainGetState(domain(), 0)
		if err != nil {
			t.Fatal(err)
		}
		return libvirt.DomainState(st)
	}
	power := func(action, status string, want libvirt.DomainState) {
		t.Helper()
		acct.Do("POST", "/servers/"+name+"/power", map[string]any{"action": action}).Want(t, 200)
		acct.WaitStatusEvery(t, name, status, pace.Boots(2), guestPoll)
		if got := state(); got != want {
			t.Fatalf("after %s: libvirt says domain state %d, want %d", action, got, want)
		}
	}
	// Every boot below is waited for with the run's pace, and measured into it.
	power("off", "stopped", libvirt.DomainShutoff)
	booted := time.Now()
	power("on", "running", libvirt.DomainRunning)
	con.WaitBoot(pace, booted, 2)
	// reboot: ACPI shutdown, then a new start (a new QEMU process: a new domain id).
	before := domain().ID
	power("reboot", "running", libvirt.DomainRunning)
	booted = time.Now() // (the shutdown took its part)
	if after := domain().ID; after == before {
		t.Fatalf("reboot kept domain id %d: the guest was not restarted", after)
	}
	con.WaitBoot(pace, booted, 3)
	before = domain().ID
	booted = time.Now()
	power("reset", "running", libvirt.DomainRunning)
	if after := domain().ID; after != before {
		t.Fatalf("reset changed the domain id (%d → %d): a reset keeps the process", before, after)
	}
	con.WaitCount("BERTH-GUEST booting", 4, pace.Boots(1)) // the reset guest boots again
	con.WaitBoot(pace, booted, 4)

	// A memory snapshot, then a forced off; restoring it resumes the guest where it was.
	acct.Do("POST", "/servers/"+name+"/snapshots", map[string]any{"name": "with-memory", "include_memory": true}).Want(t, 201)
	acct.WaitStatusEvery(t, name, "running", pace.Boots(1), guestPoll)
	snaps := acct.Do("GET", "/servers/"+name+"/snapshots", nil).Want(t, 200).Map(t)["data"].([]any)
	snap := snaps[0].(map[string]any)
	if snap["status"] != "available" || snap["size_gb"].(float64) < 1 {
		t.Fatalf("snapshot = %v", snap)
	}
	if ls, _, err := l.DomainListAllSnapshots(domain(), 1, 0); err != nil || len(ls) != 1 {
		t.Fatalf("libvirt snapshots of %s: %v, %v; want one", dom, ls, err)
	}
	power("off", "stopped", libvirt.DomainShutoff)
	boots := con.Count("BERTH-GUEST booting")
	acct.Do("POST", fmt.Sprintf("/servers/%s/snapshots/%v/restore", name, snap["id"]), nil).Want(t, 200)
	acct.WaitStatusEvery(t, name, "running", pace.Boots(1), guestPoll)
	if got := state(); got != libvirt.DomainRunning {
		t.Fatalf("after restoring a memory snapshot: domain state %d, want running", got)
	}
	time.Sleep(2 * time.Second)
	if n := con.Count("BERTH-GUEST booting"); n != boots {
		t.Fatalf("the restored guest booted again (%d boots, was %d): a memory snapshot resumes it", n, boots)
	}

	// Rescale with upgrade_disk: the definition and the volume follow.
	power("off", "stopped", libvirt.DomainShutoff)
	acct.Do("POST", "/servers/"+name+"/rescale", map[string]any{"plan_id": 2, "upgrade_disk": true}).Want(t, 200)
	acct.WaitStatusEvery(t, name, "stopped", pace.Boots(1), guestPoll)
	_, maxMem, _, vcpus, _, err := l.DomainGetInfo(domain())
	if err != nil || vcpus != 2 || maxMem != 384<<10 {
		t.Fatalf("after rescale: domain %d vCPUs, %d KiB, %v; want 2 and 384 MiB", vcpus, maxMem, err)
	}
	if got := diskCapacity(t, l, e.Pool, dom); got != 2<<30 {
		t.Fatalf("after rescale: disk %d bytes, want 2 GiB", got)
	}
	booted, next := time.Now(), con.Count("BERTH-GUEST ready")+1
	power("on", "running", libvirt.DomainRunning)
	con.WaitBoot(pace, booted, next)

	// Reinstall: a new overlay and seed (a new instance-id), same addresses.
	ready := con.Count("BERTH-GUEST ready")
	booted = time.Now()
	acct.Do("POST", "/servers/"+name+"/reinstall", map[string]any{"image_id": 2}).Want(t, 200)
	acct.WaitStatusEvery(t, name, "running", pace.Boots(1), guestPoll)
	con.WaitCount("BERTH-SEED instance-id="+dom+"-2", 1, pace.Boots(1))
	con.WaitBoot(pace, booted, ready+1)
	time.Sleep(time.Second)

	// A guest that powers itself off (here: ACPI sent behind Berth's back) is noticed.
	deadline := time.Now().Add(pace.Boots(1))
	for state() != libvirt.DomainShutoff {
		_ = l.DomainShutdownFlags(domain(), libvirt.DomainShutdownAcpiPowerBtn)
		if time.Now().After(deadline) {
			t.Fatal("the guest did not power off")
		}
		time.Sleep(time.Second)
	}
	acct.WaitStatusEvery(t, name, "stopped", pace.Boots(1), guestPoll)

	// Delete: the domain and its volumes are gone.
	acct.Do("DELETE", "/servers/"+name, nil).Want(t, 204)
	deadline = time.Now().Add(pace.Boots(1))
	for {
		_, err := l.DomainLookupByName(dom)
		if libvirt.IsNotFound(err) && len(volumes(t, l, e.Pool, dom)) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after delete: domain lookup %v, volumes %v", err, volumes(t, l, e.Pool, dom))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func volumes(t *testing.T, l *libvirt.Libvirt, poolName, dom string) []string {
	t.Helper()
	pool, err := l.StoragePoolLookupByName(poolName)
	if err != nil {
		t.Fatal(err)
	}
	_ = l.StoragePoolRefresh(pool, 0)
	vols, _, err := l.StoragePoolListAllVolumes(pool, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range vols {
		if strings.HasPrefix(v.Name, dom+"-") {
			out = append(out, v.Name)
		}
	}
	return out
}

func diskCapacity(t *testing.T, l *libvirt.Libvirt, poolName, dom string) uint64 {
	t.Helper()
	pool, err := l.StoragePoolLookupByName(poolName)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range volumes(t, l, poolName, dom) {
		if strings.Contains(v, "-disk-") {
			vol, err := l.StorageVolLookupByName(pool, v)
			if err != nil {
				t.Fatal(err)
			}
			_, capacity, _, err := l.StorageVolGetInfo(vol)
			if err != nil {
				t.Fatal(err)
			}
			return capacity
		}
	}
	t.Fatalf("no disk volume of %s", dom)
	return 0
}
