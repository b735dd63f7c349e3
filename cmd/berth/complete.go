package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// nameSource is what completes one kind of argument with the names the account has
// or the catalog offers, asked of the API: the word naming it in a command's use line
// (SERVER, VOLUME; "": it is only a flag's) and the flag that takes one (--server,
// --plan). names gets the command and its arguments so far: a plan or an image is
// completed from the location the command names (--location, or its server's).
type nameSource struct {
	arg, flag string
	names     func(ctx context.Context, c *client.Client, cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, error)
}

var nameSources = []nameSource{
	{arg: "SERVER", flag: "server", names: serverCompletions},
	{arg: "VOLUME", flag: "volume", names: volumeCompletions},
	{arg: "DOMAIN", flag: "domain", names: domainCompletions},
	{flag: "location", names: locationCompletions},
	{flag: "plan", names: planCompletions},
	{flag: "image", names: imageCompletions},
	{flag: "ssh-key", names: sshKeyCompletions},
	{flag: "app", names: appCompletions},
	{flag: "project", names: projectCompletions},
	{flag: "recipe", names: recipeCompletions},
	{arg: "LICENSE", flag: "license", names: licenseCompletions},
}

// completions are the names of items that start with prefix, each once (the first
// of a name's items describes it), in items' order.
func completions[T any](items []T, prefix string, name func(T) string, desc func(T) string) []cobra.Completion {
	var out []cobra.Completion
	seen := map[string]bool{}
	for _, it := range items {
		if n := name(it); strings.HasPrefix(n, prefix) && !seen[n] {
			seen[n] = true
			out = append(out, cobra.CompletionWithDesc(escape(n), escape(desc(it))))
		}
	}
	return out
}

// locationCompletions are the locations' names, each described by its city and country.
func locationCompletions(ctx context.Context, c *client.Client, _ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, error) {
	locs, err := c.ListLocations(ctx)
	return completions(locs, prefix, func(l api.Location) string { return l.Name },
		func(l api.Location) string { return l.City + ", " + l.Country }), err
}

// completedLocations are the locations whose plans and images complete a flag of cmd:
// the one its --location names, or that of the server its first argument names
// (reinstall); every location where it names none, or one the API does not know.
func completedLocations(ctx context.Context, c *client.Client, cmd *cobra.Command, args []string) ([]api.Location, error) {
	k := &catalog{c: c}
	if err := k.load(ctx); err != nil {
		return nil, err
	}
	var loc int64
	if f := cmd.Flags().Lookup("location"); f != nil && f.Changed {
		if id, err := k.location(ctx, f.Value.String()); err == nil {
			loc = id
		}
	} else if words := strings.Fields(cmd.Use); len(args) > 0 && len(words) >= 2 && words[1] == "SERVER" {
		if srv, err := c.GetServer(ctx, args[0]); err == nil {
			loc = srv.LocationID
		}
	}
	var out []api.Location
	for _, l := range k.locs {
		if loc == 0 || l.ID == loc {
			out = append(out, l)
		}
	}
	return out, nil
}

// planCompletions are the plans' names, each described by its size, its monthly price
// and whether it is in stock: of the command's location (completedLocations), or
// those its server can move to (rescale).
func planCompletions(ctx context.Context, c *client.Client, cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, error) {
	desc := func(p api.Plan) string {
		s := fmt.Sprintf("%d vCPU, %d MB, %d GB, %s a month", p.VCPUs, p.MemoryMB, p.DiskGB, p.PriceMonthly)
		if !p.InStock {
			s += ", out of stock"
		}
		return s
	}
	if cmd.Name() == "rescale" && len(args) > 0 {
		opts, err := c.ListRescaleOptions(ctx, args[0])
		return completions(opts, prefix, func(o api.RescaleOption) string { return o.Name },
			func(o api.RescaleOption) string { return desc(o.Plan) }), err
	}
	locs, err := completedLocations(ctx, c, cmd, args)
	var ps []api.Plan
	for _, l := range locs {
		ps = append(ps, l.Plans...)
	}
	return completions(ps, prefix, func(p api.Plan) string { return p.Name }, desc), err
}

// imageCompletions are the images' names of the command's location
// (completedLocations), each described by its OS and version.
func imageCompletions(ctx context.Context, c *client.Client, cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, error) {
	locs, err := completedLocations(ctx, c, cmd, args)
	var ims []api.Image
	for _, l := range locs {
		ims = append(ims, l.Images...)
	}
	return completions(ims, prefix, func(im api.Image) string { return im.Name },
		func(im api.Image) string { return im.OS + " " + im.Version }), err
}

// sshKeyCompletions are the account's SSH keys' names, each described by its
// fingerprint.
func sshKeyCompletions(ctx context.Context, c *client.Client, _ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, error) {
	keys, err := c.ListSSHKeys(ctx)
	return completions(keys, prefix, func(k api.SSHKey) string { return k.Name }, func(k api.SSHKey) string { return k.Fingerprint }), err
}

func appCompletions(ctx context.Context, c *client.Client, _ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, error) {
	as, err := c.ListApps(ctx)
	return completions(as, prefix, func(a api.App) string { return a.Name }, func(a api.App) string { return a.Version }), err
}

func projectCompletions(ctx context.Context, c *client.Client, _ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, error) {
	ps, err := c.ListProjects(ctx)
	return completions(ps, prefix, func(p api.Project) string { return p.Name }, func(p api.Project) string { return fmt.Sprintf("%d servers", p.ServerCount) }), err
}

func recipeCompletions(ctx context.Context, c *client.Client, _ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, error) {
	rs, err := c.ListRecipes(ctx)
	return completions(rs, prefix, func(r api.Recipe) string { return r.Name }, func(r api.Recipe) string { return "recipe " + i64(r.ID) }), err
}

// licenseCompletions are the names of the license products of the catalog, each
// described by its vendor, its monthly price and whether it is in stock; for server
// license remove, those of the licenses the command's server holds, each described by
// its status.
func licenseCompletions(ctx context.Context, c *client.Client, cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, error) {
	ls, err := c.ListLicenses(ctx)
	if err != nil {
		return nil, err
	}
	if cmd.Name() == "remove" && len(args) > 0 {
		server, err := serverArg(ctx, c, args[0])
		if err != nil {
			return nil, err
		}
		listed, err := c.ListServerLicenses(ctx, server)
		names := map[int64]string{}
		for _, l := range ls {
			names[l.ID] = l.Name
		}
		var held []api.ServerLicense
		for _, l := range listed {
			if _, ok := names[l.LicenseID]; ok && (l.Status == client.LicensePending || l.Status == client.LicenseActive) {
				held = append(held, l)
			}
		}
		return completions(held, prefix, func(l api.ServerLicense) string { return names[l.LicenseID] },
			func(l api.ServerLicense) string { return "license " + i64(l.ID) + ", " + l.Status }), err
	}
	return completions(ls, prefix, func(l api.License) string { return l.Name }, func(l api.License) string {
		s := fmt.Sprintf("%s, %s a %s a month", l.Vendor, l.PriceMonthly, l.Per)
		if !l.InStock {
			s += ", out of stock"
		}
		return s
	}), nil
}

// serverCompletions are the account's server names starting with prefix, each
// described by its display name and status.
func serverCompletions(ctx context.Context, c *client.Client, _ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, error) {
	srvs, err := c.ListServers(ctx, client.ServerListOptions{})
	var names []cobra.Completion
	for _, s := range srvs {
		if strings.HasPrefix(s.Name, prefix) {
			names = append(names, cobra.CompletionWithDesc(escape(s.Name), escape(s.DisplayName+" "+s.Status)))
		}
	}
	return names, err
}

// volumeCompletions are the account's volume names starting with prefix, each
// described by its size and status.
func volumeCompletions(ctx context.Context, c *client.Client, _ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, error) {
	vols, err := c.ListVolumes(ctx, client.VolumeListOptions{})
	var names []cobra.Completion
	for _, v := range vols {
		if strings.HasPrefix(v.Name, prefix) {
			names = append(names, cobra.CompletionWithDesc(escape(v.Name), escape(strconv.Itoa(v.SizeGB)+" GB "+v.Status)))
		}
	}
	return names, err
}

// completeNames makes every command complete, in bash, zsh and fish, the arguments
// its use line names SERVER, VOLUME, DOMAIN or LICENSE (SERVER... or VOLUME... first:
// every argument) and the flags of nameSources (--server, --volume, --location,
// --plan, --image, --ssh-key, --app, --project, --recipe, --license), with the names
// the account has or the catalog offers.
func completeNames(root *cobra.Command, g *globals) {
	for _, c := range root.Commands() {
		completeNames(c, g)
	}
	for _, src := range nameSources {
		if root.Flags().Lookup(src.flag) != nil {
			_ = root.RegisterFlagCompletionFunc(src.flag, src.complete(g))
		}
	}
	words := positional(root.Use)
	if root.ValidArgsFunction == nil && slices.ContainsFunc(words[min(1, len(words)):], func(w string) bool { return argSource(w) != nil }) {
		root.ValidArgsFunction = completeArgs(g, words)
	}
}

// positional are the words of a use line up to its first flag or choice ("-", "[",
// "("): the command's name, then what names each argument ("attach VOLUME --server
// SERVER": attach VOLUME).
func positional(use string) []string {
	words := strings.Fields(use)
	for i, w := range words {
		if strings.ContainsAny(w[:1], "-[(") {
			return words[:i]
		}
	}
	return words
}

// argSource is the source of the names an argument the use line names word takes
// (SERVER, SERVER...), or nil.
func argSource(word string) *nameSource {
	for i, src := range nameSources {
		if src.arg != "" && strings.HasPrefix(word, src.arg) {
			return &nameSources[i]
		}
	}
	return nil
}

// completeArgs completes the arguments of a command whose use line's positional
// words are words: each
// with the names of the source of the word naming it there (the first's, for every
// argument, when it is SERVER... or VOLUME...). An argument named FILE completes
// with files (domain import DOMAIN FILE|-); any other with nothing.
func completeArgs(g *globals, words []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		word := ""
		if len(words) > 1 && strings.HasSuffix(words[1], "...") {
			word = words[1]
		} else if len(args)+1 < len(words) {
			word = words[len(args)+1]
		}
		if strings.HasPrefix(word, "FILE") {
			return nil, cobra.ShellCompDirectiveDefault
		}
		src := argSource(word)
		if src == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return src.complete(g)(cmd, args, prefix)
	}
}

// complete is the completion function of src's names.
func (src nameSource) complete(g *globals) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		c, err := g.client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		names, err := src.names(cmd.Context(), c, cmd, args, prefix)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
