package main

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

var projects = &resource[api.Project]{
	name: "project", short: "Manage projects", noun: "project", arg: "PROJECT",
	view: view[api.Project]{
		id: func(p api.Project) string { return i64(p.ID) },
		columns: []column[api.Project]{
			{name: "id", value: func(p api.Project) string { return i64(p.ID) }},
			{name: "name", value: func(p api.Project) string { return p.Name }},
			{name: "server_count", value: func(p api.Project) string { return strconv.Itoa(p.ServerCount) }},
			{name: "created_at", wide: true, value: func(p api.Project) string { return ts(p.CreatedAt) }},
		},
	},
	all: func(ctx context.Context, c *client.Client, _ string) ([]api.Project, error) {
		return c.ListProjects(ctx)
	},
	id:           func(p api.Project) int64 { return p.ID },
	names:        func(p api.Project) []string { return []string{p.Name} },
	listHelp:     "List the projects",
	describeHelp: "Show a project (by name or id)",
	update: &updater[api.Project]{
		use: "--name NAME", short: "Rename a project",
		flags: func(cmd *cobra.Command) func(context.Context, *client.Client, ref) (*api.Project, error) {
			var name string
			cmd.Flags().StringVar(&name, "name", "", "new name")
			_ = cmd.MarkFlagRequired("name")
			return func(ctx context.Context, c *client.Client, r ref) (*api.Project, error) {
				return c.UpdateProject(ctx, r.id, api.ProjectWrite{Name: &name})
			}
		},
	},
	deleteHelp: "Delete a project (its servers keep running, unassigned)",
	del: func(ctx context.Context, c *client.Client, _ string, r ref) (string, error) {
		return "", c.DeleteProject(ctx, r.id)
	},
}

func projectCmd(g *globals) *cobra.Command {
	create := &cobra.Command{
		Use: "create NAME", Short: "Make a project", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			p, err := c.CreateProject(ctx, api.ProjectWrite{Name: &args[0]})
			if err != nil {
				return err
			}
			return projects.printOne(ctx, g, c, *p)
		}),
	}
	return projects.command(g, create)
}
