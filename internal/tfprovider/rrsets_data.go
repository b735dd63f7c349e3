package tfprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/client"
)

type rrsetsModel struct {
	Domain types.String `tfsdk:"domain"`
	Name   types.String `tfsdk:"name"`
	Type   types.String `tfsdk:"type"`
	RRsets types.List   `tfsdk:"rrsets"`
}

type rrsetData struct {
	Name    types.String  `tfsdk:"name"`
	Type    types.String  `tfsdk:"type"`
	TTL     types.Int64   `tfsdk:"ttl"`
	Records []recordModel `tfsdk:"records"`
}

var (
	recordType = types.ObjectType{AttrTypes: map[string]attr.Type{"value": types.StringType, "comment": types.StringType}}
	rrsetType  = types.ObjectType{AttrTypes: map[string]attr.Type{"name": types.StringType, "type": types.StringType,
		"ttl": types.Int64Type, "records": types.ListType{ElemType: recordType}}}
)

type rrsetsDataSource struct{ dataBase }

func newRRsetsDataSource() datasource.DataSource {
	return &rrsetsDataSource{dataBase{base{name: "rrsets"}}}
}

func (d *rrsetsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The RRsets of a zone, the operator's SOA and apex NS first, then in DNS order: all of " +
			"them, or those of one name or one type. Values are as Berth writes them (canonical).",
		Attributes: map[string]schema.Attribute{
			"domain": schema.StringAttribute{MarkdownDescription: "The zone, by id or name.", Required: true},
			"name": schema.StringAttribute{MarkdownDescription: "Only the RRsets of this name (relative, `@` the apex).",
				Optional: true},
			"type": schema.StringAttribute{MarkdownDescription: "Only the RRsets of this type (`MX`).", Optional: true},
			"rrsets": schema.ListNestedAttribute{MarkdownDescription: "The RRsets.", Computed: true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name": computedString("The name, relative to the zone (`@` the apex)."),
					"type": computedString("The type."),
					"ttl": schema.Int64Attribute{MarkdownDescription: "The TTL in seconds; null: the zone's.",
						Computed: true},
					"records": schema.ListNestedAttribute{MarkdownDescription: "The records, in order.", Computed: true,
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"value":   computedString("The value, canonical."),
							"comment": computedString("The account's note (\"\" for none)."),
						}}},
				}}},
		},
	}
}

func (d *rrsetsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m rrsetsModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	all, err := d.c.ListRRsets(ctx, m.Domain.ValueString(),
		client.RRsetListOptions{Name: m.Name.ValueString(), Type: m.Type.ValueString()})
	if isNotFound(err) {
		resp.Diagnostics.AddAttributeError(path.Root("domain"), "No such domain",
			"The account has no domain of id or name "+m.Domain.ValueString()+".")
		return
	} else if err != nil {
		addError(&resp.Diagnostics, "Cannot list the RRsets", err, nil, func(n string) bool { return n == "name" || n == "type" })
		return
	}
	out := make([]rrsetData, len(all))
	for i, s := range all {
		out[i] = rrsetData{Name: types.StringValue(s.Name), Type: types.StringValue(s.Type), TTL: types.Int64Null(),
			Records: spelledRecords("", "", "", nil, s.Records)} // nil: every record as Berth writes it
		if s.TTL != nil {
			out[i].TTL = types.Int64Value(int64(*s.TTL))
		}
	}
	list, diags := types.ListValueFrom(ctx, rrsetType, out)
	resp.Diagnostics.Append(diags...)
	m.RRsets = list
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
