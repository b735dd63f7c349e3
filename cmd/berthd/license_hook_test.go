package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// TestAdminCatalogLicenseHook: admin catalog apply takes a license provisioned by
// webhook, its secret read from webhook_secret_file next to the catalog file and
// shown nowhere (not in the output, not in the audit log); a hook's bad url is
// refused naming the license and webhook_url, and the catalog stays as it was.
func TestAdminCatalogLicenseHook(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	store := storeFlags(t, data)
	run := func(args ...string) map[string]any { return runJSON(t, bin, append(args, store...)...) }
	run("migrate")

	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cloudlinux.secret"), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../../internal/catalog/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hooked := func(url string) string {
		return strings.Replace(string(src), "\nlocations:\n", "\n  - {id: 9, name: cloudlinux, vendor: CloudLinux, per: server, "+
			`price_monthly: "10.0000", provisioning: webhook, webhook_url: "`+url+`", webhook_secret_file: cloudlinux.secret}`+
			"\nlocations:\n", 1)
	}
	good, bad := filepath.Join(dir, "catalog.yaml"), filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte(hooked("http://10.20.0.5:8080/berth")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(hooked("ftp://licenses.example.net/")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, append([]string{"admin", "catalog", "apply", good}, store...)...).Output()
	var applied map[string]any
	if err != nil || json.Unmarshal(out, &applied) != nil || applied["licenses"] != float64(4) {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "MfKQ9r8G") {
		t.Errorf("apply printed the secret: %s", out)
	}
	out, err = exec.Command(bin, append([]string{"admin", "catalog", "apply", bad}, store...)...).Output()
	if err == nil || !strings.Contains(string(out), `license cloudlinux: webhook_url \"ftp://licenses.example.net/\": webhook_url must use http or https`) {
		t.Errorf("apply of an ftp hook: %v\n%s", err, out)
	}
	audit, err := exec.Command(bin, append([]string{"admin", "audit", "list"}, store...)...).Output()
	if err != nil || strings.Contains(string(audit), "MfKQ9r8G") || !strings.Contains(string(audit), "catalog apply") {
		t.Errorf("audit: %v\n%s", err, audit)
	}
}
