package tfprovider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

const (
	snapshotCreateTimeout = 20 * time.Minute
	snapshotDeleteTimeout = 10 * time.Minute
)

type snapshotResource struct{ base }

func newSnapshotResource() resource.Resource { return &snapshotResource{base{name: "snapshot"}} }

var (
	_ resource.ResourceWithConfigure   = (*snapshotResource)(nil)
	_ resource.ResourceWithImportState = (*snapshotResource)(nil)
)

type snapshotModel struct {
	ID            types.String   `tfsdk:"id"`
	ServerID      types.String   `tfsdk:"server_id"`
	Name          types.String   `tfsdk:"name"`
	IncludeMemory types.Bool     `tfsdk:"include_memory"`
	SizeGB        types.Int64    `tfsdk:"size_gb"`
	Status        types.String   `tfsdk:"status"`
	CreatedAt     types.String   `tfsdk:"created_at"`
	Timeouts      timeouts.Value `tfsdk:"timeouts"`
}

func (r *snapshotResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A snapshot of a server. Creating it waits until the snapshot is available (the server " +
			"is busy meanwhile); destroying it deletes the snapshot (when the server is busy, once its operation ends). " +
			"Berth bills stored snapshots hourly by size. Any change replaces it. Needs the token scope `snapshots`.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{MarkdownDescription: "The snapshot's numeric id, as a string.", Computed: true,
				PlanModifiers: keep},
			"server_id": schema.StringAttribute{MarkdownDescription: "The id of the server to snapshot.", Required: true,
				PlanModifiers: replace},
			"name": schema.StringAttribute{MarkdownDescription: "2 to 40 letters, digits, dashes and underscores, starting " +
				"with a letter, unique among the server's snapshots; the prefix `auto-` is reserved.", Required: true,
				PlanModifiers: replace},
			"include_memory": schema.BoolAttribute{MarkdownDescription: "Whether the snapshot holds the running memory too " +
				"(the server must be running); a restore of it resumes the guest where it was. Default false.",
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.RequiresReplace()}},
			"size_gb": schema.Int64Attribute{MarkdownDescription: "The snapshot's size in GB, as billed.", Computed: true,
				PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}},
			"status": schema.StringAttribute{MarkdownDescription: "`creating`, `available` or `deleting`.", Computed: true,
				PlanModifiers: keep},
			"created_at": schema.StringAttribute{MarkdownDescription: "When the snapshot was taken (RFC 3339).", Computed: true,
				PlanModifiers: keep},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Delete: true}),
		},
	}
}

// snapshot is the snapshot id of server, nil when there is none (also when the server
// is gone, or the snapshot is being deleted).
func (r *snapshotResource) snapshot(ctx context.Context, server string, id int64) (*api.Snapshot, error) {
	snaps, err := r.c.ListSnapshots(ctx, server)
	if isNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	for i, s := range snaps {
		if s.ID == id && s.Status != "deleting" {
			return &snaps[i], nil
		}
	}
	return nil, nil
}

func (m *snapshotModel) fill(s *api.Snapshot) {
	m.ID, m.ServerID, m.Name = idString(s.ID), idString(s.ServerID), types.StringValue(s.Name)
	m.IncludeMemory, m.SizeGB = types.BoolValue(s.IncludeMemory), types.Int64Value(int64(s.SizeGB))
	m.Status, m.CreatedAt = types.StringValue(s.Status), types.StringValue(s.CreatedAt.UTC().Format(time.RFC3339))
}

// settle waits for the operation in progress on server, if any; it reports the
// operation's failure.
func settle(ctx context.Context, c *client.Client, server string) error {
	srv, err := c.GetServer(ctx, server)
	if err != nil || srv.Operation == nil {
		return err
	}
	_, err = c.WaitOperation(ctx, srv.Operation.ID)
	return err
}

func (r *snapshotResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m snapshotModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	ctx, cancel := within(ctx, m.Timeouts.Create, snapshotCreateTimeout, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	server := m.ServerID.ValueString()
	var snap *api.Snapshot
	err := r.c.RetryBusy(ctx, func() error {
		var err error
		snap, err = r.c.CreateSnapshot(ctx, server, api.SnapshotCreate{Name: m.Name.ValueStringPointer(),
			IncludeMemory: m.IncludeMemory.ValueBoolPointer()})
		return err
	})
	if err != nil {
		addError(&resp.Diagnostics, "Cannot create the snapshot", err, fields{"server": "server_id"},
			func(f string) bool { return f == "name" || f == "include_memory" })
		return
	}
	m.fill(snap)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	// The server is busy with the snapshot until it is available.
	err = settle(ctx, r.c, server)
	if err == nil {
		if snap, err = r.snapshot(ctx, server, snap.ID); err == nil && snap == nil {
			err = fmt.Errorf("snapshot %s of server %s is gone", m.ID.ValueString(), server)
		}
	}
	if err != nil {
		resp.Diagnostics.AddError("The snapshot did not become available", describeError(err))
		return
	}
	m.fill(snap)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *snapshotResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m snapshotModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	id := parseID(m.ID, path.Root("id"), &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	snap, err := r.snapshot(ctx, m.ServerID.ValueString(), id)
	switch {
	case err != nil:
		resp.Diagnostics.AddError("Cannot read the snapshot", describeError(err))
	case snap == nil:
		resp.State.RemoveResource(ctx)
	default:
		m.fill(snap)
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}

// Update has nothing to change in Berth (every argument replaces the snapshot): it
// keeps a new timeouts block.
func (r *snapshotResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m snapshotModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *snapshotResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m snapshotModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	id := parseID(m.ID, path.Root("id"), &resp.Diagnostics)
	ctx, cancel := within(ctx, m.Timeouts.Delete, snapshotDeleteTimeout, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	server := m.ServerID.ValueString()
	del, err := r.c.DeleteSnapshot(ctx, server, id)
	if err == nil && del.Result == "scheduled" {
		// It is deleted when the server's operation ends.
		if err = settle(ctx, r.c, server); errors.Is(err, client.ErrOperationFailed) {
			err = nil
		}
	}
	if err != nil && !isNotFound(err) {
		resp.Diagnostics.AddError("Cannot delete the snapshot", describeError(err))
	}
}

// ImportState takes "<server>/<snapshot id>" (the server by id or name) or the
// snapshot's id alone (looked for among the account's servers).
func (r *snapshotResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	fail := func(detail string) { resp.Diagnostics.AddError("Cannot import the snapshot "+req.ID, detail) }
	server, snapID, hasServer := strings.Cut(req.ID, "/")
	if !hasServer {
		snapID = server
	}
	id, ok := asID(snapID)
	if !ok {
		fail("Give the snapshot's id, or the server's id or name and the snapshot's id as <server>/<snapshot id>.")
		return
	}
	servers := []string{server}
	if !hasServer {
		all, err := r.c.ListServers(ctx, client.ServerListOptions{})
		if err != nil {
			fail(describeError(err))
			return
		}
		servers = servers[:0]
		for _, s := range all {
			servers = append(servers, s.Name)
		}
	}
	for _, s := range servers {
		snap, err := r.snapshot(ctx, s, id)
		if err != nil {
			fail(describeError(err))
			return
		}
		if snap != nil {
			resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), idString(snap.ID))...)
			resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("server_id"), idString(snap.ServerID))...)
			return
		}
	}
	fail(fmt.Sprintf("No server of the account has a snapshot of id %d.", id))
}
