package main

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

var snapshots = &resource[api.Snapshot]{
	name: "snapshot", short: "Manage a server's snapshots", noun: "snapshot", arg: "SNAPSHOT", parent: "SERVER",
	view: view[api.Snapshot]{
		id: func(s api.Snapshot) string { return i64(s.ID) },
		columns: []column[api.Snapshot]{
			{name: "id", value: func(s api.Snapshot) string { return i64(s.ID) }},
			{name: "name", value: func(s api.Snapshot) string { return s.Name }},
			{name: "status", value: func(s api.Snapshot) string { return s.Status }},
			{name: "size_gb", value: func(s api.Snapshot) string { return strconv.Itoa(s.SizeGB) }},
			{name: "server_id", wide: true, value: func(s api.Snapshot) string { return i64(s.ServerID) }},
			{name: "include_memory", wide: true, value: func(s api.Snapshot) string { return strconv.FormatBool(s.IncludeMemory) }},
			{name: "created_at", value: func(s api.Snapshot) string { return ts(s.CreatedAt) }},
		},
	},
	all: func(ctx context.Context, c *client.Client, server string) ([]api.Snapshot, error) {
		return c.ListSnapshots(ctx, server)
	},
	id:           func(s api.Snapshot) int64 { return s.ID },
	names:        func(s api.Snapshot) []string { return []string{s.Name} },
	checkIDs:     true,
	listHelp:     "List a server's snapshots",
	describeHelp: "Show a snapshot (by name or id)",
	deleteHelp:   "Delete a snapshot (at once, or when the server's operation ends)",
	del: func(ctx context.Context, c *client.Client, server string, r ref) (string, error) {
		res, err := c.DeleteSnapshot(ctx, server, r.id)
		if err != nil {
			return "", err
		}
		return res.Result, nil
	},
}

func snapshotCmd(g *globals) *cobra.Command {
	var name string
	var memory bool
	create := &cobra.Command{
		Use: "create SERVER [--name NAME] [--include-memory]", Short: "Snapshot a server", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			req := api.SnapshotCreate{}
			if name != "" {
				req.Name = &name
			}
			if memory {
				req.IncludeMemory = &memory
			}
			snap, err := c.CreateSnapshot(ctx, args[0], req)
			if err != nil {
				return err
			}
			if !g.noWait {
				srv, err := c.GetServer(ctx, args[0])
				if err != nil {
					return err
				}
				if srv.Operation != nil {
					if _, err := waitOperation(ctx, g, c, srv.Operation, "server "+srv.Name); err != nil {
						return err
					}
				}
				if snap, err = snapshots.fetch(ctx, c, args[0], i64(snap.ID)); err != nil {
					return err
				}
			}
			return snapshots.printOne(ctx, g, c, *snap)
		}),
	}
	create.Flags().StringVar(&name, "name", "", "snapshot name")
	create.Flags().BoolVar(&memory, "include-memory", false, "save the memory of a running server too")
	restore := &cobra.Command{
		Use: "restore SERVER SNAPSHOT", Short: "Restore a server from one of its snapshots", Args: cobra.ExactArgs(2),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			snap, err := snapshots.ref(ctx, c, args[0], args[1])
			if err != nil {
				return err
			}
			srv, err := c.RestoreSnapshot(ctx, args[0], snap.id)
			if err != nil {
				return err
			}
			return afterServerAction(ctx, g, c, srv)
		}),
	}
	return snapshots.command(g, create, restore)
}
