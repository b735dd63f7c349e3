package tfprovider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// Default timeouts of a volume's changes (the timeouts block overrides them). A
// detach from a running guest may take the guest's 60 s and more (docs/api.md,
// Volumes).
const (
	volumeCreateTimeout = 10 * time.Minute
	volumeUpdateTimeout = 10 * time.Minute
	volumeDeleteTimeout = 10 * time.Minute
)

type volumeResource struct{ base }

func newVolumeResource() resource.Resource { return &volumeResource{base{name: "volume"}} }

var (
	_ resource.ResourceWithConfigure        = (*volumeResource)(nil)
	_ resource.ResourceWithImportState      = (*volumeResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*volumeResource)(nil)
	_ resource.ResourceWithConfigValidators = (*volumeResource)(nil)
)

type volumeModel struct {
	volumeFields
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}

// volumeRequestFields maps the API's request fields to attributes where their names
// differ.
var volumeRequestFields = fields{"location_id": "location"}

func (r *volumeResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	d := volumeDescriptions
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A block volume (docs/api.md, Volumes): storage kept in a location and attached to at most " +
			"one server there. Creating it waits until it is available; destroying it detaches it if it is attached " +
			"and deletes it with its data.\n\n" +
			"`name` and `project_id` change in place; a larger `size_gb` grows the volume in place (the filesystem on it " +
			"is not grown: `resize2fs` or `xfs_growfs` in the guest does that), and a smaller one is an error at plan " +
			"time: a volume never shrinks and is never replaced for its size. Changing `location` or `format` replaces " +
			"the volume, and its data is lost.\n\n" +
			"Attach it with `server_id` here, or with `berth_volume_attachment` (which can automount it), not both. " +
			"A change met by a busy volume or server (409) waits for the operation that holds it and is sent again. " +
			"Needs the token scope `storage`.",
		Attributes: map[string]schema.Attribute{
			"id":      schema.StringAttribute{MarkdownDescription: d["id"], Computed: true, PlanModifiers: keep},
			"name":    schema.StringAttribute{MarkdownDescription: d["name"] + " Changes in place.", Required: true},
			"size_gb": schema.Int64Attribute{MarkdownDescription: d["size_gb"] + " Grows in place; never shrinks.", Required: true},
			"location": schema.StringAttribute{MarkdownDescription: d["location"] + " Give it or `server_id` (then the " +
				"server's location). Changing it replaces the volume.", Optional: true, Computed: true, PlanModifiers: keep},
			"server_id": schema.StringAttribute{MarkdownDescription: "The id of the server to make the volume on, in its " +
				"location, attached once made. Set, Terraform keeps the volume attached there: a detachment outside " +
				"Terraform is undone by the next apply, and a change detaches it and attaches it to the new server, in " +
				"place. Unset, it shows the server the volume is attached to (by `berth_volume_attachment`, say), or null.",
				Optional: true, Computed: true},
			"project_id": schema.StringAttribute{MarkdownDescription: d["project_id"] + " Changes in place.", Optional: true},
			"format": schema.StringAttribute{MarkdownDescription: "The filesystem to make on the volume, `ext4` or `xfs`; " +
				"unset, the volume is blank. Changing it replaces the volume.", Optional: true,
				Validators:    []validator.String{stringvalidator.OneOf("ext4", "xfs")},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			"status":       schema.StringAttribute{MarkdownDescription: d["status"], Computed: true},
			"linux_device": schema.StringAttribute{MarkdownDescription: d["linux_device"], Computed: true, PlanModifiers: keep},
			"created_at":   schema.StringAttribute{MarkdownDescription: d["created_at"], Computed: true, PlanModifiers: keep},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

func (r *volumeResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{resourcevalidator.AtLeastOneOf(path.MatchRoot("location"), path.MatchRoot("server_id"))}
}

// hasAttr reports whether the schema has an attribute of the API field's name.
func (r *volumeResource) hasAttr(name string) bool {
	_, ok := volumeDescriptions[name]
	return ok
}

// location resolves the configuration's location (a name or an id), adding an error
// on the attribute when Berth does not offer it; zero when it is unset or unknown.
func (r *volumeResource) location(ctx context.Context, k *catalog, v types.String, diags *diag.Diagnostics) api.Location {
	if !known(v) {
		return api.Location{}
	}
	loc, err := k.location(ctx, v.ValueString())
	var no *notOffered
	switch {
	case errors.As(err, &no):
		diags.AddAttributeError(path.Root("location"), "Not offered by Berth", no.msg(r.lang))
	case err != nil:
		diags.AddError("Cannot read Berth's catalog", describeError(err))
	}
	return loc
}

// ModifyPlan checks the location against the catalog, replaces the volume when its
// location changes (comparing ids: a name and its id are the same), and fails a
// plan that would shrink it, against its size in Berth.
func (r *volumeResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.c == nil {
		return
	}
	var m, prior volumeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	want := r.location(ctx, newCatalog(r.c), m.Location, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || req.State.Raw.IsNull() {
		return
	}
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	vol, err := r.c.GetVolume(ctx, prior.ID.ValueString())
	if isNotFound(err) {
		return // gone: the refresh has planned its creation
	} else if err != nil {
		resp.Diagnostics.AddError("Cannot read the volume", describeError(err))
		return
	}
	if m.Location.IsUnknown() || known(m.Location) && want.ID != vol.LocationID {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("location"))
		return
	}
	if !m.Format.Equal(prior.Format) {
		return // replaced: a new volume of any size
	}
	if known := !m.SizeGB.IsUnknown() && !m.SizeGB.IsNull(); known && m.SizeGB.ValueInt64() < int64(vol.SizeGB) {
		resp.Diagnostics.AddAttributeError(path.Root("size_gb"), "Cannot shrink the volume "+vol.Name,
			message(r.lang, "validation.volume_grow_only", map[string]any{"size": vol.SizeGB}))
	}
}

// save fills m from vol and writes it to the state.
func (r *volumeResource) save(ctx context.Context, m *volumeModel, vol *api.Volume, state stateSetter, diags *diag.Diagnostics) {
	if err := m.fill(ctx, newCatalog(r.c), vol); err != nil {
		diags.AddError("Cannot read Berth's catalog", describeError(err))
		return
	}
	diags.Append(state.Set(ctx, m)...)
}

func (r *volumeResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m volumeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	ctx, cancel := within(ctx, m.Timeouts.Create, volumeCreateTimeout, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	order := api.VolumeCreate{Name: m.Name.ValueStringPointer(), SizeGB: m.SizeGB.ValueInt64Pointer(), Format: m.Format.ValueStringPointer()}
	if loc := r.location(ctx, newCatalog(r.c), m.Location, &resp.Diagnostics); loc.ID != 0 {
		order.LocationID = &loc.ID
	}
	if known(m.ServerID) {
		order.ServerID = client.Ptr(parseID(m.ServerID, path.Root("server_id"), &resp.Diagnostics))
	}
	if known(m.ProjectID) {
		order.ProjectID = api.Some(parseID(m.ProjectID, path.Root("project_id"), &resp.Diagnostics))
	}
	if resp.Diagnostics.HasError() {
		return
	}
	vol, err := volumeAct(ctx, r.c, func() (*api.Volume, error) { return r.c.CreateVolume(ctx, order) })
	if vol == nil {
		addError(&resp.Diagnostics, "Cannot create the volume", err, volumeRequestFields, r.hasAttr)
		return
	}
	// From here on the volume exists: a failure leaves it in the state, tainted, so
	// that the next apply replaces it.
	r.save(ctx, &m, vol, &resp.State, &resp.Diagnostics)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("The volume %s did not become available", vol.Name), describeError(err))
	}
}

func (r *volumeResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m volumeModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	vol, err := r.c.GetVolume(ctx, m.ID.ValueString())
	if isNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	} else if err != nil {
		resp.Diagnostics.AddError("Cannot read the volume", describeError(err))
		return
	}
	r.save(ctx, &m, vol, &resp.State, &resp.Diagnostics)
}

func (r *volumeResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m, prior volumeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	ctx, cancel := within(ctx, m.Timeouts.Update, volumeUpdateTimeout, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	id := prior.ID.ValueString()
	what, err := r.change(ctx, id, &m, &prior, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	vol, gerr := r.c.GetVolume(ctx, id)
	if err != nil {
		addError(&resp.Diagnostics, what, err, volumeRequestFields, r.hasAttr)
		// What was done is done: the state shows the volume as it now is.
		if gerr == nil {
			r.save(ctx, &prior, vol, &resp.State, &resp.Diagnostics)
		}
		return
	}
	if gerr != nil {
		resp.Diagnostics.AddError("Cannot read the volume", describeError(gerr))
		return
	}
	r.save(ctx, &m, vol, &resp.State, &resp.Diagnostics)
}

// change makes the volume id what m plans, from prior: its name and project, its
// size, its server. It returns what failed ("Cannot grow the volume") with the error.
func (r *volumeResource) change(ctx context.Context, id string, m, prior *volumeModel, diags *diag.Diagnostics) (string, error) {
	var patch api.VolumeUpdate
	if !m.Name.Equal(prior.Name) {
		patch.Name = m.Name.ValueStringPointer()
	}
	if !m.ProjectID.Equal(prior.ProjectID) {
		if m.ProjectID.IsNull() {
			patch.ProjectID = api.Null[int64]()
		} else {
			patch.ProjectID = api.Some(parseID(m.ProjectID, path.Root("project_id"), diags))
		}
	}
	var server int64
	if known(m.ServerID) {
		server = parseID(m.ServerID, path.Root("server_id"), diags)
	}
	if diags.HasError() {
		return "", nil
	}
	if patch.Name != nil || patch.ProjectID.Set {
		if _, err := r.c.UpdateVolume(ctx, id, patch); err != nil {
			return "Cannot change the volume", err
		}
	}
	vol, err := r.c.GetVolume(ctx, id)
	if err != nil {
		return "Cannot read the volume", err
	}
	if size := m.SizeGB.ValueInt64(); size > int64(vol.SizeGB) {
		if _, err := volumeAct(ctx, r.c, func() (*api.Volume, error) { return r.c.ResizeVolume(ctx, id, size) }); err != nil {
			return "Cannot grow the volume", err
		}
	}
	if server != 0 && (vol.ServerID == nil || *vol.ServerID != server) {
		return "Cannot attach the volume to server " + m.ServerID.ValueString(), moveVolume(ctx, r.c, vol, server, false)
	}
	return "", nil
}

func (r *volumeResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m volumeModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	ctx, cancel := within(ctx, m.Timeouts.Delete, volumeDeleteTimeout, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	id := m.ID.ValueString()
	vol, err := r.c.GetVolume(ctx, id)
	if err == nil && vol.Operation != nil {
		// Whatever holds it first (however that ends: it may be a detach).
		if _, err = r.c.WaitOperation(ctx, vol.Operation.ID); err == nil || errors.Is(err, client.ErrOperationFailed) {
			vol, err = r.c.GetVolume(ctx, id)
		}
	}
	if err == nil && vol.ServerID != nil {
		_, err = volumeAct(ctx, r.c, func() (*api.Volume, error) { return r.c.DetachVolume(ctx, id) })
		if err != nil {
			resp.Diagnostics.AddError("Cannot detach the volume to delete it", describeError(err))
			return
		}
	}
	if err == nil {
		err = r.c.RetryBusy(ctx, func() error { return r.c.DeleteVolume(ctx, id) })
	}
	if err != nil && !isNotFound(err) {
		resp.Diagnostics.AddError("Cannot delete the volume", describeError(err))
	}
}

// ImportState takes a volume's id or name.
func (r *volumeResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	vol, err := r.c.GetVolume(ctx, req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Cannot import the volume "+req.ID, describeError(err))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), idString(vol.ID))...)
}

// volumeAct starts a volume's operation (waiting out a busy volume or server, 409),
// waits for it to end, and returns the volume as it then is. A volume that was
// changed comes back (nil only when start failed) with the operation's failure, if
// it failed.
func volumeAct(ctx context.Context, c *client.Client, start func() (*api.Volume, error)) (*api.Volume, error) {
	var vol *api.Volume
	err := c.RetryBusy(ctx, func() error {
		var err error
		vol, err = start()
		return err
	})
	if err != nil {
		return nil, err
	}
	var opErr error
	if vol.Operation != nil {
		if _, opErr = c.WaitOperation(ctx, vol.Operation.ID); opErr != nil && !errors.Is(opErr, client.ErrOperationFailed) {
			return vol, opErr
		}
	}
	now, err := c.GetVolume(ctx, client.ID(vol.ID))
	if err != nil {
		return vol, err
	}
	return now, opErr
}

// moveVolume attaches vol to server (with automount), detaching it first from the
// server it is attached to, if any.
func moveVolume(ctx context.Context, c *client.Client, vol *api.Volume, server int64, automount bool) error {
	id := client.ID(vol.ID)
	if vol.ServerID != nil {
		if _, err := volumeAct(ctx, c, func() (*api.Volume, error) { return c.DetachVolume(ctx, id) }); err != nil {
			return err
		}
	}
	_, err := volumeAct(ctx, c, func() (*api.Volume, error) { return c.AttachVolume(ctx, id, server, automount) })
	return err
}
