package tfprovider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/api"
)

// The catalog's data sources: berth_location, berth_plan, berth_image, berth_app.

type planFields struct {
	ID           types.String `tfsdk:"id"`
	Name         types.String `tfsdk:"name"`
	VCPUs        types.Int64  `tfsdk:"vcpus"`
	MemoryMB     types.Int64  `tfsdk:"memory_mb"`
	DiskGB       types.Int64  `tfsdk:"disk_gb"`
	PriceHourly  types.String `tfsdk:"price_hourly"`
	PriceMonthly types.String `tfsdk:"price_monthly"`
	InStock      types.Bool   `tfsdk:"in_stock"`
}

func planOf(p api.Plan) planFields {
	return planFields{ID: idString(p.ID), Name: types.StringValue(p.Name), VCPUs: types.Int64Value(int64(p.VCPUs)),
		MemoryMB: types.Int64Value(int64(p.MemoryMB)), DiskGB: types.Int64Value(int64(p.DiskGB)),
		PriceHourly: types.StringValue(p.PriceHourly), PriceMonthly: types.StringValue(p.PriceMonthly),
		InStock: types.BoolValue(p.InStock)}
}

var planAttrs = map[string]schema.Attribute{
	"id":            schema.StringAttribute{MarkdownDescription: "The plan's id.", Computed: true},
	"name":          schema.StringAttribute{MarkdownDescription: "The plan's name.", Computed: true},
	"vcpus":         schema.Int64Attribute{MarkdownDescription: "Virtual CPUs.", Computed: true},
	"memory_mb":     schema.Int64Attribute{MarkdownDescription: "Memory in MB.", Computed: true},
	"disk_gb":       schema.Int64Attribute{MarkdownDescription: "Disk in GB.", Computed: true},
	"price_hourly":  schema.StringAttribute{MarkdownDescription: "Price of an hour, a decimal string (`\"0.0100\"`).", Computed: true},
	"price_monthly": schema.StringAttribute{MarkdownDescription: "Most a month costs, a decimal string.", Computed: true},
	"in_stock":      schema.BoolAttribute{MarkdownDescription: "Whether the location can take one more server of the plan.", Computed: true},
}

var planType = types.ObjectType{AttrTypes: map[string]attr.Type{"id": types.StringType, "name": types.StringType,
	"vcpus": types.Int64Type, "memory_mb": types.Int64Type, "disk_gb": types.Int64Type, "price_hourly": types.StringType,
	"price_monthly": types.StringType, "in_stock": types.BoolType}}

type imageFields struct {
	ID      types.String `tfsdk:"id"`
	Name    types.String `tfsdk:"name"`
	OS      types.String `tfsdk:"os"`
	Version types.String `tfsdk:"version"`
}

func imageOf(im api.Image) imageFields {
	return imageFields{ID: idString(im.ID), Name: types.StringValue(im.Name), OS: types.StringValue(im.OS),
		Version: types.StringValue(im.Version)}
}

var imageAttrs = map[string]schema.Attribute{
	"id":      schema.StringAttribute{MarkdownDescription: "The image's id.", Computed: true},
	"name":    schema.StringAttribute{MarkdownDescription: "The image's name.", Computed: true},
	"os":      schema.StringAttribute{MarkdownDescription: "The operating system (e.g. `ubuntu`).", Computed: true},
	"version": schema.StringAttribute{MarkdownDescription: "Its version (e.g. `24.04`).", Computed: true},
}

var imageType = types.ObjectType{AttrTypes: map[string]attr.Type{"id": types.StringType, "name": types.StringType,
	"os": types.StringType, "version": types.StringType}}

// with returns attrs with extra added (extra wins).
func with(attrs map[string]schema.Attribute, extra map[string]schema.Attribute) map[string]schema.Attribute {
	out := make(map[string]schema.Attribute, len(attrs)+len(extra))
	for k, v := range attrs {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// lookup is a data source found by a name (or id) in the catalog: M is its model,
// find fills it from the name or reports notOffered.
type lookup[M any] struct {
	dataBase
	desc  string
	attrs map[string]schema.Attribute
	find  func(ctx context.Context, k *catalog, m *M) error
}

func (d *lookup[M]) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{MarkdownDescription: d.desc, Attributes: d.attrs}
}

func (d *lookup[M]) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m M
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := d.find(ctx, newCatalog(d.c), &m); err != nil {
		addLookupError(&resp.Diagnostics, d.lang, err)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// addLookupError adds a notOffered on the attribute it names (in lang), anything else
// as it is.
func addLookupError(diags *diag.Diagnostics, lang string, err error) {
	var no *notOffered
	if errors.As(err, &no) {
		diags.AddAttributeError(path.Root(no.attr), "Not offered by Berth", no.msg(lang))
		return
	}
	diags.AddError("Cannot read Berth's catalog", describeError(err))
}

var (
	nameArg     = schema.StringAttribute{MarkdownDescription: "The name (or id) to look up.", Required: true}
	locationArg = schema.StringAttribute{MarkdownDescription: "The location, by name or id.", Required: true}
)

type locationModel struct {
	ID                  types.String `tfsdk:"id"`
	Name                types.String `tfsdk:"name"`
	City                types.String `tfsdk:"city"`
	Country             types.String `tfsdk:"country"`
	SnapshotPriceGBHour types.String `tfsdk:"snapshot_price_gb_hour"`
	VolumePriceGBHour   types.String `tfsdk:"volume_price_gb_hour"`
	VolumePriceGBMonth  types.String `tfsdk:"volume_price_gb_month"`
	Plans               types.List   `tfsdk:"plans"`
	Images              types.List   `tfsdk:"images"`
}

func newLocationDataSource() datasource.DataSource {
	return &lookup[locationModel]{
		dataBase: dataBase{base{name: "location"}},
		desc:     "A location Berth offers, by name, with the plans and operating-system images it offers.",
		attrs: map[string]schema.Attribute{
			"name":    nameArg,
			"id":      schema.StringAttribute{MarkdownDescription: "The location's id.", Computed: true},
			"city":    schema.StringAttribute{MarkdownDescription: "Its city.", Computed: true},
			"country": schema.StringAttribute{MarkdownDescription: "Its country (ISO 3166 code).", Computed: true},
			"snapshot_price_gb_hour": schema.StringAttribute{MarkdownDescription: "The price of a GB of snapshot " +
				"stored for an hour, a decimal string.", Computed: true},
			"volume_price_gb_hour": schema.StringAttribute{MarkdownDescription: "The price of a GB of volume for an hour " +
				"(each started hour), a decimal string; null where the location sells no volumes.", Computed: true},
			"volume_price_gb_month": schema.StringAttribute{MarkdownDescription: "The most a GB of volume costs in a calendar " +
				"month, a decimal string; null where the location sells no volumes.", Computed: true},
			"plans": schema.ListNestedAttribute{MarkdownDescription: "The plans it offers.", Computed: true,
				NestedObject: schema.NestedAttributeObject{Attributes: planAttrs}},
			"images": schema.ListNestedAttribute{MarkdownDescription: "The operating-system images it offers.", Computed: true,
				NestedObject: schema.NestedAttributeObject{Attributes: imageAttrs}},
		},
		find: readLocation,
	}
}

// readLocation fills the location m names from the catalog: its prices as the API
// spells them (docs/api.md, Billing), the volume prices null where it sells none.
func readLocation(ctx context.Context, k *catalog, m *locationModel) error {
	loc, err := k.location(ctx, m.Name.ValueString())
	if err != nil {
		return onAttr(err, "name")
	}
	plans := make([]planFields, len(loc.Plans))
	for i, p := range loc.Plans {
		plans[i] = planOf(p)
	}
	images := make([]imageFields, len(loc.Images))
	for i, im := range loc.Images {
		images[i] = imageOf(im)
	}
	var diags diag.Diagnostics
	m.ID, m.City, m.Country = idString(loc.ID), types.StringValue(loc.City), types.StringValue(loc.Country)
	m.SnapshotPriceGBHour = types.StringValue(loc.SnapshotPriceGBHour)
	m.VolumePriceGBHour, m.VolumePriceGBMonth = types.StringPointerValue(loc.VolumePriceGBHour), types.StringPointerValue(loc.VolumePriceGBMonth)
	m.Plans, diags = types.ListValueFrom(ctx, planType, plans)
	if diags.HasError() {
		return errors.New(diags[0].Detail())
	}
	m.Images, diags = types.ListValueFrom(ctx, imageType, images)
	if diags.HasError() {
		return errors.New(diags[0].Detail())
	}
	return nil
}

type planModel struct {
	planFields
	Location types.String `tfsdk:"location"`
}

func newPlanDataSource() datasource.DataSource {
	return offered("plan", "A plan (server size) a location offers, by name.", planAttrs, plan,
		func(m *planModel) (*types.String, *types.String) { return &m.Location, &m.Name },
		func(m *planModel, p api.Plan) { m.planFields = planOf(p) })
}

type imageModel struct {
	imageFields
	Location types.String `tfsdk:"location"`
}

func newImageDataSource() datasource.DataSource {
	return offered("image", "An operating-system image a location offers, by name.", imageAttrs, image,
		func(m *imageModel) (*types.String, *types.String) { return &m.Location, &m.Name },
		func(m *imageModel, im api.Image) { m.imageFields = imageOf(im) })
}

// offered is the data source berth_<name> of an item a location offers, by its name
// or id: find looks it up in the location, at gives the model's location and name,
// set fills the model from the item (the name stays as configured).
func offered[T, M any](name, desc string, attrs map[string]schema.Attribute, find func(api.Location, string) (T, error),
	at func(*M) (loc, name *types.String), set func(*M, T)) datasource.DataSource {
	return &lookup[M]{
		dataBase: dataBase{base{name: name}},
		desc:     desc,
		attrs:    with(attrs, map[string]schema.Attribute{"location": locationArg, "name": nameArg}),
		find: func(ctx context.Context, k *catalog, m *M) error {
			loc, nm := at(m)
			v, err := inLocation(ctx, k, *loc, *nm, find)
			if err == nil {
				configured := *nm
				set(m, v)
				*nm = configured
			}
			return err
		},
	}
}

type appModel struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	Description types.String `tfsdk:"description"`
	Version     types.String `tfsdk:"version"`
}

func newAppDataSource() datasource.DataSource {
	return &lookup[appModel]{
		dataBase: dataBase{base{name: "app"}},
		desc:     "A one-click app, by name: `berth_server.app` installs it on the location's Ubuntu image.",
		attrs: map[string]schema.Attribute{
			"name":        nameArg,
			"id":          schema.StringAttribute{MarkdownDescription: "The app's id.", Computed: true},
			"description": schema.StringAttribute{MarkdownDescription: "What it is.", Computed: true},
			"version":     schema.StringAttribute{MarkdownDescription: "Its version.", Computed: true},
		},
		find: func(ctx context.Context, k *catalog, m *appModel) error {
			a, err := k.app(ctx, m.Name.ValueString())
			if err != nil {
				return onAttr(err, "name")
			}
			m.ID = idString(a.ID)
			m.Description, m.Version = types.StringValue(a.Description), types.StringValue(a.Version)
			return nil
		},
	}
}

// inLocation looks up the item named name (by lookup) in the location named loc; a
// name Berth does not have is a notOffered on the attribute that gave it.
func inLocation[T any](ctx context.Context, k *catalog, loc, name types.String, lookup func(api.Location, string) (T, error)) (T, error) {
	l, err := k.location(ctx, loc.ValueString())
	if err != nil {
		var zero T
		return zero, onAttr(err, "location")
	}
	v, err := lookup(l, name.ValueString())
	return v, onAttr(err, "name")
}

// onAttr places a notOffered on the attribute attr.
func onAttr(err error, attr string) error {
	var no *notOffered
	if errors.As(err, &no) {
		return &notOffered{id: no.id, args: no.args, attr: attr}
	}
	return err
}
