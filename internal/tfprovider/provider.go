// Package tfprovider is the Terraform and OpenTofu provider of Berth, berth/berth: its
// resources (servers, snapshots, SSH keys, projects, recipes, webhooks, volumes and
// their attachments, DNS zones, their RRsets and servers' reverse DNS) and data
// sources (the catalog with its licenses, the account, servers, volumes, zones and
// their RRsets), on terraform-plugin-framework (protocol 6).
//
// It stands on the Go SDK, package client, and speaks no HTTP of its own: retries of
// 429 and 503 after their Retry-After, the Idempotency-Key that makes a retried order
// one server, and waiting on operations are the SDK's. What it adds is Terraform's
// side: names resolved against the catalog at plan time, a 409 (busy) waited out
// (client.RetryBusy), a 422 turned into a diagnostic on the attribute it names, and
// the state kept as the configuration spells it (a name or an id) so that a plan
// after an apply is empty.
package tfprovider

// The documentation in docs/terraform is generated from the schema and from
// examples/terraform (TestDocsUpToDate fails when it is stale).
//go:generate ../../scripts/terraform-docs.sh

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/client"
)

// Address is the provider's address in OpenTofu's registry namespace: configurations
// name it source = "berth/berth".
const Address = "registry.opentofu.org/berth/berth"

// Environment variables the provider falls back to, as the CLI berth does.
const (
	EnvURL   = "BERTH_URL"
	EnvToken = "BERTH_TOKEN"
)

// retryPolicy is the SDK's, with more patience: an apply may ride out a longer
// outage (503) or rate limit (429) than an interactive command, and each resource's
// timeouts bound it anyway.
var retryPolicy = client.RetryPolicy{MaxRetries: 20, MaxWait: 10 * time.Minute}

// Provider is the berth provider.
type Provider struct {
	version string
	// opts come after the provider's own client options: tests give an HTTP client
	// that checks every answer against api/openapi.yaml.
	opts []client.Option
}

var _ provider.Provider = (*Provider)(nil)

// New returns the provider's constructor, for providerserver.Serve and for tests'
// ProtoV6ProviderFactories. version goes into the User-Agent; opts are added to the
// SDK client's options after the provider's own (url, token, retry policy).
func New(version string, opts ...client.Option) func() provider.Provider {
	return func() provider.Provider { return &Provider{version: version, opts: opts} }
}

type providerModel struct {
	URL   types.String `tfsdk:"url"`
	Token types.String `tfsdk:"token"`
}

// Metadata names the provider "berth": its resources are berth_*.
func (p *Provider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "berth"
	resp.Version = p.version
}

// Schema is the provider block: url and token.
func (p *Provider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The Berth provider manages virtual servers, their snapshots, block volumes, SSH keys, " +
			"projects, first-boot recipes, webhooks, DNS zones with their RRsets and servers' reverse DNS through " +
			"Berth's `/v1` API, and reads its catalog and account. " +
			"It authenticates with an API token (created in the console under Settings, API); " +
			"the token's scopes limit what it may change (`servers`, `power`, `snapshots`, `storage`, `ssh-keys`, `recipes`, `domains`, " +
			"`licenses`: a server's licenses).",
		Attributes: map[string]schema.Attribute{
			"url": schema.StringAttribute{
				MarkdownDescription: "The API's address, ending in `/v1` (e.g. `https://berth.example.com/v1`). " +
					"Default: the environment variable `" + EnvURL + "`, else `" + client.DefaultBaseURL + "`.",
				Optional: true,
			},
			"token": schema.StringAttribute{
				MarkdownDescription: "The API token. Default: the environment variable `" + EnvToken + "`. " +
					"A token Berth does not accept fails when the provider is configured.",
				Optional:  true,
				Sensitive: true,
			},
		},
	}
}

// Configure builds the SDK client and checks the token with GET /me: a bad token
// fails here, before any resource is planned.
func (p *Provider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	for name, v := range map[string]types.String{"url": m.URL, "token": m.Token} {
		if v.IsUnknown() {
			resp.Diagnostics.AddAttributeError(path.Root(name), "Unknown "+name,
				"The provider's "+name+" depends on a value known only after apply. Give it a value known at plan time.")
		}
	}
	if resp.Diagnostics.HasError() {
		return
	}
	url, token := m.URL.ValueString(), m.Token.ValueString()
	if url == "" {
		url = os.Getenv(EnvURL)
	}
	if url == "" {
		url = client.DefaultBaseURL
	}
	if token == "" {
		token = os.Getenv(EnvToken)
	}
	if token == "" {
		resp.Diagnostics.AddAttributeError(path.Root("token"), "No Berth API token",
			"Set the provider's token argument or the environment variable "+EnvToken+" to an API token "+
				"(created in Berth's console under Settings, API).")
		return
	}
	opts := append([]client.Option{client.WithBaseURL(url), client.WithToken(token), client.WithRetryPolicy(retryPolicy),
		client.WithUserAgent("terraform-provider-berth/" + p.version)}, p.opts...)
	c, err := client.New(opts...)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("url"), "Invalid Berth URL", err.Error())
		return
	}
	me, err := c.GetMe(ctx)
	switch {
	case errors.Is(err, client.ErrUnauthenticated):
		resp.Diagnostics.AddAttributeError(path.Root("token"), "Berth did not accept the API token",
			fmt.Sprintf("%s answered 401: %s\nThe token is missing, unknown, expired or revoked: check the provider's "+
				"token argument or %s.", c.BaseURL(), apiMessage(err), EnvToken))
		return
	case err != nil:
		resp.Diagnostics.AddError("Cannot reach Berth", fmt.Sprintf("GET %s/me: %v", c.BaseURL(), err))
		return
	case me.Blocked:
		resp.Diagnostics.AddError("The Berth account is blocked",
			fmt.Sprintf("Account %d (%s) is blocked by the operator: every change answers 403.", me.ID, me.Email))
		return
	}
	data := &configuredData{c: c, lang: me.Language}
	resp.ResourceData, resp.DataSourceData = data, data
}

// Resources are the managed resources.
func (p *Provider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		newServerResource,
		newSnapshotResource,
		newSSHKeyResource,
		newProjectResource,
		newRecipeResource,
		newWebhookResource,
		newVolumeResource,
		newVolumeAttachmentResource,
		newDomainResource,
		newRRsetResource,
		newRDNSResource,
	}
}

// DataSources are the data sources.
func (p *Provider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		newLocationDataSource,
		newPlanDataSource,
		newImageDataSource,
		newAppDataSource,
		newLicenseDataSource,
		newSSHKeyDataSource,
		newProjectDataSource,
		newServerDataSource,
		newServersDataSource,
		newAccountDataSource,
		newVolumeDataSource,
		newDomainDataSource,
		newRRsetsDataSource,
	}
}
