package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// TestAdminLicenseKeys: keys an operator adds with `admin license keys add` (from
// stdin, sealed with --license-key-file) are what a serve process with the same key
// file gives a server's license, one each; the pool's count follows, and a key file
// of the wrong size is refused (docs/SECURITY.md, docs/operating.md).
func TestAdminLicenseKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	keyFile := licenseKeyFile(t)
	store := append(storeFlags(t, data), "--license-key-file", keyFile)
	runJSON(t, bin, append([]string{"migrate"}, store...)...)
	runJSON(t, bin, append([]string{"admin", "account", "create", "--email", "ada@example.com", "--password", "s3cret-password",
		"--credit", "100"}, store...)...)
	token := runJSON(t, bin, append([]string{"admin", "token", "create", "--account", "1", "--name", "ci",
		"--scopes", "servers,licenses"}, store...)...)["token"].(string)
	add := exec.Command(bin, append([]string{"admin", "license", "keys", "add", "--license", "2"}, store...)...)
	add.Stdin = strings.NewReader("CP-AAAA-1111\n\nCP-BBBB-2222\n")
	out, err := add.Output()
	if err != nil || !strings.Contains(string(out), `"added":2,"keys":2,"free":2`) {
		t.Fatalf("keys add: %v %s", err, out)
	}

	d := startServe(t, bin, data, testnet.FreeAddr(t), "0.05", "--license-key-file", keyFile)
	code, m := d.call(t, token, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1, "license_ids": []int{2}})
	if code != 201 {
		t.Fatalf("order: %d %v", code, m)
	}
	d.waitOp(t, token, m["data"].(map[string]any)["operation"].(map[string]any)["id"].(float64), time.Minute)
	code, m = d.call(t, token, "GET", "/servers/1/licenses", nil)
	if ls, _ := m["data"].([]any); code != 200 || len(ls) != 1 || ls[0].(map[string]any)["key"] != "CP-AAAA-1111" {
		t.Fatalf("the server's licenses: %d %v", code, m)
	}
	left := runJSON(t, bin, append([]string{"admin", "license", "keys", "list", "--license", "2"}, store...)...)
	if left["keys"] != float64(2) || left["free"] != float64(1) {
		t.Errorf("keys list after an order: %v", left)
	}

	// The month's report, as CSV.
	month := time.Now().UTC().Format("2006-01")
	rep, err := exec.Command(bin, append([]string{"admin", "license", "report", "--month", month}, store...)...).Output()
	lines := strings.Split(strings.TrimSpace(string(rep)), "\n")
	if err != nil || len(lines) != 2 || lines[0] != "license,server,account,from,to,max_vcpus" ||
		!strings.HasPrefix(lines[1], "cpanel-solo,server-") || !strings.Contains(lines[1], ",ada@example.com,"+month) ||
		!strings.HasSuffix(lines[1], "T00:00:00Z,1") {
		t.Errorf("report: %v\n%s", err, rep)
	}
	if out, err := exec.Command(bin, append([]string{"admin", "license", "report", "--month", "11-2026"}, store...)...).Output(); err == nil {
		t.Errorf("report of month 11-2026: %s", out)
	}

	bad := filepath.Join(t.TempDir(), "short-key")
	if err := os.WriteFile(bad, []byte("abcd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	short := exec.Command(bin, append([]string{"admin", "license", "keys", "list", "--license", "2"}, append(storeFlags(t, data),
		"--license-key-file", bad)...)...)
	if out, err := short.Output(); err == nil || !strings.Contains(string(out), "64 hex digits") {
		t.Errorf("a key of 2 bytes: %v %s", err, out)
	}
}

// licenseKeyFile is a file of a license key, as --license-key-file takes it (a
// PostgreSQL Berth has no data directory to keep one in).
func licenseKeyFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "license-key")
	if err := os.WriteFile(f, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}
