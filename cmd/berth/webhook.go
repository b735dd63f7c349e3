package main

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// webhooks are the account's webhooks (docs/webhooks.md): named by id, or by URL
// where one webhook alone has it.
var webhooks = &resource[api.Webhook]{
	name: "webhook", short: "Send the account's events to a URL (docs/webhooks.md)", noun: "webhook", arg: "WEBHOOK",
	view: view[api.Webhook]{
		id: func(w api.Webhook) string { return i64(w.ID) },
		columns: []column[api.Webhook]{
			{name: "id", value: func(w api.Webhook) string { return i64(w.ID) }},
			{name: "url", value: func(w api.Webhook) string { return w.URL }},
			{name: "event_types", value: func(w api.Webhook) string { return strings.Join(w.EventTypes, ",") }},
			{name: "enabled", value: func(w api.Webhook) string { return strconv.FormatBool(w.Enabled) }},
			{name: "disabled_reason", wide: true, value: func(w api.Webhook) string { return optStr(w.DisabledReason) }},
			{name: "created_at", wide: true, value: func(w api.Webhook) string { return ts(w.CreatedAt) }},
		},
	},
	all: func(ctx context.Context, c *client.Client, _ string) ([]api.Webhook, error) {
		return c.ListWebhooks(ctx)
	},
	id:    func(w api.Webhook) int64 { return w.ID },
	names: func(w api.Webhook) []string { return []string{w.URL} },
	get: func(ctx context.Context, c *client.Client, id int64) (*api.Webhook, error) {
		return c.GetWebhook(ctx, id)
	},
	listHelp:     "List the webhooks (without their secrets)",
	describeHelp: "Show a webhook (by id, or by URL)",
	update: &updater[api.Webhook]{
		use: "[--url URL] [--event-type TYPE]... [--enable | --disable]", short: "Change a webhook; --enable enables one Berth disabled",
		flags: webhookUpdateFlags,
	},
	deleteHelp: "Delete webhooks with their delivery logs",
	deleteMany: true,
	del: func(ctx context.Context, c *client.Client, _ string, r ref) (string, error) {
		return "", c.DeleteWebhook(ctx, r.id)
	},
}

var deliveryView = view[api.WebhookDelivery]{
	id: func(d api.WebhookDelivery) string { return i64(d.ID) },
	columns: []column[api.WebhookDelivery]{
		{name: "id", value: func(d api.WebhookDelivery) string { return i64(d.ID) }},
		{name: "created_at", value: func(d api.WebhookDelivery) string { return ts(d.CreatedAt) }},
		{name: "event_id", value: func(d api.WebhookDelivery) string { return i64(d.EventID) }},
		{name: "event_type", value: func(d api.WebhookDelivery) string { return d.EventType }},
		{name: "state", value: func(d api.WebhookDelivery) string { return d.State }},
		{name: "attempts", value: func(d api.WebhookDelivery) string { return strconv.Itoa(d.AttemptCount) }},
		{name: "last_status", value: lastStatus},
		{name: "next_attempt_at", wide: true, value: func(d api.WebhookDelivery) string {
			if d.NextAttemptAt == nil {
				return ""
			}
			return ts(*d.NextAttemptAt)
		}},
		{name: "reason", wide: true, value: func(d api.WebhookDelivery) string {
			if n := len(d.Attempts); n > 0 {
				return optStr(d.Attempts[n-1].Reason)
			}
			return ""
		}},
	},
}

// lastStatus is the status of the answer to a delivery's latest attempt ("" when
// none came).
func lastStatus(d api.WebhookDelivery) string {
	if n := len(d.Attempts); n > 0 && d.Attempts[n-1].Status != nil {
		return strconv.Itoa(*d.Attempts[n-1].Status)
	}
	return ""
}

// webhookUpdateFlags are update's flags; what they set is what it changes.
func webhookUpdateFlags(cmd *cobra.Command) func(context.Context, *client.Client, ref) (*api.Webhook, error) {
	var url string
	var types []string
	var enable, disable bool
	f := cmd.Flags()
	f.StringVar(&url, "url", "", "new URL")
	f.StringSliceVar(&types, "event-type", nil, "the event types it is sent, in place of its own: server.created, server.*, * (repeatable)")
	f.BoolVar(&enable, "enable", false, "enable it (also one Berth disabled after failed deliveries)")
	f.BoolVar(&disable, "disable", false, "disable it: nothing is sent until it is enabled")
	cmd.MarkFlagsMutuallyExclusive("enable", "disable")
	return func(ctx context.Context, c *client.Client, r ref) (*api.Webhook, error) {
		var req api.WebhookWrite
		if f.Changed("url") {
			req.URL = &url
		}
		if f.Changed("event-type") {
			req.EventTypes = &types
		}
		if enable || disable {
			req.Enabled = client.Ptr(enable)
		}
		return c.UpdateWebhook(ctx, r.id, req)
	}
}

// webhookCmd is "berth webhook": the shared commands, and create, test,
// deliveries, redeliver and rotate-secret.
func webhookCmd(g *globals) *cobra.Command {
	var url string
	var types []string
	create := &cobra.Command{
		Use: "create --url URL [--event-type TYPE]...", Short: "Make a webhook; prints its secret, shown this once", Args: cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			req := api.WebhookWrite{URL: &url}
			if len(types) > 0 {
				req.EventTypes = &types
			}
			w, err := c.CreateWebhook(ctx, req)
			if err != nil {
				return err
			}
			return printSecret(g, w, "Webhook %s created: its secret, on stdout, is shown only now; keep it for the receiver (docs/webhooks.md)\n")
		}),
	}
	create.Flags().StringVar(&url, "url", "", "where the events are sent (https://)")
	create.Flags().StringSliceVar(&types, "event-type", nil, "the event types it is sent: server.created, server.*, ... (repeatable; default *, every one)")
	_ = create.MarkFlagRequired("url")
	rotate := &cobra.Command{
		Use: "rotate-secret WEBHOOK", Short: "Give a webhook a new secret; prints it, shown this once", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			r, err := webhooks.ref(ctx, c, "", args[0])
			if err != nil {
				return err
			}
			w, err := c.RotateWebhookSecret(ctx, r.id)
			if err != nil {
				return err
			}
			return printSecret(g, w, "Webhook %s has a new secret, on stdout, shown only now; the old one signs deliveries too for 24 hours\n")
		}),
	}
	return webhooks.command(g, create, webhookTestCmd(g), webhookDeliveriesCmd(g), webhookRedeliverCmd(g), rotate)
}

// printSecret prints a webhook whose answer holds its secret: with -o json or yaml
// the API's data, else the secret alone on stdout and note (of the webhook's id) on
// stderr.
func printSecret(g *globals, w *api.Webhook, note string) error {
	f, err := parseOutput(g.output)
	if err != nil {
		return err
	}
	if done, err := printData(g.stdout, f, w); done {
		return err
	}
	g.note(note, i64(w.ID))
	_, err = g.stdout.Write([]byte(escape(w.Secret) + "\n"))
	return err
}

// webhookTestCmd is "test WEBHOOK": a webhook.test event sent to it alone.
func webhookTestCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "test WEBHOOK", Short: "Send a webhook a test event (webhook.test)", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			r, err := webhooks.ref(ctx, c, "", args[0])
			if err != nil {
				return err
			}
			if err := c.TestWebhook(ctx, r.id); err != nil {
				return err
			}
			g.note("Test event sent to webhook %s (berth webhook deliveries %s)\n", r.String(), r.String())
			return nil
		}),
	}
}

// webhookDeliveriesCmd is "deliveries WEBHOOK": its delivery log, newest first.
func webhookDeliveriesCmd(g *globals) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use: "deliveries WEBHOOK [--limit N]", Short: "List a webhook's deliveries, newest first, with their latest attempt", Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			r, err := webhooks.ref(ctx, c, "", args[0])
			if err != nil {
				return err
			}
			var all []api.WebhookDelivery
			for d, err := range c.AllWebhookDeliveries(ctx, r.id) {
				if err != nil {
					return err
				}
				if limit > 0 && len(all) >= limit {
					break
				}
				all = append(all, d)
			}
			return printList(g, deliveryView, all)
		}),
	}
	cmd.Flags().IntVar(&limit, "limit", 50, "at most this many (0: all)")
	return cmd
}

// webhookRedeliverCmd is "redeliver WEBHOOK DELIVERY": the delivery's event sent again.
func webhookRedeliverCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "redeliver WEBHOOK DELIVERY", Short: "Send a delivery's event again (the same webhook-id)", Args: cobra.ExactArgs(2),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			r, err := webhooks.ref(ctx, c, "", args[0])
			if err != nil {
				return err
			}
			id, ok := asID(args[1])
			if !ok {
				return errors.New("delivery " + strconv.Quote(args[1]) + ": want a numeric id (berth webhook deliveries " + r.String() + ")")
			}
			d, err := c.RedeliverWebhookDelivery(ctx, r.id, id)
			if err != nil {
				return err
			}
			return printOne(g, deliveryView, *d)
		}),
	}
}
