package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

func addResourceCommands(root *cobra.Command, g *globals) {
	root.AddCommand(meCmd(g), locationCmd(g), planCmd(g), imageCmd(g), appCmd(g), serverCmd(g),
		snapshotCmd(g), sshKeyCmd(g), projectCmd(g), recipeCmd(g), billingCmd(g), operationCmd(g))
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

func optI64(n *int64) string {
	if n == nil {
		return ""
	}
	return i64(*n)
}

func optStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// withClient is the RunE of a command that calls the API.
func withClient(g *globals, f func(ctx context.Context, c *client.Client, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := g.client()
		if err != nil {
			return err
		}
		return f(cmd.Context(), c, args)
	}
}

func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short}
	cmd.AddCommand(subs...)
	return cmd
}

var meView = view[api.Me]{
	id: func(m api.Me) string { return i64(m.ID) },
	columns: []column[api.Me]{
		{name: "id", value: func(m api.Me) string { return i64(m.ID) }},
		{name: "email", value: func(m api.Me) string { return m.Email }},
		{name: "name", value: func(m api.Me) string { return m.Name }},
		{name: "language", value: func(m api.Me) string { return m.Language }},
		{name: "credit", value: func(m api.Me) string { return m.Credit + " " + m.Currency }},
		{name: "blocked", value: func(m api.Me) string { return strconv.FormatBool(m.Blocked) }},
		{name: "scopes", value: func(m api.Me) string { return strings.Join(m.Scopes, ",") }},
	},
}

func meCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "me", Short: "Show the account and the token in use", Args: cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			me, err := c.GetMe(ctx)
			if err != nil {
				return err
			}
			return printOne(g, meView, *me)
		}),
	}
}

var locationView = view[api.Location]{
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
}

func locationCmd(g *globals) *cobra.Command {
	return group("location", "Locations where servers can be ordered", listCmd(g, "List the locations", locationView, (*client.Client).ListLocations))
}

// locatedPlan is a plan as offered in one location. The API has no list of plans,
// only each location's: -o json prints the location's plan as the API gives it, and
// the location's name.
type locatedPlan struct {
	Location string `json:"location"`
	api.Plan
}

var planView = view[locatedPlan]{
	id: func(p locatedPlan) string { return i64(p.ID) },
	columns: []column[locatedPlan]{
		{name: "id", value: func(p locatedPlan) string { return i64(p.ID) }},
		{name: "name", value: func(p locatedPlan) string { return p.Name }},
		{name: "location", value: func(p locatedPlan) string { return p.Location }},
		{name: "vcpus", value: func(p locatedPlan) string { return strconv.Itoa(p.VCPUs) }},
		{name: "memory_mb", value: func(p locatedPlan) string { return strconv.Itoa(p.MemoryMB) }},
		{name: "disk_gb", value: func(p locatedPlan) string { return strconv.Itoa(p.DiskGB) }},
		{name: "price_monthly", value: func(p locatedPlan) string { return p.PriceMonthly }},
		{name: "price_hourly", wide: true, value: func(p locatedPlan) string { return p.PriceHourly }},
		{name: "in_stock", wide: true, value: func(p locatedPlan) string { return strconv.FormatBool(p.InStock) }},
	},
}

func planCmd(g *globals) *cobra.Command {
	list := offeredListCmd(g, "plans", planView, func(l api.Location) []locatedPlan {
		out := make([]locatedPlan, len(l.Plans))
		for i, p := range l.Plans {
			out[i] = locatedPlan{l.Name, p}
		}
		return out
	})
	return group("plan", "Server sizes and prices", list)
}

// offeredListCmd is the list of what every location offers of a kind (what: "plans",
// "images"), or only --location's; of gives one location's.
func offeredListCmd[T any](g *globals, what string, v view[T], of func(api.Location) []T) *cobra.Command {
	var loc string
	list := &cobra.Command{
		Use: "list", Short: "List the " + what + " of every location (or of --location)", Args: cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			k := &catalog{c: c}
			var locID int64
			if loc != "" {
				var err error
				if locID, err = k.location(ctx, loc); err != nil {
					return err
				}
			}
			if err := k.load(ctx); err != nil {
				return err
			}
			var items []T
			for _, l := range k.locs {
				if locID == 0 || l.ID == locID {
					items = append(items, of(l)...)
				}
			}
			return printList(g, v, items)
		}),
	}
	list.Flags().StringVar(&loc, "location", "", "only the "+what+" of this location (name or id)")
	return list
}

// locatedImage is an image as offered in one location (as locatedPlan).
type locatedImage struct {
	Location string `json:"location"`
	api.Image
}

var imageView = view[locatedImage]{
	id: func(im locatedImage) string { return i64(im.ID) },
	columns: []column[locatedImage]{
		{name: "id", value: func(im locatedImage) string { return i64(im.ID) }},
		{name: "name", value: func(im locatedImage) string { return im.Name }},
		{name: "location", value: func(im locatedImage) string { return im.Location }},
		{name: "os", value: func(im locatedImage) string { return im.OS }},
		{name: "version", value: func(im locatedImage) string { return im.Version }},
	},
}

func imageCmd(g *globals) *cobra.Command {
	list := offeredListCmd(g, "images", imageView, func(l api.Location) []locatedImage {
		out := make([]locatedImage, len(l.Images))
		for i, im := range l.Images {
			out[i] = locatedImage{l.Name, im}
		}
		return out
	})
	return group("image", "Operating-system images", list)
}

var appView = view[api.App]{
	id: func(a api.App) string { return i64(a.ID) },
	columns: []column[api.App]{
		{name: "id", value: func(a api.App) string { return i64(a.ID) }},
		{name: "name", value: func(a api.App) string { return a.Name }},
		{name: "version", value: func(a api.App) string { return a.Version }},
		{name: "description", wide: true, value: func(a api.App) string { return a.Description }},
	},
}

func appCmd(g *globals) *cobra.Command {
	return group("app", "One-click applications", listCmd(g, "List the one-click applications", appView, (*client.Client).ListApps))
}

// serverView shows servers with their location's, plan's and image's names from k
// (nil, or one it does not know: the id).
func serverView(k *catalog) view[api.Server] {
	return view[api.Server]{
		id: func(s api.Server) string { return i64(s.ID) },
		columns: []column[api.Server]{
			{name: "id", value: func(s api.Server) string { return i64(s.ID) }},
			{name: "name", value: func(s api.Server) string { return s.Name }},
			{name: "status", value: func(s api.Server) string { return s.Status }},
			{name: "ipv4", value: func(s api.Server) string { return optStr(s.IPv4) }},
			{name: "location", value: func(s api.Server) string { return k.locationName(s.LocationID) }},
			{name: "plan", value: func(s api.Server) string { return k.planName(s.LocationID, s.PlanID) }},
			{name: "image", wide: true, value: func(s api.Server) string { return k.imageName(s.LocationID, s.ImageID) }},
			{name: "display_name", wide: true, value: func(s api.Server) string { return s.DisplayName }},
			{name: "ipv6", wide: true, value: func(s api.Server) string { return optStr(s.IPv6) }},
			{name: "location_id", wide: true, value: func(s api.Server) string { return i64(s.LocationID) }},
			{name: "plan_id", wide: true, value: func(s api.Server) string { return i64(s.PlanID) }},
			{name: "image_id", wide: true, value: func(s api.Server) string { return i64(s.ImageID) }},
			{name: "project_id", wide: true, value: func(s api.Server) string { return optI64(s.ProjectID) }},
			{name: "app_id", wide: true, value: func(s api.Server) string { return optI64(s.AppID) }},
			{name: "recipe_id", wide: true, value: func(s api.Server) string { return optI64(s.RecipeID) }},
			{name: "vcpus", wide: true, value: func(s api.Server) string { return strconv.Itoa(s.VCPUs) }},
			{name: "memory_mb", wide: true, value: func(s api.Server) string { return strconv.Itoa(s.MemoryMB) }},
			{name: "disk_gb", wide: true, value: func(s api.Server) string { return strconv.Itoa(s.DiskGB) }},
			{name: "operation", wide: true, value: func(s api.Server) string {
				if s.Operation == nil {
					return ""
				}
				return fmt.Sprintf("%d (%s)", s.Operation.ID, s.Operation.Type)
			}},
			{name: "created_at", wide: true, value: func(s api.Server) string { return ts(s.CreatedAt) }},
		},
	}
}

// serverNames is the catalog to name servers' locations, plans and images with: nil
// (ids only, no request) when nothing is printed as a table or there is no server. A
// catalog that cannot be read leaves the ids, the rest of the answer is still shown.
func serverNames(ctx context.Context, g *globals, c *client.Client, servers ...api.Server) *catalog {
	f, err := parseOutput(g.output)
	if err != nil || g.quiet || len(servers) == 0 || f.kind == "json" || f.kind == "yaml" {
		return nil
	}
	if f.kind == "columns" && !slices.ContainsFunc(f.columns, func(c string) bool { return c == "location" || c == "plan" || c == "image" }) {
		return nil
	}
	k := &catalog{c: c}
	if k.load(ctx) != nil {
		return nil
	}
	return k
}

func serverCmd(g *globals) *cobra.Command {
	var status, project string
	list := &cobra.Command{
		Use: "list", Short: "List the servers", Args: cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			opts := client.ServerListOptions{Status: status}
			if project != "" {
				id, err := projectID(ctx, c, project)
				if err != nil {
					return err
				}
				opts.ProjectID = id
			}
			srvs, err := c.ListServers(ctx, opts)
			if err != nil {
				return err
			}
			return printList(g, serverView(serverNames(ctx, g, c, srvs...)), srvs)
		}),
	}
	list.Flags().StringVar(&status, "status", "", "only servers in this status")
	list.Flags().StringVar(&project, "project", "", "only the servers of this project (name or id)")
	describe := &cobra.Command{
		Use: "describe SERVER", Short: "Show a server (by name or id)", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			srv, err := c.GetServer(ctx, args[0])
			if err != nil {
				return err
			}
			return printOne(g, serverView(serverNames(ctx, g, c, *srv)), *srv)
		}),
	}
	del := &cobra.Command{
		Use: "delete SERVER...", Short: "Delete servers and their snapshots", Args: cobra.MinimumNArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			for _, s := range args {
				if err := c.DeleteServer(ctx, s); err != nil {
					return err
				}
				g.note("Server %s deleted\n", s)
			}
			return nil
		}),
	}
	cmd := group("server", "Manage servers", serverCreateCmd(g), list, describe, del)
	cmd.AddCommand(serverMoreCommands(g)...)
	for _, p := range []struct{ use, action, short string }{
		{"poweron", client.PowerOn, "Start a stopped server"},
		{"shutdown", client.PowerShutdown, "Shut a server down gracefully (ACPI)"},
		{"poweroff", client.PowerOff, "Cut a server's power"},
		{"reboot", client.PowerReboot, "Reboot a server gracefully"},
		{"reset", client.PowerReset, "Reset a server (hard)"},
	} {
		cmd.AddCommand(&cobra.Command{
			Use: p.use + " SERVER", Short: p.short, Args: cobra.ExactArgs(1),
			RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
				srv, err := c.PowerServer(ctx, args[0], p.action)
				if err != nil {
					return err
				}
				return afterServerAction(ctx, g, c, srv)
			}),
		})
	}
	return cmd
}

// afterServerAction waits for the server's operation (unless --no-wait) and prints
// the server as it then is.
func afterServerAction(ctx context.Context, g *globals, c *client.Client, srv *api.Server) error {
	if srv.Operation != nil && !g.noWait {
		if _, err := waitOperation(ctx, g, c, srv.Operation, "server "+srv.Name); err != nil {
			return err
		}
		now, err := c.GetServer(ctx, i64(srv.ID))
		if err != nil {
			return err
		}
		srv = now
	}
	return printOne(g, serverView(serverNames(ctx, g, c, *srv)), *srv)
}

func serverCreateCmd(g *globals) *cobra.Command {
	var plan, loc, image, app, recipe, project, name, password string
	var keys []string
	cmd := &cobra.Command{
		Use:   "create --plan PLAN --location LOCATION (--image IMAGE | --app APP)",
		Short: "Order a server (plan, location, image, app, ssh keys, project and recipe by name or id)",
		Args:  cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			k := &catalog{c: c}
			var req api.ServerCreate
			var locID int64
			if loc != "" {
				id, err := k.location(ctx, loc)
				if err != nil {
					return err
				}
				locID, req.LocationID = id, &id
			}
			if plan != "" {
				id, err := k.plan(ctx, plan, locID)
				if err != nil {
					return err
				}
				req.PlanID = &id
			}
			if image != "" {
				id, err := k.image(ctx, image, locID)
				if err != nil {
					return err
				}
				req.ImageID = &id
			}
			if app != "" {
				id, err := k.app(ctx, app)
				if err != nil {
					return err
				}
				req.AppID = &id
			}
			if recipe != "" {
				id, err := recipeID(ctx, c, recipe)
				if err != nil {
					return err
				}
				req.RecipeID = &id
			}
			if project != "" {
				id, err := projectID(ctx, c, project)
				if err != nil {
					return err
				}
				req.ProjectID = api.Some(id)
			}
			for _, s := range keys {
				id, err := sshKeyID(ctx, c, s)
				if err != nil {
					return err
				}
				req.SSHKeyIDs = append(req.SSHKeyIDs, id)
			}
			if name != "" {
				req.DisplayName = &name
			}
			if password != "" {
				req.RootPassword = &password
			}
			srv, err := c.CreateServer(ctx, req)
			if err != nil {
				return err
			}
			return afterServerAction(ctx, g, c, srv)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&plan, "plan", "", "plan (name or id)")
	f.StringVar(&loc, "location", "", "location (name or id)")
	f.StringVar(&image, "image", "", "image (name or id)")
	f.StringVar(&app, "app", "", "one-click application (name or id)")
	f.StringVar(&recipe, "recipe", "", "first-boot recipe (name or id)")
	f.StringVar(&project, "project", "", "project (name or id)")
	f.StringSliceVar(&keys, "ssh-key", nil, "SSH key (name, fingerprint or id); repeatable")
	f.StringVar(&name, "display-name", "", "display name")
	f.StringVar(&password, "root-password", "", "root password (prefer --ssh-key)")
	return cmd
}
