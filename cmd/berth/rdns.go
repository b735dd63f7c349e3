package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// rdnsView shows a server's PTRs: its IPv4 address's and those of its IPv6 addresses
// that have one.
var rdnsView = view[api.RDNS]{
	id: func(r api.RDNS) string { return r.IP },
	columns: []column[api.RDNS]{
		{name: "ip", value: func(r api.RDNS) string { return r.IP }},
		{name: "ptr", value: func(r api.RDNS) string { return r.PTR }},
	},
}

// rdnsCmd is "berth server rdns": list, set and reset a server's PTRs. Each takes the
// server first (SERVER: a display name resolves, and it completes).
func rdnsCmd(g *globals) *cobra.Command {
	list := &cobra.Command{
		Use: "list SERVER", Short: "List a server's PTRs: its IPv4 address's and those set in its IPv6 /64", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			ptrs, err := c.ListRDNS(ctx, args[0])
			if err != nil {
				return err
			}
			return printList(g, rdnsView, ptrs)
		}),
	}
	set := &cobra.Command{
		Use: "set SERVER IP PTR", Short: "Set the PTR of the server's IPv4 address or of an address of its IPv6 /64; prints its PTRs",
		Args: cobra.ExactArgs(3),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			return setRDNS(ctx, g, c, args[0], api.RDNSSet{IP: &args[1], PTR: api.Some(args[2])})
		}),
	}
	reset := &cobra.Command{
		Use: "reset SERVER IP", Short: "Give an address its default PTR back (<server name>.<the operator's default domain>)",
		Args: cobra.ExactArgs(2),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			return setRDNS(ctx, g, c, args[0], api.RDNSSet{IP: &args[1], PTR: api.Null[string]()})
		}),
	}
	return group("rdns", "A server's reverse DNS: the PTR of each of its addresses", list, set, reset)
}

// setRDNS sends req and prints the server's PTRs as they then are.
func setRDNS(ctx context.Context, g *globals, c *client.Client, server string, req api.RDNSSet) error {
	ptrs, err := c.SetRDNS(ctx, server, req)
	if err != nil {
		return err
	}
	return printList(g, rdnsView, ptrs)
}
