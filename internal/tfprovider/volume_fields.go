package tfprovider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// volumeFields are what Berth says of a volume (docs/api.md, Volumes), as the
// resource berth_volume and the data source berth_volume show it.
type volumeFields struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	SizeGB      types.Int64  `tfsdk:"size_gb"`
	Location    types.String `tfsdk:"location"`
	ServerID    types.String `tfsdk:"server_id"`
	ProjectID   types.String `tfsdk:"project_id"`
	Format      types.String `tfsdk:"format"`
	Status      types.String `tfsdk:"status"`
	LinuxDevice types.String `tfsdk:"linux_device"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

// volumeDescriptions describe volumeFields' attributes, for every schema that shows
// them.
var volumeDescriptions = map[string]string{
	"id": "The volume's numeric id, as a string.",
	"name": "The volume's name: 1 to 64 of `a-z`, `0-9` and `-`, starting with a letter or digit, not digits only, " +
		"unique among the account's volumes.",
	"size_gb":    "The size in GB, 10 to 10240.",
	"location":   "The location, by name (e.g. `fsn1`) or id; it must sell volumes (its `volume_price_gb_hour` is set).",
	"server_id":  "The id of the server the volume is attached to; null when it is detached.",
	"project_id": "The id of the project the volume is in; null when it is in none.",
	"format":     "The filesystem made on the volume when it was created, `ext4` or `xfs`; null for a blank volume.",
	"status": "`creating`, then `available`; `error` when Berth could not make it (its first hour is refunded; " +
		"destroy it).",
	"linux_device": "Its path inside the guest, `/dev/disk/by-id/scsi-0BERTH_Volume_<id>`.",
	"created_at":   "When the volume was created (RFC 3339).",
}

// fill sets f from v. The location keeps the spelling f already has (a name or an
// id) when it names the same one, else becomes its name.
func (f *volumeFields) fill(ctx context.Context, k *catalog, v *api.Volume) error {
	loc, err := k.locationByID(ctx, v.LocationID)
	if err != nil {
		return err
	}
	f.ID, f.Name, f.SizeGB = idString(v.ID), types.StringValue(v.Name), types.Int64Value(int64(v.SizeGB))
	f.Location = spelled(f.Location, v.LocationID, loc.Name)
	f.ServerID, f.ProjectID = optionalID(v.ServerID), optionalID(v.ProjectID)
	f.Format, f.Status = types.StringPointerValue(v.Format), types.StringValue(v.Status)
	f.LinuxDevice = types.StringValue(v.LinuxDevice)
	f.CreatedAt = types.StringValue(v.CreatedAt.UTC().Format(time.RFC3339))
	return nil
}

// newVolumeDataSource is the data source berth_volume: a volume by id or by name.
func newVolumeDataSource() datasource.DataSource {
	attrs := map[string]schema.Attribute{
		"size_gb": schema.Int64Attribute{MarkdownDescription: volumeDescriptions["size_gb"], Computed: true},
	}
	for _, n := range []string{"location", "server_id", "project_id", "format", "status", "linux_device", "created_at"} {
		attrs[n] = computedString(volumeDescriptions[n])
	}
	return &byIDOrName[api.Volume, volumeFields]{
		dataBase: dataBase{base{name: "volume"}},
		what:     "volume",
		desc:     "A volume of the account, by id or by name, with the server it is attached to.",
		attrs:    attrs,
		get: func(ctx context.Context, c *client.Client, id, name string) (*api.Volume, error) {
			v, err := c.GetVolume(ctx, id+name)
			if isNotFound(err) {
				return nil, nil
			}
			return v, err
		},
		fill: func(ctx context.Context, c *client.Client, m *volumeFields, v *api.Volume) error {
			return m.fill(ctx, newCatalog(c), v)
		},
		idName: func(m *volumeFields) (*types.String, *types.String) { return &m.ID, &m.Name },
	}
}
