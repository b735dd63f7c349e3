package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// catalog resolves the names of locations, plans and images (from ListLocations) and
// apps (from ListApps) to ids. A number is taken as an id as it is: the API judges it
// (422 naming the field).
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

func asID(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0
}

func (k *catalog) location(ctx context.Context, s string) (int64, error) {
	if id, ok := asID(s); ok {
		return id, nil
	}
	if err := k.load(ctx); err != nil {
		return 0, err
	}
	for _, l := range k.locs {
		if l.Name == s {
			return l.ID, nil
		}
	}
	return 0, fmt.Errorf("no location %q (berth location list): %w", s, errNameNotFound)
}

// plan resolves a plan's name, within loc when it is known (0: any location).
func (k *catalog) plan(ctx context.Context, s string, loc int64) (int64, error) {
	return findOffered(ctx, k, s, loc, "plan", func(l api.Location) []api.Plan { return l.Plans },
		func(p api.Plan) (string, int64) { return p.Name, p.ID })
}

// image resolves an image's name, within loc when it is known (0: any location).
func (k *catalog) image(ctx context.Context, s string, loc int64) (int64, error) {
	return findOffered(ctx, k, s, loc, "image", func(l api.Location) []api.Image { return l.Images },
		func(im api.Image) (string, int64) { return im.Name, im.ID })
}

// findOffered resolves the name s of something the locations offer (what, e.g.
// "plan"; the items of a location: of; an item's name and id: key), within loc when
// it is known (0: any location). An id is taken as it is.
func findOffered[T any](ctx context.Context, k *catalog, s string, loc int64, what string,
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
	return 0, fmt.Errorf("no %s %q (berth %s list): %w", what, s, what, errNameNotFound)
}

func (k *catalog) app(ctx context.Context, s string) (int64, error) {
	if id, ok := asID(s); ok {
		return id, nil
	}
	apps, err := k.c.ListApps(ctx)
	if err != nil {
		return 0, err
	}
	for _, a := range apps {
		if a.Name == s {
			return a.ID, nil
		}
	}
	return 0, fmt.Errorf("no app %q (berth app list): %w", s, errNameNotFound)
}

func sshKeyID(ctx context.Context, c *client.Client, s string) (int64, error) {
	if id, ok := asID(s); ok {
		return id, nil
	}
	keys, err := c.ListSSHKeys(ctx)
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		if k.Name == s || k.Fingerprint == s {
			return k.ID, nil
		}
	}
	return 0, fmt.Errorf("no ssh key %q (berth ssh-key list): %w", s, errNameNotFound)
}

func projectID(ctx context.Context, c *client.Client, s string) (int64, error) {
	if id, ok := asID(s); ok {
		return id, nil
	}
	ps, err := c.ListProjects(ctx)
	if err != nil {
		return 0, err
	}
	for _, p := range ps {
		if p.Name == s {
			return p.ID, nil
		}
	}
	return 0, fmt.Errorf("no project %q (berth project list): %w", s, errNameNotFound)
}

func recipeID(ctx context.Context, c *client.Client, s string) (int64, error) {
	if id, ok := asID(s); ok {
		return id, nil
	}
	rs, err := c.ListRecipes(ctx)
	if err != nil {
		return 0, err
	}
	for _, r := range rs {
		if r.Name == s {
			return r.ID, nil
		}
	}
	return 0, fmt.Errorf("no recipe %q (berth recipe list): %w", s, errNameNotFound)
}
