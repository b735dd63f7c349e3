package tfprovider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

type rdnsResource struct{ base }

func newRDNSResource() resource.Resource { return &rdnsResource{base{name: "server_rdns"}} }

var (
	_ resource.ResourceWithConfigure   = (*rdnsResource)(nil)
	_ resource.ResourceWithImportState = (*rdnsResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*rdnsResource)(nil)
)

type rdnsModel struct {
	ID     types.String `tfsdk:"id"`
	Server types.String `tfsdk:"server"`
	IP     types.String `tfsdk:"ip"`
	PTR    types.String `tfsdk:"ptr"`
}

func (r *rdnsResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The reverse DNS (PTR) of one of a server's addresses (docs/api.md, Domains): its IPv4 " +
			"address or one of its IPv6 /64. The PTR changes in place; another server or address replaces it. " +
			"Destroying it gives the address its default name back (`<server name>.<the operator's default domain>`). " +
			"Imported as `server/ip` (`42/203.0.113.10`). Needs the token scope `domains`.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{MarkdownDescription: "`server id/ip`, the address as Berth writes it.",
				Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			// Replaced by ModifyPlan, which asks Berth whether another spelling is the same server.
			"server": schema.StringAttribute{MarkdownDescription: "The server, by id or name (`berth_server.web.id`). " +
				"Changing it replaces the PTR; its id for its name, or the other way round, is no change.", Required: true},
			"ip": schema.StringAttribute{MarkdownDescription: "The address: the server's IPv4 address or one inside its " +
				"IPv6 /64 (`2001:DB8::1` and `2001:db8::1` are one). Changing it replaces the PTR.", Required: true,
				PlanModifiers: []planmodifier.String{keepSame{desc: "Keeps the state's address written otherwise.",
					same: func(_ context.Context, _ planmodifier.StringRequest, a, b string) bool { return sameAddr(a, b) }},
					stringplanmodifier.RequiresReplace()}},
			"ptr": schema.StringAttribute{MarkdownDescription: "The host name the address points to, e.g. `mail.example.com` " +
				"(Berth keeps it in lower case, without a trailing dot). Changes in place.", Required: true,
				PlanModifiers: []planmodifier.String{keepSame{desc: "Keeps the state's host name written otherwise.",
					same: func(_ context.Context, _ planmodifier.StringRequest, a, b string) bool { return sameHost(a, b) }}}},
		},
	}
}

// ModifyPlan keeps the state's server when the configuration names the same one
// otherwise (its id for its name), asking Berth, else replaces the PTR.
func (r *rdnsResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || req.State.Raw.IsNull() {
		return
	}
	var planned, prior types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("server"), &planned)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("server"), &prior)...)
	if resp.Diagnostics.HasError() || planned.Equal(prior) {
		return
	}
	if r.c == nil || !known(planned) || !known(prior) {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("server"))
		return
	}
	a, errA := r.c.GetServer(ctx, planned.ValueString())
	b, errB := r.c.GetServer(ctx, prior.ValueString())
	if errA != nil || errB != nil || a.ID != b.ID {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("server"))
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("server"), prior)...)
}

// fill sets m from the server's PTRs, keeping m's spelling of what is the same; false
// when the address has no PTR of its own (an IPv6 address without one).
func (m *rdnsModel) fill(srv *api.Server, list []api.RDNS) bool {
	for _, p := range list {
		if !sameAddr(p.IP, m.IP.ValueString()) {
			continue
		}
		m.ID = types.StringValue(client.ID(srv.ID) + "/" + p.IP)
		m.Server = spelled(m.Server, srv.ID, srv.Name)
		m.IP = spelledAs(m.IP, p.IP, sameAddr)
		m.PTR = spelledAs(m.PTR, p.PTR, sameHost)
		return true
	}
	return false
}

func (r *rdnsResource) hasAttr(name string) bool { return name == "ip" || name == "ptr" }

// set sets the PTR m plans (nil: the default) and reads it back into m.
func (r *rdnsResource) set(ctx context.Context, m *rdnsModel, what string, diags *diag.Diagnostics) {
	srv, err := r.c.GetServer(ctx, m.Server.ValueString())
	if isNotFound(err) {
		diags.AddAttributeError(path.Root("server"), "No such server",
			fmt.Sprintf("The account has no server of id or name %q.", m.Server.ValueString()))
		return
	}
	var list []api.RDNS
	if err == nil {
		list, err = r.c.SetRDNS(ctx, client.ID(srv.ID), api.RDNSSet{IP: m.IP.ValueStringPointer(),
			PTR: api.Some(m.PTR.ValueString())})
	}
	if err != nil {
		addError(diags, what, err, nil, r.hasAttr)
		return
	}
	if !m.fill(srv, list) {
		diags.AddError(what, fmt.Sprintf("Berth does not show the PTR of %s it set.", m.IP.ValueString()))
	}
}

func (r *rdnsResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m rdnsModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.set(ctx, &m, "Cannot set the PTR", &resp.Diagnostics)
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}

func (r *rdnsResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m rdnsModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.set(ctx, &m, "Cannot change the PTR", &resp.Diagnostics)
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}

// read fills m from Berth; false when the server or the address's PTR is gone.
func (r *rdnsResource) read(ctx context.Context, m *rdnsModel) (bool, error) {
	srv, err := r.c.GetServer(ctx, m.Server.ValueString())
	var list []api.RDNS
	if err == nil {
		list, err = r.c.ListRDNS(ctx, client.ID(srv.ID))
	}
	if isNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return m.fill(srv, list), nil
}

func (r *rdnsResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m rdnsModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ok, err := r.read(ctx, &m)
	switch {
	case err != nil:
		resp.Diagnostics.AddError("Cannot read the PTR", describeError(err))
	case !ok:
		resp.State.RemoveResource(ctx)
	default:
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}

// Delete gives the address its default name back.
func (r *rdnsResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m rdnsModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	_, err := r.c.SetRDNS(ctx, m.Server.ValueString(), api.RDNSSet{IP: m.IP.ValueStringPointer(), PTR: api.Null[string]()})
	if err != nil && !isNotFound(err) {
		resp.Diagnostics.AddError("Cannot reset the PTR", describeError(err))
	}
}

// ImportState takes server/ip (parseRDNSID).
func (r *rdnsResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	server, ip, err := parseRDNSID(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Cannot import the PTR", err.Error())
		return
	}
	m := rdnsModel{Server: types.StringValue(server), IP: types.StringValue(ip), PTR: types.StringNull()}
	ok, err := r.read(ctx, &m)
	switch {
	case err != nil:
		resp.Diagnostics.AddError("Cannot import the PTR "+req.ID, describeError(err))
	case !ok:
		resp.Diagnostics.AddError("Cannot import the PTR "+req.ID,
			fmt.Sprintf("The account has no server %q, or %s is not its address with a PTR.", server, ip))
	default:
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}
