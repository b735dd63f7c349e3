package libvirtdriver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/compute/libvirtdriver/libvirttest"
	"github.com/berthhq/berth/internal/testenv"
)

// virshNumbers runs virsh and reads its "name : number" lines (domiftune,
// blkdeviotune).
func virshNumbers(t *testing.T, uri string, args ...string) map[string]int64 {
	t.Helper()
	out, err := exec.Command("virsh", append([]string{"-c", uri}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("virsh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	got := map[string]int64{}
	for _, m := range regexp.MustCompile(`(?m)^\s*([\w.]+)\s*:\s*(\d+)\s*$`).FindAllStringSubmatch(string(out), -1) {
		got[m[1]], _ = strconv.ParseInt(m[2], 10, 64)
	}
	return got
}

// TestPlanLimitsOnRealGuests: a plan's disk limits are in force on a running guest
// (virsh blkdeviotune), its network limit in the guest's definition (virsh domiftune),
// and a rescale changes both, either way: to a plan with other limits, and to one
// without any (absent: no limit; checked in the definition, which the next start
// uses: a boot less on a slow machine). Where the host's kernel can shape traffic the guest
// is also started with its network limit and the live values are checked; where it
// cannot (this CI machine's kernel has no sfq queue and no police action: libvirt
// cannot start such a guest) that part says so loudly.
func TestPlanLimitsOnRealGuests(t *testing.T) {
	t.Parallel()
	e := libvirttest.Require(t)
	ctx := context.Background()
	prefix := e.Prefix + "lim-"
	env := testenv.New(t, testenv.Options{Driver: "libvirt", RateLimit: 1_000_000,
		Libvirt: libvirtdriver.Options{Prefix: prefix, Poll: 100 * time.Millisecond}})
	c, err := catalog.Parse([]byte(`
plans:
  - {id: 1, name: disk-capped, vcpus: 1, memory_mb: 256, disk_gb: 1, price_hourly: "0.0010", price_monthly: "0.5000", disk_iops: 400, disk_mbps: 20}
  - {id: 2, name: all-capped,  vcpus: 1, memory_mb: 256, disk_gb: 2, price_hourly: "0.0020", price_monthly: "1.0000", network_mbps: 100, disk_iops: 800, disk_mbps: 40}
  - {id: 3, name: uncapped,    vcpus: 1, memory_mb: 256, disk_gb: 2, price_hourly: "0.0030", price_monthly: "1.5000"}
images:
  - {id: 1, name: ubuntu-24.04, os: ubuntu, version: "24.04"}
  - {id: 2, name: debian-12,    os: debian, version: "12"}
apps: []
locations:
  - {id: 1, name: lab1, city: Here, country: DE, snapshot_price_gb_hour: "0.0001", images: [1, 2], plans: [{id: 1}, {id: 2}, {id: 3}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.App.Service.ApplyCatalog(ctx, c); err != nil {
		t.Fatal(err)
	}
	libvirttest.Setup(t, e, env.App.LibvirtDriver(), "10.77.0.210", "10.77.0.214")
	acct := env.NewAccount("en", "100.00", "")
	start := time.Now()
	srv := acct.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}).Want(t, 201).Map(t)["data"].(map[string]any)
	name := srv["name"].(string)
	dom := prefix + name
	con := libvirttest.NewConsole(t, dom)
	pace := libvirttest.RunPace()
	acct.WaitStatusEvery(t, name, "running", libvirttest.FirstBoot, guestPoll)
	con.WaitCount("BERTH-GUEST ready", 1, libvirttest.FirstBoot)
	pace.Saw(time.Since(start))

	l, err := libvirtdriver.Dial(e.URI)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Disconnect()
	d, err := l.DomainLookupByName(dom)
	if err != nil {
		t.Fatal(err)
	}
	mac := ""
	if x, err := l.DomainGetXMLDesc(d, 0); err == nil {
		if m := regexp.MustCompile(`<mac address='([0-9a-f:]+)'`).FindStringSubmatch(x); m != nil {
			mac = m[1]
		}
	}
	if mac == "" {
		t.Fatalf("no MAC address in %s's definition", dom)
	}
	// want checks the limits virsh shows (--config: the definition; else the running
	// guest).
	want := func(step string, config bool, netKBps, iops, bytes int64) {
		t.Helper()
		var flags []string
		if config {
			flags = []string{"--config"}
		}
		net := virshNumbers(t, e.URI, append([]string{"domiftune", dom, mac}, flags...)...)
		disk := virshNumbers(t, e.URI, append([]string{"blkdeviotune", dom, "vda"}, flags...)...)
		if net["inbound.average"] != netKBps || net["outbound.average"] != netKBps {
			t.Errorf("%s: virsh domiftune %v shows %v, want %d KB/s each way", step, flags, net, netKBps)
		}
		if disk["total_iops_sec"] != iops || disk["total_bytes_sec"] != bytes {
			t.Errorf("%s: virsh blkdeviotune %v shows %v, want %d IOPS and %d B/s", step, flags, disk, iops, bytes)
		}
	}
	rescale := func(plan int) {
		t.Helper()
		acct.Do("POST", "/servers/"+name+"/rescale", map[string]any{"plan_id": plan, "upgrade_disk": true}).Want(t, 200)
		acct.WaitStatusEvery(t, name, "stopped", pace.Boots(1), guestPoll)
	}
	power := func(action, status string) {
		t.Helper()
		acct.Do("POST", "/servers/"+name+"/power", map[string]any{"action": action}).Want(t, 200)
		acct.WaitStatusEvery(t, name, status, pace.Boots(1), guestPoll)
	}

	want("plan 1, running", false, 0, 400, 20_000_000)
	power("off", "stopped")
	rescale(2)
	want("rescaled to plan 2", true, 12_500, 800, 40_000_000)
	if ok, why := libvirttest.CanShape(); ok {
		booted, boots := time.Now(), con.Count("BERTH-GUEST ready")+1
		power("on", "running")
		con.WaitBoot(pace, booted, boots)
		want("plan 2, running", false, 12_500, 800, 40_000_000)
		power("off", "stopped")
	} else {
		msg := fmt.Sprintf("\n%s\n!! LIBVIRT TIER: %s: a guest with a network limit cannot start here;\n!! plan 2's limits were checked in the definition only\n%s",
			strings.Repeat("!", 78), why, strings.Repeat("!", 78))
		fmt.Fprintln(os.Stderr, msg)
		t.Log(msg)
	}
	rescale(3)
	want("rescaled to plan 3 (no limits)", true, 0, 0, 0)
}

// TestKVMHostThatCannot: a host added with --accel kvm starts its guests with KVM.
// Where KVM is not usable (CI machines: some have no /dev/kvm, and libvirt refuses
// the domain's definition; on others it is there, but QEMU fails with it at the
// start), ordering a server fails its operation at once with an error that names KVM
// and the way out, and nothing falls back to TCG behind the operator's back; where it is
// usable, the guest runs as a kvm domain.
func TestKVMHostThatCannot(t *testing.T) {
	t.Parallel()
	e := libvirttest.Require(t)
	ctx := context.Background()
	prefix := e.Prefix + "kvm-"
	env := testenv.New(t, testenv.Options{Driver: "libvirt", RateLimit: 1_000_000,
		Libvirt: libvirtdriver.Options{Prefix: prefix, Poll: 100 * time.Millisecond}})
	c, err := catalog.Parse([]byte(testCatalog))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.App.Service.ApplyCatalog(ctx, c); err != nil {
		t.Fatal(err)
	}
	h := libvirttest.SetupAccel(t, e, env.App.LibvirtDriver(), "10.77.0.215", "10.77.0.216", libvirtdriver.AccelKVM)
	if h.Accel != libvirtdriver.AccelKVM || h.AccelMode != libvirtdriver.AccelKVM {
		t.Fatalf("host added with --accel kvm: accel %q, mode %q", h.Accel, h.AccelMode)
	}
	acct := env.NewAccount("en", "100.00", "")
	srv := acct.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}).Want(t, 201).Map(t)["data"].(map[string]any)
	name := srv["name"].(string)
	got := operationEnd(t, acct, srv)
	if h.AccelNote == "" {
		// KVM is usable here: the guest runs under it.
		if got["status"] != "success" {
			t.Fatalf("provisioning on a host with usable KVM: %v", got)
		}
		l, err := libvirtdriver.Dial(e.URI)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Disconnect()
		d, err := l.DomainLookupByName(prefix + name)
		if err != nil {
			t.Fatal(err)
		}
		if x, err := l.DomainGetXMLDesc(d, 0); err != nil || !strings.HasPrefix(x, "<domain type='kvm'") {
			t.Fatalf("domain of a KVM host: %v %.40q", err, x)
		}
		return
	}
	msg, _ := got["error"].(string)
	want := fmt.Sprintf("berthd admin host accel %d tcg", h.ID)
	if got["status"] != "error" || !strings.Contains(msg, "KVM") || !strings.Contains(msg, want) {
		t.Fatalf("provisioning on a host that claims KVM it cannot use: %v; want an error naming KVM and %q", got, want)
	}
	t.Logf("the operation's error: %s", msg)
	if s := acct.Do("GET", "/servers/"+name, nil).Want(t, 200).Map(t)["data"].(map[string]any); s["status"] == "running" {
		t.Fatalf("server runs after its provisioning failed: %v", s)
	}

	// What the error says to do: the host runs its next guests with TCG, and they boot.
	d := env.App.LibvirtDriver()
	if h, err := d.SetAccel(ctx, h.ID, libvirtdriver.AccelTCG); err != nil || h.Accel != libvirtdriver.AccelTCG || h.AccelMode != libvirtdriver.AccelTCG {
		t.Fatalf("SetAccel tcg: %+v, %v", h, err)
	}
	srv = acct.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}).Want(t, 201).Map(t)["data"].(map[string]any)
	if got := operationEnd(t, acct, srv); got["status"] != "success" {
		t.Fatalf("provisioning after host accel tcg: %v", got)
	}
}

// operationEnd waits (up to a first boot's time) for the operation of an order's
// answer srv to end, and returns it.
func operationEnd(t *testing.T, acct *testenv.Account, srv map[string]any) map[string]any {
	t.Helper()
	op := srv["operation"].(map[string]any)
	for deadline := time.Now().Add(libvirttest.FirstBoot); ; {
		got := acct.Do("GET", fmt.Sprintf("/operations/%v", op["id"]), nil).Want(t, 200).Map(t)["data"].(map[string]any)
		if got["status"] != "running" {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("operation %v still running after %v: %v", op["id"], libvirttest.FirstBoot, got)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
