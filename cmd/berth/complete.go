package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/client"
)

// nameSource is what completes one kind of argument with the names the account has,
// asked of the API: the word naming it in a command's use line (SERVER, VOLUME) and
// the flag that takes one (--server, --volume).
type nameSource struct {
	arg, flag string
	names     func(ctx context.Context, c *client.Client, prefix string) ([]cobra.Completion, error)
}

var nameSources = []nameSource{
	{arg: "SERVER", flag: "server", names: serverCompletions},
	{arg: "VOLUME", flag: "volume", names: volumeCompletions},
}

// serverCompletions are the account's server names starting with prefix, each
// described by its display name and status.
func serverCompletions(ctx context.Context, c *client.Client, prefix string) ([]cobra.Completion, error) {
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
func volumeCompletions(ctx context.Context, c *client.Client, prefix string) ([]cobra.Completion, error) {
	vols, err := c.ListVolumes(ctx, client.VolumeListOptions{})
	var names []cobra.Completion
	for _, v := range vols {
		if strings.HasPrefix(v.Name, prefix) {
			names = append(names, cobra.CompletionWithDesc(escape(v.Name), escape(strconv.Itoa(v.SizeGB)+" GB "+v.Status)))
		}
	}
	return names, err
}

// completeNames makes every command complete, in bash, zsh and fish, a first argument
// its use line names SERVER or VOLUME (SERVER... or VOLUME...: every argument) and
// the flags --server and --volume, with the names the account has.
func completeNames(root *cobra.Command, g *globals) {
	for _, c := range root.Commands() {
		completeNames(c, g)
	}
	words := strings.Fields(root.Use)
	for _, src := range nameSources {
		if root.Flags().Lookup(src.flag) != nil {
			_ = root.RegisterFlagCompletionFunc(src.flag, src.complete(g, true))
		}
		if len(words) >= 2 && strings.HasPrefix(words[1], src.arg) && root.ValidArgsFunction == nil {
			root.ValidArgsFunction = src.complete(g, strings.HasPrefix(words[1], src.arg+"..."))
		}
	}
}

// complete is the completion function of src's names: for the first argument only,
// unless many.
func (src nameSource) complete(g *globals, many bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 && !many {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := g.client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		names, err := src.names(cmd.Context(), c, prefix)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
