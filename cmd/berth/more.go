package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// serverMoreCommands are update, reinstall, rescale, rescale-options, metrics and ssh.
func serverMoreCommands(g *globals) []*cobra.Command {
	var displayName, project string
	var unassign bool
	var update *cobra.Command
	update = &cobra.Command{
		Use: "update SERVER [--display-name NAME] [--project PROJECT | --no-project]", Short: "Rename a server or move it to another project",
		Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			var req api.ServerUpdate
			if update.Flags().Changed("display-name") {
				req.DisplayName = &displayName
			}
			if project != "" {
				id, err := projectID(ctx, c, project)
				if err != nil {
					return err
				}
				req.ProjectID = api.Some(id)
			}
			if unassign {
				req.ProjectID = api.Null[int64]()
			}
			srv, err := c.UpdateServer(ctx, args[0], req)
			if err != nil {
				return err
			}
			return printOne(g, serverView(serverNames(ctx, g, c, *srv)), *srv)
		}),
	}
	update.Flags().StringVar(&displayName, "display-name", "", "display name")
	update.Flags().StringVar(&project, "project", "", "project (name or id)")
	update.Flags().BoolVar(&unassign, "no-project", false, "take the server out of its project")
	update.MarkFlagsMutuallyExclusive("project", "no-project")

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

	rescaleOptions := &cobra.Command{
		Use: "rescale-options SERVER", Short: "List the plans a server can move to", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			opts, err := c.ListRescaleOptions(ctx, args[0])
			if err != nil {
				return err
			}
			return printList(g, rescaleView, opts)
		}),
	}

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

	ssh := &cobra.Command{
		Use: "ssh SERVER [-- SSH ARGS...]", Short: "Run ssh root@IPv4 of a server", Args: cobra.MinimumNArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			srv, err := c.GetServer(ctx, args[0])
			if err != nil {
				return err
			}
			if srv.IPv4 == nil || *srv.IPv4 == "" {
				return fmt.Errorf("server %s has no IPv4 address (status %s)", srv.Name, srv.Status)
			}
			// The address goes on ssh's command line: only an address, never a name ssh
			// would look up or text it would print.
			if _, err := netip.ParseAddr(*srv.IPv4); err != nil {
				return fmt.Errorf("server %s: its IPv4 address is not an IP address: %s", srv.Name, *srv.IPv4)
			}
			cmd := exec.CommandContext(ctx, "ssh", append([]string{"root@" + *srv.IPv4}, args[1:]...)...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
			return cmd.Run()
		}),
	}
	return []*cobra.Command{update, reinstall, rescale, rescaleOptions, metrics, ssh, consoleCmd(g)}
}

var rescaleView = view[api.RescaleOption]{
	id: func(o api.RescaleOption) string { return i64(o.ID) },
	columns: []column[api.RescaleOption]{
		{name: "id", value: func(o api.RescaleOption) string { return i64(o.ID) }},
		{name: "name", value: func(o api.RescaleOption) string { return o.Name }},
		{name: "vcpus", value: func(o api.RescaleOption) string { return strconv.Itoa(o.VCPUs) }},
		{name: "memory_mb", value: func(o api.RescaleOption) string { return strconv.Itoa(o.MemoryMB) }},
		{name: "disk_gb", value: func(o api.RescaleOption) string { return strconv.Itoa(o.DiskGB) }},
		{name: "disk_ok", value: func(o api.RescaleOption) string { return strconv.FormatBool(o.DiskOK) }},
		{name: "price_monthly", value: func(o api.RescaleOption) string { return o.PriceMonthly }},
		{name: "price_hourly", wide: true, value: func(o api.RescaleOption) string { return o.PriceHourly }},
		{name: "in_stock", wide: true, value: func(o api.RescaleOption) string { return strconv.FormatBool(o.InStock) }},
	},
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
