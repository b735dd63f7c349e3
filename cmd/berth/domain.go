package main

import (
	"cmp"
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// domains are the account's DNS zones (docs/api.md, Domains), named by id or by name
// on a command line; the API resolves either, so an argument goes to it as it is.
var domains = &resource[api.Domain]{
	name: "domain", short: "Host DNS zones on the operator's nameservers (docs/api.md, Domains)", noun: "domain", arg: "DOMAIN",
	view: view[api.Domain]{
		id: func(d api.Domain) string { return i64(d.ID) },
		columns: []column[api.Domain]{
			{name: "id", value: func(d api.Domain) string { return i64(d.ID) }},
			{name: "name", value: func(d api.Domain) string { return d.Name }},
			{name: "ttl", value: func(d api.Domain) string { return strconv.Itoa(d.TTL) }},
			{name: "rrset_count", value: func(d api.Domain) string { return strconv.Itoa(d.RRsetCount) }},
			{name: "serial", value: func(d api.Domain) string { return strconv.FormatUint(uint64(d.Serial), 10) }},
			{name: "nameservers", wide: true, value: func(d api.Domain) string { return strings.Join(d.Nameservers, ",") }},
			{name: "created_at", wide: true, value: func(d api.Domain) string { return ts(d.CreatedAt) }},
		},
	},
	all: func(ctx context.Context, c *client.Client, _ string) ([]api.Domain, error) {
		return c.ListDomains(ctx)
	},
	id:           func(d api.Domain) int64 { return d.ID },
	names:        func(d api.Domain) []string { return []string{d.Name} },
	getRef:       func(ctx context.Context, c *client.Client, s string) (*api.Domain, error) { return c.GetDomain(ctx, s) },
	listHelp:     "List the zones",
	describeHelp: "Show a zone (by name or id)",
	update: &updater[api.Domain]{
		use: "--ttl SECONDS", short: "Change a zone's TTL, that of its RRsets without one of their own",
		flags: domainUpdateFlags,
	},
	deleteHelp: "Delete a zone with every RRset of it",
	del: func(ctx context.Context, c *client.Client, _ string, r ref) (string, error) {
		return "", c.DeleteDomain(ctx, r.arg)
	},
}

func domainUpdateFlags(cmd *cobra.Command) func(context.Context, *client.Client, ref) (*api.Domain, error) {
	var ttl int64
	cmd.Flags().Int64Var(&ttl, "ttl", 0, "the zone's TTL in seconds, 60 to 86400")
	_ = cmd.MarkFlagRequired("ttl")
	return func(ctx context.Context, c *client.Client, r ref) (*api.Domain, error) {
		return c.UpdateDomain(ctx, r.arg, api.DomainUpdate{TTL: &ttl})
	}
}

// domainCmd is "berth domain": the shared commands, and create, export and import.
func domainCmd(g *globals) *cobra.Command {
	return domains.command(g, domainCreateCmd(g), domainExportCmd(g), domainImportCmd(g))
}

func domainCreateCmd(g *globals) *cobra.Command {
	var ttl int64
	var file string
	cmd := &cobra.Command{
		Use:   "create NAME [--ttl SECONDS] [--zone-file FILE|-]",
		Short: "Add a zone, empty but for the operator's SOA and NS, or with the RRsets of a zone file",
		Args:  cobra.ExactArgs(1),
	}
	f := cmd.Flags()
	f.Int64Var(&ttl, "ttl", 0, "the zone's TTL in seconds, 60 to 86400 (default 3600)")
	f.StringVar(&file, "zone-file", "", "a zone file (BIND text) to start from; - reads standard input")
	cmd.RunE = withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
		req := api.DomainCreate{Name: &args[0]}
		if f.Changed("ttl") {
			req.TTL = &ttl
		}
		if f.Changed("zone-file") {
			text, err := readFileArg(g, file)
			if err != nil {
				return err
			}
			req.ZoneFile = &text
		}
		d, err := c.CreateDomain(ctx, req)
		if err != nil {
			return err
		}
		return domains.printOne(ctx, g, c, *d)
	})
	return cmd
}

// readFileArg is the text of the file name names, of standard input for "-".
func readFileArg(g *globals, name string) (string, error) {
	if name == "-" {
		b, err := io.ReadAll(g.stdin)
		return string(b), err
	}
	b, err := os.ReadFile(name)
	return string(b), err
}

// domainExportCmd is "export DOMAIN": the zone file on stdout, as the API wrote it
// (with -o json or yaml, as a string), so that "> file" keeps it for import.
func domainExportCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "export DOMAIN", Short: "Write a zone as a zone file (BIND text) on standard output", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			text, err := c.ExportZoneFile(ctx, args[0])
			if err != nil {
				return err
			}
			f, err := parseOutput(g.output)
			if err != nil {
				return err
			}
			if done, err := printData(g.stdout, f, text); done {
				return err
			}
			_, err = io.WriteString(g.stdout, escapeText(text))
			return err
		}),
	}
}

// domainImportCmd is "import DOMAIN FILE|-": every RRset replaced by the file's, or
// nothing changed and each of the file's problems shown on its line (printError).
func domainImportCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "import DOMAIN FILE|-",
		Short: "Replace every RRset of a zone with those of a zone file (all or nothing; its SOA and apex NS are ignored)",
		Args:  cobra.ExactArgs(2),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			text, err := readFileArg(g, args[1])
			if err != nil {
				return err
			}
			d, err := c.ImportZoneFile(ctx, args[0], text)
			if err != nil {
				return err
			}
			return domains.printOne(ctx, g, c, *d)
		}),
	}
}

// domainCompletions are the account's zones' names starting with prefix, each
// described by its number of RRsets.
func domainCompletions(ctx context.Context, c *client.Client, _ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, error) {
	ds, err := c.ListDomains(ctx)
	return completions(ds, prefix, func(d api.Domain) string { return d.Name },
		func(d api.Domain) string { return strconv.Itoa(d.RRsetCount) + " RRsets" }), err
}

// rrsetView shows RRsets; zoneTTL is shown, marked, for those that take the zone's
// TTL ("": left empty, shown "-").
func rrsetView(zoneTTL string) view[api.RRset] {
	return view[api.RRset]{
		id: func(s api.RRset) string { return s.Name + " " + s.Type },
		columns: []column[api.RRset]{
			{name: "name", value: func(s api.RRset) string { return s.Name }},
			{name: "type", value: func(s api.RRset) string { return s.Type }},
			{name: "ttl", value: func(s api.RRset) string {
				if s.TTL != nil {
					return strconv.Itoa(*s.TTL)
				}
				if zoneTTL != "" {
					return zoneTTL + " (zone)"
				}
				return ""
			}},
			{name: "records", value: func(s api.RRset) string {
				values := make([]string, len(s.Records))
				for i, r := range s.Records {
					values[i] = r.Value
				}
				return strings.Join(values, ", ")
			}},
			{name: "comments", wide: true, value: rrsetComments},
		},
	}
}

// rrsetComments are the comments of s's records in their order, "-" for a record
// without one; "" where none has one.
func rrsetComments(s api.RRset) string {
	out := make([]string, len(s.Records))
	some := false
	for i, r := range s.Records {
		out[i], some = cmp.Or(r.Comment, "-"), some || r.Comment != ""
	}
	if !some {
		return ""
	}
	return strings.Join(out, ", ")
}

// rrsetViewOf is the view of domain's RRsets: with the zone's TTL where a table shows
// the column ttl (a request; "" where it fails), without where nothing shows it.
func rrsetViewOf(ctx context.Context, g *globals, c *client.Client, domain string) view[api.RRset] {
	f, err := parseOutput(g.output)
	if err != nil || g.quiet || f.kind == "json" || f.kind == "yaml" || (f.kind == "columns" && !slices.Contains(f.columns, "ttl")) {
		return rrsetView("")
	}
	d, err := c.GetDomain(ctx, domain)
	if err != nil {
		return rrsetView("")
	}
	return rrsetView(strconv.Itoa(d.TTL))
}

// rrsetCmd is "berth rrset": a zone's RRsets, each every record of one name and one
// type, listed, set whole and deleted.
func rrsetCmd(g *globals) *cobra.Command {
	return group("rrset", "Set a zone's records, an RRset (every record of one name and type) at a time (docs/api.md, Domains)",
		rrsetListCmd(g), rrsetSetCmd(g), rrsetDeleteCmd(g))
}

func rrsetListCmd(g *globals) *cobra.Command {
	var opts client.RRsetListOptions
	cmd := &cobra.Command{
		Use: "list DOMAIN [--name NAME] [--type TYPE]", Short: "List a zone's RRsets, the operator's SOA and NS first, then in DNS order",
		Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			sets, err := c.ListRRsets(ctx, args[0], opts)
			if err != nil {
				return err
			}
			return printList(g, rrsetViewOf(ctx, g, c, args[0]), sets)
		}),
	}
	cmd.Flags().StringVar(&opts.Name, "name", "", "only the RRsets of this name (relative to the zone, @ the apex)")
	cmd.Flags().StringVar(&opts.Type, "type", "", "only the RRsets of this type (A, AAAA, CNAME, MX, TXT, SRV, CAA, NS, SOA)")
	return cmd
}

func rrsetSetCmd(g *globals) *cobra.Command {
	var ttl int64
	var comments []string
	cmd := &cobra.Command{
		Use:   "set DOMAIN NAME TYPE VALUE... [--ttl SECONDS] [--comment TEXT]...",
		Short: "Create an RRset, or replace it whole, with these values (NAME relative to the zone, @ the apex)",
		Args:  cobra.MinimumNArgs(4),
	}
	f := cmd.Flags()
	f.Int64Var(&ttl, "ttl", 0, "its TTL in seconds, 60 to 86400 (default: none, the zone's)")
	f.StringArrayVar(&comments, "comment", nil, "a note kept with a record: the first --comment the first value's, and so on (repeatable)")
	cmd.RunE = withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
		domain, name, typ, values := args[0], args[1], args[2], args[3:]
		if len(comments) > len(values) {
			return errors.New(strconv.Itoa(len(comments)) + " --comment for " + strconv.Itoa(len(values)) + " values: give at most one a value")
		}
		req := api.RRsetPut{TTL: api.Null[int64]()}
		if f.Changed("ttl") {
			req.TTL = api.Some(ttl)
		}
		for i := range values {
			rec := api.DNSRecordInput{Value: &values[i]}
			if i < len(comments) {
				rec.Comment = &comments[i]
			}
			req.Records = append(req.Records, rec)
		}
		return rrsetPut(ctx, g, c, domain, name, typ, req)
	})
	return cmd
}

// rrsetPut sets the RRset, notes whether it was created or replaced (whether it was
// there just before), and prints it.
func rrsetPut(ctx context.Context, g *globals, c *client.Client, domain, name, typ string, req api.RRsetPut) error {
	_, err := c.GetRRset(ctx, domain, name, typ)
	existed := err == nil
	set, err := c.PutRRset(ctx, domain, name, typ, req)
	if err != nil {
		return err
	}
	done := "created"
	if existed {
		done = "replaced"
	}
	g.note("RRset %s %s of %s %s\n", set.Name, set.Type, domain, done)
	return printOne(g, rrsetViewOf(ctx, g, c, domain), *set)
}

func rrsetDeleteCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "delete DOMAIN NAME TYPE", Short: "Delete an RRset, every record of its name and type", Args: cobra.ExactArgs(3),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			if err := c.DeleteRRset(ctx, args[0], args[1], args[2]); err != nil {
				return err
			}
			g.note("RRset %s %s of %s deleted\n", args[1], strings.ToUpper(args[2]), args[0])
			return nil
		}),
	}
}
