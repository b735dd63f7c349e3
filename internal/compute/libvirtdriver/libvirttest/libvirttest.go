// Package libvirttest is the libvirt test tier's setup: it finds libvirtd and the test
// image (scripts/libvirt-setup.sh and scripts/build-test-image.sh make them), and skips
// the test LOUDLY when they are missing — or fails it when BERTH_LIBVIRT_REQUIRED=1,
// as .ci/run sets, so that CI cannot pass without running them.
package libvirttest

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/testlog"
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

// Setup gives a driver its test host (location 1, room for many machines, added
// with --accel auto), an address pool on the bridge (10.77.0.first-last, IPv6
// fd77::/64) and the test image as image-1 and image-2. Machines it still has when
// the test ends are destroyed.
func Setup(t testing.TB, e Env, d *libvirtdriver.Driver, first, last string) libvirtdriver.Host {
	return SetupAccel(t, e, d, first, last, libvirtdriver.AccelAuto)
}

// SetupAccel is Setup with the host added with accel (auto, kvm or tcg).
func SetupAccel(t testing.TB, e Env, d *libvirtdriver.Driver, first, last, accel string) libvirtdriver.Host {
	t.Helper()
	ctx := context.Background()
	h, err := d.AddHost(ctx, libvirtdriver.HostSpec{LocationID: 1, URI: e.URI, VCPUs: 64, MemoryMB: 64 << 10, DiskGB: 1000,
		Pool: e.Pool, Bridge: e.Bridge, Accel: accel})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("host %d added with --accel %s: guests run with %s %s", h.ID, accel, h.Accel, h.AccelNote)
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
	return h
}

// FirstBoot bounds the one wait no measurement can pace: the run's first boot, which
// is the measurement. Only a guest that hangs takes it.
const FirstBoot = 10 * time.Minute

// Pace derives the tests' deadlines from boots measured in the same run, not from
// fixed seconds: on a loaded machine every step of a TCG guest slows down by about
// the factor its boot did (on a 2-core machine at load 10 the first seed read took
// 82 s, ten times the idle one). The run's tests share one (RunPace): a boot any of
// them sees slow lengthens every deadline after it, as the load of the tests' own
// guests and of the machine grows.
type Pace struct {
	mu   sync.Mutex
	boot time.Duration // the slowest boot seen so far
}

var runPace Pace

// RunPace is the pace of this test process's run, fed by every test's boots.
func RunPace() *Pace { return &runPace }

// Saw records a boot (start → the guest's ready line); a slower one slows every
// deadline after it.
func (p *Pace) Saw(boot time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.boot = max(p.boot, boot)
}

// Boot is the slowest boot seen (FirstBoot before any).
func (p *Pace) Boot() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.boot == 0 {
		return FirstBoot
	}
	return p.boot
}

// Boots is the deadline of a step that takes about n boots: three times that, for
// the load to grow meanwhile, and at least 30 s.
func (p *Pace) Boots(n float64) time.Duration {
	return max(time.Duration(3*n*float64(p.Boot())), 30*time.Second)
}

// Console follows a guest's serial log on this host.
type Console struct {
	t    testing.TB
	Path string
}

// NewConsole follows the serial log of domain, as libvirttest.Setup's host writes it.
func NewConsole(t testing.TB, domain string) Console {
	return Console{t, libvirtdriver.ConsoleLog("/var/log/libvirt/qemu", domain)}
}

// Text is the log so far.
func (c Console) Text() string {
	b, _ := os.ReadFile(c.Path)
	return string(b)
}

// Count is how often line occurs in the log.
func (c Console) Count(line string) int { return strings.Count(c.Text(), line) }

// WaitCount waits until line occurs at least n times in the log (or fails the test
// after timeout).
func (c Console) WaitCount(line string, n int, timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for c.Count(line) < n {
		if time.Now().After(deadline) {
			c.t.Fatalf("console %s: %q seen %d times in %s, want %d; log:\n%s", c.Path, line, c.Count(line), timeout, n, c.Text())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// WaitBoot waits for the guest's nth ready line, a boot that started at since, and
// records how long it took in p.
func (c Console) WaitBoot(p *Pace, since time.Time, n int) {
	c.t.Helper()
	c.WaitCount("BERTH-GUEST ready", n, p.Boots(1))
	p.Saw(time.Since(since))
}

// MeasureBoot boots a guest of the test image on d (set up by Setup; its domains
// named prefix+name), records how long it took from its start to its ready line in
// p, and destroys it: the pace of a test whose own guests are not watched from their
// start.
func MeasureBoot(t testing.TB, d *libvirtdriver.Driver, prefix string, p *Pace) {
	t.Helper()
	ctx := context.Background()
	name := "server-pace"
	start := time.Now()
	if _, err := d.Create(ctx, "pace", compute.Spec{Name: name, VCPUs: 1, MemoryMB: 256, DiskGB: 1, Image: "image-1"}); err != nil {
		t.Fatal(err)
	}
	NewConsole(t, prefix+name).WaitBoot(p, start, 1)
	t.Logf("pace: a boot takes %.1fs here now", time.Since(start).Seconds())
	if err := d.Destroy(ctx, "pace-destroy", name); err != nil {
		t.Fatal(err)
	}
}

// CanShape reports whether this host's kernel has what libvirt's <bandwidth> needs
// (tc's htb and sfq queues and the police action), with why not. Guests with a
// network limit do not start without them.
func CanShape() (bool, string) {
	var missing []string
	config := ""
	if f, err := os.Open("/proc/config.gz"); err == nil {
		defer f.Close()
		if z, err := gzip.NewReader(f); err == nil {
			b, _ := io.ReadAll(z)
			config = string(b)
		}
	}
	for _, opt := range []struct{ config, module string }{
		{"CONFIG_NET_SCH_HTB", "sch_htb"}, {"CONFIG_NET_SCH_SFQ", "sch_sfq"}, {"CONFIG_NET_ACT_POLICE", "act_police"},
	} {
		if config != "" {
			if !strings.Contains(config, "\n"+opt.config+"=y") && !strings.Contains(config, "\n"+opt.config+"=m") {
				missing = append(missing, opt.config)
			}
			continue
		}
		if exec.Command("modinfo", opt.module).Run() != nil && !moduleBuiltin(opt.module) {
			missing = append(missing, opt.module)
		}
	}
	if len(missing) > 0 {
		return false, "this kernel lacks " + strings.Join(missing, ", ")
	}
	return true, ""
}

func moduleBuiltin(name string) bool {
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/lib/modules", strings.TrimSpace(string(rel)), "modules.builtin"))
	return err == nil && strings.Contains(string(b), "/"+name+".ko")
}

// Capture runs tcpdump on iface with a filter (tcpdump's expression) until the
// returned stop is called, which answers the packets seen, one line each (-n: numeric
// addresses). Without tcpdump the test is skipped loudly (failed when the tier is
// required).
func Capture(t testing.TB, iface, filter string) (stop func() []string) {
	t.Helper()
	path, err := exec.LookPath("tcpdump")
	if err != nil {
		msg := "\n" + strings.Repeat("!", 78) + "\n!! LIBVIRT TIER: no tcpdump (apt-get install tcpdump; .ci/run does)\n" + strings.Repeat("!", 78)
		if os.Getenv("BERTH_LIBVIRT_REQUIRED") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	out, errOut := &testlog.Buffer{}, &testlog.Buffer{}
	cmd := exec.Command(path, append([]string{"-l", "-n", "-i", iface}, strings.Fields(filter)...)...)
	cmd.Stdout, cmd.Stderr = out, errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// tcpdump says "listening on" once it captures.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(errOut.String(), "listening on"); {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("tcpdump did not start: %s", errOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	var once sync.Once
	var lines []string
	stop = func() []string {
		once.Do(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
			lines = strings.Split(strings.TrimSpace(out.String()), "\n")
		})
		return lines
	}
	t.Cleanup(func() { stop() })
	return stop
}
