package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

var eventView = view[api.Event]{
	id: func(e api.Event) string { return i64(e.ID) },
	columns: []column[api.Event]{
		{name: "id", value: func(e api.Event) string { return i64(e.ID) }},
		{name: "created_at", value: func(e api.Event) string { return ts(e.CreatedAt) }},
		{name: "type", value: func(e api.Event) string { return e.Type }},
		{name: "resource", value: func(e api.Event) string { return e.Resource.Type + ":" + i64(e.Resource.ID) }},
		{name: "request_id", wide: true, value: func(e api.Event) string { return optStr(e.RequestID) }},
		{name: "data", wide: true, value: func(e api.Event) string { return string(e.Data) }},
	},
}

// eventCmd is "berth event": the account's events (docs/api.md, Events).
func eventCmd(g *globals) *cobra.Command {
	var opts client.EventListOptions
	var follow bool
	list := &cobra.Command{
		Use:   "list [--after ID] [--type TYPE]... [--resource TYPE:ID] [--limit N] [--follow]",
		Short: "List the account's events, oldest first; --follow prints new ones as they happen",
		Args:  cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			if follow {
				return followEvents(ctx, g, c, opts)
			}
			return listEvents(ctx, g, c, opts)
		}),
	}
	f := list.Flags()
	f.Int64Var(&opts.After, "after", 0, "only the events after this one (an event id)")
	f.StringSliceVar(&opts.Types, "type", nil, "only events of these types: server.created, server.*, ... (repeatable)")
	f.StringVar(&opts.Resource, "resource", "", "only the events of one resource, as type:id (server:12)")
	f.IntVar(&opts.Limit, "limit", 100, "at most this many (without --follow; 0: all)")
	f.BoolVar(&follow, "follow", false, "keep printing events as they happen, until interrupted (json: one object a line)")
	return group("event", "What happened to the account", list)
}

// listEvents prints the events there are, at most opts.Limit.
func listEvents(ctx context.Context, g *globals, c *client.Client, opts client.EventListOptions) error {
	limit := opts.Limit
	opts.Limit = 0
	if limit > 0 {
		opts.Limit = min(limit, 1000)
	}
	var all []api.Event
	for e, err := range c.Events(ctx, opts) {
		if err != nil {
			return err
		}
		all = append(all, e)
		if limit > 0 && len(all) >= limit {
			break
		}
	}
	return printList(g, eventView, all)
}

// followEvents prints each event as it comes, until ctx ends (an interrupt): a table
// row, its id (--quiet), or one JSON object a line.
func followEvents(ctx context.Context, g *globals, c *client.Client, opts client.EventListOptions) error {
	fmtOut, err := parseOutput(g.output)
	if err != nil {
		return err
	}
	if fmtOut.kind == "yaml" {
		return errors.New("--follow prints table, wide, columns= or json (one object a line), not yaml")
	}
	cols, err := eventView.pick(fmtOut)
	if err != nil {
		return err
	}
	row := func(e api.Event) string {
		switch {
		case g.quiet:
			return escape(eventView.id(e))
		case fmtOut.kind == "json":
			b, err := json.Marshal(e)
			if err != nil {
				return ""
			}
			return string(escapeJSON(b))
		}
		vals := make([]string, len(cols))
		for i, col := range cols {
			vals[i] = cell(col.value(e))
		}
		return strings.Join(vals, "  ")
	}
	if !g.quiet && fmtOut.kind != "json" {
		names := make([]string, len(cols))
		for i, col := range cols {
			names[i] = strings.ToUpper(col.name)
		}
		fmt.Fprintln(g.stdout, strings.Join(names, "  "))
	}
	opts.Limit, opts.Wait = 0, time.Minute
	for e, err := range c.Events(ctx, opts) {
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintln(g.stdout, row(e)); err != nil {
			return err
		}
	}
	return nil // interrupted
}
