package tfprovider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/client"
)

// record is a resource Berth keeps as one flat record of the account, listed whole
// (GET /ssh-keys, /projects, /recipes) and read through that list: T is its API
// type, M its model. It is imported by id or by name.
type record[T, M any] struct {
	base
	what  string // "project", for messages
	desc  string
	attrs map[string]schema.Attribute // beside id and created_at
	// fm maps the API's request fields to attributes where their names differ.
	fm     fields
	list   func(c *client.Client, ctx context.Context) ([]T, error)
	create func(c *client.Client, ctx context.Context, m *M) (*T, error)
	// update changes a record in place (PATCH); nil when every change replaces it
	// (the attributes then carry RequiresReplace).
	update func(c *client.Client, ctx context.Context, id int64, m *M) (*T, error)
	delete func(c *client.Client, ctx context.Context, id int64) error
	key    func(T) (id int64, name string)
	// fill sets m from the record; id and created_at are set by the caller.
	fill   func(m *M, v *T)
	common func(m *M) *recordFields
	// created is the record's creation time.
	created func(v *T) time.Time
}

// recordFields are every record's id and creation time.
type recordFields struct {
	ID        types.String `tfsdk:"id"`
	CreatedAt types.String `tfsdk:"created_at"`
}

var (
	_ resource.ResourceWithConfigure   = (*record[struct{}, struct{}])(nil)
	_ resource.ResourceWithImportState = (*record[struct{}, struct{}])(nil)
)

func (r *record[T, M]) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	attrs := map[string]schema.Attribute{
		"id": schema.StringAttribute{MarkdownDescription: "The " + r.what + "'s numeric id, as a string.",
			Computed: true, PlanModifiers: keep},
		"created_at": schema.StringAttribute{MarkdownDescription: "When the " + r.what + " was created (RFC 3339).",
			Computed: true, PlanModifiers: keep},
	}
	for k, v := range r.attrs {
		attrs[k] = v
	}
	resp.Schema = schema.Schema{MarkdownDescription: r.desc, Attributes: attrs}
}

// set fills m from v.
func (r *record[T, M]) set(m *M, v *T) {
	r.fill(m, v)
	id, _ := r.key(*v)
	f := r.common(m)
	f.ID, f.CreatedAt = idString(id), types.StringValue(r.created(v).UTC().Format(time.RFC3339))
}

func (r *record[T, M]) hasAttr(name string) bool {
	_, ok := r.attrs[name]
	return ok
}

func (r *record[T, M]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m M
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	v, err := r.create(r.c, ctx, &m)
	if err != nil {
		addError(&resp.Diagnostics, "Cannot create the "+r.what, err, r.fm, r.hasAttr)
		return
	}
	r.set(&m, v)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// find is the record of id, nil when the account has none.
func (r *record[T, M]) find(ctx context.Context, match func(T) bool) (*T, error) {
	all, err := r.list(r.c, ctx)
	if err != nil {
		return nil, err
	}
	for i := range all {
		if match(all[i]) {
			return &all[i], nil
		}
	}
	return nil, nil
}

func (r *record[T, M]) byID(id int64) func(T) bool {
	return func(v T) bool { vid, _ := r.key(v); return vid == id }
}

func (r *record[T, M]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m M
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	id := parseID(r.common(&m).ID, path.Root("id"), &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	v, err := r.find(ctx, r.byID(id))
	switch {
	case err != nil:
		resp.Diagnostics.AddError("Cannot read the "+r.what, describeError(err))
	case v == nil:
		resp.State.RemoveResource(ctx)
	default:
		r.set(&m, v)
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}

func (r *record[T, M]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m, prior M
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	id := parseID(r.common(&prior).ID, path.Root("id"), &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.update == nil { // nothing changes in place (a change of a timeout, say)
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
		return
	}
	v, err := r.update(r.c, ctx, id, &m)
	if err != nil {
		addError(&resp.Diagnostics, "Cannot change the "+r.what, err, r.fm, r.hasAttr)
		return
	}
	r.set(&m, v)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *record[T, M]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m M
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	id := parseID(r.common(&m).ID, path.Root("id"), &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.delete(r.c, ctx, id); err != nil && !isNotFound(err) {
		resp.Diagnostics.AddError("Cannot delete the "+r.what, describeError(err))
	}
}

// ImportState takes the record's id or its name.
func (r *record[T, M]) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, byID := asID(req.ID)
	v, err := r.find(ctx, func(v T) bool {
		vid, name := r.key(v)
		return byID && vid == id || name == req.ID
	})
	switch {
	case err != nil:
		resp.Diagnostics.AddError("Cannot import the "+r.what+" "+req.ID, describeError(err))
	case v == nil:
		resp.Diagnostics.AddError("Cannot import the "+r.what+" "+req.ID,
			fmt.Sprintf("The account has no %s of id or name %q.", r.what, req.ID))
	default:
		vid, _ := r.key(*v)
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), idString(vid))...)
	}
}
