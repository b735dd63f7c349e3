package main

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute/libvirtdriver"
	"github.com/berthhq/berth/internal/compute/libvirtdriver/libvirttest"
	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
	"github.com/berthhq/berth/internal/testpg"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// adminStep is one operator command of an output test: what the golden file calls
// it, its arguments (without the store flags), and whether it must fail.
type adminStep struct {
	name  string
	args  []string
	fails bool
}

// adminOutputs runs steps through the binary on store and writes down each one's
// output shape (see shape), as a golden file holds them.
type adminOutputs struct {
	t     *testing.T
	bin   string
	store []string
	out   strings.Builder
}

func (o *adminOutputs) run(s adminStep) map[string]any {
	o.t.Helper()
	args := append(slices.Clone(s.args), o.store...)
	stdout, err := exec.Command(o.bin, args...).Output()
	var ee *exec.ExitError
	switch {
	case s.fails && (!errorsAs(err, &ee) || ee.ExitCode() != 1):
		o.t.Fatalf("%s: %v, want exit status 1\n%s", s.name, err, stdout)
	case !s.fails && err != nil:
		o.t.Fatalf("%s: %v\n%s", s.name, err, stdout)
	}
	if n := bytes.Count(stdout, []byte("\n")); n != 1 || !bytes.HasSuffix(stdout, []byte("\n")) {
		o.t.Fatalf("%s printed %q, want one JSON object on one line", s.name, stdout)
	}
	fmt.Fprintf(&o.out, "%s\n%s\n\n", s.name, shape(o.t, stdout))
	var m map[string]any
	if err := json.Unmarshal(stdout, &m); err != nil {
		o.t.Fatalf("%s printed %q: %v", s.name, stdout, err)
	}
	return m
}

// check compares the shapes printed with testdata/name.golden (-update rewrites it).
func (o *adminOutputs) check(name string) {
	o.t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			o.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(o.out.String()), 0o644); err != nil {
			o.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		o.t.Fatalf("%v (go test -run %s -update writes it)", err, o.t.Name())
	}
	if got := o.out.String(); got != string(want) {
		o.t.Errorf("the admin commands' output changed shape: got\n%s\nwant (%s)\n%s", got, path, want)
	}
}

// freeKeys are the objects of an output whose keys are data, not names a script
// reads: admin store copy's rows and jobs by table and by kind.
var freeKeys = map[string]bool{"copied": true, "jobs": true}

// shape is the JSON text out with each value replaced by its type (string, number,
// bool, null), the keys in the order printed, and an array by the shapes of its
// elements (each shape once). An object under a freeKeys key is shown as {"*": the
// shape of its first value}.
func shape(t *testing.T, out []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var walk func(key string) string
	walk = func(key string) string {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		switch v := tok.(type) {
		case json.Delim:
			var parts []string
			for dec.More() {
				if v == '[' {
					if s := walk(""); !slices.Contains(parts, s) {
						parts = append(parts, s)
					}
					continue
				}
				k, err := dec.Token()
				if err != nil {
					t.Fatalf("%q: %v", out, err)
				}
				s := walk(k.(string))
				if freeKeys[key] {
					k = "*"
					if len(parts) > 0 {
						continue
					}
				}
				parts = append(parts, strconv.Quote(k.(string))+":"+s)
			}
			if _, err := dec.Token(); err != nil {
				t.Fatalf("%q: %v", out, err)
			}
			if v == '[' {
				return "[" + strings.Join(parts, ",") + "]"
			}
			return "{" + strings.Join(parts, ",") + "}"
		case string:
			return "string"
		case json.Number:
			return "number"
		case bool:
			return "bool"
		case nil:
			return "null"
		}
		t.Fatalf("%q: token %v", out, tok)
		return ""
	}
	return walk("")
}

// catalogFile is the default catalog as a file for admin catalog apply.
func catalogFile(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("../../internal/catalog/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cat := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(cat, src, 0o600); err != nil {
		t.Fatal(err)
	}
	return cat
}

// keysFile is a file of license keys for admin license keys add.
func keysFile(t *testing.T, keys string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "keys.txt")
	if err := os.WriteFile(f, []byte(keys), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestAdminOutputs: what each operator command prints — its keys, in their order, and
// the type of each value — is what testdata/admin_outputs.golden holds; scripts rely
// on it (README, "Operate it"). Every command that needs no libvirt host and no second
// database, on a fresh store, its failures too (one {"error": ...}).
func TestAdminOutputs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	o := &adminOutputs{t: t, bin: bin, store: storeFlags(t, data)}
	runJSON(t, bin, append([]string{"migrate"}, o.store...)...)
	pw := "s3cret-password"
	var token string
	for _, s := range []adminStep{
		{name: "catalog apply", args: []string{"admin", "catalog", "apply", catalogFile(t)}},
		{name: "account list (none)", args: []string{"admin", "account", "list"}},
		{name: "account create", args: []string{"admin", "account", "create", "--email", "ada@example.com", "--password", pw,
			"--name", "Ada", "--language", "de", "--credit", "25.00", "--quota-servers", "5"}},
		{name: "account create (no credit)", args: []string{"admin", "account", "create", "--email", "bob@example.com", "--password", pw}},
		{name: "account create (taken)", args: []string{"admin", "account", "create", "--email", "bob@example.com", "--password", pw}, fails: true},
		{name: "account update", args: []string{"admin", "account", "update", "1", "--quota-servers", "7"}},
		{name: "account block", args: []string{"admin", "account", "block", "2"}},
		{name: "account unblock", args: []string{"admin", "account", "unblock", "2"}},
		{name: "account block (none)", args: []string{"admin", "account", "block", "99"}, fails: true},
		{name: "account list", args: []string{"admin", "account", "list"}},
		{name: "token create", args: []string{"admin", "token", "create", "--account", "1", "--name", "ci", "--scopes", "power,servers"}},
		{name: "token create (expiring)", args: []string{"admin", "token", "create", "--account", "1", "--name", "day", "--expires-in", "24h"}},
		{name: "token revoke", args: []string{"admin", "token", "revoke", "2"}},
		{name: "token revoke (none)", args: []string{"admin", "token", "revoke", "99"}, fails: true},
		{name: "token list", args: []string{"admin", "token", "list", "--account", "1"}},
		{name: "token list (none)", args: []string{"admin", "token", "list", "--account", "2"}},
		{name: "credit add", args: []string{"admin", "credit", "add", "--account", "1", "--amount", "10.5", "--description", "bank transfer"}},
		{name: "credit adjust", args: []string{"admin", "credit", "adjust", "--account", "1", "--amount", "-0.5", "--description", "bank transfer booked twice"}},
		{name: "billing budget", args: []string{"admin", "billing", "budget", "--account", "1", "--amount", "50"}},
		{name: "billing budget --none", args: []string{"admin", "billing", "budget", "--account", "1", "--none"}},
		{name: "billing meter", args: []string{"admin", "billing", "meter"}},
		{name: "host list (none)", args: []string{"admin", "host", "list"}},
		{name: "host drain (none)", args: []string{"admin", "host", "drain", "1"}, fails: true},
		{name: "pool add", args: []string{"admin", "pool", "add", "--location", "1", "--cidr", "10.77.0.0/24", "--gateway", "10.77.0.1",
			"--ipv6-prefix", "2001:db8:77::/64", "--dns", "9.9.9.9,149.112.112.112"}},
		{name: "pool add (no dns)", args: []string{"admin", "pool", "add", "--location", "2", "--cidr", "10.78.0.0/24", "--gateway", "10.78.0.1"}},
		{name: "pool list", args: []string{"admin", "pool", "list"}},
		{name: "volume-pool list (none)", args: []string{"admin", "volume-pool", "list"}},
		{name: "volume-pool set (no host)", args: []string{"admin", "volume-pool", "set", "--location", "1", "--pool", "berth"}, fails: true},
		{name: "dns resync (PowerDNS unreachable)", args: []string{"admin", "dns", "resync", "--powerdns-url", "http://" + testnet.FreeAddr(t),
			"--powerdns-api-key-file", keyFile(t, "key", 0o600)}, fails: true},
		{name: "license keys list (none)", args: []string{"admin", "license", "keys", "list", "--license", "2"}},
		{name: "license keys add", args: []string{"admin", "license", "keys", "add", "--license", "2", "--file", keysFile(t, "K-1\nK-2\n"),
			"--license-key-file", licenseKeyFile(t)}},
		{name: "license keys add (no pool)", args: []string{"admin", "license", "keys", "add", "--license", "3", "--file", keysFile(t, "K-3\n"),
			"--license-key-file", licenseKeyFile(t)}, fails: true},
		{name: "license keys list", args: []string{"admin", "license", "keys", "list", "--license", "2"}},
		{name: "audit list", args: []string{"admin", "audit", "list"}},
		{name: "audit list --account", args: []string{"admin", "audit", "list", "--account", "1", "--limit", "2"}},
		{name: "server suspend (none)", args: []string{"admin", "server", "suspend", "1"}, fails: true},
	} {
		out := o.run(s)
		if s.name == "token create" {
			token = out["token"].(string)
		}
	}

	// A server to suspend, ordered through a serve.
	d := startServe(t, bin, data, testnet.FreeAddr(t), "0.05")
	code, m := d.call(t, token, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1})
	if code != 201 {
		t.Fatalf("order: %d %v", code, m)
	}
	d.waitOp(t, token, m["data"].(map[string]any)["operation"].(map[string]any)["id"].(float64), time.Minute)
	o.run(adminStep{name: "server suspend", args: []string{"admin", "server", "suspend", "1"}})
	o.run(adminStep{name: "server unsuspend", args: []string{"admin", "server", "unsuspend", "1"}})

	// A ticket of account 1, answered by bob made staff.
	tickets := o.run(adminStep{name: "token create (tickets)", args: []string{"admin", "token", "create", "--account", "1", "--name", "support",
		"--scopes", "read,tickets"}})["token"].(string)
	if code, m := d.call(t, tickets, "POST", "/tickets", map[string]any{"subject": "Slow", "body": "It is slow."}); code != 201 {
		t.Fatalf("ticket: %d %v", code, m)
	}
	for _, s := range []adminStep{
		{name: "staff list (none)", args: []string{"admin", "staff", "list"}},
		{name: "staff add", args: []string{"admin", "staff", "add", "--email", "bob@example.com"}},
		{name: "staff add (none)", args: []string{"admin", "staff", "add", "--email", "nobody@example.com"}, fails: true},
		{name: "staff list", args: []string{"admin", "staff", "list"}},
		{name: "ticket list", args: []string{"admin", "ticket", "list", "--status", "open"}},
		{name: "ticket list (bad status)", args: []string{"admin", "ticket", "list", "--status", "new"}, fails: true},
		{name: "ticket reply", args: []string{"admin", "ticket", "reply", "1", "--body", "Reboot it.", "--staff-email", "bob@example.com"}},
		{name: "ticket reply (empty)", args: []string{"admin", "ticket", "reply", "1", "--body", " "}, fails: true},
		{name: "ticket note", args: []string{"admin", "ticket", "note", "1", "--body", "Host 3 is flaky.", "--as", "Night shift"}},
		{name: "ticket assign", args: []string{"admin", "ticket", "assign", "1", "--staff", "2"}},
		{name: "ticket assign (not staff)", args: []string{"admin", "ticket", "assign", "1", "--staff", "1"}, fails: true},
		{name: "ticket show", args: []string{"admin", "ticket", "show", "1"}},
		{name: "ticket show (none)", args: []string{"admin", "ticket", "show", "99"}, fails: true},
		{name: "ticket close", args: []string{"admin", "ticket", "close", "1"}},
		{name: "staff remove", args: []string{"admin", "staff", "remove", "--email", "bob@example.com"}},
	} {
		o.run(s)
	}
	// The customer sees the reply, never the note.
	code, m = d.call(t, tickets, "GET", "/tickets/1", nil)
	raw, _ := json.Marshal(m)
	if code != 200 || !strings.Contains(string(raw), "Reboot it.") || strings.Contains(string(raw), "flaky") || strings.Contains(string(raw), "Night shift") {
		t.Errorf("the customer's ticket after the admin commands: %d %s", code, raw)
	}
	o.check("admin_outputs")
}

// TestAdminHostOutputs: what the libvirt driver's operator commands print is what
// testdata/admin_host_outputs.golden holds (see TestAdminOutputs), on the libvirt
// tier. The host runs its guests with TCG, as asked, so that its note is the same on
// every machine.
func TestAdminHostOutputs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	e := libvirttest.Require(t)
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	o := &adminOutputs{t: t, bin: bin, store: storeFlags(t, data)}
	runJSON(t, bin, append([]string{"migrate"}, o.store...)...)
	runJSON(t, bin, append([]string{"admin", "catalog", "apply", catalogFile(t)}, o.store...)...)

	// A base image of its own (its volume is named by its content's hash), removed
	// from the pool afterwards.
	// A qcow2 header (magic, virtual size 1 MiB at bytes 24..31), then random bytes.
	b := make([]byte, 64)
	copy(b, "QFI\xfb")
	binary.BigEndian.PutUint64(b[24:], 1<<20)
	_, _ = rand.Read(b[32:])
	img := filepath.Join(t.TempDir(), "base.qcow2")
	if err := os.WriteFile(img, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, s := range []adminStep{
		{name: "host add", args: []string{"admin", "host", "add", "--location", "1", "--uri", e.URI, "--pool", e.Pool, "--bridge", e.Bridge,
			"--accel", "tcg"}},
		{name: "host add (again)", args: []string{"admin", "host", "add", "--location", "1", "--uri", e.URI, "--pool", e.Pool}, fails: true},
		{name: "host drain", args: []string{"admin", "host", "drain", "1"}},
		{name: "host undrain", args: []string{"admin", "host", "undrain", "1"}},
		{name: "host accel", args: []string{"admin", "host", "accel", "1", "tcg"}},
		{name: "host list", args: []string{"admin", "host", "list", "--location", "1"}},
		{name: "image import", args: []string{"admin", "image", "import", img, "--location", "1", "--image", "1"}},
		{name: "volume-pool set (no such pool)", args: []string{"admin", "volume-pool", "set", "--location", "1", "--pool", "berth-none"}, fails: true},
		{name: "volume-pool set", args: []string{"admin", "volume-pool", "set", "--location", "1", "--pool", e.Pool}},
		{name: "volume-pool list", args: []string{"admin", "volume-pool", "list", "--location", "1"}},
	} {
		out := o.run(s)
		if s.name == "image import" {
			t.Cleanup(func() { deleteVolumes(t, e, out) })
		}
	}
	o.check("admin_host_outputs")
}

// deleteVolumes removes the volumes admin image import printed it uploaded.
func deleteVolumes(t *testing.T, e libvirttest.Env, imported map[string]any) {
	l, err := libvirtdriver.Dial(e.URI)
	if err != nil {
		t.Errorf("removing the test's image: %v", err)
		return
	}
	defer l.Disconnect()
	pool, err := l.StoragePoolLookupByName(e.Pool)
	if err != nil {
		t.Errorf("removing the test's image: %v", err)
		return
	}
	hosts, _ := imported["hosts"].([]any)
	for _, h := range hosts {
		if v, err := l.StorageVolLookupByName(pool, h.(map[string]any)["volume"].(string)); err == nil {
			_ = l.StorageVolDelete(v, 0)
		}
	}
}

// TestAdminStoreCopyOutput: what admin store copy prints is what
// testdata/admin_store_copy.golden holds (see TestAdminOutputs).
func TestAdminStoreCopyOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	testpg.Require(t)
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	o := &adminOutputs{t: t, bin: bin}
	runJSON(t, bin, "migrate", "--data", data)
	runJSON(t, bin, "admin", "account", "create", "--email", "copy@example.com", "--password", "long-enough-pw", "--data", data)
	to := testpg.NewDatabase(t)
	o.run(adminStep{name: "store copy", args: []string{"admin", "store", "copy", "--data", data, "--to", to}})
	o.run(adminStep{name: "store copy (not empty)", args: []string{"admin", "store", "copy", "--data", data, "--to", to}, fails: true})
	o.check("admin_store_copy")
}

// TestAdminBadIDs: a command that takes an id refuses one that is not a positive
// int64, or a second argument, with one plain error (exit 1; one JSON object on
// stdout, the message on stderr) and changes nothing. A refused id is in the audit
// log as a failed command, as every other failure of a command that writes.
func TestAdminBadIDs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	store := storeFlags(t, data)
	runJSON(t, bin, append([]string{"migrate"}, store...)...)
	ids := []struct {
		args []string
		want string
	}{
		{[]string{"0"}, `"0" is not an id`},
		{[]string{"--", "-1"}, `"-1" is not an id`},
		{[]string{"-1"}, `unknown shorthand flag: '1' in -1`},
		{[]string{"abc"}, `"abc" is not an id`},
		{[]string{"9223372036854775808"}, `"9223372036854775808" is not an id`},
		{[]string{"1.5"}, `"1.5" is not an id`},
		{[]string{""}, `"" is not an id`},
		{[]string{"1", "2"}, `accepts 1 arg(s), received 2`},
		{nil, `accepts 1 arg(s), received 0`},
	}
	commands := [][]string{
		{"admin", "account", "block"}, {"admin", "account", "unblock"}, {"admin", "account", "update"},
		{"admin", "token", "revoke"}, {"admin", "server", "suspend"}, {"admin", "server", "unsuspend"},
		{"admin", "host", "drain"}, {"admin", "host", "undrain"},
	}
	for _, c := range commands {
		for _, id := range ids {
			args := append(append(slices.Clone(c), store...), id.args...)
			checkFailure(t, bin, args, id.want)
		}
	}
	// host accel takes an id and a mode.
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"abc", "tcg"}, `"abc" is not an id`},
		{[]string{"0", "kvm"}, `"0" is not an id`},
		{[]string{"9223372036854775808", "auto"}, `"9223372036854775808" is not an id`},
		{[]string{"1"}, `accepts 2 arg(s), received 1`},
		{[]string{"1", "tcg", "x"}, `accepts 2 arg(s), received 3`},
	} {
		checkFailure(t, bin, append(append([]string{"admin", "host", "accel"}, store...), tt.args...), tt.want)
	}

	audit := runJSON(t, bin, append([]string{"admin", "audit", "list", "--limit", "1000"}, store...)...)
	var refused []string
	for _, e := range audit["entries"].([]any) {
		m := e.(map[string]any)
		refused = append(refused, m["action"].(string)+" "+m["target"].(string)+": "+m["code"].(string))
	}
	for _, want := range []string{`admin account block abc: error: "abc" is not an id`,
		`admin token revoke 0: error: "0" is not an id`, `admin server unsuspend -1: error: "-1" is not an id`} {
		if !slices.Contains(refused, want) {
			t.Errorf("audit log lacks %q: %q", want, refused)
		}
	}
}

// checkFailure runs berthd with args and wants exit status 1, {"error": want} on
// stdout and "berthd: want" on stderr.
func checkFailure(t *testing.T, bin string, args []string, want string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errorsAs(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("berthd %q: %v, want exit status 1", args, err)
	}
	wantOut, _ := json.Marshal(map[string]string{"error": want})
	if got := stdout.String(); got != string(wantOut)+"\n" {
		t.Errorf("berthd %q printed %q, want %s", args, got, wantOut)
	}
	if got := stderr.String(); got != "berthd: "+want+"\n" {
		t.Errorf("berthd %q: stderr %q, want %q", args, got, "berthd: "+want)
	}
}
