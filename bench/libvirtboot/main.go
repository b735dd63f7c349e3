// Command libvirtboot times a real guest's creation through Berth against the same
// work done by hand with virsh (issue 5: "Berth's overhead within 10% of the virsh
// time").
//
// Setup: it builds berthd (unless -berthd names a binary), makes a fresh data dir and,
// with `berthd admin`, a catalog, the local libvirt host (qemu:///system), an address
// pool on the bridge, the test image imported into the host's storage pool, an account
// and a token; then starts `berthd serve --driver libvirt` on 127.0.0.1.
//
// The two sides, each on an idle machine (no other guest of the benchmark runs):
//
//   - Berth: POST /v1/servers (plan 1, the test image) → the server is running: the
//     provisioning operation ended with success. The end is observed with
//     GET /v1/operations/{id}?wait=60, which berthd answers the moment the worker's
//     final transaction commits (it wakes the request in-process), so the figure has
//     no polling lag. Inside it: the HTTP call and the order's transaction, the job's
//     wait for a worker, placement and address allocation, the qcow2 overlay on the
//     base volume, building and uploading the NoCloud seed, the define, the start, and
//     the final status write.
//   - By hand: what an operator types to get the same domain running, one virsh
//     command each (each connects to libvirtd anew: that cost is in the figure):
//     vol-create-as of the overlay on the same base, vol-create-as of the seed volume,
//     vol-upload of the seed ISO, define of the domain XML, start. The XML and the
//     ISO file are Berth's own (the domain Berth defined in the warm-up, renamed; its
//     seed downloaded), prepared before the clock starts: the person has the files
//     ready and only does the libvirt work.
//
// Both clocks then run on to the guest's console line "BERTH-SEED ipv4=" (its init
// read the seed): secondary figures, dominated by the guest's boot under TCG.
//
// One untimed warm-up of each side comes first (caches, berthd's connection to
// libvirtd); then -runs rounds, alternating which side goes first. Each Berth run's
// breakdown comes from berthd's own log lines: "operation started" (with the job's
// queue wait), "libvirt: machine created" (each step of the driver) and "operation
// finished".
//
// Needs root (virsh on qemu:///system, the console logs), libvirtd with the pool
// "berth" and the bridge (scripts/libvirt-setup.sh), and the test image
// (scripts/build-test-image.sh). Report on stdout, progress on stderr.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/bench/internal/berthdbin"
)

type config struct {
	root, berthd, work string
	addr               string
	runs               int
	image              string
	uri, pool          string
	prefix, handPrefix string
	seedTimeout        time.Duration
	keep               bool
}

const seedLine = "BERTH-SEED ipv4="

func main() {
	var c config
	flag.StringVar(&c.root, "root", "", "repository root, where go build ./cmd/berthd runs (default: found from the working directory)")
	flag.StringVar(&c.berthd, "berthd", "", "a berthd binary to use instead of building one")
	flag.StringVar(&c.work, "work", "", "work directory for the binary, data, files and logs (default: a new temp dir)")
	flag.StringVar(&c.addr, "addr", "127.0.0.1:18089", "address berthd serves on (loopback)")
	flag.IntVar(&c.runs, "runs", 5, "measured rounds (one Berth run and one by-hand run each)")
	flag.StringVar(&c.image, "image", "/var/lib/berth/test-image.qcow2", "the bootable test image (scripts/build-test-image.sh)")
	flag.StringVar(&c.uri, "uri", "qemu:///system", "libvirt URI of the host")
	flag.StringVar(&c.pool, "pool", "berth", "the host's storage pool")
	flag.StringVar(&c.prefix, "prefix", "benchboot-", "berthd serve --libvirt-prefix")
	flag.StringVar(&c.handPrefix, "hand-prefix", "benchhand-", "name prefix of the domains made by hand")
	flag.DurationVar(&c.seedTimeout, "seed-timeout", 180*time.Second, "how long a guest may take to reach its seed line")
	flag.BoolVar(&c.keep, "keep", false, "keep the work directory")
	flag.Parse()
	if c.runs < 1 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, c)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "libvirtboot:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "== "+format+"\n", args...) }

type bench struct {
	c       config
	bin     string
	data    string
	work    string
	base    string // the image's base volume (path)
	api     string
	token   string
	http    *http.Client
	logPath string
	daemon  *exec.Cmd
	// The by-hand template: Berth's domain XML with its name as a placeholder, and its
	// seed ISO, from the warm-up.
	tmplXML, tmplName string
	seedISO           string
	seedSize          int64
	logs              []string // console and QEMU logs written, removed at the end
}

func run(ctx context.Context, c config) error {
	if os.Geteuid() != 0 {
		return errors.New("run as root (virsh on qemu:///system, the guests' console logs)")
	}
	if _, err := os.Stat(c.image); err != nil {
		return fmt.Errorf("no test image (scripts/build-test-image.sh): %w", err)
	}
	if _, err := virsh(ctx, c.uri, "pool-info", c.pool); err != nil {
		return fmt.Errorf("libvirtd with pool %s (scripts/libvirt-setup.sh): %w", c.pool, err)
	}
	if ln, err := net.Listen("tcp", c.addr); err != nil {
		return fmt.Errorf("%s is in use: %w", c.addr, err)
	} else {
		ln.Close()
	}
	b := &bench{c: c, work: c.work, http: &http.Client{Timeout: 90 * time.Second}}
	if b.work == "" {
		var err error
		if b.work, err = os.MkdirTemp("", "berth-libvirtboot."); err != nil {
			return err
		}
		defer func() {
			if c.keep {
				logf("kept %s", b.work)
			} else {
				os.RemoveAll(b.work)
			}
		}()
	}
	defer b.cleanup()
	if err := b.setup(ctx); err != nil {
		return err
	}
	logf("berthd serving on %s (pid %d); base volume %s", c.addr, b.daemon.Process.Pid, b.base)

	load0 := loadavg()
	var berths []berthRun
	var hands []handRun
	logf("warm-up (not counted)")
	w, err := b.berthRun(ctx, 0)
	if err != nil {
		return err
	}
	if err := b.template(ctx, w.domain); err != nil {
		return err
	}
	if err := b.deleteBerth(ctx, w); err != nil {
		return err
	}
	wh, err := b.handRun(ctx, 0)
	if err != nil {
		return err
	}
	b.deleteHand(ctx, wh)
	for r := 1; r <= c.runs; r++ {
		berthFirst := r%2 == 1
		for i := range 2 {
			if (i == 0) == berthFirst {
				br, err := b.berthRun(ctx, r)
				if err != nil {
					return err
				}
				if err := b.deleteBerth(ctx, br); err != nil {
					return err
				}
				berths = append(berths, br)
				logf("run %d berth: POST→running %s, →seed %s (load %s)", r, secs(br.running), secs(br.seed), br.load)
			} else {
				hr, err := b.handRun(ctx, r)
				if err != nil {
					return err
				}
				b.deleteHand(ctx, hr)
				hands = append(hands, hr)
				logf("run %d hand:  virsh→started %s, →seed %s (load %s)", r, secs(hr.started), secs(hr.seed), hr.load)
			}
		}
	}
	report(os.Stdout, c, w, wh, berths, hands, load0, loadavg())
	return nil
}

// ---- setup ----

func (b *bench) setup(ctx context.Context) error {
	c := b.c
	var err error
	if b.bin, err = berthdbin.Resolve(ctx, c.berthd, c.root, b.work); err != nil {
		return err
	}
	b.data = filepath.Join(b.work, "data")
	if err := os.MkdirAll(b.data, 0o700); err != nil {
		return err
	}
	catalog := filepath.Join(b.work, "catalog.yaml")
	if err := os.WriteFile(catalog, []byte(`plans:
  - {id: 1, name: tiny-1c-256m, vcpus: 1, memory_mb: 256, disk_gb: 1, price_hourly: "0.0010", price_monthly: "0.5000"}
  - {id: 2, name: tiny-2c-384m, vcpus: 2, memory_mb: 384, disk_gb: 2, price_hourly: "0.0020", price_monthly: "1.0000"}
images:
  - {id: 1, name: ubuntu-24.04, os: ubuntu, version: "24.04"}
  - {id: 2, name: debian-12, os: debian, version: "12"}
apps: []
locations:
  - {id: 1, name: lab1, city: Here, country: DE, snapshot_price_gb_hour: "0.0001", images: [1, 2], plans: [{id: 1}, {id: 2}]}
`), 0o600); err != nil {
		return err
	}
	if err := berthdbin.Migrate(ctx, b.bin, b.data); err != nil {
		return err
	}
	var none any
	if err := b.admin(ctx, &none, "catalog", "apply", catalog); err != nil {
		return err
	}
	if err := b.admin(ctx, &none, "host", "add", "--location", "1", "--uri", c.uri, "--pool", c.pool,
		"--vcpus", "16", "--memory-gb", "16", "--disk-gb", "100"); err != nil {
		return err
	}
	if err := b.admin(ctx, &none, "pool", "add", "--location", "1", "--cidr", "10.77.0.0/24", "--gateway", "10.77.0.1",
		"--first", "10.77.0.210", "--last", "10.77.0.230", "--ipv6-prefix", "fd77::/64"); err != nil {
		return err
	}
	var img struct {
		Hosts []struct {
			Path string `json:"path"`
		} `json:"hosts"`
	}
	if err := b.admin(ctx, &img, "image", "import", "--location", "1", "--image", "1", c.image); err != nil {
		return err
	}
	if len(img.Hosts) == 0 {
		return errors.New("image import: no host")
	}
	b.base = img.Hosts[0].Path
	var acct struct {
		ID int64 `json:"id"`
	}
	if err := b.admin(ctx, &acct, "account", "create", "--email", "bench@berth.local", "--password", "benchbench", "--credit", "100"); err != nil {
		return err
	}
	var tok struct {
		Token string `json:"token"`
	}
	if err := b.admin(ctx, &tok, "token", "create", "--account", strconv.FormatInt(acct.ID, 10), "--name", "bench", "--scopes", "servers"); err != nil {
		return err
	}
	b.token = tok.Token

	b.logPath = filepath.Join(b.work, "berthd.log")
	lf, err := os.Create(b.logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(b.bin, "--data", b.data, "serve", "--driver", "libvirt", "--addr", c.addr,
		"--libvirt-prefix", c.prefix, "--rate-limit", "1000000")
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return err
	}
	lf.Close()
	b.daemon = cmd
	b.api = "http://" + c.addr + "/v1"
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := b.http.Get(b.api + "/openapi.json")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("berthd did not answer (see %s): %w", b.logPath, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (b *bench) admin(ctx context.Context, out any, args ...string) error {
	return berthdbin.Admin(ctx, b.bin, b.data, out, args...)
}

// cleanup stops berthd and removes every domain and volume the benchmark made.
func (b *bench) cleanup() {
	ctx := context.Background()
	if b.daemon != nil {
		b.daemon.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { b.daemon.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			b.daemon.Process.Kill()
			<-done
		}
	}
	out, _ := virsh(ctx, b.c.uri, "list", "--all", "--name")
	for _, d := range strings.Fields(out) {
		if strings.HasPrefix(d, b.c.prefix) || strings.HasPrefix(d, b.c.handPrefix) {
			virsh(ctx, b.c.uri, "destroy", d)
			virsh(ctx, b.c.uri, "undefine", d, "--snapshots-metadata")
		}
	}
	virsh(ctx, b.c.uri, "pool-refresh", b.c.pool)
	out, _ = virsh(ctx, b.c.uri, "vol-list", b.c.pool)
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && (strings.HasPrefix(f[0], b.c.prefix) || strings.HasPrefix(f[0], b.c.handPrefix)) {
			virsh(ctx, b.c.uri, "vol-delete", f[0], "--pool", b.c.pool)
		}
	}
	for _, f := range b.logs {
		os.Remove(f)
	}
}

// ---- Berth ----

type berthRun struct {
	round     int
	name      string
	domain    string
	opID      int64
	t0        time.Time
	post      time.Duration // POST answered
	running   time.Duration // the operation ended (status running)
	seed      time.Duration // the seed line on the console
	load      string
	breakdown map[string]float64 // ms, from berthd's log
}

func (b *bench) berthRun(ctx context.Context, round int) (berthRun, error) {
	r := berthRun{round: round, load: loadavg()}
	// A request on the same keep-alive connection first: the clock measures Berth,
	// not a TCP handshake.
	if _, err := b.call(ctx, "GET", "/servers?status=provisioning", "", nil); err != nil {
		return r, err
	}
	var srv api.One[api.Server]
	r.t0 = time.Now()
	if _, err := b.call(ctx, "POST", "/servers", `{"plan_id":1,"location_id":1,"image_id":1}`, &srv); err != nil {
		return r, err
	}
	r.post = time.Since(r.t0)
	if srv.Data.Operation == nil {
		return r, fmt.Errorf("POST /servers: no operation in %+v", srv.Data)
	}
	r.name, r.opID = srv.Data.Name, srv.Data.Operation.ID
	r.domain = b.c.prefix + r.name
	for {
		var op api.One[api.Operation]
		if _, err := b.call(ctx, "GET", fmt.Sprintf("/operations/%d?wait=60", r.opID), "", &op); err != nil {
			return r, err
		}
		if op.Data.Status == "running" {
			if time.Since(r.t0) > 5*time.Minute {
				return r, fmt.Errorf("server %s: still provisioning after 5 minutes", r.name)
			}
			continue
		}
		r.running = time.Since(r.t0)
		if op.Data.Status != "success" {
			return r, fmt.Errorf("server %s: provisioning ended %s: %v", r.name, op.Data.Status, deref(op.Data.Error))
		}
		break
	}
	var got api.One[api.Server]
	if _, err := b.call(ctx, "GET", "/servers/"+r.name, "", &got); err != nil {
		return r, err
	}
	if got.Data.Status != "running" {
		return r, fmt.Errorf("server %s: operation done but status %q", r.name, got.Data.Status)
	}
	console, err := b.consoleLog(ctx, r.domain)
	if err != nil {
		return r, err
	}
	if r.seed, err = b.waitConsole(ctx, console, r.t0); err != nil {
		return r, err
	}
	r.breakdown, err = b.breakdown(r)
	return r, err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// call does one API request; out, when set, gets the JSON answer.
func (b *bench) call(ctx context.Context, method, path, body string, out any) (int, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.api+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+b.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, data)
	}
	if out != nil {
		return resp.StatusCode, json.Unmarshal(data, out)
	}
	return resp.StatusCode, nil
}

// deleteBerth deletes a server and waits until its domain and volumes are gone.
func (b *bench) deleteBerth(ctx context.Context, r berthRun) error {
	if _, err := b.call(ctx, "DELETE", "/servers/"+r.name, "", nil); err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, errDom := virsh(ctx, b.c.uri, "domstate", r.domain)
		_, errVol := virsh(ctx, b.c.uri, "vol-info", r.domain+"-disk-1.qcow2", "--pool", b.c.pool)
		if errDom != nil && errVol != nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server %s: domain or disk still there 2 minutes after DELETE", r.name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// logLine is what the breakdown reads of berthd's JSON log lines.
type logLine struct {
	Time    time.Time `json:"time"`
	Msg     string    `json:"msg"`
	Op      string    `json:"op"`
	Machine string    `json:"machine"`
	Queued  *float64  `json:"queued_ms"`
	raw     map[string]any
}

// driverSteps are the steps of the libvirt driver's Create, in order, as its log
// line names them.
var driverSteps = []string{"place", "lookup", "disk", "seed_build", "seed_upload", "define", "start", "record"}

// breakdownCols are the columns of a Berth run's breakdown, in order; they add up to
// POST→running.
var breakdownCols = append(append([]string{"post", "pickup", "spec"}, driverSteps...), "finish", "answer")

// breakdown splits a Berth run's time with berthd's log: the POST's answer (client),
// to "operation started" (the job's wait for a worker and its first reads), to the
// driver's start (the worker reads the spec), the driver's steps, to "operation
// finished" (the final transaction), and to the client's wait returning.
func (b *bench) breakdown(r berthRun) (map[string]float64, error) {
	f, err := os.Open(b.logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	opTag := fmt.Sprintf("provision#%d", r.opID)
	var started, finished, created *logLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l logLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		_ = json.Unmarshal(sc.Bytes(), &l.raw)
		switch {
		case l.Msg == "operation started" && l.Op == opTag:
			started = &l
		case l.Msg == "operation finished" && l.Op == opTag:
			finished = &l
		case l.Msg == "libvirt: machine created" && l.Machine == r.name:
			created = &l
		}
	}
	if started == nil || finished == nil || created == nil {
		return nil, fmt.Errorf("berthd's log (%s) lacks the lines of operation %d", b.logPath, r.opID)
	}
	msOf := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	num := func(k string) float64 { v, _ := created.raw[k].(float64); return v }
	out := map[string]float64{}
	out["post"] = msOf(r.post)
	out["pickup"] = msOf(started.Time.Sub(r.t0.Add(r.post)))
	if started.Queued != nil {
		out["queued"] = *started.Queued
	}
	driverStart := created.Time.Add(-time.Duration(num("total_ms") * float64(time.Millisecond)))
	out["spec"] = msOf(driverStart.Sub(started.Time))
	for _, s := range driverSteps {
		out[s] = num(s + "_ms")
	}
	out["driver"] = num("total_ms")
	out["finish"] = msOf(finished.Time.Sub(created.Time))
	out["answer"] = msOf(r.t0.Add(r.running).Sub(finished.Time))
	out["libvirt"] = out["disk"] + out["seed_upload"] + out["define"] + out["start"]
	out["own"] = msOf(r.running) - out["libvirt"]
	return out, nil
}

// ---- by hand ----

// template keeps the domain Berth defined as the by-hand XML, and its seed.
func (b *bench) template(ctx context.Context, domain string) error {
	x, err := virsh(ctx, b.c.uri, "dumpxml", "--inactive", domain)
	if err != nil {
		return err
	}
	x = regexp.MustCompile(`(?m)^\s*<uuid>.*</uuid>\n`).ReplaceAllString(x, "")
	b.tmplXML, b.tmplName = x, domain
	b.seedISO = filepath.Join(b.work, "seed.iso")
	if _, err := virsh(ctx, b.c.uri, "vol-download", domain+"-seed-1.iso", b.seedISO, "--pool", b.c.pool); err != nil {
		return err
	}
	st, err := os.Stat(b.seedISO)
	if err != nil {
		return err
	}
	b.seedSize = st.Size()
	return nil
}

type handRun struct {
	round   int
	domain  string
	started time.Duration // the last command (start) returned
	seed    time.Duration
	load    string
	steps   []time.Duration // each virsh command
}

// handCmds names the by-hand commands in the report.
var handCmds = []string{"vol-create-as disk", "vol-create-as seed", "vol-upload seed", "define", "start"}

func (b *bench) handRun(ctx context.Context, round int) (handRun, error) {
	c := b.c
	r := handRun{round: round, domain: fmt.Sprintf("%s%d-%d", c.handPrefix, os.Getpid(), round), load: loadavg()}
	xmlFile := filepath.Join(b.work, r.domain+".xml")
	if err := os.WriteFile(xmlFile, []byte(strings.ReplaceAll(b.tmplXML, b.tmplName, r.domain)), 0o600); err != nil {
		return r, err
	}
	console, err := consoleOf(strings.ReplaceAll(b.tmplXML, b.tmplName, r.domain))
	if err != nil {
		return r, err
	}
	b.logs = append(b.logs, console, qemuLog(r.domain))
	cmds := [][]string{
		{"vol-create-as", c.pool, r.domain + "-disk-1.qcow2", "1G", "--format", "qcow2", "--backing-vol", b.base, "--backing-vol-format", "qcow2"},
		{"vol-create-as", c.pool, r.domain + "-seed-1.iso", strconv.FormatInt(b.seedSize, 10), "--format", "raw"},
		{"vol-upload", r.domain + "-seed-1.iso", b.seedISO, "--pool", c.pool},
		{"define", xmlFile},
		{"start", r.domain},
	}
	t0 := time.Now()
	last := t0
	for _, args := range cmds {
		if _, err := virsh(ctx, c.uri, args...); err != nil {
			return r, err
		}
		now := time.Now()
		r.steps = append(r.steps, now.Sub(last))
		last = now
	}
	r.started = time.Since(t0)
	if r.seed, err = b.waitConsole(ctx, console, t0); err != nil {
		return r, err
	}
	return r, nil
}

func (b *bench) deleteHand(ctx context.Context, r handRun) {
	c := b.c
	virsh(ctx, c.uri, "destroy", r.domain)
	virsh(ctx, c.uri, "undefine", r.domain)
	virsh(ctx, c.uri, "vol-delete", r.domain+"-disk-1.qcow2", "--pool", c.pool)
	virsh(ctx, c.uri, "vol-delete", r.domain+"-seed-1.iso", "--pool", c.pool)
}

// ---- shared ----

func virsh(ctx context.Context, uri string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "virsh", append([]string{"-q", "-c", uri}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("virsh %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

var serialFile = regexp.MustCompile(`<log file='([^']+)'|<source path='([^']+-console\.log)'`)

// consoleOf finds the serial console's log file in a domain's XML.
func consoleOf(x string) (string, error) {
	m := serialFile.FindStringSubmatch(x)
	if m == nil {
		return "", errors.New("domain XML has no console log file")
	}
	if m[1] != "" {
		return m[1], nil
	}
	return m[2], nil
}

func (b *bench) consoleLog(ctx context.Context, domain string) (string, error) {
	x, err := virsh(ctx, b.c.uri, "dumpxml", "--inactive", domain)
	if err != nil {
		return "", err
	}
	f, err := consoleOf(x)
	if err == nil {
		b.logs = append(b.logs, f, qemuLog(domain))
	}
	return f, err
}

// qemuLog is where libvirtd logs a domain's QEMU process.
func qemuLog(domain string) string { return filepath.Join("/var/log/libvirt/qemu", domain+".log") }

// waitConsole polls a console log every 10 ms for the seed line; it returns the time
// since t0 when it saw it.
func (b *bench) waitConsole(ctx context.Context, file string, t0 time.Time) (time.Duration, error) {
	deadline := time.Now().Add(b.c.seedTimeout)
	for {
		if data, err := os.ReadFile(file); err == nil && bytes.Contains(data, []byte(seedLine)) {
			return time.Since(t0), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s: no %q within %s", file, seedLine, b.c.seedTimeout)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

// ---- report ----

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// stat is "median (min–max)".
func stat(xs []float64, format string) string {
	return fmt.Sprintf(format+" ("+format+"–"+format+")", median(xs), slices.Min(xs), slices.Max(xs))
}

func report(w io.Writer, c config, wb berthRun, wh handRun, berths []berthRun, hands []handRun, load0, load1 string) {
	fmt.Fprintf(w, "POST /v1/servers → running (Berth) vs the same work by hand with virsh; %d rounds, alternating which goes first\n", c.runs)
	fmt.Fprintf(w, "load average at start %s, at end %s\n\n", load0, load1)
	fmt.Fprintf(w, "%-6s %-5s %-18s %9s %9s %9s  %s\n", "round", "side", "name", "→running", "→seed", "POST", "load (1 5 15 min)")
	line := func(round, side, name string, run, seed, post time.Duration, load string) {
		p := "-"
		if post > 0 {
			p = secs(post)
		}
		fmt.Fprintf(w, "%-6s %-5s %-18s %9s %9s %9s  %s\n", round, side, name, secs(run), secs(seed), p, load)
	}
	line("warm", "berth", wb.name, wb.running, wb.seed, wb.post, wb.load)
	line("warm", "hand", strings.TrimPrefix(wh.domain, c.handPrefix), wh.started, wh.seed, 0, wh.load)
	for i := range berths {
		for _, first := range []bool{true, false} {
			if (berths[i].round%2 == 1) == first {
				br := berths[i]
				line(strconv.Itoa(br.round), "berth", br.name, br.running, br.seed, br.post, br.load)
			} else {
				hr := hands[i]
				line(strconv.Itoa(hr.round), "hand", strings.TrimPrefix(hr.domain, c.handPrefix), hr.started, hr.seed, 0, hr.load)
			}
		}
	}
	var bRun, hRun, bSeed, hSeed, paired []float64
	for i := range berths {
		bRun = append(bRun, berths[i].running.Seconds())
		hRun = append(hRun, hands[i].started.Seconds())
		bSeed = append(bSeed, berths[i].seed.Seconds())
		hSeed = append(hSeed, hands[i].seed.Seconds())
		paired = append(paired, 100*(berths[i].running.Seconds()-hands[i].started.Seconds())/hands[i].started.Seconds())
	}
	mb, mh := median(bRun), median(hRun)
	fmt.Fprintf(w, "\nmedian (min–max) over %d rounds:\n", c.runs)
	fmt.Fprintf(w, "  Berth POST→running        %s s\n", stat(bRun, "%.3f"))
	fmt.Fprintf(w, "  by hand, virsh ×5→started %s s\n", stat(hRun, "%.3f"))
	fmt.Fprintf(w, "  Berth's overhead: %+.1f%% (medians); per round %s %%\n", 100*(mb-mh)/mh, stat(paired, "%+.1f"))
	fmt.Fprintf(w, "  →seed line (secondary; the guest's TCG boot): Berth %s s, by hand %s s\n", stat(bSeed, "%.2f"), stat(hSeed, "%.2f"))
	var own, lv []float64
	for _, br := range berths {
		own = append(own, br.breakdown["own"])
		lv = append(lv, br.breakdown["libvirt"])
	}
	fmt.Fprintf(w, "  Berth's own time (POST→running less its libvirt calls for disk, seed upload, define, start): %s ms;\n", stat(own, "%.1f"))
	fmt.Fprintf(w, "    those libvirt calls: %s ms\n", stat(lv, "%.1f"))

	fmt.Fprintf(w, "\nBerth's time, ms (median, min–max), from the client and berthd's log:\n")
	desc := map[string]string{
		"post":        "POST answered: HTTP, auth, the order's transaction with its job",
		"pickup":      "POST answered → worker started: the job's wait for a fetch, op+server read",
		"queued":      "  of which queued (job created → fetched, database times)",
		"spec":        "worker reads the spec (keys, app, recipe)",
		"place":       "driver: machine row, placement + addresses (tx), host, connection",
		"lookup":      "driver: pool, domain lookup, base image",
		"disk":        "driver: qcow2 overlay (StorageVolCreateXML)",
		"seed_build":  "driver: network read + NoCloud ISO built",
		"seed_upload": "driver: seed volume created + uploaded",
		"define":      "driver: DomainDefineXML",
		"start":       "driver: domain started",
		"record":      "driver: step key recorded (a write: one fsync)",
		"finish":      "final transaction (status running, op success, job completed)",
		"answer":      "woken ?wait answers the client",
	}
	cols := slices.Insert(slices.Clone(breakdownCols), 2, "queued")
	for _, k := range cols {
		var xs []float64
		for _, br := range berths {
			if v, ok := br.breakdown[k]; ok {
				xs = append(xs, v)
			}
		}
		if len(xs) == 0 {
			continue
		}
		fmt.Fprintf(w, "  %-12s %-22s %s\n", k, stat(xs, "%.1f"), desc[k])
	}
	fmt.Fprintf(w, "\nBy hand, ms (median, min–max), each a virsh process connecting to libvirtd:\n")
	for i, name := range handCmds {
		var xs []float64
		for _, hr := range hands {
			xs = append(xs, float64(hr.steps[i].Microseconds())/1000)
		}
		fmt.Fprintf(w, "  %-20s %s\n", name, stat(xs, "%.1f"))
	}
}
