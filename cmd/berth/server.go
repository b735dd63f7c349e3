package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// servers are named by id or by name on a command line, and the API resolves either:
// an argument goes to it as it is.
var servers = &resource[api.Server]{
	name: "server", short: "Manage servers", noun: "server", arg: "SERVER",
	viewOf: func(ctx context.Context, g *globals, c *client.Client, items []api.Server) view[api.Server] {
		return serverView(serverNames(ctx, g, c, items...))
	},
	all: func(ctx context.Context, c *client.Client, _ string) ([]api.Server, error) {
		return c.ListServers(ctx, client.ServerListOptions{})
	},
	id:       func(s api.Server) int64 { return s.ID },
	names:    func(s api.Server) []string { return []string{s.Name} },
	getRef:   func(ctx context.Context, c *client.Client, s string) (*api.Server, error) { return c.GetServer(ctx, s) },
	listHelp: "List the servers",
	listFlags: func(cmd *cobra.Command) func(context.Context, *client.Client, string) ([]api.Server, error) {
		var status, project string
		cmd.Flags().StringVar(&status, "status", "", "only servers in this status")
		cmd.Flags().StringVar(&project, "project", "", "only the servers of this project (name or id)")
		return func(ctx context.Context, c *client.Client, _ string) ([]api.Server, error) {
			opts := client.ServerListOptions{Status: status}
			if project != "" {
				p, err := projects.ref(ctx, c, "", project)
				if err != nil {
					return nil, err
				}
				opts.ProjectID = p.id
			}
			return c.ListServers(ctx, opts)
		}
	},
	describeHelp: "Show a server (by name or id)",
	update: &updater[api.Server]{
		use: "[--display-name NAME] [--project PROJECT | --no-project]", short: "Rename a server or move it to another project",
		flags: func(cmd *cobra.Command) func(context.Context, *client.Client, ref) (*api.Server, error) {
			var displayName, project string
			var unassign bool
			cmd.Flags().StringVar(&displayName, "display-name", "", "display name")
			cmd.Flags().StringVar(&project, "project", "", "project (name or id)")
			cmd.Flags().BoolVar(&unassign, "no-project", false, "take the server out of its project")
			cmd.MarkFlagsMutuallyExclusive("project", "no-project")
			return func(ctx context.Context, c *client.Client, r ref) (*api.Server, error) {
				var req api.ServerUpdate
				if cmd.Flags().Changed("display-name") {
					req.DisplayName = &displayName
				}
				if project != "" {
					p, err := projects.ref(ctx, c, "", project)
					if err != nil {
						return nil, err
					}
					req.ProjectID = api.Some(p.id)
				}
				if unassign {
					req.ProjectID = api.Null[int64]()
				}
				return c.UpdateServer(ctx, r.arg, req)
			}
		},
	},
	deleteHelp: "Delete servers and their snapshots",
	deleteMany: true,
	del: func(ctx context.Context, c *client.Client, _ string, r ref) (string, error) {
		return "", c.DeleteServer(ctx, r.arg)
	},
}

// serverView shows servers with their location's, plan's and image's names from k
// (nil, or one it does not know: the id).
func serverView(k *catalog) view[api.Server] {
	return view[api.Server]{
		id: func(s api.Server) string { return i64(s.ID) },
		columns: []column[api.Server]{
			{name: "id", value: func(s api.Server) string { return i64(s.ID) }},
			{name: "name", value: func(s api.Server) string { return s.Name }},
			{name: "display_name", value: func(s api.Server) string { return s.DisplayName }},
			{name: "status", value: func(s api.Server) string { return s.Status }},
			{name: "ipv4", value: func(s api.Server) string { return optStr(s.IPv4) }},
			{name: "location", value: func(s api.Server) string { return k.locationName(s.LocationID) }},
			{name: "plan", value: func(s api.Server) string { return k.planName(s.LocationID, s.PlanID) }},
			{name: "image", wide: true, value: func(s api.Server) string { return k.imageName(s.LocationID, s.ImageID) }},
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
func serverNames(ctx context.Context, g *globals, c *client.Client, srvs ...api.Server) *catalog {
	f, err := parseOutput(g.output)
	if err != nil || g.quiet || len(srvs) == 0 || f.kind == "json" || f.kind == "yaml" {
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
	cmd := servers.command(g, serverCreateCmd(g), reinstallCmd(g), rescaleCmd(g), rescaleOptionsCmd(g), metricsCmd(g), sshCmd(g), consoleCmd(g), rdnsCmd(g),
		serverLicenseCmd(g))
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

func serverCreateCmd(g *globals) *cobra.Command {
	var plan, loc, image, app, recipe, project, name, password string
	var passwordStdin bool
	var keys, lics []string
	cmd := &cobra.Command{
		Use:   "create --plan PLAN --location LOCATION (--image IMAGE | --app APP)",
		Short: "Order a server (plan, location, image, app, ssh keys, project, recipe and licenses by name or id)",
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
				a, err := apps.ref(ctx, c, "", app)
				if err != nil {
					return err
				}
				req.AppID = &a.id
			}
			if recipe != "" {
				r, err := recipes.ref(ctx, c, "", recipe)
				if err != nil {
					return err
				}
				req.RecipeID = &r.id
			}
			if project != "" {
				p, err := projects.ref(ctx, c, "", project)
				if err != nil {
					return err
				}
				req.ProjectID = api.Some(p.id)
			}
			for _, s := range keys {
				k, err := sshKeys.ref(ctx, c, "", s)
				if err != nil {
					return err
				}
				req.SSHKeyIDs = append(req.SSHKeyIDs, k.id)
			}
			for _, s := range lics {
				l, err := licenses.ref(ctx, c, "", s)
				if err != nil {
					return err
				}
				req.LicenseIDs = append(req.LicenseIDs, l.id)
			}
			if name != "" {
				req.DisplayName = &name
			}
			if passwordStdin {
				p, err := readSecretLine(g, "--root-password-stdin")
				if err != nil {
					return err
				}
				password = p
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
	f.StringSliceVar(&lics, "license", nil, "license to hold from the order (name or id, berth license list), beside those the image "+
		"requires; repeatable; its month is charged with the order")
	f.StringVar(&name, "display-name", "", "display name")
	f.StringVar(&password, "root-password", "", "root password (prefer --ssh-key); less safe than --root-password-stdin: "+
		"other users see it in ps, the shell keeps it in its history")
	f.BoolVar(&passwordStdin, "root-password-stdin", false, "read the root password from stdin (its first line)")
	cmd.MarkFlagsMutuallyExclusive("root-password", "root-password-stdin")
	return cmd
}

func reinstallCmd(g *globals) *cobra.Command {
	var image string
	reinstall := &cobra.Command{
		Use: "reinstall SERVER --image IMAGE", Short: "Rebuild a server from an image, wiping its disk", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			srv, err := c.GetServer(ctx, args[0])
			if err != nil {
				return err
			}
			id, err := (&catalog{c: c}).image(ctx, image, srv.LocationID)
			if err != nil {
				return err
			}
			if srv, err = c.ReinstallServer(ctx, args[0], id); err != nil {
				return err
			}
			return afterServerAction(ctx, g, c, srv)
		}),
	}
	reinstall.Flags().StringVar(&image, "image", "", "image (name or id)")
	_ = reinstall.MarkFlagRequired("image")
	return reinstall
}

func rescaleCmd(g *globals) *cobra.Command {
	var plan string
	var upgradeDisk bool
	rescale := &cobra.Command{
		Use: "rescale SERVER --plan PLAN [--upgrade-disk]", Short: "Move a stopped server to another plan", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			srv, err := c.GetServer(ctx, args[0])
			if err != nil {
				return err
			}
			id, err := (&catalog{c: c}).plan(ctx, plan, srv.LocationID)
			if err != nil {
				return err
			}
			req := api.RescaleRequest{PlanID: &id}
			if upgradeDisk {
				req.UpgradeDisk = &upgradeDisk
			}
			if srv, err = c.RescaleServer(ctx, args[0], req); err != nil {
				return err
			}
			return afterServerAction(ctx, g, c, srv)
		}),
	}
	rescale.Flags().StringVar(&plan, "plan", "", "plan (name or id)")
	rescale.Flags().BoolVar(&upgradeDisk, "upgrade-disk", false, "grow the disk too (the server cannot move back to a smaller plan)")
	_ = rescale.MarkFlagRequired("plan")
	return rescale
}

func rescaleOptionsCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "rescale-options SERVER", Short: "List the plans a server can move to", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			opts, err := c.ListRescaleOptions(ctx, args[0])
			if err != nil {
				return err
			}
			return printList(g, rescaleView(accountCurrency(ctx, g, c)), opts)
		}),
	}
}

func metricsCmd(g *globals) *cobra.Command {
	var rng string
	metrics := &cobra.Command{
		Use: "metrics SERVER [--range 1h|6h|24h|7d]", Short: "Show a server's CPU, network and disk load", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			m, err := c.GetServerMetrics(ctx, args[0], rng)
			if err != nil {
				return err
			}
			if f, _ := parseOutput(g.output); f.kind == "json" || f.kind == "yaml" {
				_, err := printData(g.stdout, f, m)
				return err
			}
			return printList(g, metricView, metricRows(m))
		}),
	}
	metrics.Flags().StringVar(&rng, "range", "1h", "time range: 1h, 6h, 24h or 7d")
	return metrics
}

// simulatedIPv4 is where Berth's simulated driver puts its servers' IPv4 addresses
// (internal/compute/simdriver): the shared address space of RFC 6598, which a
// provider's network may use too, so an address in it only suggests a simulated
// server. The API does not say which driver a server is on.
var simulatedIPv4 = netip.MustParsePrefix("100.64.0.0/10")

func sshCmd(g *globals) *cobra.Command {
	var connectTimeout time.Duration
	cmd := &cobra.Command{
		Use: "ssh SERVER [-- SSH ARGS...]", Short: "Run ssh root@IPv4 of a server", Args: cobra.MinimumNArgs(1),
		Long: "Run ssh root@IPv4 of a server, with the arguments after --. ssh gives up on an address that does\n" +
			"not answer after --connect-timeout (ssh -o ConnectTimeout). A simulated server (serve's simulated\n" +
			"driver, the sandbox: addresses in 100.64.0.0/10) has no machine behind its address: use\n" +
			"berth server console there.",
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			if connectTimeout < 0 {
				return fmt.Errorf("--connect-timeout %s: must not be negative", connectTimeout)
			}
			srv, err := c.GetServer(ctx, args[0])
			if err != nil {
				return err
			}
			if srv.IPv4 == nil || *srv.IPv4 == "" {
				return fmt.Errorf("server %s has no IPv4 address (status %s)", srv.Name, srv.Status)
			}
			// The address goes on ssh's command line: only an address, never a name ssh
			// would look up or text it would print.
			addr, err := netip.ParseAddr(*srv.IPv4)
			if err != nil {
				return fmt.Errorf("server %s: its IPv4 address is not an IP address: %s", srv.Name, *srv.IPv4)
			}
			simulated := simulatedIPv4.Contains(addr)
			if simulated {
				g.note("%s is in 100.64.0.0/10, where simulated servers are: if %s is one, nothing answers there (berth server console %s does)",
					addr, srv.Name, srv.Name)
			}
			var sshArgs []string
			if connectTimeout > 0 {
				// Before the destination: the first value ssh reads of an option is the one it keeps.
				sshArgs = append(sshArgs, "-o", fmt.Sprintf("ConnectTimeout=%d", int64((connectTimeout+time.Second-1)/time.Second)))
			}
			sshArgs = append(append(sshArgs, "root@"+addr.String()), args[1:]...)
			cmd := exec.CommandContext(ctx, "ssh", sshArgs...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
			err = cmd.Run()
			// 255 is ssh's own failure (it could not connect, or log in); any other
			// status is the remote command's.
			var exit *exec.ExitError
			if errors.As(err, &exit) && exit.ExitCode() == 255 {
				msg := fmt.Sprintf("ssh root@%s (server %s) failed: it could not connect or log in (its message is above)", addr, srv.Name)
				if connectTimeout > 0 {
					msg += fmt.Sprintf("; it gives up on an address that does not answer within %s (--connect-timeout)", connectTimeout)
				}
				if simulated {
					msg += fmt.Sprintf("; %s is in 100.64.0.0/10, where Berth's simulated servers are, with no machine to reach: "+
						"berth server console %s shows a simulated server's console", addr, srv.Name)
				}
				return errors.New(msg)
			}
			return err
		}),
	}
	cmd.Flags().DurationVar(&connectTimeout, "connect-timeout", 10*time.Second,
		"how long ssh waits for the server's address to answer (ssh -o ConnectTimeout, whole seconds); 0: ssh's own default")
	return cmd
}

// rescaleView shows the plans a server can move to, their prices in currency (as
// planView).
func rescaleView(currency string) view[api.RescaleOption] {
	return view[api.RescaleOption]{
		id: func(o api.RescaleOption) string { return i64(o.ID) },
		columns: []column[api.RescaleOption]{
			{name: "id", value: func(o api.RescaleOption) string { return i64(o.ID) }},
			{name: "name", value: func(o api.RescaleOption) string { return o.Name }},
			{name: "vcpus", value: func(o api.RescaleOption) string { return strconv.Itoa(o.VCPUs) }},
			{name: "memory_mb", value: func(o api.RescaleOption) string { return strconv.Itoa(o.MemoryMB) }},
			{name: "disk_gb", value: func(o api.RescaleOption) string { return strconv.Itoa(o.DiskGB) }},
			{name: "disk_ok", value: func(o api.RescaleOption) string { return strconv.FormatBool(o.DiskOK) }},
			{name: "price_monthly", value: func(o api.RescaleOption) string { return money(o.PriceMonthly, currency) }},
			{name: "price_hourly", wide: true, value: func(o api.RescaleOption) string { return money(o.PriceHourly, currency) }},
			{name: "in_stock", wide: true, value: func(o api.RescaleOption) string { return strconv.FormatBool(o.InStock) }},
		},
	}
}

// metricRow is one bucket of every series.
type metricRow struct {
	at                               int64
	cpu, netIn, netOut, read, writes float64
}

func metricRows(m *api.Metrics) []metricRow {
	rows := make([]metricRow, len(m.CPU))
	val := func(s []api.MetricPoint, i int) float64 {
		if i < len(s) {
			return s[i].Value
		}
		return 0
	}
	for i, p := range m.CPU {
		rows[i] = metricRow{p.At, p.Value, val(m.Network.In, i), val(m.Network.Out, i), val(m.Disk.Read, i), val(m.Disk.Write, i)}
	}
	return rows
}

func fl(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

var metricView = view[metricRow]{
	id: func(r metricRow) string { return strconv.FormatInt(r.at, 10) },
	columns: []column[metricRow]{
		{name: "time", value: func(r metricRow) string { return time.Unix(r.at, 0).UTC().Format(time.RFC3339) }},
		{name: "cpu", value: func(r metricRow) string { return fl(r.cpu) }},
		{name: "net_in", value: func(r metricRow) string { return fl(r.netIn) }},
		{name: "net_out", value: func(r metricRow) string { return fl(r.netOut) }},
		{name: "disk_read", value: func(r metricRow) string { return fl(r.read) }},
		{name: "disk_write", value: func(r metricRow) string { return fl(r.writes) }},
	},
}
