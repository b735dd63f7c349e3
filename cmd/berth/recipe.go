package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

var recipes = &resource[api.Recipe]{
	name: "recipe", short: "Manage first-boot recipes", noun: "recipe", arg: "RECIPE",
	view: view[api.Recipe]{
		id: func(r api.Recipe) string { return i64(r.ID) },
		columns: []column[api.Recipe]{
			{name: "id", value: func(r api.Recipe) string { return i64(r.ID) }},
			{name: "name", value: func(r api.Recipe) string { return r.Name }},
			{name: "created_at", value: func(r api.Recipe) string { return ts(r.CreatedAt) }},
			{name: "script", wide: true, value: func(r api.Recipe) string { return r.Script }},
		},
	},
	all:   func(ctx context.Context, c *client.Client, _ string) ([]api.Recipe, error) { return c.ListRecipes(ctx) },
	id:    func(r api.Recipe) int64 { return r.ID },
	names: func(r api.Recipe) []string { return []string{r.Name} },
	get: func(ctx context.Context, c *client.Client, id int64) (*api.Recipe, error) {
		return c.GetRecipe(ctx, id)
	},
	listHelp:     "List the recipes",
	describeHelp: "Show a recipe (by name or id)",
	update: &updater[api.Recipe]{
		use: "[--name NAME] [--script SCRIPT | --script-from-file FILE]", short: "Change a recipe",
		flags: func(cmd *cobra.Command) func(context.Context, *client.Client, ref) (*api.Recipe, error) {
			var f recipeFlags
			f.add(cmd)
			return func(ctx context.Context, c *client.Client, r ref) (*api.Recipe, error) {
				req, err := f.request()
				if err != nil {
					return nil, err
				}
				return c.UpdateRecipe(ctx, r.id, req)
			}
		},
	},
	deleteHelp: "Delete a recipe",
	del: func(ctx context.Context, c *client.Client, _ string, r ref) (string, error) {
		return "", c.DeleteRecipe(ctx, r.id)
	},
}

// recipeFlags are the --name, --script and --script-from-file of create and update.
type recipeFlags struct{ name, script, file string }

func (f *recipeFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.name, "name", "", "recipe name")
	cmd.Flags().StringVar(&f.script, "script", "", "first-boot script")
	cmd.Flags().StringVar(&f.file, "script-from-file", "", "file holding the first-boot script")
	cmd.MarkFlagsMutuallyExclusive("script", "script-from-file")
}

func (f *recipeFlags) request() (api.RecipeWrite, error) {
	var req api.RecipeWrite
	if f.file != "" {
		b, err := os.ReadFile(f.file)
		if err != nil {
			return req, err
		}
		f.script = string(b)
	}
	if f.name != "" {
		req.Name = &f.name
	}
	if f.script != "" {
		req.Script = &f.script
	}
	return req, nil
}

func recipeCmd(g *globals) *cobra.Command {
	var f recipeFlags
	create := &cobra.Command{
		Use: "create --name NAME (--script SCRIPT | --script-from-file FILE)", Short: "Store a first-boot script", Args: cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			req, err := f.request()
			if err != nil {
				return err
			}
			r, err := c.CreateRecipe(ctx, req)
			if err != nil {
				return err
			}
			return recipes.printOne(ctx, g, c, *r)
		}),
	}
	f.add(create)
	return recipes.command(g, create)
}
