package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/hosting"
)

func TestDefaultCatalog(t *testing.T) {
	t.Parallel()
	c := Default()
	if len(c.Locations) < 3 || len(c.Plans) < 6 || len(c.Images) < 4 || len(c.Apps) < 3 {
		t.Fatalf("default catalog too small: %d locations, %d plans, %d images, %d apps",
			len(c.Locations), len(c.Plans), len(c.Images), len(c.Apps))
	}
	// The demo and the sandbox show licenses (docs/api.md, Licenses): an image that
	// requires one priced per vCPU, a key pool and one without provisioning.
	kinds := map[hosting.LicenseProvisioning]bool{}
	required := false
	for _, l := range c.Licenses {
		kinds[l.Provisioning] = true
		required = required || (len(l.ImageIDs) > 0 && l.Per == hosting.LicensePerVCPU)
	}
	if !required || !kinds[hosting.ProvisionKeyPool] || !kinds[hosting.ProvisionNone] {
		t.Errorf("default licenses %+v: want an image's per-vCPU license, a key pool and one of provisioning none", c.Licenses)
	}
	for _, p := range c.Plans {
		if p.PriceMonthly >= p.PriceHourly*744 {
			t.Errorf("plan %s: monthly price %s is no cap under 744 hours of %s", p.Name, p.PriceMonthly, p.PriceHourly)
		}
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ yaml, want string }{
		"unknown key":    {"plans: []\nfoo: 1\n", "unknown field"},
		"no location":    {"plans: []\n", "no location"},
		"float price":    {"plans: [{id: 1, name: a, vcpus: 1, memory_mb: 1, disk_gb: 1, price_hourly: \"0.00001\", price_monthly: \"1\"}]\n", "price_hourly"},
		"no ubuntu":      {"images: [{id: 1, name: d, os: debian}, {id: 2, name: r, os: rocky}]\nlocations: [{id: 1, name: x, images: [1, 2]}]\n", "Ubuntu"},
		"unknown plan":   {"images: [{id: 1, name: u, os: ubuntu}]\nlocations: [{id: 1, name: x, images: [1], plans: [{id: 9}]}]\n", "unknown plan"},
		"zero limit":     {"plans: [{id: 1, name: a, vcpus: 1, memory_mb: 1, disk_gb: 1, price_hourly: \"1\", price_monthly: \"1\", network_mbps: 0}]\n", "network_mbps: 0"},
		"negative iops":  {"plans: [{id: 1, name: a, vcpus: 1, memory_mb: 1, disk_gb: 1, price_hourly: \"1\", price_monthly: \"1\", disk_iops: -5}]\n", "disk_iops"},
		"huge disk_mbps": {"plans: [{id: 1, name: a, vcpus: 1, memory_mb: 1, disk_gb: 1, price_hourly: \"1\", price_monthly: \"1\", disk_mbps: 2000000}]\n", "disk_mbps 2000000 is out of range"},
		"license per":    {"licenses: [{id: 1, name: l, vendor: v, per: core, price_monthly: \"1\"}]\n", `per "core"`},
		"license price":  {"licenses: [{id: 1, name: l, vendor: v, per: server, price_monthly: \"0\"}]\n", "license l: price_monthly must be positive"},
		"license cents":  {"licenses: [{id: 1, name: l, vendor: v, per: server, price_monthly: \"1.00001\"}]\n", "license l price_monthly"},
		"license image":  {"licenses: [{id: 1, name: l, vendor: v, per: server, price_monthly: \"1\", images: [7]}]\n", "license l: unknown image 7"},
		"license kind":   {"licenses: [{id: 1, name: l, vendor: v, per: server, price_monthly: \"1\", provisioning: mail}]\n", `provisioning "mail"`},
		"license hook":   {"licenses: [{id: 1, name: l, vendor: v, per: server, price_monthly: \"1\", provisioning: webhook}]\n", "license l: provisioning webhook needs webhook_url"},
		"license twice":  {"licenses: [{id: 1, name: l, vendor: v, per: server, price_monthly: \"1\"}, {id: 1, name: m, vendor: v, per: server, price_monthly: \"1\"}]\n", "license id used twice"},
		"license vendor": {"licenses: [{id: 1, name: l, per: server, price_monthly: \"1\"}]\n", "id, name and vendor are required"},
		"one disk size":  {"plans: [{id: 1, name: a, vcpus: 1, memory_mb: 1, disk_gb: 1, price_hourly: \"1\", price_monthly: \"1\"}]\nlocations: [{id: 1, name: x, plans: [{id: 1}]}]\n", "two disk sizes"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Parse error = %v, want it to mention %q", name, err, tc.want)
		}
	}
}

// TestParseLimits: a plan's limits are optional, each on its own; absent is none (0).
func TestParseLimits(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(`
plans:
  - {id: 1, name: a, vcpus: 1, memory_mb: 1024, disk_gb: 10, price_hourly: "1", price_monthly: "2", network_mbps: 250, disk_iops: 2000, disk_mbps: 150}
  - {id: 2, name: b, vcpus: 1, memory_mb: 1024, disk_gb: 20, price_hourly: "1", price_monthly: "2", disk_iops: 500}
images: [{id: 1, name: u, os: ubuntu}, {id: 2, name: d, os: debian}]
locations: [{id: 1, name: x, snapshot_price_gb_hour: "0.0001", images: [1, 2], plans: [{id: 1}, {id: 2}]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.Plans[0], c.Plans[1]
	if a.NetworkMbps != 250 || a.DiskIOPS != 2000 || a.DiskMBps != 150 {
		t.Errorf("plan a: %+v", a)
	}
	if b.NetworkMbps != 0 || b.DiskIOPS != 500 || b.DiskMBps != 0 {
		t.Errorf("plan b: %+v, want only disk_iops", b)
	}
}

// TestParseLicenses: a license's fields as the file gives them, its price exact, its
// provisioning none when left out.
func TestParseLicenses(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(`
plans:
  - {id: 1, name: a, vcpus: 1, memory_mb: 1024, disk_gb: 10, price_hourly: "1", price_monthly: "2"}
  - {id: 2, name: b, vcpus: 1, memory_mb: 1024, disk_gb: 20, price_hourly: "1", price_monthly: "2"}
images: [{id: 1, name: u, os: ubuntu}, {id: 2, name: w, os: windows}]
licenses:
  - {id: 7, name: win, vendor: Microsoft, per: vcpu, price_monthly: "4.0125", images: [2], provisioning: key_pool}
  - {id: 8, name: panel, vendor: Acme, per: server, price_monthly: "10"}
locations: [{id: 1, name: x, snapshot_price_gb_hour: "0.0001", images: [1, 2], plans: [{id: 1}, {id: 2}]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Licenses) != 2 {
		t.Fatalf("licenses: %+v", c.Licenses)
	}
	w, p := c.Licenses[0], c.Licenses[1]
	if w.ID != 7 || w.Vendor != "Microsoft" || w.Per != hosting.LicensePerVCPU || w.PriceMonthly.String() != "4.0125" ||
		!w.RequiredBy(2) || w.RequiredBy(1) || w.Provisioning != hosting.ProvisionKeyPool {
		t.Errorf("win: %+v", w)
	}
	if got := w.MonthlyPrice(4).String(); got != "16.0500" {
		t.Errorf("win on 4 vCPUs: %s, want 16.0500", got)
	}
	if p.Provisioning != hosting.ProvisionNone || p.MonthlyPrice(4).String() != "10.0000" {
		t.Errorf("panel: %+v", p)
	}
}

// hookCatalog is a valid catalog but for its one license, lic (a YAML flow mapping's
// fields after id, name, vendor, per and price_monthly).
func hookCatalog(lic string) string {
	return `
plans:
  - {id: 1, name: a, vcpus: 1, memory_mb: 1024, disk_gb: 10, price_hourly: "1", price_monthly: "2"}
  - {id: 2, name: b, vcpus: 1, memory_mb: 1024, disk_gb: 20, price_hourly: "1", price_monthly: "2"}
images: [{id: 1, name: u, os: ubuntu}, {id: 2, name: d, os: debian}]
licenses:
  - {id: 4, name: hooked, vendor: Acme, per: server, price_monthly: "5"` + lic + `}
locations: [{id: 1, name: x, snapshot_price_gb_hour: "0.0001", images: [1, 2], plans: [{id: 1}, {id: 2}]}]
`
}

// TestParseLicenseHooks: a webhook license's hook, its rules each a clear error of
// admin catalog apply naming the license and the key; the secret file read relative
// to the catalog file's directory, one or two secrets.
func TestParseLicenseHooks(t *testing.T) {
	t.Parallel()
	const good = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // 24 bytes
	const good2 = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
	for name, tc := range map[string]struct {
		lic, secret, want string // want "": parses
	}{
		"hook":               {", provisioning: webhook, webhook_url: \"https://hooks.example.net/berth\", webhook_secret_file: hook.secret", good + "\n", ""},
		"private http hook":  {", provisioning: webhook, webhook_url: \"http://10.0.0.7:8080/lic\", webhook_secret_file: hook.secret", good, ""},
		"rotation":           {", provisioning: webhook, webhook_url: \"https://h.example.net/\", webhook_secret_file: hook.secret", good + "\n\n" + good2 + "\n", ""},
		"no url":             {", provisioning: webhook, webhook_secret_file: hook.secret", good, "license hooked: provisioning webhook needs webhook_url"},
		"no secret file":     {", provisioning: webhook, webhook_url: \"https://h.example.net/\"", good, "license hooked: provisioning webhook needs webhook_secret_file"},
		"missing file":       {", provisioning: webhook, webhook_url: \"https://h.example.net/\", webhook_secret_file: nope.secret", good, "license hooked: webhook_secret_file: open"},
		"empty file":         {", provisioning: webhook, webhook_url: \"https://h.example.net/\", webhook_secret_file: hook.secret", "\n", "needs webhook_secret_file"},
		"ftp url":            {", provisioning: webhook, webhook_url: \"ftp://h.example.net/\", webhook_secret_file: hook.secret", good, "webhook_url \"ftp://h.example.net/\": webhook_url must use http or https"},
		"relative url":       {", provisioning: webhook, webhook_url: \"/hook\", webhook_secret_file: hook.secret", good, "webhook_url is not an absolute URL"},
		"userinfo":           {", provisioning: webhook, webhook_url: \"https://u:p@h.example.net/\", webhook_secret_file: hook.secret", good, "webhook_url must not carry a user name or password"},
		"no prefix":          {", provisioning: webhook, webhook_url: \"https://h.example.net/\", webhook_secret_file: hook.secret", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "webhook_secret_file line 1: webhook secret is not whsec_"},
		"short key":          {", provisioning: webhook, webhook_url: \"https://h.example.net/\", webhook_secret_file: hook.secret", "whsec_c2hvcnQ=", "its key is 5 bytes, want 24 to 64"},
		"three secrets":      {", provisioning: webhook, webhook_url: \"https://h.example.net/\", webhook_secret_file: hook.secret", good + "\n" + good2 + "\n" + good, "holds 3 secrets; at most two"},
		"hook of a key pool": {", provisioning: key_pool, webhook_url: \"https://h.example.net/\"", good, "webhook_url and webhook_secret_file go with provisioning webhook only"},
		"hook of none":       {", webhook_secret_file: hook.secret", good, "go with provisioning webhook only"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "hook.secret"), []byte(tc.secret), 0o600); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "catalog.yaml")
		if err := os.WriteFile(path, []byte(hookCatalog(tc.lic)), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := ParseFile(path)
		if tc.want != "" {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: ParseFile error = %v, want it to mention %q", name, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		l := c.Licenses[0]
		if l.Provisioning != hosting.ProvisionWebhook || l.Hook == nil || !strings.HasPrefix(l.Hook.URL, "http") ||
			len(l.Hook.Secrets) == 0 || l.Hook.Secrets[0] != good {
			t.Errorf("%s: license %+v, hook %+v", name, l, l.Hook)
		}
		if name == "rotation" && (len(l.Hook.Secrets) != 2 || l.Hook.Secrets[1] != good2) {
			t.Errorf("rotation: secrets %q, want the new one then the old one", l.Hook.Secrets)
		}
	}
}
