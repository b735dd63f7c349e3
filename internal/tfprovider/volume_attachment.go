package tfprovider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

type volumeAttachmentResource struct{ base }

func newVolumeAttachmentResource() resource.Resource {
	return &volumeAttachmentResource{base{name: "volume_attachment"}}
}

var (
	_ resource.ResourceWithConfigure   = (*volumeAttachmentResource)(nil)
	_ resource.ResourceWithImportState = (*volumeAttachmentResource)(nil)
)

type volumeAttachmentModel struct {
	ID        types.String   `tfsdk:"id"`
	VolumeID  types.String   `tfsdk:"volume_id"`
	ServerID  types.String   `tfsdk:"server_id"`
	Automount types.Bool     `tfsdk:"automount"`
	Timeouts  timeouts.Value `tfsdk:"timeouts"`
}

// attachmentID is an attachment's id: "<volume id>/<server id>".
func attachmentID(volume, server int64) types.String {
	return types.StringValue(fmt.Sprintf("%d/%d", volume, server))
}

func (r *volumeAttachmentResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A volume attached to a server of its location, running (the guest sees the disk at once) " +
			"or stopped (at its next boot); a server takes up to 16 volumes. Creating it attaches the volume, destroying " +
			"it detaches it: from a running server the guest must release the disk within 60 s, else the detachment " +
			"fails and the volume stays attached (Berth never pulls a disk from under a guest). A volume detached or " +
			"deleted outside Terraform is attached again by the next apply. Any change replaces the attachment (a " +
			"detachment, then an attachment; the volume's data stays). Leave the volume's `server_id` unset. " +
			"Needs the token scope `storage`.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{MarkdownDescription: "`<volume id>/<server id>`.", Computed: true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"volume_id": schema.StringAttribute{MarkdownDescription: "The id of the volume (`berth_volume.<name>.id`).",
				Required: true, PlanModifiers: replace},
			"server_id": schema.StringAttribute{MarkdownDescription: "The id of the server, in the volume's location.",
				Required: true, PlanModifiers: replace},
			"automount": schema.BoolAttribute{MarkdownDescription: "Whether the guest mounts the volume at " +
				"`/mnt/volume-<id>` (it must have a `format`). Default false. Berth does not show it afterwards: an " +
				"imported attachment takes the configuration's without a change in Berth; after that a change replaces it.",
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.RequiresReplaceIf(knownBefore,
					"A change replaces the attachment, unless it was imported.", "A change replaces the attachment, unless it was imported.")}},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Delete: true}),
		},
	}
}

// knownBefore asks for a replacement when the state knew the value: an imported
// attachment's automount is null, as Berth does not show it.
func knownBefore(_ context.Context, req planmodifier.BoolRequest, resp *boolplanmodifier.RequiresReplaceIfFuncResponse) {
	resp.RequiresReplace = !req.StateValue.IsNull()
}

// ids are the attachment's volume and server ids, as m has them.
func (m *volumeAttachmentModel) ids(diags *diag.Diagnostics) (volume, server int64) {
	return parseID(m.VolumeID, path.Root("volume_id"), diags), parseID(m.ServerID, path.Root("server_id"), diags)
}

func (r *volumeAttachmentResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m volumeAttachmentModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	ctx, cancel := within(ctx, m.Timeouts.Create, volumeCreateTimeout, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	volume, server := m.ids(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	_, err := volumeAct(ctx, r.c, func() (*api.Volume, error) {
		return r.c.AttachVolume(ctx, client.ID(volume), server, m.Automount.ValueBool())
	})
	if err != nil {
		addError(&resp.Diagnostics, "Cannot attach the volume", err, fields{"volume": "volume_id"},
			func(f string) bool { return f == "server_id" || f == "automount" })
		return
	}
	m.ID = attachmentID(volume, server)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// attached is the volume when it is attached to server; nil when it is not, or gone.
func (r *volumeAttachmentResource) attached(ctx context.Context, volume, server int64) (*api.Volume, error) {
	vol, err := r.c.GetVolume(ctx, client.ID(volume))
	if isNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if vol.ServerID == nil || *vol.ServerID != server {
		return nil, nil
	}
	return vol, nil
}

func (r *volumeAttachmentResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m volumeAttachmentModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	volume, server := m.ids(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	vol, err := r.attached(ctx, volume, server)
	switch {
	case err != nil:
		resp.Diagnostics.AddError("Cannot read the volume", describeError(err))
	case vol == nil:
		resp.State.RemoveResource(ctx)
	default:
		m.ID = attachmentID(volume, server)
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}

// Update has nothing to change in Berth (every argument replaces the attachment, but
// an imported one's automount): it keeps the plan.
func (r *volumeAttachmentResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m volumeAttachmentModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *volumeAttachmentResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m volumeAttachmentModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	ctx, cancel := within(ctx, m.Timeouts.Delete, volumeDeleteTimeout, &resp.Diagnostics)
	defer cancel()
	volume, server := m.ids(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	vol, err := r.attached(ctx, volume, server)
	if err == nil && vol != nil {
		_, err = volumeAct(ctx, r.c, func() (*api.Volume, error) { return r.c.DetachVolume(ctx, client.ID(volume)) })
		if errors.Is(err, client.ErrValidation) {
			err = nil // attached when the check ran, detached since (the one 422 of a detach)
		}
	}
	if err != nil && !isNotFound(err) {
		resp.Diagnostics.AddError("Cannot detach the volume", describeError(err))
	}
}

// ImportState takes "<volume>/<server>" (each by id or name) or the volume alone (by
// id or name: the server it is attached to).
func (r *volumeAttachmentResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	fail := func(detail string) { resp.Diagnostics.AddError("Cannot import the volume attachment "+req.ID, detail) }
	volume, server, hasServer := strings.Cut(req.ID, "/")
	vol, err := r.c.GetVolume(ctx, volume)
	if err != nil {
		fail(describeError(err))
		return
	}
	if vol.ServerID == nil {
		fail(fmt.Sprintf("Volume %s is not attached to a server.", vol.Name))
		return
	}
	if hasServer {
		srv, err := r.c.GetServer(ctx, server)
		if err != nil {
			fail(describeError(err))
			return
		}
		if srv.ID != *vol.ServerID {
			fail(fmt.Sprintf("Volume %s is attached to server %d, not to %s.", vol.Name, *vol.ServerID, srv.Name))
			return
		}
	}
	for attr, v := range map[string]types.String{"id": attachmentID(vol.ID, *vol.ServerID),
		"volume_id": idString(vol.ID), "server_id": idString(*vol.ServerID)} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attr), v)...)
	}
}
