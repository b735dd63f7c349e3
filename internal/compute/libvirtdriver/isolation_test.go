package libvirtdriver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/compute/libvirtdriver/libvirttest"
	"github.com/berthhq/berth/internal/testenv"
)

// spoofer is a recipe (run by the test image's init with busybox sh once booted)
// that gives the guest a second IPv4 and IPv6 address that are not its own and
// sends packets from them to the host, between packets from its own addresses.
func spoofer(v4, v6 string) string {
	return fmt.Sprintf(`own4=$(ip -4 addr show dev eth0 | awk '/inet /{print $2}' | cut -d/ -f1 | head -n1)
own6=$(ip -6 addr show dev eth0 scope global | awk '/inet6 /{print $2}' | cut -d/ -f1 | head -n1)
ip addr add %[1]s/24 dev eth0
ip -6 addr add %[2]s/64 dev eth0
sleep 3
for i in $(seq 1 15); do
	ping -c 1 -W 1 -I %[1]s 10.77.0.1
	ping -c 1 -W 1 -I "$own4" 10.77.0.1
	ping -6 -c 1 -W 1 -I %[2]s fd77::1
	ping -6 -c 1 -W 1 -I "$own6" fd77::1
done
`, v4, v6)
}

// TestTenantTrafficFilter: a guest whose recipe sends packets from addresses that are
// not its own. On the host's bridge tcpdump sees the guest's own addresses, never the
// spoofed ones: Berth's filter drops them on the guest's port. A guest of a Berth
// with the test-only switch (no filter) is seen spoofing: the filter is what stops it.
func TestTenantTrafficFilter(t *testing.T) {
	t.Parallel()
	e := libvirttest.Require(t)
	ctx := context.Background()
	capture := libvirttest.Capture(t, e.Bridge, "icmp or arp or icmp6")
	type guest struct {
		filtered       bool
		spoof4, spoof6 string
		acct           *testenv.Account
		name, dom      string
		ipv4, ipv6     string
		con            libvirttest.Console
		ordered        time.Time
	}
	guests := []*guest{
		{filtered: true, spoof4: "10.77.0.251", spoof6: "fd77::fb"},
		{filtered: false, spoof4: "10.77.0.252", spoof6: "fd77::fc"},
	}
	c, err := catalog.Parse([]byte(testCatalog))
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range guests {
		prefix := fmt.Sprintf("%sflt%d-", e.Prefix, i)
		env := testenv.New(t, testenv.Options{Driver: "libvirt", RateLimit: 1_000_000,
			Libvirt: libvirtdriver.Options{Prefix: prefix, Poll: 100 * time.Millisecond, NoTrafficFilter: !g.filtered}})
		if err := env.App.Service.ApplyCatalog(ctx, c); err != nil {
			t.Fatal(err)
		}
		first := fmt.Sprintf("10.77.0.%d", 200+5*i)
		libvirttest.Setup(t, e, env.App.LibvirtDriver(), first, fmt.Sprintf("10.77.0.%d", 204+5*i))
		g.acct = env.NewAccount("en", "100.00", "")
		recipe := g.acct.Do("POST", "/recipes", map[string]any{"name": "spoof", "script": spoofer(g.spoof4, g.spoof6)}).Want(t, 201).Map(t)["data"].(map[string]any)
		g.ordered = time.Now()
		srv := g.acct.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1, "recipe_id": recipe["id"]}).
			Want(t, 201).Map(t)["data"].(map[string]any)
		g.name = srv["name"].(string)
		g.dom = prefix + g.name
		g.con = libvirttest.NewConsole(t, g.dom)
	}
	pace := libvirttest.RunPace()
	for _, g := range guests {
		srv := g.acct.WaitStatusEvery(t, g.name, "running", libvirttest.FirstBoot, guestPoll)
		g.ipv4, g.ipv6 = srv["ipv4"].(string), srv["ipv6"].(string)
		g.con.WaitCount("BERTH-GUEST ready", 1, libvirttest.FirstBoot)
		pace.Saw(time.Since(g.ordered))
	}
	for _, g := range guests {
		// 15 rounds of four pings; the spoofed ones go unanswered (1 s each).
		g.con.WaitCount("BERTH-SCRIPT 1 exit=", 1, 30*time.Second+pace.Boots(2))
	}
	lines := capture()
	from := func(addr string) int {
		n := 0
		for _, l := range lines {
			// IPv4 and IPv6 sources, and the sender of an ARP request.
			if strings.Contains(l, " IP "+addr+" > ") || strings.Contains(l, " IP6 "+addr+" > ") || strings.Contains(l, " tell "+addr+",") {
				n++
			}
		}
		return n
	}
	for _, g := range guests {
		own4, own6, spoof4, spoof6 := from(g.ipv4), from(g.ipv6), from(g.spoof4), from(g.spoof6)
		t.Logf("guest %s (filter %v): from its %s %d packets, its %s %d; from %s %d, from %s %d",
			g.name, g.filtered, g.ipv4, own4, g.ipv6, own6, g.spoof4, spoof4, g.spoof6, spoof6)
		if own4 == 0 || own6 == 0 {
			t.Errorf("guest %s (filter %v): its own addresses sent nothing the bridge saw (%d IPv4, %d IPv6): the filter must let them through",
				g.name, g.filtered, own4, own6)
		}
		switch {
		case g.filtered && (spoof4 > 0 || spoof6 > 0):
			t.Errorf("guest %s with the filter: the bridge saw %d packets from %s and %d from %s, addresses not its own",
				g.name, spoof4, g.spoof4, spoof6, g.spoof6)
		case !g.filtered && (spoof4 == 0 || spoof6 == 0):
			t.Errorf("guest %s without the filter: the bridge saw %d packets from %s and %d from %s; the test cannot tell the filter works",
				g.name, spoof4, g.spoof4, spoof6, g.spoof6)
		}
	}
	if t.Failed() {
		t.Logf("capture:\n%s", strings.Join(lines, "\n"))
	}
}
