package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// The account: who the token is (me), its credit and its ledger (billing).

var meView = view[api.Me]{
	id: func(m api.Me) string { return i64(m.ID) },
	columns: []column[api.Me]{
		{name: "id", value: func(m api.Me) string { return i64(m.ID) }},
		{name: "email", value: func(m api.Me) string { return m.Email }},
		{name: "name", value: func(m api.Me) string { return m.Name }},
		{name: "language", value: func(m api.Me) string { return m.Language }},
		{name: "credit", value: func(m api.Me) string { return money(m.Credit, m.Currency) }},
		{name: "blocked", value: func(m api.Me) string { return strconv.FormatBool(m.Blocked) }},
		{name: "scopes", value: func(m api.Me) string { return strings.Join(m.Scopes, ",") }},
	},
}

func meCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "me", Short: "Show the account and the token in use", Args: cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			me, err := c.GetMe(ctx)
			if err != nil {
				return err
			}
			return printOne(g, meView, *me)
		}),
	}
}
