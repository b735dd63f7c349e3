package hosting

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/berthhq/berth/internal/webhook"
)

// Catalog is everything a provider sells: locations, plans, images and apps. Items
// carry stable ids chosen by the operator, so that applying a new catalog never breaks
// the servers that refer to the old one.
type Catalog struct {
	Locations []CatalogLocation
	Plans     []Plan
	Images    []Image
	Apps      []App
	// Licenses are the license products (docs/api.md, Licenses).
	Licenses []License
}

// CatalogLocation is a location with what it offers.
type CatalogLocation struct {
	Location
	Offers   []PlanOffer
	ImageIDs []int64
}

// PlanOffer is a plan sold at a location, with its capacity (nil: no limit).
type PlanOffer struct {
	PlanID   int64
	Capacity *int
}

// IsUbuntu reports whether an image is an Ubuntu image (apps install on Ubuntu).
func (i Image) IsUbuntu() bool { return strings.EqualFold(i.OS, "ubuntu") }

// The highest throughput limits a plan may set: far above any hardware, low enough
// that every hypervisor's own unit holds them (libvirt counts bandwidth in kilobytes
// per second in 32 bits).
const (
	MaxNetworkMbps = 1_000_000 // 1 Tbit/s
	MaxDiskIOPS    = 100_000_000
	MaxDiskMBps    = 1_000_000 // 1 TB/s
)

// Check validates a catalog as a whole and returns every problem found.
func (c *Catalog) Check() []string {
	var problems []string
	add := func(s string) { problems = append(problems, s) }
	plans := map[int64]Plan{}
	for _, p := range c.Plans {
		if p.ID <= 0 || p.Name == "" || p.VCPUs <= 0 || p.MemoryMB <= 0 || p.DiskGB <= 0 || p.PriceHourly <= 0 || p.PriceMonthly <= 0 {
			add("plan " + p.Name + ": id, name, vcpus, memory_mb, disk_gb and both prices must be positive")
		}
		for _, l := range []struct {
			name     string
			v, limit int
		}{{"network_mbps", p.NetworkMbps, MaxNetworkMbps}, {"disk_iops", p.DiskIOPS, MaxDiskIOPS}, {"disk_mbps", p.DiskMBps, MaxDiskMBps}} {
			if l.v < 0 || l.v > l.limit {
				add(fmt.Sprintf("plan %s: %s %d is out of range (1 to %d; none when left out)", p.Name, l.name, l.v, l.limit))
			}
		}
		if _, dup := plans[p.ID]; dup {
			add("plan id used twice")
		}
		plans[p.ID] = p
	}
	images := map[int64]Image{}
	for _, i := range c.Images {
		if i.ID <= 0 || i.Name == "" || i.OS == "" {
			add("image " + i.Name + ": id, name and os are required")
		}
		if _, dup := images[i.ID]; dup {
			add("image id used twice")
		}
		images[i.ID] = i
	}
	appIDs := map[int64]bool{}
	for _, a := range c.Apps {
		if a.ID <= 0 || a.Name == "" {
			add("app " + a.Name + ": id and name are required")
		}
		if appIDs[a.ID] {
			add("app id used twice")
		}
		appIDs[a.ID] = true
	}
	problems = append(problems, checkLicenses(c.Licenses, images)...)
	locIDs := map[int64]bool{}
	if len(c.Locations) == 0 {
		add("the catalog has no location")
	}
	for _, l := range c.Locations {
		if l.ID <= 0 || l.Name == "" {
			add("location " + l.Name + ": id and name are required")
		}
		if locIDs[l.ID] {
			add("location id used twice")
		}
		locIDs[l.ID] = true
		if l.SnapshotPriceGBHour < 0 {
			add("location " + l.Name + ": negative snapshot price")
		}
		if l.VolumePriceGBHour < 0 || l.VolumePriceGBMonth < 0 {
			add("location " + l.Name + ": negative volume price")
		}
		ubuntu := false
		for _, id := range l.ImageIDs {
			img, ok := images[id]
			if !ok {
				add("location " + l.Name + ": unknown image")
				continue
			}
			ubuntu = ubuntu || img.IsUbuntu()
		}
		if len(l.ImageIDs) < 2 || !ubuntu {
			add("location " + l.Name + ": must offer at least two images, one of them Ubuntu")
		}
		var disks []int
		for _, o := range l.Offers {
			p, ok := plans[o.PlanID]
			if !ok {
				add("location " + l.Name + ": unknown plan")
				continue
			}
			if o.Capacity != nil && *o.Capacity < 0 {
				add("location " + l.Name + ": negative capacity")
			}
			if !slices.Contains(disks, p.DiskGB) {
				disks = append(disks, p.DiskGB)
			}
		}
		if len(disks) < 2 {
			add("location " + l.Name + ": must offer plans of at least two disk sizes")
		}
	}
	return problems
}

// checkLicenses checks the catalog's license products against its images.
func checkLicenses(licenses []License, images map[int64]Image) []string {
	var problems []string
	add := func(s string) { problems = append(problems, s) }
	ids := map[int64]bool{}
	for _, l := range licenses {
		if l.ID <= 0 || l.Name == "" || l.Vendor == "" {
			add("license " + l.Name + ": id, name and vendor are required")
		}
		if ids[l.ID] {
			add("license id used twice")
		}
		ids[l.ID] = true
		if !slices.Contains(LicensePers, l.Per) {
			add(fmt.Sprintf("license %s: per %q is not server or vcpu", l.Name, l.Per))
		}
		if l.PriceMonthly <= 0 {
			add("license " + l.Name + ": price_monthly must be positive")
		}
		switch l.Provisioning {
		case ProvisionNone, ProvisionKeyPool:
		case ProvisionWebhook:
			problems = append(problems, checkLicenseHook(l)...)
		default:
			add(fmt.Sprintf("license %s: provisioning %q is not none, key_pool or webhook", l.Name, l.Provisioning))
		}
		if l.Provisioning != ProvisionWebhook && l.Hook != nil {
			add("license " + l.Name + ": webhook_url and webhook_secret_file go with provisioning webhook only")
		}
		for _, id := range l.ImageIDs {
			if _, ok := images[id]; !ok {
				add(fmt.Sprintf("license %s: unknown image %d", l.Name, id))
			}
		}
	}
	return problems
}

// checkLicenseHook checks a webhook license's hook: an absolute http or https URL
// with a host and no user name or password (an operator's hook may be on a private
// address, an internal bridge to the vendor: docs/operating.md, Licenses), and one or
// two secrets of the form of webhook secrets.
func checkLicenseHook(l License) []string {
	if l.Hook == nil || l.Hook.URL == "" {
		return []string{"license " + l.Name + ": provisioning webhook needs webhook_url"}
	}
	var problems []string
	if utf8.RuneCountInString(l.Hook.URL) > WebhookURLMaxLen {
		problems = append(problems, fmt.Sprintf("license %s: webhook_url is longer than %d characters", l.Name, WebhookURLMaxLen))
	} else if err := webhook.CheckURL(l.Hook.URL, true, nil); err != nil {
		msg := err.Error()
		if ue, ok := err.(*webhook.URLError); ok && ue.Rule == webhook.RuleScheme {
			msg = "url must use http or https"
		}
		problems = append(problems, fmt.Sprintf("license %s: webhook_url %q: %s", l.Name, l.Hook.URL, "webhook_"+msg))
	}
	switch n := len(l.Hook.Secrets); {
	case n == 0:
		problems = append(problems, "license "+l.Name+": provisioning webhook needs webhook_secret_file")
	case n > 2:
		problems = append(problems, fmt.Sprintf("license %s: webhook_secret_file holds %d secrets; at most two (the new one, then the old one)", l.Name, n))
	}
	for i, sec := range l.Hook.Secrets {
		if err := webhook.CheckSecret(sec); err != nil {
			problems = append(problems, fmt.Sprintf("license %s: webhook_secret_file line %d: %s", l.Name, i+1, err))
		}
	}
	return problems
}
