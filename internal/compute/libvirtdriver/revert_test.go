package libvirtdriver_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/compute/libvirtdriver/libvirttest"
	"github.com/berthhq/berth/internal/testenv"
)

// virshNames runs virsh and returns the lines of its output that hold prefix (the
// names of a test's domains or volumes).
func virshNames(t *testing.T, uri, prefix string, args ...string) []string {
	t.Helper()
	out, err := exec.Command("virsh", append([]string{"-c", uri}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("virsh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, prefix) {
			names = append(names, strings.TrimSpace(line))
		}
	}
	return names
}

// TestFailedCreationLeavesNothing (issue 27): a provisioning failing for good at each
// step of making its machine on a real host (disk, seed, define, start) leaves nothing
// of it: no domain (virsh list --all), no volume in the pool (virsh vol-list), no
// address taken from the location's pool; the server ends in error without
// addresses and its charge is refunded. Before, all of it stayed until the owner
// deleted the server.
func TestFailedCreationLeavesNothing(t *testing.T) {
	t.Parallel()
	e := libvirttest.Require(t)
	ctx := context.Background()
	prefix := e.Prefix + "rev-"
	var failAt atomic.Value // the step the next creation fails at
	env := testenv.New(t, testenv.Options{Driver: "libvirt", RateLimit: 1_000_000,
		Libvirt: libvirtdriver.Options{Prefix: prefix, Poll: 100 * time.Millisecond, CreateFault: func(_, step string) error {
			if step == failAt.Load() {
				return fmt.Errorf("%w: the test's fault at %s", compute.ErrFailed, step)
			}
			return nil
		}}})
	c, err := catalog.Parse([]byte(testCatalog))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.App.Service.ApplyCatalog(ctx, c); err != nil {
		t.Fatal(err)
	}
	libvirttest.Setup(t, e, env.App.LibvirtDriver(), "10.77.0.240", "10.77.0.243")
	acct := env.NewAccount("en", "100.00", "")
	for _, step := range compute.CreateSteps {
		failAt.Store(step)
		srv := acct.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}).Want(t, 201).Map(t)["data"].(map[string]any)
		name := srv["name"].(string)
		got := acct.WaitStatusEvery(t, name, "error", 2*time.Minute, guestPoll)
		if got["ipv4"] != nil || got["ipv6"] != nil {
			t.Errorf("%s: the failed server shows addresses: %v", step, got)
		}
		if doms := virshNames(t, e.URI, prefix+name, "list", "--all", "--name"); len(doms) > 0 {
			t.Errorf("failing at %s left domains %q", step, doms)
		}
		if vols := virshNames(t, e.URI, prefix+name, "vol-list", e.Pool); len(vols) > 0 {
			t.Errorf("failing at %s left volumes %q", step, vols)
		}
		var taken int
		if err := env.App.DB.WriteDB().QueryRowContext(ctx, env.App.DB.Rebind(`SELECT COUNT(*) FROM libvirt_addresses WHERE machine = ?`), name).Scan(&taken); err != nil || taken != 0 {
			t.Errorf("failing at %s left %d addresses taken (%v)", step, taken, err)
		}
	}
	// Four addresses in the pool, four failed provisionings: each gave its address
	// back, so the next order has one.
	failAt.Store("")
	srv := acct.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}).Want(t, 201).Map(t)["data"].(map[string]any)
	op := acct.Do("GET", fmt.Sprintf("/operations/%v?wait=60", srv["operation"].(map[string]any)["id"]), nil).Want(t, 200).Map(t)["data"].(map[string]any)
	if got := acct.Do("GET", "/servers/"+srv["name"].(string), nil).Want(t, 200).Map(t)["data"].(map[string]any); got["status"] != "running" || got["ipv4"] == nil {
		t.Errorf("the order after the failed ones: %v (operation %v)", got, op)
	}
	list := acct.Do("GET", "/billing/transactions", nil).Want(t, 200).Map(t)["data"].([]any)
	refunds := 0
	for _, x := range list {
		if x.(map[string]any)["type"] == "refund" {
			refunds++
		}
	}
	if refunds != len(compute.CreateSteps) {
		t.Errorf("%d refunds, want one per failed provisioning (%d)", refunds, len(compute.CreateSteps))
	}
	env.AssertLedger(t)
}
