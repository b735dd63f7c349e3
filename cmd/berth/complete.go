package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/client"
)

// completeServerNames makes every command whose first argument is a SERVER complete
// it with the names of the account's servers, asked of the API (bash, zsh, fish).
func completeServerNames(root *cobra.Command, g *globals) {
	for _, c := range root.Commands() {
		completeServerNames(c, g)
	}
	words := strings.Fields(root.Use)
	if len(words) < 2 || !strings.HasPrefix(words[1], "SERVER") || root.ValidArgsFunction != nil {
		return
	}
	many := strings.HasPrefix(words[1], "SERVER...")
	root.ValidArgsFunction = func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 && !many {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := g.client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		srvs, err := c.ListServers(cmd.Context(), client.ServerListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var names []cobra.Completion
		for _, s := range srvs {
			if strings.HasPrefix(s.Name, prefix) {
				names = append(names, cobra.CompletionWithDesc(escape(s.Name), escape(s.DisplayName+" "+s.Status)))
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
