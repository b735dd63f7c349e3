package tfprovider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/dnszone"
)

// The domains of issue 30 (docs/api.md, Domains): berth_domain, a zone; berth_rrset,
// one RRset of it; berth_server_rdns, the PTR of a server's address; the data sources
// berth_domain and berth_rrsets.

// domainFields are what Berth says of a zone, beside its id, name and creation time.
type domainFields struct {
	TTL         types.Int64 `tfsdk:"ttl"`
	Serial      types.Int64 `tfsdk:"serial"`
	Nameservers types.List  `tfsdk:"nameservers"`
	RRsetCount  types.Int64 `tfsdk:"rrset_count"`
}

var domainDescriptions = map[string]string{
	"ttl":    "The zone's TTL in seconds (60 to 86400): that of its SOA, its NS and every RRset without a TTL of its own.",
	"serial": "The SOA's serial, which every change of the zone bumps.",
	"nameservers": "The operator's nameservers that serve the zone (host names without a trailing dot): the zone's " +
		"delegation at its registrar names them.",
	"rrset_count": "How many RRsets the zone holds, the operator's SOA and apex NS included.",
}

func (f *domainFields) fill(d *api.Domain) {
	ns := make([]string, len(d.Nameservers))
	copy(ns, d.Nameservers)
	f.TTL, f.Serial = types.Int64Value(int64(d.TTL)), types.Int64Value(int64(d.Serial))
	f.Nameservers, _ = types.ListValueFrom(context.Background(), types.StringType, ns)
	f.RRsetCount = types.Int64Value(int64(d.RRsetCount))
}

type domainModel struct {
	recordFields
	Name types.String `tfsdk:"name"`
	domainFields
}

// domainResource is berth_domain: a record with a plan that keeps what Berth
// computes (serial, nameservers, RRset count) when nothing of the zone changes.
type domainResource struct {
	*record[api.Domain, domainModel]
}

var _ resource.ResourceWithModifyPlan = domainResource{}

// ModifyPlan plans the state's computed attributes when the name and the TTL are the
// state's (the name maybe spelled otherwise, keepSame): OpenTofu would otherwise
// plan them unknown, an update, because the configuration's spelling differs.
func (r domainResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || req.State.Raw.IsNull() {
		return
	}
	var planned, prior domainModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &planned)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() || !planned.Name.Equal(prior.Name) || !planned.TTL.Equal(prior.TTL) {
		return
	}
	planned.domainFields = prior.domainFields
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &planned)...)
}

func newDomainResource() resource.Resource {
	return domainResource{&record[api.Domain, domainModel]{
		base: base{name: "domain"},
		what: "domain",
		desc: "A DNS zone hosted on the operator's nameservers (docs/api.md, Domains), with the operator's SOA and " +
			"apex NS; `berth_rrset` fills it. The TTL changes in place; another name replaces the zone, and destroying " +
			"it deletes every RRset of it. Imported by id or by name. Needs the token scope `domains`.",
		attrs: domainAttrs(),
		list:  (*client.Client).ListDomains,
		create: func(c *client.Client, ctx context.Context, m *domainModel) (*api.Domain, error) {
			req := api.DomainCreate{Name: m.Name.ValueStringPointer()}
			if !m.TTL.IsUnknown() {
				req.TTL = m.TTL.ValueInt64Pointer()
			}
			return c.CreateDomain(ctx, req)
		},
		update: func(c *client.Client, ctx context.Context, id int64, m *domainModel) (*api.Domain, error) {
			var req api.DomainUpdate
			if !m.TTL.IsUnknown() {
				req.TTL = m.TTL.ValueInt64Pointer()
			}
			return c.UpdateDomain(ctx, client.ID(id), req)
		},
		delete: func(c *client.Client, ctx context.Context, id int64) error { return c.DeleteDomain(ctx, client.ID(id)) },
		key:    func(d api.Domain) (int64, string) { return d.ID, d.Name },
		fill: func(m *domainModel, d *api.Domain) {
			m.Name = sameZoneName(m.Name, d.Name)
			m.domainFields.fill(d)
		},
		common:  func(m *domainModel) *recordFields { return &m.recordFields },
		created: func(d *api.Domain) time.Time { return d.CreatedAt },
	}}
}

func domainAttrs() map[string]schema.Attribute {
	d := domainDescriptions
	return map[string]schema.Attribute{
		"name": schema.StringAttribute{MarkdownDescription: "The zone's name, e.g. `example.com` (kept in lower case, " +
			"without a trailing dot, Unicode labels as IDNA A-labels). Not a public suffix (`com`, `co.uk`), nor a name " +
			"held in this Berth, nor a parent or child of one. Changing it replaces the zone.",
			Required: true, PlanModifiers: []planmodifier.String{keepSame{desc: "Keeps the state's name when the " +
				"configuration writes the same name otherwise (Example.COM. is example.com).",
				same: func(_ context.Context, _ planmodifier.StringRequest, a, b string) bool { return sameHost(a, b) }},
				stringplanmodifier.RequiresReplace()}},
		"ttl": schema.Int64Attribute{MarkdownDescription: d["ttl"] + " Unset: 3600 for a new zone, else as it is. " +
			"Changes in place.", Optional: true, Computed: true,
			PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}},
		"serial":      schema.Int64Attribute{MarkdownDescription: d["serial"], Computed: true},
		"nameservers": schema.ListAttribute{MarkdownDescription: d["nameservers"], ElementType: types.StringType, Computed: true},
		"rrset_count": schema.Int64Attribute{MarkdownDescription: d["rrset_count"], Computed: true},
	}
}

// sameZoneName is the state's spelling of a zone's name: cur when Berth writes it as
// name (Example.COM. is example.com), else name.
func sameZoneName(cur types.String, name string) types.String {
	if known(cur) {
		if z, err := dnszone.ZoneName(cur.ValueString()); err == nil && z == name {
			return cur
		}
	}
	return types.StringValue(name)
}

type domainDataModel struct {
	ID        types.String `tfsdk:"id"`
	Name      types.String `tfsdk:"name"`
	CreatedAt types.String `tfsdk:"created_at"`
	domainFields
}

// newDomainDataSource is the data source berth_domain: a zone by id or by name.
func newDomainDataSource() datasource.DataSource {
	d := domainDescriptions
	return &byIDOrName[api.Domain, domainDataModel]{
		dataBase: dataBase{base{name: "domain"}},
		what:     "domain",
		desc:     "A DNS zone of the account, by id or by name, with its nameservers and serial.",
		attrs: map[string]dschema.Attribute{
			"ttl":         dschema.Int64Attribute{MarkdownDescription: d["ttl"], Computed: true},
			"serial":      dschema.Int64Attribute{MarkdownDescription: d["serial"], Computed: true},
			"nameservers": dschema.ListAttribute{MarkdownDescription: d["nameservers"], ElementType: types.StringType, Computed: true},
			"rrset_count": dschema.Int64Attribute{MarkdownDescription: d["rrset_count"], Computed: true},
			"created_at":  computedString("When the zone was created (RFC 3339)."),
		},
		get: func(ctx context.Context, c *client.Client, id, name string) (*api.Domain, error) {
			d, err := c.GetDomain(ctx, id+name)
			if isNotFound(err) {
				return nil, nil
			}
			return d, err
		},
		fill: func(_ context.Context, _ *client.Client, m *domainDataModel, d *api.Domain) error {
			m.ID, m.Name, m.CreatedAt = idString(d.ID), types.StringValue(d.Name), rfc3339(d.CreatedAt)
			m.domainFields.fill(d)
			return nil
		},
		idName: func(m *domainDataModel) (*types.String, *types.String) { return &m.ID, &m.Name },
	}
}
