package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute/libvirtdriver/libvirttest"
	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// TestFailedProvisioningUndoneAfterSIGKILL (issue 27): berthd on a real libvirt host
// whose guests cannot start (added with --accel kvm where KVM is not usable: libvirt
// refuses the domain's definition where there is no /dev/kvm, QEMU its start where
// KVM is there but fails, a failure no retry mends) is SIGKILLed in the middle of
// two failing provisionings, each with its disk, seed and address made (and its
// domain, where QEMU is what refuses): one before its undo, one after. After a restart on the same store each provisioning
// ends in error, nothing of its machine is left on the host (virsh list --all, virsh
// vol-list), and its charge is refunded exactly once.
func TestFailedProvisioningUndoneAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	e := libvirttest.Require(t)
	bin := testenv.BerthdBinary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	store := storeFlags(t, data)
	run := func(args ...string) map[string]any { return runJSON(t, bin, append(args, store...)...) }
	run("migrate")
	cat := filepath.Join(dir, "catalog.yaml")
	if err := os.WriteFile(cat, []byte(revertCatalog), 0o600); err != nil {
		t.Fatal(err)
	}
	run("admin", "catalog", "apply", cat)
	h := run("admin", "host", "add", "--location", "1", "--uri", e.URI, "--pool", e.Pool, "--bridge", e.Bridge, "--accel", "kvm",
		"--vcpus", "64", "--memory-gb", "64", "--disk-gb", "1000")
	if h["accel_note"] == nil {
		t.Skipf("KVM is usable on this host (%v): a guest's start does not fail here", h)
	}
	run("admin", "pool", "add", "--location", "1", "--cidr", "10.77.0.0/24", "--gateway", "10.77.0.1", "--first", "10.77.0.245", "--last", "10.77.0.246")
	run("admin", "image", "import", e.Image, "--location", "1", "--image", "1")
	acct := run("admin", "account", "create", "--email", "revert@example.com", "--password", "long-enough-pw", "--credit", "100")
	token := run("admin", "token", "create", "--account", fmt.Sprint(acct["id"]), "--name", "revert", "--scopes", "servers")["token"].(string)

	prefix := e.Prefix + "kill-"
	d := &faultDaemon{bin: bin, data: data, addr: testnet.FreeAddr(t), logPath: filepath.Join(dir, "serve.log"), store: store,
		serve: append(serveStoreFlags(t, data), "--driver", "libvirt", "--libvirt-prefix", prefix, "--sweep-every", faultSweepEvery)}
	t.Cleanup(d.kill)
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := os.ReadFile(d.logPath)
			t.Logf("berthd's log:\n%s", log)
		}
	})
	c := &faultClient{token: token, base: d.base(), http: &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	order := func() string {
		code, m, err := c.call("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1})
		if err != nil || code != 201 {
			t.Fatalf("order: %d %v %v", code, m, err)
		}
		return m["data"].(map[string]any)["name"].(string)
	}
	// killWhen SIGKILLs berthd as soon as seen() holds, polled every few ms.
	killWhen := func(what string, seen func() bool) {
		for deadline := time.Now().Add(2 * time.Minute); !seen(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("berthd was not seen %s within 2 minutes", what)
			}
		}
		d.kill()
	}
	logged := func(msg, server string) bool {
		b, _ := os.ReadFile(d.logPath)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, msg) && strings.Contains(line, server) {
				return true
			}
		}
		return false
	}

	// gone checks that a failed provisioning ended in error, left nothing on the
	// host and was refunded once.
	gone := func(name string) {
		t.Helper()
		srv := waitFaultStatus(t, c, name, "error")
		if srv["ipv4"] != nil || srv["ipv6"] != nil {
			t.Errorf("%s: the failed server shows addresses: %v", name, srv)
		}
		if doms := virshLines(t, e.URI, prefix+name, "list", "--all", "--name"); len(doms) > 0 {
			t.Errorf("%s: domains left %q", name, doms)
		}
		if vols := virshLines(t, e.URI, prefix+name, "vol-list", e.Pool); len(vols) > 0 {
			t.Errorf("%s: volumes left %q", name, vols)
		}
		_, list, err := c.call("GET", "/billing/transactions", nil)
		if err != nil {
			t.Fatal(err)
		}
		refunds := 0
		for _, x := range list["data"].([]any) {
			x := x.(map[string]any)
			if r, ok := x["resource"].(map[string]any); ok && x["type"] == "refund" && r["id"] == srv["id"] {
				refunds++
			}
		}
		if refunds != 1 {
			t.Errorf("%s: refunded %d times, want once", name, refunds)
		}
	}

	// Killed once the provisioning has failed for good, before its undo; then once
	// its undo is done, before the operation's end commits (a window of milliseconds:
	// the kill may come after the end, which the log then says).
	if err := d.start(); err != nil {
		t.Fatal(err)
	}
	decided := order()
	killWhen("deciding that the provisioning of "+decided+" failed", func() bool { return logged("operation failed", decided) })
	if logged("provisioning undone", decided) {
		t.Errorf("the kill came after the undo of %s: the restart had no undo left to do", decided)
	}
	if err := d.start(); err != nil {
		t.Fatal(err)
	}
	gone(decided)

	undone := order()
	killWhen("undoing the provisioning of "+undone, func() bool { return logged("provisioning undone", undone) })
	if logged("operation finished", undone) {
		t.Logf("the kill came after the end of %s's provisioning", undone)
	}
	if err := d.start(); err != nil {
		t.Fatal(err)
	}
	gone(undone)
	if err := d.stop(); err != nil {
		t.Error(err)
	}
}

// revertCatalog is small plans at one location (a catalog's least: two disk sizes,
// two images).
const revertCatalog = `
plans:
  - {id: 1, name: tiny-1g, vcpus: 1, memory_mb: 256, disk_gb: 1, price_hourly: "0.0010", price_monthly: "0.5000"}
  - {id: 2, name: tiny-2g, vcpus: 1, memory_mb: 256, disk_gb: 2, price_hourly: "0.0020", price_monthly: "1.0000"}
images:
  - {id: 1, name: ubuntu-24.04, os: ubuntu, version: "24.04"}
  - {id: 2, name: debian-12, os: debian, version: "12"}
apps: []
locations:
  - {id: 1, name: lab1, city: Here, country: DE, snapshot_price_gb_hour: "0.0001", images: [1, 2], plans: [{id: 1}, {id: 2}]}
`

// virshLines runs virsh and returns the lines of its output that hold s.
func virshLines(t *testing.T, uri, s string, args ...string) []string {
	t.Helper()
	out, err := exec.Command("virsh", append([]string{"-c", uri}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("virsh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var lines []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, s) {
			lines = append(lines, strings.TrimSpace(line))
		}
	}
	return lines
}

// waitFaultStatus waits until server name shows status with no operation.
func waitFaultStatus(t *testing.T, c *faultClient, name, status string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(250 * time.Millisecond) {
		code, m, err := c.call("GET", "/servers/"+name, nil)
		if err == nil && code == 200 {
			srv := m["data"].(map[string]any)
			if srv["status"] == status && srv["operation"] == nil {
				return srv
			}
			if time.Now().After(deadline) {
				t.Fatalf("server %s: %v after 2 minutes, want %s", name, srv, status)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %s: %d %v %v", name, code, m, err)
		}
	}
}
