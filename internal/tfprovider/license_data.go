package tfprovider

import (
	"context"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The data source berth_license: a license product of the catalog.

type licenseModel struct {
	ID           types.String `tfsdk:"id"`
	Name         types.String `tfsdk:"name"`
	Vendor       types.String `tfsdk:"vendor"`
	Per          types.String `tfsdk:"per"`
	PriceMonthly types.String `tfsdk:"price_monthly"`
	ImageIDs     types.Set    `tfsdk:"image_ids"`
	InStock      types.Bool   `tfsdk:"in_stock"`
}

// licenseDataSource is a lookup of the catalog given by id or by name.
type licenseDataSource struct{ lookup[licenseModel] }

var _ datasource.DataSourceWithConfigValidators = (*licenseDataSource)(nil)

func (d *licenseDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{datasourcevalidator.ExactlyOneOf(path.MatchRoot("id"), path.MatchRoot("name"))}
}

func newLicenseDataSource() datasource.DataSource {
	return &licenseDataSource{lookup[licenseModel]{
		dataBase: dataBase{base{name: "license"}},
		desc: "A software license product Berth sells with servers (`licenses` of `berth_server`), by id or name. " +
			"It is billed by the calendar month: its month is charged when a server starts holding it and on the first " +
			"of each month while held, never refunded.",
		attrs: map[string]schema.Attribute{
			"id": schema.StringAttribute{MarkdownDescription: "The license's id; give it or `name`.",
				Optional: true, Computed: true},
			"name": schema.StringAttribute{MarkdownDescription: "The license's name (e.g. `plesk-web-admin`); give it or `id`.",
				Optional: true, Computed: true},
			"vendor": computedString("Who makes the software (e.g. `Microsoft`)."),
			"per": computedString("What `price_monthly` is for: `server` (a server's month) or `vcpu` (a month of one of " +
				"the server's vCPUs: a server pays it times its vCPUs)."),
			"price_monthly": computedString("The price of a month, a decimal string (`\"11.4900\"`)."),
			"image_ids": schema.SetAttribute{MarkdownDescription: "The ids of the images that require it: Berth adds it " +
				"itself to a server of one of them (at the order and at a reinstall).", ElementType: types.StringType, Computed: true},
			"in_stock": schema.BoolAttribute{MarkdownDescription: "Whether a server can have it now (false when its " +
				"operator's pool of license keys is empty).", Computed: true},
		},
		find: readLicense,
	}}
}

// readLicense fills the license m names (by id or by name; each also takes the
// other, as the catalog's lookups do) from the catalog.
func readLicense(ctx context.Context, k *catalog, m *licenseModel) error {
	at, s := "name", m.Name.ValueString()
	if !m.ID.IsNull() {
		at, s = "id", m.ID.ValueString()
	}
	l, err := k.license(ctx, s)
	if err != nil {
		return onAttr(err, at)
	}
	ids := make([]attr.Value, 0, len(l.ImageIDs))
	for _, id := range slices.Sorted(slices.Values(l.ImageIDs)) {
		ids = append(ids, idString(id))
	}
	// The attribute given stays as configured, the other is filled.
	if at == "name" {
		m.ID = idString(l.ID)
	} else {
		m.Name = types.StringValue(l.Name)
	}
	m.Vendor, m.Per = types.StringValue(l.Vendor), types.StringValue(l.Per)
	m.PriceMonthly, m.InStock = types.StringValue(l.PriceMonthly), types.BoolValue(l.InStock)
	m.ImageIDs = types.SetValueMust(types.StringType, ids)
	return nil
}
