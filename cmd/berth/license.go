package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// serverLicenses are a server's licenses (docs/api.md, Licenses): those it holds and
// those removed whose paid month has not ended. The API gives each its product's id
// alone: a table names the product from the catalog (licenses).
var serverLicenses = &resource[api.ServerLicense]{
	name: "license", short: "A server's software licenses, billed by the calendar month", noun: "license", arg: "LICENSE",
	parent: "SERVER",
	viewOf: func(ctx context.Context, g *globals, c *client.Client, _ []api.ServerLicense) view[api.ServerLicense] {
		return serverLicenseView(licenseNames(ctx, g, c))
	},
	all: func(ctx context.Context, c *client.Client, server string) ([]api.ServerLicense, error) {
		return c.ListServerLicenses(ctx, server)
	},
	id:       func(l api.ServerLicense) int64 { return l.ID },
	listHelp: "List a server's licenses: those it holds, and those removed until their paid month ends (cancelled)",
}

// serverLicenseView shows a server's licenses with their products' names from names
// (nil, or a product it does not know: the id).
func serverLicenseView(names map[int64]string) view[api.ServerLicense] {
	product := func(l api.ServerLicense) string {
		if n, ok := names[l.LicenseID]; ok {
			return n
		}
		return i64(l.LicenseID)
	}
	return view[api.ServerLicense]{
		id: func(l api.ServerLicense) string { return i64(l.ID) },
		columns: []column[api.ServerLicense]{
			{name: "id", value: func(l api.ServerLicense) string { return i64(l.ID) }},
			{name: "license", value: product},
			{name: "status", value: func(l api.ServerLicense) string { return l.Status }},
			{name: "key", value: func(l api.ServerLicense) string { return optStr(l.Key) }},
			{name: "started_at", value: func(l api.ServerLicense) string { return ts(l.StartedAt) }},
			{name: "paid_through", value: func(l api.ServerLicense) string { return ts(l.PaidThrough) }},
			{name: "license_id", wide: true, value: func(l api.ServerLicense) string { return i64(l.LicenseID) }},
		},
	}
}

// licenseNames are the license products' names by id, to name a server's licenses
// with: nil (ids only, no request) when nothing is printed as a table, or the catalog
// cannot be read (the rest of the answer is still shown).
func licenseNames(ctx context.Context, g *globals, c *client.Client) map[int64]string {
	if f, err := parseOutput(g.output); err != nil || g.quiet || f.kind == "json" || f.kind == "yaml" {
		return nil
	}
	ls, err := c.ListLicenses(ctx)
	if err != nil {
		return nil
	}
	names := make(map[int64]string, len(ls))
	for _, l := range ls {
		names[l.ID] = l.Name
	}
	return names
}

// serverLicenseCmd is "berth server license": list, add and remove a server's
// licenses. Each takes the server first (SERVER: a display name resolves, and it
// completes), then the license: a product of the catalog by name or id to add; to
// remove, the id of the server's license or its product's name.
func serverLicenseCmd(g *globals) *cobra.Command {
	add := &cobra.Command{
		Use: "add SERVER LICENSE", Short: "Have a server hold a license (by name or id, berth license list); its month in course is charged at once",
		Args: cobra.ExactArgs(2),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			lic, err := licenses.ref(ctx, c, "", args[1])
			if err != nil {
				return err
			}
			held, err := c.AddServerLicense(ctx, args[0], lic.id)
			if err != nil {
				return err
			}
			return serverLicenses.printOne(ctx, g, c, *held)
		}),
	}
	remove := &cobra.Command{
		Use: "remove SERVER LICENSE", Short: "Cancel a server's license (the id server license list shows, or its name): nothing is refunded, " +
			"it is listed as cancelled until its paid month ends",
		Args: cobra.ExactArgs(2),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			id, err := heldLicense(ctx, c, args[0], args[1])
			if err != nil {
				return err
			}
			if err := c.RemoveServerLicense(ctx, args[0], id); err != nil {
				return err
			}
			g.note("License %s of server %s cancelled\n", args[1], args[0])
			return nil
		}),
	}
	return serverLicenses.command(g, add, remove)
}

// heldLicense is the id of the server's license that s names: s itself when it is a
// number (the API judges it: 404); else the one license the server holds (pending or
// active) of the product named s.
func heldLicense(ctx context.Context, c *client.Client, server, s string) (int64, error) {
	if id, ok := asID(s); ok {
		return id, nil
	}
	product, err := licenses.lookup(ctx, c, "", s)
	if err != nil {
		return 0, err
	}
	listed, err := c.ListServerLicenses(ctx, server)
	if err != nil {
		return 0, err
	}
	var held []api.ServerLicense
	for _, l := range listed {
		if l.LicenseID == product.ID && (l.Status == client.LicensePending || l.Status == client.LicenseActive) {
			held = append(held, l)
		}
	}
	switch len(held) {
	case 0:
		return 0, fmt.Errorf("server %s holds no license %q (berth server license list %s): %w", server, s, server, errNameNotFound)
	case 1:
		return held[0].ID, nil
	}
	return 0, fmt.Errorf("server %s holds %d licenses %q: give the id of one (berth server license list %s)", server, len(held), s, server)
}
