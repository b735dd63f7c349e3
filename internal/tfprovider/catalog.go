package tfprovider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/i18n"
)

// catalog resolves locations, plans, images, apps and licenses, each given by its
// name or its id, against what Berth offers (GET /locations, GET /apps, GET
// /licenses), loaded once per use.
type catalog struct {
	c    *client.Client
	locs []api.Location
	apps []api.App
	lics []api.License
}

func newCatalog(c *client.Client) *catalog { return &catalog{c: c} }

func (k *catalog) locations(ctx context.Context) ([]api.Location, error) {
	if k.locs == nil {
		locs, err := k.c.ListLocations(ctx)
		if err != nil {
			return nil, err
		}
		k.locs = locs
	}
	return k.locs, nil
}

func (k *catalog) allApps(ctx context.Context) ([]api.App, error) {
	if k.apps == nil {
		apps, err := k.c.ListApps(ctx)
		if err != nil {
			return nil, err
		}
		k.apps = apps
	}
	return k.apps, nil
}

func (k *catalog) licenses(ctx context.Context) ([]api.License, error) {
	if k.lics == nil {
		lics, err := k.c.ListLicenses(ctx)
		if err != nil {
			return nil, err
		}
		k.lics = lics
	}
	return k.lics, nil
}

// license is the license product named s (its name, or its id).
func (k *catalog) license(ctx context.Context, s string) (api.License, error) {
	lics, err := k.licenses(ctx)
	if err != nil {
		return api.License{}, err
	}
	return find(lics, s, "terraform.no_license", nil, func(l api.License) (string, int64) { return l.Name, l.ID })
}

// requiredBy are the ids of the license products that image requires (Berth adds
// them to a server of the image itself).
func (k *catalog) requiredBy(ctx context.Context, image int64) (map[int64]bool, error) {
	lics, err := k.licenses(ctx)
	if err != nil {
		return nil, err
	}
	out := map[int64]bool{}
	for _, l := range lics {
		if slices.Contains(l.ImageIDs, image) {
			out[l.ID] = true
		}
	}
	return out, nil
}

// notOffered is a name or id the catalog does not have. Its message (msg, in a
// language) names the value and lists what is offered; attr is the attribute that
// gave it, where a caller knows.
type notOffered struct {
	id   string         // the message's id in internal/i18n: terraform.no_plan, ...
	args map[string]any // value, offered, location
	attr string
}

func (e *notOffered) Error() string { return e.msg(i18n.Default) }

// msg is the message in lang.
func (e *notOffered) msg(lang string) string {
	args := maps.Clone(e.args)
	if args["offered"] == "" {
		args["offered"] = message(lang, "terraform.nothing", nil)
	}
	return message(lang, e.id, args)
}

// find returns the item of items named s (its name, or its id), or a notOffered of
// the message id (whose args are where, beside value and offered).
func find[T any](items []T, s, id string, where map[string]any, key func(T) (string, int64)) (T, error) {
	n, byID := asID(s)
	names := make([]string, 0, len(items))
	for _, it := range items {
		name, itID := key(it)
		if name == s || byID && itID == n {
			return it, nil
		}
		names = append(names, fmt.Sprintf("%s (id %d)", name, itID))
	}
	var zero T
	args := map[string]any{"value": s, "offered": strings.Join(names, ", ")}
	maps.Copy(args, where)
	return zero, &notOffered{id: id, args: args}
}

// location is the location named s.
func (k *catalog) location(ctx context.Context, s string) (api.Location, error) {
	locs, err := k.locations(ctx)
	if err != nil {
		return api.Location{}, err
	}
	return find(locs, s, "terraform.no_location", nil, func(l api.Location) (string, int64) { return l.Name, l.ID })
}

// locationByID is the location of id (a server's): zero when Berth no longer offers
// it.
func (k *catalog) locationByID(ctx context.Context, id int64) (api.Location, error) {
	locs, err := k.locations(ctx)
	if err != nil {
		return api.Location{}, err
	}
	for _, l := range locs {
		if l.ID == id {
			return l, nil
		}
	}
	return api.Location{ID: id}, nil
}

func in(loc api.Location) map[string]any { return map[string]any{"location": loc.Name} }

// plan is the plan named s that loc offers.
func plan(loc api.Location, s string) (api.Plan, error) {
	return find(loc.Plans, s, "terraform.no_plan", in(loc), func(p api.Plan) (string, int64) { return p.Name, p.ID })
}

// image is the image named s that loc offers.
func image(loc api.Location, s string) (api.Image, error) {
	return find(loc.Images, s, "terraform.no_image", in(loc), func(im api.Image) (string, int64) { return im.Name, im.ID })
}

// app is the one-click app named s.
func (k *catalog) app(ctx context.Context, s string) (api.App, error) {
	apps, err := k.allApps(ctx)
	if err != nil {
		return api.App{}, err
	}
	return find(apps, s, "terraform.no_app", nil, func(a api.App) (string, int64) { return a.Name, a.ID })
}

// names are the names of a server's location, plan, image and app (empty where the
// catalog no longer has one).
type names struct{ location, plan, image, app string }

func (k *catalog) serverNames(ctx context.Context, srv *api.Server) (names, error) {
	var n names
	loc, err := k.locationByID(ctx, srv.LocationID)
	if err != nil {
		return n, err
	}
	n.location = loc.Name
	for _, p := range loc.Plans {
		if p.ID == srv.PlanID {
			n.plan = p.Name
		}
	}
	for _, im := range loc.Images {
		if im.ID == srv.ImageID {
			n.image = im.Name
		}
	}
	if srv.AppID != nil {
		apps, err := k.allApps(ctx)
		if err != nil {
			return n, err
		}
		for _, a := range apps {
			if a.ID == *srv.AppID {
				n.app = a.Name
			}
		}
	}
	return n, nil
}
