package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// The catalog: the locations, what each offers (plans and images), and the one-click
// applications. The API has no list of plans or images, only each location's.

var locations = &resource[api.Location]{
	name: "location", short: "Locations where servers can be ordered", noun: "location",
	view: view[api.Location]{
		id: func(l api.Location) string { return i64(l.ID) },
		columns: []column[api.Location]{
			{name: "id", value: func(l api.Location) string { return i64(l.ID) }},
			{name: "name", value: func(l api.Location) string { return l.Name }},
			{name: "city", value: func(l api.Location) string { return l.City }},
			{name: "country", value: func(l api.Location) string { return l.Country }},
			{name: "plans", wide: true, value: func(l api.Location) string { return strconv.Itoa(len(l.Plans)) }},
			{name: "images", wide: true, value: func(l api.Location) string { return strconv.Itoa(len(l.Images)) }},
			{name: "snapshot_price_gb_hour", wide: true, value: func(l api.Location) string { return l.SnapshotPriceGBHour }},
		},
	},
	all: func(ctx context.Context, c *client.Client, _ string) ([]api.Location, error) {
		return c.ListLocations(ctx)
	},
	id:       func(l api.Location) int64 { return l.ID },
	names:    func(l api.Location) []string { return []string{l.Name} },
	listHelp: "List the locations",
}

// locatedPlan is a plan as offered in one location: -o json prints the location's
// plan as the API gives it, and the location's name.
type locatedPlan struct {
	Location string `json:"location"`
	api.Plan
}

var plans = &resource[locatedPlan]{
	name: "plan", short: "Server sizes and prices", noun: "plan",
	viewOf: func(ctx context.Context, g *globals, c *client.Client, _ []locatedPlan) view[locatedPlan] {
		return planView(accountCurrency(ctx, g, c))
	},
	listHelp: "List the plans of every location (or of --location)",
	listFlags: offered("plans", func(l api.Location) []locatedPlan {
		out := make([]locatedPlan, len(l.Plans))
		for i, p := range l.Plans {
			out[i] = locatedPlan{l.Name, p}
		}
		return out
	}),
}

// planView shows plans with their prices in currency ("": the amounts alone) and
// whether their location has room for one more server of them.
func planView(currency string) view[locatedPlan] {
	return view[locatedPlan]{
		id: func(p locatedPlan) string { return i64(p.ID) },
		columns: []column[locatedPlan]{
			{name: "id", value: func(p locatedPlan) string { return i64(p.ID) }},
			{name: "name", value: func(p locatedPlan) string { return p.Name }},
			{name: "location", value: func(p locatedPlan) string { return p.Location }},
			{name: "vcpus", value: func(p locatedPlan) string { return strconv.Itoa(p.VCPUs) }},
			{name: "memory_mb", value: func(p locatedPlan) string { return strconv.Itoa(p.MemoryMB) }},
			{name: "disk_gb", value: func(p locatedPlan) string { return strconv.Itoa(p.DiskGB) }},
			{name: "price_hourly", value: func(p locatedPlan) string { return money(p.PriceHourly, currency) }},
			{name: "price_monthly", value: func(p locatedPlan) string { return money(p.PriceMonthly, currency) }},
			{name: "in_stock", value: func(p locatedPlan) string { return strconv.FormatBool(p.InStock) }},
			{name: "network_mbps", wide: true, value: func(p locatedPlan) string { return optInt(p.NetworkMbps) }},
			{name: "disk_iops", wide: true, value: func(p locatedPlan) string { return optInt(p.DiskIOPS) }},
			{name: "disk_mbps", wide: true, value: func(p locatedPlan) string { return optInt(p.DiskMBps) }},
		},
	}
}

// accountCurrency is the currency of the account's money (GET /me), which the API's
// amounts leave out: "" when nothing is printed as a table, or /me cannot be read
// (the amounts are shown alone then).
func accountCurrency(ctx context.Context, g *globals, c *client.Client) string {
	if f, err := parseOutput(g.output); err != nil || g.quiet || f.kind == "json" || f.kind == "yaml" {
		return ""
	}
	me, err := c.GetMe(ctx)
	if err != nil {
		return ""
	}
	return me.Currency
}

// locatedImage is an image as offered in one location (as locatedPlan).
type locatedImage struct {
	Location string `json:"location"`
	api.Image
}

var images = &resource[locatedImage]{
	name: "image", short: "Operating-system images", noun: "image",
	view: view[locatedImage]{
		id: func(im locatedImage) string { return i64(im.ID) },
		columns: []column[locatedImage]{
			{name: "id", value: func(im locatedImage) string { return i64(im.ID) }},
			{name: "name", value: func(im locatedImage) string { return im.Name }},
			{name: "location", value: func(im locatedImage) string { return im.Location }},
			{name: "os", value: func(im locatedImage) string { return im.OS }},
			{name: "version", value: func(im locatedImage) string { return im.Version }},
		},
	},
	listHelp: "List the images of every location (or of --location)",
	listFlags: offered("images", func(l api.Location) []locatedImage {
		out := make([]locatedImage, len(l.Images))
		for i, im := range l.Images {
			out[i] = locatedImage{l.Name, im}
		}
		return out
	}),
}

// offered is the list of what every location offers of a kind (what: "plans"), or
// with --location only that location's; of gives one location's.
func offered[T any](what string, of func(api.Location) []T) func(*cobra.Command) func(context.Context, *client.Client, string) ([]T, error) {
	return func(cmd *cobra.Command) func(context.Context, *client.Client, string) ([]T, error) {
		var loc string
		cmd.Flags().StringVar(&loc, "location", "", "only the "+what+" of this location (name or id)")
		return func(ctx context.Context, c *client.Client, _ string) ([]T, error) {
			k := &catalog{c: c}
			var locID int64
			if loc != "" {
				var err error
				if locID, err = k.location(ctx, loc); err != nil {
					return nil, err
				}
			}
			if err := k.load(ctx); err != nil {
				return nil, err
			}
			var items []T
			for _, l := range k.locs {
				if locID == 0 || l.ID == locID {
					items = append(items, of(l)...)
				}
			}
			return items, nil
		}
	}
}

var apps = &resource[api.App]{
	name: "app", short: "One-click applications", noun: "app",
	view: view[api.App]{
		id: func(a api.App) string { return i64(a.ID) },
		columns: []column[api.App]{
			{name: "id", value: func(a api.App) string { return i64(a.ID) }},
			{name: "name", value: func(a api.App) string { return a.Name }},
			{name: "version", value: func(a api.App) string { return a.Version }},
			{name: "description", wide: true, value: func(a api.App) string { return a.Description }},
		},
	},
	all:      func(ctx context.Context, c *client.Client, _ string) ([]api.App, error) { return c.ListApps(ctx) },
	id:       func(a api.App) int64 { return a.ID },
	names:    func(a api.App) []string { return []string{a.Name} },
	listHelp: "List the one-click applications",
}

// catalog resolves the names of locations, plans and images with one ListLocations,
// and names a server's location, plan and image. A number is taken as an id as it
// is: the API judges it (422 naming the field).
type catalog struct {
	c    *client.Client
	locs []api.Location
}

func (k *catalog) load(ctx context.Context) error {
	if k.locs != nil {
		return nil
	}
	locs, err := k.c.ListLocations(ctx)
	if err != nil {
		return err
	}
	k.locs = locs
	return nil
}

// locationName is the name of location id, or the id when k (nil: not loaded) does
// not know it.
func (k *catalog) locationName(id int64) string {
	if k != nil {
		for _, l := range k.locs {
			if l.ID == id {
				return l.Name
			}
		}
	}
	return i64(id)
}

// planName is the name of plan id in location loc (or the id).
func (k *catalog) planName(loc, id int64) string {
	return offeredName(k, loc, id, func(l api.Location) []api.Plan { return l.Plans }, func(p api.Plan) (string, int64) { return p.Name, p.ID })
}

// imageName is the name of image id in location loc (or the id).
func (k *catalog) imageName(loc, id int64) string {
	return offeredName(k, loc, id, func(l api.Location) []api.Image { return l.Images }, func(im api.Image) (string, int64) { return im.Name, im.ID })
}

func offeredName[T any](k *catalog, loc, id int64, of func(api.Location) []T, key func(T) (string, int64)) string {
	if k != nil {
		for _, l := range k.locs {
			if l.ID != loc {
				continue
			}
			for _, it := range of(l) {
				if name, iid := key(it); iid == id {
					return name
				}
			}
		}
	}
	return i64(id)
}

// location resolves a location's name or id.
func (k *catalog) location(ctx context.Context, s string) (int64, error) {
	if id, ok := asID(s); ok {
		return id, nil
	}
	if err := k.load(ctx); err != nil {
		return 0, err
	}
	if l, ok := locations.find(k.locs, s); ok {
		return l.ID, nil
	}
	return 0, locations.notFound("", s)
}

// plan resolves a plan's name, within loc when it is known (0: any location).
func (k *catalog) plan(ctx context.Context, s string, loc int64) (int64, error) {
	return findOffered(ctx, k, s, loc, plans.notFound, func(l api.Location) []api.Plan { return l.Plans },
		func(p api.Plan) (string, int64) { return p.Name, p.ID })
}

// image resolves an image's name, within loc when it is known (0: any location).
func (k *catalog) image(ctx context.Context, s string, loc int64) (int64, error) {
	return findOffered(ctx, k, s, loc, images.notFound, func(l api.Location) []api.Image { return l.Images },
		func(im api.Image) (string, int64) { return im.Name, im.ID })
}

// findOffered resolves the name s of something the locations offer (the items of a
// location: of; an item's name and id: key), within loc when it is known (0: any
// location). An id is taken as it is; a name none has is notFound.
func findOffered[T any](ctx context.Context, k *catalog, s string, loc int64, notFound func(parent, s string) error,
	of func(api.Location) []T, key func(T) (string, int64)) (int64, error) {
	if id, ok := asID(s); ok {
		return id, nil
	}
	if err := k.load(ctx); err != nil {
		return 0, err
	}
	for _, l := range k.locs {
		if loc != 0 && l.ID != loc {
			continue
		}
		for _, it := range of(l) {
			if name, id := key(it); name == s {
				return id, nil
			}
		}
	}
	return 0, notFound("", s)
}

// licenses are the license products sold with servers (docs/api.md, Licenses), with
// their monthly prices in the account's currency.
var licenses = &resource[api.License]{
	name: "license", short: "Software licenses sold with servers, billed by the month", noun: "license",
	viewOf: func(ctx context.Context, g *globals, c *client.Client, _ []api.License) view[api.License] {
		currency := accountCurrency(ctx, g, c)
		return view[api.License]{
			id: func(l api.License) string { return i64(l.ID) },
			columns: []column[api.License]{
				{name: "id", value: func(l api.License) string { return i64(l.ID) }},
				{name: "name", value: func(l api.License) string { return l.Name }},
				{name: "vendor", value: func(l api.License) string { return l.Vendor }},
				{name: "per", value: func(l api.License) string { return l.Per }},
				{name: "price_monthly", value: func(l api.License) string { return money(l.PriceMonthly, currency) }},
				{name: "in_stock", value: func(l api.License) string { return strconv.FormatBool(l.InStock) }},
				{name: "image_ids", wide: true, value: func(l api.License) string { return ids(l.ImageIDs) }},
			},
		}
	},
	all: func(ctx context.Context, c *client.Client, _ string) ([]api.License, error) {
		return c.ListLicenses(ctx)
	},
	id:       func(l api.License) int64 { return l.ID },
	names:    func(l api.License) []string { return []string{l.Name} },
	listHelp: "List the licenses sold (per server, or per vCPU of the server), with their monthly prices",
}

// ids is a list of ids as a table cell: "1,5".
func ids(list []int64) string {
	out := make([]string, len(list))
	for i, id := range list {
		out[i] = i64(id)
	}
	return strings.Join(out, ",")
}
