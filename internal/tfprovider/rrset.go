package tfprovider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

type rrsetResource struct{ base }

func newRRsetResource() resource.Resource { return &rrsetResource{base{name: "rrset"}} }

var (
	_ resource.ResourceWithConfigure   = (*rrsetResource)(nil)
	_ resource.ResourceWithImportState = (*rrsetResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*rrsetResource)(nil)
)

type rrsetModel struct {
	ID      types.String  `tfsdk:"id"`
	Domain  types.String  `tfsdk:"domain"`
	Name    types.String  `tfsdk:"name"`
	Type    types.String  `tfsdk:"type"`
	TTL     types.Int64   `tfsdk:"ttl"`
	Records []recordModel `tfsdk:"records"`
}

// key is the state's zone, name (relative) and type as Berth writes them, from its
// id (zone/name/TYPE).
func (m *rrsetModel) key() (zone, name, typ string) {
	parts := strings.Split(m.ID.ValueString()+"//", "/")
	return parts[0], parts[1], parts[2]
}

func (r *rrsetResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "An RRset of a zone: every record of one name and one type, set whole (docs/api.md, " +
			"Domains). Values are compared as Berth writes them: `10 mail` and `10 mail.example.com.`, or `2001:DB8::1` " +
			"and `2001:db8::1`, are the same value, and the state keeps the configuration's spelling. The TTL and the " +
			"records change in place; another zone, name or type replaces the RRset. An RRset that exists already is " +
			"not taken over: import it. Imported as `zone/name/type` (`example.com/www/A`, `example.com/@/MX`). Needs the " +
			"token scope `domains`.",
		Attributes: rrsetAttrs(r),
	}
}

func rrsetAttrs(r *rrsetResource) map[string]schema.Attribute {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{MarkdownDescription: "`zone/name/TYPE`, as Berth writes them (`example.com/www/A`).",
			Computed: true, PlanModifiers: keep},
		// Replaced by ModifyPlan, which asks Berth whether another spelling is the same zone.
		"domain": schema.StringAttribute{MarkdownDescription: "The zone, by id or name (`berth_domain.x.id`). " +
			"Changing it replaces the RRset; its id for its name, or the other way round, is no change.", Required: true},
		"name": schema.StringAttribute{MarkdownDescription: "The name, relative to the zone (`www`, `_dmarc`, `*.dev`; " +
			"`@` the apex) or absolute with a trailing dot (`www.example.com.`). Changing it replaces the RRset.",
			Required: true, PlanModifiers: []planmodifier.String{keepSame{desc: "Keeps the state's name when the " +
				"configuration writes the same name otherwise.", same: func(ctx context.Context, req planmodifier.StringRequest, a, b string) bool {
				var id types.String
				req.State.GetAttribute(ctx, path.Root("id"), &id)
				z, _, _ := strings.Cut(id.ValueString(), "/")
				return sameOwner(z, a, b)
			}}, stringplanmodifier.RequiresReplace()}},
		"type": schema.StringAttribute{MarkdownDescription: "`A`, `AAAA`, `CNAME`, `MX`, `TXT`, `SRV`, `CAA`, or `NS` " +
			"below the apex (the SOA and apex NS are the operator's). Changing it replaces the RRset.", Required: true,
			PlanModifiers: []planmodifier.String{keepSame{desc: "Keeps the state's type in another case.",
				same: func(_ context.Context, _ planmodifier.StringRequest, a, b string) bool {
					return strings.EqualFold(a, b)
				}},
				stringplanmodifier.RequiresReplace()}},
		"ttl": schema.Int64Attribute{MarkdownDescription: "The TTL in seconds, 60 to 86400; unset, the zone's.",
			Optional: true},
		"records": schema.ListNestedAttribute{MarkdownDescription: "The records, 1 to 100, in order; no value twice.",
			Required: true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"value": schema.StringAttribute{MarkdownDescription: "The RDATA in zone-file form with the zone as " +
					"`$ORIGIN` (`192.0.2.1`, `10 mail`, `\"v=spf1 -all\"`); Berth keeps it canonical (names absolute, TXT " +
					"quoted in strings of at most 255 bytes).", Required: true},
				"comment": schema.StringAttribute{MarkdownDescription: "A note of the account's, at most 255 bytes.",
					Optional: true, Computed: true, Default: stringdefault.StaticString("")},
			}}},
	}
}

// sameZone reports whether the zones a and b (ids or names) are one, asking Berth.
func (r *rrsetResource) sameZone(ctx context.Context, a, b types.String) bool {
	if r.c == nil || !known(a) || !known(b) {
		return false
	}
	da, errA := r.c.GetDomain(ctx, a.ValueString())
	db, errB := r.c.GetDomain(ctx, b.ValueString())
	return errA == nil && errB == nil && da.ID == db.ID
}

// ModifyPlan keeps the state's zone when the configuration names the same one
// otherwise (its id for its name), else replaces the RRset; and it plans the state's
// records when the configuration's are the same, written otherwise (sameRecords): no
// diff for `mail` and `mail.example.com.`.
func (r *rrsetResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || req.State.Raw.IsNull() {
		return
	}
	var prior rrsetModel
	var domain, name, typ types.String
	var records types.List
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("domain"), &domain)...)
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("name"), &name)...)
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("type"), &typ)...)
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("records"), &records)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !domain.Equal(prior.Domain) {
		if !r.sameZone(ctx, domain, prior.Domain) {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("domain"))
			return
		}
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("domain"), prior.Domain)...)
	}
	if !name.Equal(prior.Name) || !typ.Equal(prior.Type) || records.IsUnknown() {
		return // replaced, or records not known yet
	}
	var planned []recordModel
	resp.Diagnostics.Append(records.ElementsAs(ctx, &planned, false)...)
	if zone, name, typ := prior.key(); !resp.Diagnostics.HasError() && sameRecords(zone, name, typ, planned, prior.Records) {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("records"), prior.Records)...)
	}
}

// put is the request that makes the RRset what m plans.
func (m *rrsetModel) put() api.RRsetPut {
	req := api.RRsetPut{TTL: api.Null[int64]()}
	if !m.TTL.IsNull() {
		req.TTL = api.Some(m.TTL.ValueInt64())
	}
	for _, rec := range m.Records {
		req.Records = append(req.Records, api.DNSRecordInput{Value: rec.Value.ValueStringPointer(),
			Comment: rec.Comment.ValueStringPointer()})
	}
	return req
}

// fill sets m from the RRset got of zone, keeping m's spelling of what is the same.
func (m *rrsetModel) fill(zone *api.Domain, got *api.RRset) {
	m.ID = types.StringValue(rrsetID(zone.Name, got.Name, got.Type))
	m.Domain = spelled(m.Domain, zone.ID, zone.Name)
	m.Name = spelledAs(m.Name, got.Name, func(a, b string) bool { return sameOwner(zone.Name, a, b) })
	m.Type = spelledAs(m.Type, got.Type, strings.EqualFold)
	m.TTL = types.Int64Null()
	if got.TTL != nil {
		m.TTL = types.Int64Value(int64(*got.TTL))
	}
	m.Records = spelledRecords(zone.Name, got.Name, got.Type, m.Records, got.Records)
}

// zoneOf is the zone m names, with an error on domain when the account has none.
func (r *rrsetResource) zoneOf(ctx context.Context, m *rrsetModel, diags *diag.Diagnostics) *api.Domain {
	d, err := r.c.GetDomain(ctx, m.Domain.ValueString())
	switch {
	case isNotFound(err):
		diags.AddAttributeError(path.Root("domain"), "No such domain",
			fmt.Sprintf("The account has no domain of id or name %q.", m.Domain.ValueString()))
	case err != nil:
		diags.AddError("Cannot read the domain", describeError(err))
	}
	return d
}

func (r *rrsetResource) hasAttr(name string) bool {
	return name == "name" || name == "type" || name == "ttl" || name == "records"
}

func (r *rrsetResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m rrsetModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	zone := r.zoneOf(ctx, &m, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	zid, name, typ := client.ID(zone.ID), m.Name.ValueString(), m.Type.ValueString()
	if _, err := r.c.GetRRset(ctx, zid, name, typ); err == nil {
		resp.Diagnostics.AddError("The RRset exists already", fmt.Sprintf("The zone %s has an RRset %s %s already: "+
			"import it (tofu import ADDRESS %s) to manage it here.", zone.Name, name, typ, rrsetID(zone.Name, name, typ)))
		return
	} else if !isNotFound(err) {
		addError(&resp.Diagnostics, "Cannot create the RRset", err, nil, r.hasAttr)
		return
	}
	got, err := r.c.PutRRset(ctx, zid, name, typ, m.put())
	if err != nil {
		addError(&resp.Diagnostics, "Cannot create the RRset", err, nil, r.hasAttr)
		return
	}
	m.fill(zone, got)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *rrsetResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m rrsetModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	zone, err := r.c.GetDomain(ctx, m.Domain.ValueString())
	var got *api.RRset
	if err == nil {
		_, name, typ := m.key()
		got, err = r.c.GetRRset(ctx, client.ID(zone.ID), name, typ)
	}
	if isNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	} else if err != nil {
		resp.Diagnostics.AddError("Cannot read the RRset", describeError(err))
		return
	}
	m.fill(zone, got)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *rrsetResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m, prior rrsetModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	zone := r.zoneOf(ctx, &m, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	_, name, typ := prior.key()
	got, err := r.c.PutRRset(ctx, client.ID(zone.ID), name, typ, m.put())
	if err != nil {
		addError(&resp.Diagnostics, "Cannot change the RRset", err, nil, r.hasAttr)
		return
	}
	m.fill(zone, got)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *rrsetResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m rrsetModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	_, name, typ := m.key()
	err := r.c.DeleteRRset(ctx, m.Domain.ValueString(), name, typ)
	if err != nil && !isNotFound(err) {
		resp.Diagnostics.AddError("Cannot delete the RRset", describeError(err))
	}
}

// ImportState takes zone/name/type (parseRRsetID).
func (r *rrsetResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	zoneRef, name, typ, err := parseRRsetID(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Cannot import the RRset", err.Error())
		return
	}
	zone, err := r.c.GetDomain(ctx, zoneRef)
	var got *api.RRset
	if err == nil {
		got, err = r.c.GetRRset(ctx, client.ID(zone.ID), name, typ)
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot import the RRset "+req.ID, describeError(err))
		return
	}
	m := rrsetModel{Domain: types.StringValue(zoneRef)}
	if _, isID := asID(zoneRef); !isID {
		m.Domain = types.StringValue(zone.Name)
	}
	m.fill(zone, got)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
