// Package catalog reads the operator's catalog file (locations, plans, images, apps,
// licenses) and holds the embedded default.
package catalog

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/berthhq/berth/internal/hosting"
)

//go:embed default.yaml
var defaultYAML []byte

type file struct {
	Plans []struct {
		ID           int64  `json:"id"`
		Name         string `json:"name"`
		VCPUs        int    `json:"vcpus"`
		MemoryMB     int    `json:"memory_mb"`
		DiskGB       int    `json:"disk_gb"`
		PriceHourly  string `json:"price_hourly"`
		PriceMonthly string `json:"price_monthly"`
		// Optional limits (absent: none).
		NetworkMbps *int `json:"network_mbps"`
		DiskIOPS    *int `json:"disk_iops"`
		DiskMBps    *int `json:"disk_mbps"`
	} `json:"plans"`
	Images []struct {
		ID      int64  `json:"id"`
		Name    string `json:"name"`
		OS      string `json:"os"`
		Version string `json:"version"`
	} `json:"images"`
	Apps []struct {
		ID          int64  `json:"id"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Version     string `json:"version"`
		Script      string `json:"script"`
	} `json:"apps"`
	Licenses []struct {
		ID           int64   `json:"id"`
		Name         string  `json:"name"`
		Vendor       string  `json:"vendor"`
		Per          string  `json:"per"`
		PriceMonthly string  `json:"price_monthly"`
		Images       []int64 `json:"images"`
		Provisioning string  `json:"provisioning"`
		// A webhook license's hook: its URL, and the file that holds its secret
		// (relative to the catalog file's directory), one or two lines.
		WebhookURL        string `json:"webhook_url"`
		WebhookSecretFile string `json:"webhook_secret_file"`
	} `json:"licenses"`
	Locations []struct {
		ID                  int64   `json:"id"`
		Name                string  `json:"name"`
		City                string  `json:"city"`
		Country             string  `json:"country"`
		SnapshotPriceGBHour string  `json:"snapshot_price_gb_hour"`
		VolumePriceGBHour   *string `json:"volume_price_gb_hour"`
		VolumePriceGBMonth  *string `json:"volume_price_gb_month"`
		Images              []int64 `json:"images"`
		Plans               []struct {
			ID       int64 `json:"id"`
			Capacity *int  `json:"capacity"`
		} `json:"plans"`
	} `json:"locations"`
}

// Default returns the embedded default catalog.
func Default() hosting.Catalog {
	c, err := Parse(defaultYAML)
	if err != nil {
		panic("catalog: embedded default is invalid: " + err.Error())
	}
	return c
}

// ParseFile reads the catalog file at path (berthd admin catalog apply): Parse, with
// each webhook_secret_file read relative to path's directory.
func ParseFile(path string) (hosting.Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return hosting.Catalog{}, err
	}
	return parse(data, filepath.Dir(path))
}

// Parse reads a catalog file and checks it as a whole; unknown keys are errors. A
// webhook_secret_file is read relative to the working directory.
func Parse(data []byte) (hosting.Catalog, error) { return parse(data, ".") }

// readSecrets reads a license hook's secret file: its lines, blank ones skipped.
func readSecrets(dir, name string) ([]string, error) {
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out, nil
}

func parse(data []byte, dir string) (hosting.Catalog, error) {
	var f file
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return hosting.Catalog{}, fmt.Errorf("catalog: %w", err)
	}
	var c hosting.Catalog
	var problems []string
	money := func(what, s string) hosting.Money {
		m, err := hosting.ParseMoney(s)
		if err != nil {
			problems = append(problems, what+": "+err.Error())
		}
		return m
	}
	// A limit given is a positive number: no limit is said by leaving it out.
	limit := func(plan, what string, v *int) int {
		if v == nil {
			return 0
		}
		if *v <= 0 {
			problems = append(problems, fmt.Sprintf("plan %s %s: %d; a limit is positive (leave it out for none)", plan, what, *v))
		}
		return *v
	}
	for _, p := range f.Plans {
		c.Plans = append(c.Plans, hosting.Plan{ID: p.ID, Name: p.Name, VCPUs: p.VCPUs, MemoryMB: p.MemoryMB, DiskGB: p.DiskGB,
			PriceHourly: money("plan "+p.Name+" price_hourly", p.PriceHourly), PriceMonthly: money("plan "+p.Name+" price_monthly", p.PriceMonthly),
			NetworkMbps: limit(p.Name, "network_mbps", p.NetworkMbps), DiskIOPS: limit(p.Name, "disk_iops", p.DiskIOPS),
			DiskMBps: limit(p.Name, "disk_mbps", p.DiskMBps)})
	}
	for _, i := range f.Images {
		c.Images = append(c.Images, hosting.Image{ID: i.ID, Name: i.Name, OS: i.OS, Version: i.Version})
	}
	for _, a := range f.Apps {
		c.Apps = append(c.Apps, hosting.App{ID: a.ID, Name: a.Name, Description: a.Description, Version: a.Version, Script: a.Script})
	}
	for _, l := range f.Licenses {
		prov := hosting.LicenseProvisioning(l.Provisioning)
		if prov == "" {
			prov = hosting.ProvisionNone
		}
		var hook *hosting.LicenseHook
		if l.WebhookURL != "" || l.WebhookSecretFile != "" {
			hook = &hosting.LicenseHook{URL: l.WebhookURL}
			if l.WebhookSecretFile != "" {
				secrets, err := readSecrets(dir, l.WebhookSecretFile)
				if err != nil {
					problems = append(problems, "license "+l.Name+": webhook_secret_file: "+err.Error())
				}
				hook.Secrets = secrets
			}
		}
		c.Licenses = append(c.Licenses, hosting.License{ID: l.ID, Name: l.Name, Vendor: l.Vendor, Per: hosting.LicensePer(l.Per),
			PriceMonthly: money("license "+l.Name+" price_monthly", l.PriceMonthly), ImageIDs: l.Images, Provisioning: prov, Hook: hook})
	}
	// Volume prices go together: both, or neither (the location sells no volumes).
	volumePrices := func(l string, hour, month *string) (hosting.Money, hosting.Money) {
		if (hour == nil) != (month == nil) {
			problems = append(problems, "location "+l+": volume_price_gb_hour and volume_price_gb_month go together")
			return 0, 0
		}
		if hour == nil {
			return 0, 0
		}
		return money("location "+l+" volume_price_gb_hour", *hour), money("location "+l+" volume_price_gb_month", *month)
	}
	for _, l := range f.Locations {
		vh, vm := volumePrices(l.Name, l.VolumePriceGBHour, l.VolumePriceGBMonth)
		cl := hosting.CatalogLocation{
			Location: hosting.Location{ID: l.ID, Name: l.Name, City: l.City, Country: l.Country,
				SnapshotPriceGBHour: money("location "+l.Name+" snapshot_price_gb_hour", l.SnapshotPriceGBHour),
				VolumePriceGBHour:   vh, VolumePriceGBMonth: vm},
			ImageIDs: l.Images,
		}
		for _, o := range l.Plans {
			cl.Offers = append(cl.Offers, hosting.PlanOffer{PlanID: o.ID, Capacity: o.Capacity})
		}
		c.Locations = append(c.Locations, cl)
	}
	problems = append(problems, c.Check()...)
	if len(problems) > 0 {
		return hosting.Catalog{}, fmt.Errorf("catalog: %s", strings.Join(problems, "; "))
	}
	return c, nil
}
