package catalog

import (
	"strings"
	"testing"
)

func TestDefaultCatalog(t *testing.T) {
	t.Parallel()
	c := Default()
	if len(c.Locations) < 3 || len(c.Plans) < 6 || len(c.Images) < 4 || len(c.Apps) < 3 {
		t.Fatalf("default catalog too small: %d locations, %d plans, %d images, %d apps",
			len(c.Locations), len(c.Plans), len(c.Images), len(c.Apps))
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
		"unknown key":   {"plans: []\nfoo: 1\n", "unknown field"},
		"no location":   {"plans: []\n", "no location"},
		"float price":   {"plans: [{id: 1, name: a, vcpus: 1, memory_mb: 1, disk_gb: 1, price_hourly: \"0.00001\", price_monthly: \"1\"}]\n", "price_hourly"},
		"no ubuntu":     {"images: [{id: 1, name: d, os: debian}, {id: 2, name: r, os: rocky}]\nlocations: [{id: 1, name: x, images: [1, 2]}]\n", "Ubuntu"},
		"unknown plan":  {"images: [{id: 1, name: u, os: ubuntu}]\nlocations: [{id: 1, name: x, images: [1], plans: [{id: 9}]}]\n", "unknown plan"},
		"one disk size": {"plans: [{id: 1, name: a, vcpus: 1, memory_mb: 1, disk_gb: 1, price_hourly: \"1\", price_monthly: \"1\"}]\nlocations: [{id: 1, name: x, plans: [{id: 1}]}]\n", "two disk sizes"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Parse error = %v, want it to mention %q", name, err, tc.want)
		}
	}
}
