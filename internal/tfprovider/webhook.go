package tfprovider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

type webhookModel struct {
	recordFields
	URL            types.String `tfsdk:"url"`
	EventTypes     types.Set    `tfsdk:"event_types"`
	Enabled        types.Bool   `tfsdk:"enabled"`
	DisabledReason types.String `tfsdk:"disabled_reason"`
	Secret         types.String `tfsdk:"secret"`
}

// newWebhookResource is berth_webhook (docs/webhooks.md). Berth shows a webhook's
// secret only in the answer that creates it (or rotates it), so the state keeps it
// from the creation on; an imported webhook's secret is null.
func newWebhookResource() resource.Resource {
	return &record[api.Webhook, webhookModel]{
		base: base{name: "webhook"},
		what: "webhook",
		desc: "A webhook: Berth sends the account's events that `event_types` match to `url`, signed with `secret` " +
			"(Standard Webhooks; see docs/webhooks.md). Every attribute changes in place. Needs a token holding every scope. " +
			"Imported by id; an imported webhook's `secret` is null, as Berth shows a secret only when it creates or rotates it.",
		attrs: webhookAttrs(),
		list:  (*client.Client).ListWebhooks,
		create: func(c *client.Client, ctx context.Context, m *webhookModel) (*api.Webhook, error) {
			return c.CreateWebhook(ctx, webhookWrite(ctx, m))
		},
		update: func(c *client.Client, ctx context.Context, id int64, m *webhookModel) (*api.Webhook, error) {
			return c.UpdateWebhook(ctx, id, webhookWrite(ctx, m))
		},
		delete:  (*client.Client).DeleteWebhook,
		key:     func(w api.Webhook) (int64, string) { return w.ID, "" },
		fill:    fillWebhook,
		common:  func(m *webhookModel) *recordFields { return &m.recordFields },
		created: func(w *api.Webhook) time.Time { return w.CreatedAt },
	}
}

func webhookAttrs() map[string]schema.Attribute {
	all := types.SetValueMust(types.StringType, []attr.Value{types.StringValue("*")})
	return map[string]schema.Attribute{
		"url": schema.StringAttribute{MarkdownDescription: "Where the deliveries go: an `https://` URL (plain `http://` only " +
			"where the operator allows private addresses) whose host is no private, loopback or link-local address.",
			Required: true},
		"event_types": schema.SetAttribute{MarkdownDescription: "The event types delivered: a type (`server.created`), a " +
			"resource's types (`server.*`) or `*` for all (the default).",
			ElementType: types.StringType, Optional: true, Computed: true, Default: setdefault.StaticValue(all)},
		"enabled": schema.BoolAttribute{MarkdownDescription: "Whether events are delivered (default true). Berth disables a " +
			"webhook whose receiver is gone or failed every attempt (see `disabled_reason`); the next apply enables it again.",
			Optional: true, Computed: true, Default: booldefault.StaticBool(true)},
		"disabled_reason": schema.StringAttribute{MarkdownDescription: "Why Berth disabled the webhook (`gone`: its " +
			"receiver answered 410; `failing`: every attempt of a delivery failed), null otherwise.", Computed: true},
		"secret": schema.StringAttribute{MarkdownDescription: "The secret that signs the deliveries (`whsec_...`), known " +
			"from the creation on and kept in the state (sensitive). Null after an import: Berth shows a secret only when it " +
			"creates or rotates it; a rotation outside OpenTofu is not seen.", Computed: true, Sensitive: true,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
	}
}

// webhookWrite is the request that makes a webhook what m plans.
func webhookWrite(ctx context.Context, m *webhookModel) api.WebhookWrite {
	var patterns []string
	m.EventTypes.ElementsAs(ctx, &patterns, false)
	return api.WebhookWrite{URL: m.URL.ValueStringPointer(), EventTypes: &patterns, Enabled: m.Enabled.ValueBoolPointer()}
}

// fillWebhook sets m from w; the secret only when w carries one (its creation),
// else m keeps the state's.
func fillWebhook(m *webhookModel, w *api.Webhook) {
	elems := make([]attr.Value, len(w.EventTypes))
	for i, t := range w.EventTypes {
		elems[i] = types.StringValue(t)
	}
	m.URL, m.Enabled = types.StringValue(w.URL), types.BoolValue(w.Enabled)
	m.EventTypes = types.SetValueMust(types.StringType, elems)
	m.DisabledReason = types.StringPointerValue(w.DisabledReason)
	if w.Secret != "" {
		m.Secret = types.StringValue(w.Secret)
	} else if m.Secret.IsUnknown() {
		m.Secret = types.StringNull()
	}
}
