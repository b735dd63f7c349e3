package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// volumes are the account's block volumes (docs/api.md, Volumes), named by id or by
// name on a command line; the API resolves either, so an argument goes to it as it
// is.
var volumes = &resource[api.Volume]{
	name: "volume", short: "Manage block volumes (docs/api.md, Volumes)", noun: "volume", arg: "VOLUME",
	viewOf: func(ctx context.Context, g *globals, c *client.Client, items []api.Volume) view[api.Volume] {
		return volumeView(volumeNames(ctx, g, c, items))
	},
	all: func(ctx context.Context, c *client.Client, _ string) ([]api.Volume, error) {
		return c.ListVolumes(ctx, client.VolumeListOptions{})
	},
	id:           func(v api.Volume) int64 { return v.ID },
	names:        func(v api.Volume) []string { return []string{v.Name} },
	getRef:       func(ctx context.Context, c *client.Client, s string) (*api.Volume, error) { return c.GetVolume(ctx, s) },
	listHelp:     "List the volumes",
	listUse:      "[--server SERVER] [--project PROJECT]",
	listFlags:    volumeListFlags,
	describeHelp: "Show a volume (by name or id)",
	update: &updater[api.Volume]{
		use: "[--name NAME] [--project PROJECT | --no-project]", short: "Rename a volume or move it to another project",
		flags: volumeUpdateFlags,
	},
	deleteHelp: "Delete detached volumes and their data",
	deleteMany: true,
	del: func(ctx context.Context, c *client.Client, _ string, r ref) (string, error) {
		return "", c.DeleteVolume(ctx, r.arg)
	},
}

// volumeView shows volumes with their locations' and servers' names from n (where it
// knows them; the ids otherwise).
func volumeView(n volumeNamer) view[api.Volume] {
	return view[api.Volume]{
		id: func(v api.Volume) string { return i64(v.ID) },
		columns: []column[api.Volume]{
			{name: "id", value: func(v api.Volume) string { return i64(v.ID) }},
			{name: "name", value: func(v api.Volume) string { return v.Name }},
			{name: "size_gb", value: func(v api.Volume) string { return strconv.Itoa(v.SizeGB) }},
			{name: "location", value: func(v api.Volume) string { return n.k.locationName(v.LocationID) }},
			{name: "server", value: func(v api.Volume) string { return n.server(v.ServerID) }},
			{name: "status", value: func(v api.Volume) string { return v.Status }},
			{name: "format", value: func(v api.Volume) string { return optStr(v.Format) }},
			{name: "linux_device", wide: true, value: func(v api.Volume) string { return v.LinuxDevice }},
			{name: "location_id", wide: true, value: func(v api.Volume) string { return i64(v.LocationID) }},
			{name: "server_id", wide: true, value: func(v api.Volume) string { return optID(v.ServerID) }},
			{name: "project_id", wide: true, value: func(v api.Volume) string { return optID(v.ProjectID) }},
			{name: "operation", wide: true, value: func(v api.Volume) string {
				if v.Operation == nil {
					return ""
				}
				return fmt.Sprintf("%d (%s)", v.Operation.ID, v.Operation.Type)
			}},
			{name: "created_at", wide: true, value: func(v api.Volume) string { return ts(v.CreatedAt) }},
		},
	}
}

// volumeNamer names volumes' locations (k) and servers (by id); nil leaves ids.
type volumeNamer struct {
	k       *catalog
	servers map[int64]string
}

// server is the name of the server id (nil: none, shown "-"), or the id.
func (n volumeNamer) server(id *int64) string {
	if id == nil {
		return ""
	}
	if name, ok := n.servers[*id]; ok {
		return name
	}
	return i64(*id)
}

// volumeNames is what names vols' locations and servers: nothing (ids, no request)
// when no table is printed or the table shows neither. What cannot be read leaves
// ids; the rest of the answer is still shown.
func volumeNames(ctx context.Context, g *globals, c *client.Client, vols []api.Volume) volumeNamer {
	var n volumeNamer
	f, err := parseOutput(g.output)
	if err != nil || g.quiet || len(vols) == 0 || f.kind == "json" || f.kind == "yaml" {
		return n
	}
	shows := func(col string) bool { return f.kind != "columns" || slices.Contains(f.columns, col) }
	if shows("location") {
		if k := (&catalog{c: c}); k.load(ctx) == nil {
			n.k = k
		}
	}
	attached := slices.ContainsFunc(vols, func(v api.Volume) bool { return v.ServerID != nil })
	if shows("server") && attached {
		if srvs, err := c.ListServers(ctx, client.ServerListOptions{}); err == nil {
			n.servers = make(map[int64]string, len(srvs))
			for _, s := range srvs {
				n.servers[s.ID] = s.Name
			}
		}
	}
	return n
}

// serverID is the id of the server s names (its name or id), as a volume's requests
// take it. A number is taken as an id as it is: the API judges it (422 on
// server_id). A name of none is said to be a server's (the API's 404 would not say
// whether the volume or the server is missing).
func serverID(ctx context.Context, c *client.Client, s string) (int64, error) {
	if id, ok := asID(s); ok {
		return id, nil
	}
	srv, err := c.GetServer(ctx, s)
	if errors.Is(err, client.ErrNotFound) {
		return 0, servers.notFound("", s)
	} else if err != nil {
		return 0, err
	}
	return srv.ID, nil
}

// volumeID is the id of the volume s names (its name or id), as a filter takes it.
// A number is taken as an id as it is (a deleted volume's too: the API judges it). A
// name of none is said to be a volume's.
func volumeID(ctx context.Context, c *client.Client, s string) (int64, error) {
	if id, ok := asID(s); ok {
		return id, nil
	}
	vol, err := c.GetVolume(ctx, s)
	if errors.Is(err, client.ErrNotFound) {
		return 0, volumes.notFound("", s)
	} else if err != nil {
		return 0, err
	}
	return vol.ID, nil
}

func volumeListFlags(cmd *cobra.Command) func(context.Context, *client.Client, string) ([]api.Volume, error) {
	var server, project string
	cmd.Flags().StringVar(&server, "server", "", "only the volumes attached to this server (name or id)")
	cmd.Flags().StringVar(&project, "project", "", "only the volumes of this project (name or id)")
	return func(ctx context.Context, c *client.Client, _ string) ([]api.Volume, error) {
		var opts client.VolumeListOptions
		if server != "" {
			id, err := serverID(ctx, c, server)
			if err != nil {
				return nil, err
			}
			opts.ServerID = id
		}
		if project != "" {
			p, err := projects.ref(ctx, c, "", project)
			if err != nil {
				return nil, err
			}
			opts.ProjectID = p.id
		}
		return c.ListVolumes(ctx, opts)
	}
}

// volumeUpdateFlags are update's flags; what they set is what it changes.
func volumeUpdateFlags(cmd *cobra.Command) func(context.Context, *client.Client, ref) (*api.Volume, error) {
	var name, project string
	var unassign bool
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "new name")
	f.StringVar(&project, "project", "", "project (name or id)")
	f.BoolVar(&unassign, "no-project", false, "take the volume out of its project")
	cmd.MarkFlagsMutuallyExclusive("project", "no-project")
	return func(ctx context.Context, c *client.Client, r ref) (*api.Volume, error) {
		var req api.VolumeUpdate
		if f.Changed("name") {
			req.Name = &name
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
		return c.UpdateVolume(ctx, r.arg, req)
	}
}

// afterVolumeAction waits for the volume's operation (unless --no-wait) and prints
// the volume as it then is.
func afterVolumeAction(ctx context.Context, g *globals, c *client.Client, vol *api.Volume) error {
	if vol.Operation != nil && !g.noWait {
		if _, err := waitOperation(ctx, g, c, vol.Operation, "volume "+vol.Name); err != nil {
			return err
		}
		now, err := c.GetVolume(ctx, i64(vol.ID))
		if err != nil {
			return err
		}
		vol = now
	}
	return volumes.printOne(ctx, g, c, *vol)
}

// volumeCmd is "berth volume": the shared commands, and create, attach, detach and
// resize, which wait for their operation.
func volumeCmd(g *globals) *cobra.Command {
	return volumes.command(g, volumeCreateCmd(g), volumeAttachCmd(g), volumeDetachCmd(g), volumeResizeCmd(g))
}

func volumeCreateCmd(g *globals) *cobra.Command {
	var name, loc, server, format, project string
	var size int64
	var automount bool
	cmd := &cobra.Command{
		Use:   "create --name NAME --size GB (--location LOCATION | --server SERVER) [--format ext4|xfs [--automount]]",
		Short: "Make a volume in a location, or on a server (attached once made)",
		Args:  cobra.NoArgs,
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "name: a-z, 0-9 and -, unique among the account's volumes")
	f.Int64Var(&size, "size", 0, "size in GB, 10 to 10240")
	f.StringVar(&loc, "location", "", "location (name or id)")
	f.StringVar(&server, "server", "", "server to attach it to once made (name or id; its location)")
	f.StringVar(&format, "format", "", "filesystem to make on it: ext4 or xfs (default none: a blank volume)")
	f.BoolVar(&automount, "automount", false, "have the server's guest mount it at /mnt/volume-<id> (needs --server and --format)")
	f.StringVar(&project, "project", "", "project (name or id)")
	cmd.RunE = withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
		req := api.VolumeCreate{}
		if f.Changed("name") {
			req.Name = &name
		}
		if f.Changed("size") {
			req.SizeGB = &size
		}
		if f.Changed("format") {
			req.Format = &format
		}
		if automount {
			req.Automount = &automount
		}
		if err := volumePlace(ctx, c, &req, loc, server, project); err != nil {
			return err
		}
		vol, err := c.CreateVolume(ctx, req)
		if err != nil {
			return err
		}
		return afterVolumeAction(ctx, g, c, vol)
	})
	return cmd
}

// volumePlace resolves create's location, server and project ("": not given) into
// req.
func volumePlace(ctx context.Context, c *client.Client, req *api.VolumeCreate, loc, server, project string) error {
	if loc != "" {
		id, err := (&catalog{c: c}).location(ctx, loc)
		if err != nil {
			return err
		}
		req.LocationID = &id
	}
	if server != "" {
		id, err := serverID(ctx, c, server)
		if err != nil {
			return err
		}
		req.ServerID = &id
	}
	if project != "" {
		p, err := projects.ref(ctx, c, "", project)
		if err != nil {
			return err
		}
		req.ProjectID = api.Some(p.id)
	}
	return nil
}

func volumeAttachCmd(g *globals) *cobra.Command {
	var server string
	var automount bool
	cmd := &cobra.Command{
		Use: "attach VOLUME --server SERVER [--automount]", Short: "Attach a volume to a server of its location, running or stopped",
		Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			id, err := serverID(ctx, c, server)
			if err != nil {
				return err
			}
			vol, err := c.AttachVolume(ctx, args[0], id, automount)
			if err != nil {
				return err
			}
			return afterVolumeAction(ctx, g, c, vol)
		}),
	}
	cmd.Flags().StringVar(&server, "server", "", "server (name or id)")
	cmd.Flags().BoolVar(&automount, "automount", false, "have the guest mount a formatted volume at /mnt/volume-<id>")
	_ = cmd.MarkFlagRequired("server")
	return cmd
}

func volumeDetachCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "detach VOLUME", Short: "Detach a volume (a running guest must release it within 60 s, or it stays attached: exit 7)",
		Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			vol, err := c.DetachVolume(ctx, args[0])
			if err != nil {
				return err
			}
			return afterVolumeAction(ctx, g, c, vol)
		}),
	}
}

func volumeResizeCmd(g *globals) *cobra.Command {
	var size int64
	cmd := &cobra.Command{
		Use: "resize VOLUME --size GB", Short: "Grow a volume (never shrink it); grow its filesystem in the guest then (resize2fs, xfs_growfs)",
		Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			vol, err := c.ResizeVolume(ctx, args[0], size)
			if err != nil {
				return err
			}
			return afterVolumeAction(ctx, g, c, vol)
		}),
	}
	cmd.Flags().Int64Var(&size, "size", 0, "the new size in GB, larger than the volume's")
	_ = cmd.MarkFlagRequired("size")
	return cmd
}
