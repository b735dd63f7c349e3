package tfprovider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/api"
)

// Power states of the attribute power_state.
const (
	powerRunning = "running"
	powerStopped = "stopped"
)

// serverFields are what Berth says of a server, as the resource berth_server and the
// data sources berth_server and berth_servers show it.
type serverFields struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	DisplayName types.String `tfsdk:"display_name"`
	Location    types.String `tfsdk:"location"`
	Plan        types.String `tfsdk:"plan"`
	Image       types.String `tfsdk:"image"`
	App         types.String `tfsdk:"app"`
	ProjectID   types.String `tfsdk:"project_id"`
	SSHKeyIDs   types.Set    `tfsdk:"ssh_key_ids"`
	RecipeID    types.String `tfsdk:"recipe_id"`
	PowerState  types.String `tfsdk:"power_state"`
	Status      types.String `tfsdk:"status"`
	IPv4        types.String `tfsdk:"ipv4"`
	IPv6        types.String `tfsdk:"ipv6"`
	VCPUs       types.Int64  `tfsdk:"vcpus"`
	MemoryMB    types.Int64  `tfsdk:"memory_mb"`
	DiskGB      types.Int64  `tfsdk:"disk_gb"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

// serverFieldsType is serverFields as an object type, for berth_servers' list.
var serverFieldsType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"id": types.StringType, "name": types.StringType, "display_name": types.StringType, "location": types.StringType,
	"plan": types.StringType, "image": types.StringType, "app": types.StringType, "project_id": types.StringType,
	"ssh_key_ids": types.SetType{ElemType: types.StringType}, "recipe_id": types.StringType,
	"power_state": types.StringType, "status": types.StringType, "ipv4": types.StringType, "ipv6": types.StringType,
	"vcpus": types.Int64Type, "memory_mb": types.Int64Type, "disk_gb": types.Int64Type, "created_at": types.StringType,
}}

// serverDescriptions describe serverFields' attributes, for every schema that shows
// them.
var serverDescriptions = map[string]string{
	"id":           "The server's numeric id, as a string.",
	"name":         "The server's name, `server-` and six characters, given by Berth and never reused.",
	"display_name": "A label of up to 64 characters (default: the name).",
	"location":     "The location, by name (e.g. `fsn1`) or id.",
	"plan":         "The plan (size), by name or id, among those the location offers.",
	"image":        "The operating-system image, by name or id, among those the location offers.",
	"app":          "A one-click app, by name or id: it is installed on the location's Ubuntu image.",
	"project_id":   "The id of the project (server folder) the server is in; null when it is in none.",
	"ssh_key_ids":  "The ids of the SSH keys installed for root at the first boot.",
	"recipe_id":    "The id of the recipe (a first-boot script) run at the first boot.",
	"power_state":  "`running` or `stopped`.",
	"status": "The server's status: `provisioning`, `running`, `starting`, `stopping`, `stopped`, " +
		"`reinstalling`, `rescaling`, `restoring`, `suspended` or `error`.",
	"ipv4":       "The public IPv4 address.",
	"ipv6":       "The public IPv6 address.",
	"vcpus":      "Virtual CPUs.",
	"memory_mb":  "Memory in MB.",
	"disk_gb":    "Disk in GB (it may be larger than the plan's after a rescale that kept the disk).",
	"created_at": "When the server was ordered (RFC 3339).",
}

// powerState is the power_state a status stands for: running while the server is up
// or coming up, stopped otherwise.
func powerState(status string) string {
	switch status {
	case "running", "starting", "provisioning", "reinstalling", "restoring":
		return powerRunning
	}
	return powerStopped
}

// fill sets f from srv. Location, plan, image and app keep the spelling f already has
// (a name or an id) when it names the same thing, else become names; an empty list of
// SSH keys stays as f has it (null or empty).
func (f *serverFields) fill(ctx context.Context, k *catalog, srv *api.Server) error {
	n, err := k.serverNames(ctx, srv)
	if err != nil {
		return err
	}
	f.ID, f.Name, f.DisplayName = idString(srv.ID), types.StringValue(srv.Name), types.StringValue(srv.DisplayName)
	f.Location = spelled(f.Location, srv.LocationID, n.location)
	f.Plan = spelled(f.Plan, srv.PlanID, n.plan)
	if srv.AppID != nil {
		f.App, f.Image = spelled(f.App, *srv.AppID, n.app), types.StringNull()
	} else {
		f.Image, f.App = spelled(f.Image, srv.ImageID, n.image), types.StringNull()
	}
	f.ProjectID, f.RecipeID = optionalID(srv.ProjectID), optionalID(srv.RecipeID)
	switch {
	case len(srv.SSHKeyIDs) > 0:
		ids := make([]attr.Value, len(srv.SSHKeyIDs))
		for i, id := range srv.SSHKeyIDs {
			ids[i] = idString(id)
		}
		f.SSHKeyIDs = types.SetValueMust(types.StringType, ids)
	case f.SSHKeyIDs.IsNull() || f.SSHKeyIDs.IsUnknown() || len(f.SSHKeyIDs.Elements()) > 0:
		f.SSHKeyIDs = types.SetNull(types.StringType)
	}
	f.PowerState, f.Status = types.StringValue(powerState(srv.Status)), types.StringValue(srv.Status)
	f.IPv4, f.IPv6 = types.StringPointerValue(srv.IPv4), types.StringPointerValue(srv.IPv6)
	f.VCPUs, f.MemoryMB, f.DiskGB = types.Int64Value(int64(srv.VCPUs)), types.Int64Value(int64(srv.MemoryMB)), types.Int64Value(int64(srv.DiskGB))
	f.CreatedAt = types.StringValue(srv.CreatedAt.UTC().Format(time.RFC3339))
	return nil
}
