package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/client"
)

// The commands every resource shares, built from its view and its SDK methods.

// listCmd is "list": every item of fetch, printed by v.
func listCmd[T any](g *globals, short string, v view[T], fetch func(*client.Client, context.Context) ([]T, error)) *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: short, Args: cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			items, err := fetch(c, ctx)
			if err != nil {
				return err
			}
			return printList(g, v, items)
		}),
	}
}

// describeCmd is "describe NAME": the item of fetch that match names (by id or name).
func describeCmd[T any](g *globals, use, short, noun string, v view[T], fetch func(*client.Client, context.Context) ([]T, error),
	match func(T, string) bool) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short, Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			items, err := fetch(c, ctx)
			if err != nil {
				return err
			}
			for _, it := range items {
				if match(it, args[0]) {
					return printOne(g, v, it)
				}
			}
			return fmt.Errorf("no %s %q: %w", noun, args[0], errNameNotFound)
		}),
	}
}

// deleteCmd is "delete NAME": resolve names the item's id, del deletes it.
func deleteCmd(g *globals, use, short, noun string, resolve func(context.Context, *client.Client, string) (int64, error),
	del func(*client.Client, context.Context, int64) error) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short, Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			id, err := resolve(ctx, c, args[0])
			if err != nil {
				return err
			}
			if err := del(c, ctx, id); err != nil {
				return err
			}
			g.note("%s %d deleted\n", noun, id)
			return nil
		}),
	}
}
