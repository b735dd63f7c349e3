package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

var billingView = view[api.Billing]{
	id: func(b api.Billing) string { return b.Credit },
	columns: []column[api.Billing]{
		{name: "credit", value: func(b api.Billing) string { return money(b.Credit, b.Currency) }},
		{name: "hourly_burn", value: func(b api.Billing) string { return b.HourlyBurn }},
		{name: "monthly_burn", value: func(b api.Billing) string { return b.MonthlyBurn }},
		{name: "days_left", value: func(b api.Billing) string { return optI64(b.DaysLeft) }},
		{name: "month_to_date", value: func(b api.Billing) string { return b.MonthToDate }},
		{name: "budget", value: func(b api.Billing) string { return optStr(b.Budget) }},
	},
}

var transactionView = view[api.Transaction]{
	id: func(t api.Transaction) string { return i64(t.ID) },
	columns: []column[api.Transaction]{
		{name: "id", value: func(t api.Transaction) string { return i64(t.ID) }},
		{name: "type", value: func(t api.Transaction) string { return t.Type }},
		{name: "amount", value: func(t api.Transaction) string { return t.Amount }},
		{name: "balance_after", value: func(t api.Transaction) string { return t.BalanceAfter }},
		{name: "description", value: func(t api.Transaction) string { return t.Description }},
		{name: "resource", wide: true, value: func(t api.Transaction) string {
			if t.Resource == nil {
				return ""
			}
			return fmt.Sprintf("%s %d (%s)", t.Resource.Type, t.Resource.ID, t.Resource.Name)
		}},
		{name: "created_at", value: func(t api.Transaction) string { return ts(t.CreatedAt) }},
	},
}

func billingCmd(g *globals) *cobra.Command {
	show := &cobra.Command{
		Use: "show", Short: "Show the credit, burn rate and month-to-date spend", Args: cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			b, err := c.GetBilling(ctx)
			if err != nil {
				return err
			}
			return printOne(g, billingView, *b)
		}),
	}
	var limit int
	transactions := &cobra.Command{
		Use: "transactions [--limit N]", Short: "List the ledger, newest first (every page)", Args: cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			var all []api.Transaction
			for t, err := range c.AllTransactions(ctx) {
				if err != nil {
					return err
				}
				all = append(all, t)
				if limit > 0 && len(all) >= limit {
					break
				}
			}
			return printList(g, transactionView, all)
		}),
	}
	transactions.Flags().IntVar(&limit, "limit", 0, "at most this many entries (0: all)")
	return group("billing", "Credit and ledger", show, transactions)
}
