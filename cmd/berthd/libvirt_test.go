package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/compute/libvirtdriver/libvirttest"
	"github.com/berthhq/berth/internal/testenv"
)

// TestAdminHostAccel: admin host add takes --accel auto|kvm|tcg (auto by default) and
// prints what the host's guests run with; admin host list shows it for every host. An
// unknown --accel is refused before any host is dialed. On both databases (host and
// pool add answered "no host 0" on PostgreSQL before: its driver has no last insert
// id).
func TestAdminHostAccel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	store := storeFlags(t, data)
	run := func(args ...string) map[string]any { return runJSON(t, bin, append(args, store...)...) }
	run("migrate")
	cat := filepath.Join(t.TempDir(), "catalog.yaml")
	src, err := os.ReadFile("../../internal/catalog/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cat, src, 0o600); err != nil {
		t.Fatal(err)
	}
	run("admin", "catalog", "apply", cat)

	out, err := exec.Command(bin, append([]string{"admin", "host", "add", "--location", "1", "--uri", "qemu+tcp://hv.invalid/system", "--accel", "hvf"}, store...)...).Output()
	var m map[string]string
	if err == nil || json.Unmarshal(out, &m) != nil || !strings.Contains(m["error"], "--accel") {
		t.Fatalf("host add --accel hvf: %v, printed %q; want an error naming --accel", err, out)
	}

	e := libvirttest.Require(t)
	auto := run("admin", "host", "add", "--location", "1", "--uri", e.URI, "--pool", e.Pool, "--bridge", e.Bridge)
	if auto["accel_mode"] != "auto" || (auto["accel"] != "kvm" && auto["accel"] != "tcg") {
		t.Fatalf("host add (auto): %v", auto)
	}
	if auto["accel"] == "tcg" && auto["accel_note"] == nil {
		t.Errorf("host add (auto) chose TCG without saying why: %v", auto)
	}
	// The same libvirt under another URI, forced to TCG.
	tcg := run("admin", "host", "add", "--location", "1", "--uri", e.URI+"?socket=/var/run/libvirt/libvirt-sock", "--pool", e.Pool,
		"--bridge", e.Bridge, "--accel", "tcg")
	if tcg["accel_mode"] != "tcg" || tcg["accel"] != "tcg" {
		t.Fatalf("host add --accel tcg: %v", tcg)
	}
	out, err = exec.Command(bin, append([]string{"admin", "host", "add", "--location", "1", "--uri", e.URI, "--pool", e.Pool}, store...)...).Output()
	if err == nil || json.Unmarshal(out, &m) != nil || !strings.Contains(m["error"], "added already") {
		t.Errorf("the same host twice: %v, printed %q", err, out)
	}
	if p := run("admin", "pool", "add", "--location", "1", "--cidr", "10.77.0.0/24", "--gateway", "10.77.0.1", "--first", "10.77.0.230",
		"--last", "10.77.0.231"); p["id"] != float64(1) || p["size"] != float64(2) {
		t.Errorf("pool add: %v", p)
	}
	if h := run("admin", "host", "drain", "2"); h["draining"] != true || h["accel"] != "tcg" {
		t.Errorf("host drain: %v", h)
	}
	hosts := run("admin", "host", "list")["hosts"].([]any)
	if len(hosts) != 2 {
		t.Fatalf("host list: %v", hosts)
	}
	for i, want := range []map[string]any{auto, tcg} {
		h := hosts[i].(map[string]any)
		if h["accel"] != want["accel"] || h["accel_mode"] != want["accel_mode"] || h["accel_note"] != nil {
			t.Errorf("host list: host %v accel %v (%v), note %v; want %v (%v) as added", h["id"], h["accel"], h["accel_mode"], h["accel_note"],
				want["accel"], want["accel_mode"])
		}
	}

	// host accel changes it later, probing again: host 2 (the same libvirt as host 1)
	// from tcg to auto chooses what host 1's auto did.
	for _, bad := range [][]string{{"2", "hvf"}, {"99", "tcg"}, {"x", "tcg"}} {
		out, err := exec.Command(bin, append([]string{"admin", "host", "accel", bad[0], bad[1]}, store...)...).Output()
		if err == nil || json.Unmarshal(out, &m) != nil || m["error"] == "" {
			t.Errorf("host accel %s %s: %v, printed %q; want an error", bad[0], bad[1], err, out)
		}
	}
	if h := run("admin", "host", "accel", "2", "auto"); h["accel_mode"] != "auto" || h["accel"] != auto["accel"] || h["draining"] != true {
		t.Errorf("host accel 2 auto: %v; want accel %v (as host 1's auto), still draining", h, auto["accel"])
	} else if h["accel"] == "tcg" && h["accel_note"] == nil {
		t.Errorf("host accel 2 auto chose TCG without saying why: %v", h)
	}
	hosts = run("admin", "host", "list")["hosts"].([]any)
	if h := hosts[1].(map[string]any); h["accel_mode"] != "auto" || h["accel"] != auto["accel"] {
		t.Errorf("host list after host accel: %v", h)
	}
	if h := run("admin", "host", "accel", "1", "tcg"); h["accel_mode"] != "tcg" || h["accel"] != "tcg" || h["accel_note"] == nil {
		t.Errorf("host accel 1 tcg: %v", h)
	}
}
