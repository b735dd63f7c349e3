package tfprovider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// Default timeouts of a server's changes (the timeouts block overrides them).
const (
	serverCreateTimeout = 20 * time.Minute
	serverUpdateTimeout = 20 * time.Minute
	serverDeleteTimeout = 10 * time.Minute
)

type serverResource struct{ base }

func newServerResource() resource.Resource { return &serverResource{base{name: "server"}} }

var (
	_ resource.ResourceWithConfigure        = (*serverResource)(nil)
	_ resource.ResourceWithImportState      = (*serverResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*serverResource)(nil)
	_ resource.ResourceWithConfigValidators = (*serverResource)(nil)
)

type serverModel struct {
	serverFields
	RootPassword   types.String   `tfsdk:"root_password"`
	UpgradeDisk    types.Bool     `tfsdk:"upgrade_disk"`
	AllowReinstall types.Bool     `tfsdk:"allow_reinstall"`
	Licenses       types.Set      `tfsdk:"licenses"`
	Timeouts       timeouts.Value `tfsdk:"timeouts"`
}

// serverOrderFields maps the order's and the changes' request fields to attributes.
var serverOrderFields = fields{"plan_id": "plan", "location_id": "location", "image_id": "image", "app_id": "app",
	"action": "power_state", "license_ids": "licenses", "license_id": "licenses"}

func (r *serverResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	d := serverDescriptions
	computed := func(name string) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: d[name], Computed: true,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	}
	computedInt := func(name string) schema.Int64Attribute {
		return schema.Int64Attribute{MarkdownDescription: d[name], Computed: true,
			PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}}
	}
	replaces := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A virtual server. Creating it orders the server and waits until it runs; " +
			"a change waits for the operations it needs; destroying it deletes the server and its snapshots.\n\n" +
			"Changing `plan` rescales the same server: Berth rescales only a stopped server, so a running one is " +
			"shut down (ACPI, forced off when the guest ignores it), rescaled and started again. " +
			"A plan whose disk is smaller than the server's is an error at plan time. " +
			"`display_name`, `project_id`, `power_state` and `licenses` change in place. Changing `image` reinstalls the server " +
			"in place when `allow_reinstall` is true (its disk is wiped), and replaces it otherwise. " +
			"Changing `location`, `app`, `ssh_key_ids`, `recipe_id` or `root_password` replaces the server.\n\n" +
			"A change met by a busy server (409) waits for the operation that holds it and is sent again; " +
			"a 429 or 503 is retried after its Retry-After.",
		Attributes: map[string]schema.Attribute{
			"id":   computed("id"),
			"name": computed("name"),
			"display_name": schema.StringAttribute{MarkdownDescription: d["display_name"], Optional: true, Computed: true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"location": schema.StringAttribute{MarkdownDescription: d["location"] + " Changing it replaces the server.", Required: true},
			"plan": schema.StringAttribute{MarkdownDescription: d["plan"] + " Changing it rescales the server in place " +
				"(stopping it for the rescale if it runs).", Required: true},
			"image": schema.StringAttribute{MarkdownDescription: d["image"] + " Exactly one of `image` and `app` is set. " +
				"Changing it reinstalls the server when `allow_reinstall` is true, else replaces it.", Optional: true},
			"app":        schema.StringAttribute{MarkdownDescription: d["app"] + " Changing it replaces the server.", Optional: true},
			"project_id": schema.StringAttribute{MarkdownDescription: d["project_id"] + " Changes in place.", Optional: true},
			"ssh_key_ids": schema.SetAttribute{MarkdownDescription: d["ssh_key_ids"] + " Changing them replaces the server.",
				ElementType: types.StringType, Optional: true,
				PlanModifiers: []planmodifier.Set{setplanmodifier.RequiresReplace()}},
			"recipe_id": schema.StringAttribute{MarkdownDescription: d["recipe_id"] + " Changing it replaces the server.",
				Optional: true, PlanModifiers: replaces},
			"root_password": schema.StringAttribute{MarkdownDescription: "The root password set at the first boot, 8 to 72 " +
				"characters. Berth never shows it again, so it is not read back: an import leaves it null. OpenTofu 1.10 " +
				"has no write-only attributes, so the value is kept in the state, marked sensitive. " +
				"Changing it replaces the server.", Optional: true, Sensitive: true, PlanModifiers: replaces},
			"upgrade_disk": schema.BoolAttribute{MarkdownDescription: "Whether a rescale to a plan with a larger disk " +
				"grows the disk too (it can never shrink again). Default false: the disk stays, so a later move back to " +
				"a smaller plan remains possible.", Optional: true, Computed: true, Default: booldefault.StaticBool(false)},
			"allow_reinstall": schema.BoolAttribute{MarkdownDescription: "Whether a change of `image` reinstalls the " +
				"server in place (wiping its disk) rather than replacing it with a new server. Default false.",
				Optional: true, Computed: true, Default: booldefault.StaticBool(false)},
			"power_state": schema.StringAttribute{MarkdownDescription: d["power_state"] + " When set, Berth is asked to " +
				"start or stop the server to match (a stop is an ACPI shutdown, forced off when the guest ignores it); " +
				"when unset, it shows the server's state. Default at creation: `running`.",
				Optional: true, Computed: true,
				Validators:    []validator.String{stringvalidator.OneOf(powerRunning, powerStopped)},
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"licenses": schema.SetAttribute{MarkdownDescription: licensesDescription, ElementType: types.Int64Type,
				Optional: true, Computed: true, PlanModifiers: []planmodifier.Set{setplanmodifier.UseStateForUnknown()}},
			"status":     computed("status"),
			"ipv4":       computed("ipv4"),
			"ipv6":       computed("ipv6"),
			"vcpus":      computedInt("vcpus"),
			"memory_mb":  computedInt("memory_mb"),
			"disk_gb":    computedInt("disk_gb"),
			"created_at": computed("created_at"),
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

func (r *serverResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{resourcevalidator.ExactlyOneOf(path.MatchRoot("image"), path.MatchRoot("app"))}
}

// known reports whether v is a value known now.
func known(v types.String) bool { return !v.IsNull() && !v.IsUnknown() }

// resolved are the ids a configuration names; zero where a value is unknown or
// unset.
type resolved struct {
	loc              api.Location
	plan, image, app int64
	planName         string
}

// resolve looks up the location, plan, image and app of m in the catalog, adding an
// error on the attribute of each that Berth does not offer.
func resolve(ctx context.Context, k *catalog, m *serverModel, lang string, diags *diag.Diagnostics) resolved {
	var out resolved
	report := func(attr string, err error) bool {
		if err == nil {
			return true
		}
		var no *notOffered
		if errors.As(err, &no) {
			diags.AddAttributeError(path.Root(attr), "Not offered by Berth", no.msg(lang))
		} else {
			diags.AddError("Cannot read Berth's catalog", describeError(err))
		}
		return false
	}
	if known(m.App) {
		a, err := k.app(ctx, m.App.ValueString())
		if report("app", err) {
			out.app = a.ID
		}
	}
	if !known(m.Location) {
		return out
	}
	loc, err := k.location(ctx, m.Location.ValueString())
	if !report("location", err) {
		return out
	}
	out.loc = loc
	if known(m.Plan) {
		p, err := plan(loc, m.Plan.ValueString())
		if report("plan", err) {
			out.plan, out.planName = p.ID, p.Name
		}
	}
	if known(m.Image) {
		im, err := image(loc, m.Image.ValueString())
		if report("image", err) {
			out.image = im.ID
		}
	}
	return out
}

// ModifyPlan checks names against the catalog (an unknown name is an error that lists
// what the location offers), says which changes replace the server (comparing ids, so
// that a name and its id are the same), checks that a new plan can take the server's
// disk, and marks what an update will change as unknown.
func (r *serverResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.c == nil {
		return
	}
	var m serverModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	k := newCatalog(r.c)
	want := resolve(ctx, k, &m, r.lang, &resp.Diagnostics)
	var licenses types.Set
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("licenses"), &licenses)...)
	checkLicenses(ctx, k, licenses, r.lang, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || req.State.Raw.IsNull() {
		return
	}
	var prior serverModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	srv, err := r.c.GetServer(ctx, prior.ID.ValueString())
	if isNotFound(err) {
		return // gone: the refresh has planned its creation
	} else if err != nil {
		resp.Diagnostics.AddError("Cannot read the server", describeError(err))
		return
	}
	replace := func(attr string) { resp.RequiresReplace = append(resp.RequiresReplace, path.Root(attr)) }
	if m.Location.IsUnknown() || want.loc.ID != srv.LocationID {
		replace("location")
	}
	if m.App.IsUnknown() || want.app != ptrValue(srv.AppID) {
		replace("app")
	}
	var unknown []string
	reinstall := false
	if m.Image.IsUnknown() || want.image != 0 && srv.AppID == nil && want.image != srv.ImageID {
		if m.AllowReinstall.ValueBool() {
			unknown = append(unknown, "status")
			reinstall = true
		} else {
			replace("image")
		}
	}
	planLicenses(ctx, r.c, k, req, resp, prior.Licenses, srv, reinstall)
	if !m.PowerState.Equal(prior.PowerState) {
		unknown = append(unknown, "status")
	}
	if m.Plan.IsUnknown() || want.plan != srv.PlanID {
		if want.plan != 0 {
			r.checkRescale(ctx, srv, want, &resp.Diagnostics)
		}
		unknown = append(unknown, "status")
		for _, a := range []string{"vcpus", "memory_mb", "disk_gb"} {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(a), types.Int64Unknown())...)
		}
	}
	for _, a := range unknown {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(a), types.StringUnknown())...)
	}
}

func ptrValue(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// checkRescale fails the plan when the server cannot move to the plan wanted: its
// disk is smaller than the server's, or it is out of stock.
func (r *serverResource) checkRescale(ctx context.Context, srv *api.Server, want resolved, diags *diag.Diagnostics) {
	opts, err := r.c.ListRescaleOptions(ctx, srv.Name)
	if err != nil {
		diags.AddError("Cannot read the server's rescale options", describeError(err))
		return
	}
	var fits []string
	var target *api.RescaleOption
	for i, o := range opts {
		if o.ID == want.plan {
			target = &opts[i]
		}
		if o.DiskOK && o.InStock {
			fits = append(fits, o.Name)
		}
	}
	args := map[string]any{"server": srv.Name, "disk": srv.DiskGB, "location": want.loc.Name, "plan": want.planName,
		"fits": strings.Join(fits, ", ")}
	if len(fits) == 0 {
		args["fits"] = message(r.lang, "terraform.nothing", nil)
	}
	id := ""
	switch {
	case target == nil:
		id = "terraform.rescale_unknown"
	case !target.DiskOK:
		id, args["plan_disk"] = "terraform.rescale_disk", target.DiskGB
	case !target.InStock:
		id = "terraform.rescale_stock"
	default:
		return
	}
	diags.AddAttributeError(path.Root("plan"), "Cannot rescale the server", message(r.lang, id, args))
}

func (r *serverResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m serverModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	ctx, cancel := within(ctx, m.Timeouts.Create, serverCreateTimeout, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	k := newCatalog(r.c)
	want := resolve(ctx, k, &m, r.lang, &resp.Diagnostics)
	order := api.ServerCreate{PlanID: &want.plan, LocationID: &want.loc.ID}
	if want.app != 0 {
		order.AppID = &want.app
	} else {
		order.ImageID = &want.image
	}
	if known(m.DisplayName) {
		order.DisplayName = m.DisplayName.ValueStringPointer()
	}
	if known(m.ProjectID) {
		order.ProjectID = api.Some(parseID(m.ProjectID, path.Root("project_id"), &resp.Diagnostics))
	}
	if known(m.RecipeID) {
		order.RecipeID = client.Ptr(parseID(m.RecipeID, path.Root("recipe_id"), &resp.Diagnostics))
	}
	if known(m.RootPassword) {
		order.RootPassword = m.RootPassword.ValueStringPointer()
	}
	for _, e := range m.SSHKeyIDs.Elements() {
		if s, ok := e.(types.String); ok {
			order.SSHKeyIDs = append(order.SSHKeyIDs, parseID(s, path.Root("ssh_key_ids"), &resp.Diagnostics))
		}
	}
	if ids, ok := int64s(m.Licenses); ok && len(ids) > 0 {
		order.LicenseIDs = ids
	}
	if resp.Diagnostics.HasError() {
		return
	}
	srv, err := r.c.CreateServer(ctx, order)
	if err != nil {
		addError(&resp.Diagnostics, "Cannot order the server", err, serverOrderFields, r.hasAttr)
		return
	}
	// From here on the server exists: a failure leaves it in the state, tainted, so
	// that the next apply replaces it.
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), idString(srv.ID))...)
	recordLicenses(ctx, resp.Private, m.Licenses, &resp.Diagnostics)
	name := srv.Name
	srv, err = r.c.WaitServer(ctx, name, "running")
	if err == nil && m.PowerState.ValueString() == powerStopped {
		srv, err = powerTo(ctx, r.c, name, powerStopped)
	}
	if srv != nil {
		r.save(ctx, k, &m, srv, &resp.State, &resp.Diagnostics)
	}
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("The server %s did not become %s", name, orDefault(m.PowerState.ValueString(), powerRunning)),
			describeError(err))
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// hasAttr reports whether the schema has an attribute of the API field's name.
func (r *serverResource) hasAttr(name string) bool {
	_, ok := serverDescriptions[name]
	return ok || name == "root_password"
}

// save fills m from srv and the licenses it holds (m's set kept where it differs
// only by licenses the image requires: spellLicenses) and writes it to the state.
func (r *serverResource) save(ctx context.Context, k *catalog, m *serverModel, srv *api.Server, state stateSetter, diags *diag.Diagnostics) {
	if err := m.fill(ctx, k, srv); err != nil {
		diags.AddError("Cannot read Berth's catalog", describeError(err))
		return
	}
	held, err := heldLicenses(ctx, r.c, srv.Name)
	if err != nil {
		diags.AddError("Cannot read the server's licenses", describeError(err))
		return
	}
	if m.Licenses, err = spellLicenses(ctx, k, m.Licenses, held, srv.ImageID); err != nil {
		diags.AddError("Cannot read Berth's catalog", describeError(err))
		return
	}
	if m.UpgradeDisk.IsNull() || m.UpgradeDisk.IsUnknown() {
		m.UpgradeDisk = types.BoolValue(false)
	}
	if m.AllowReinstall.IsNull() || m.AllowReinstall.IsUnknown() {
		m.AllowReinstall = types.BoolValue(false)
	}
	diags.Append(state.Set(ctx, m)...)
}

// stateSetter is a state the model is written to (tfsdk.State).
type stateSetter interface {
	Set(ctx context.Context, val any) diag.Diagnostics
}

func (r *serverResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m serverModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	srv, err := r.c.GetServer(ctx, m.ID.ValueString())
	if isNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	} else if err != nil {
		resp.Diagnostics.AddError("Cannot read the server", describeError(err))
		return
	}
	r.save(ctx, newCatalog(r.c), &m, srv, &resp.State, &resp.Diagnostics)
}

func (r *serverResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m, prior serverModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	ctx, cancel := within(ctx, m.Timeouts.Update, serverUpdateTimeout, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	k := newCatalog(r.c)
	want := resolve(ctx, k, &m, r.lang, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	srv, err := r.c.GetServer(ctx, prior.ID.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the server", describeError(err))
		return
	}
	name := srv.Name
	fail := func(what string, err error) {
		addError(&resp.Diagnostics, what, err, serverOrderFields, r.hasAttr)
		// What was done is done: the state shows the server as it now is.
		if now, err := r.c.GetServer(ctx, name); err == nil {
			r.save(ctx, k, &prior, now, &resp.State, &resp.Diagnostics)
		}
	}

	var patch api.ServerUpdate
	if known(m.DisplayName) && !m.DisplayName.Equal(prior.DisplayName) {
		patch.DisplayName = m.DisplayName.ValueStringPointer()
	}
	if !m.ProjectID.Equal(prior.ProjectID) {
		if m.ProjectID.IsNull() {
			patch.ProjectID = api.Null[int64]()
		} else {
			patch.ProjectID = api.Some(parseID(m.ProjectID, path.Root("project_id"), &resp.Diagnostics))
		}
	}
	if patch.DisplayName != nil || patch.ProjectID.Set {
		if srv, err = r.c.UpdateServer(ctx, name, patch); err != nil {
			fail("Cannot change the server", err)
			return
		}
	}
	image := srv.ImageID
	if want.image != 0 && srv.AppID == nil && want.image != srv.ImageID {
		if srv, err = act(ctx, r.c, func() (*api.Server, error) { return r.c.ReinstallServer(ctx, name, want.image) }); err != nil {
			fail("Cannot reinstall the server", err)
			return
		}
		image = want.image // srv is as the reinstall's start answered, maybe with the image before
	}
	// The licenses after the reinstall, which has changed those the image requires.
	var licenses types.Set
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("licenses"), &licenses)...)
	if ids, ok := int64s(m.Licenses); ok && !licenses.IsNull() {
		configured := configuredLicenses(ctx, req.Private, &resp.Diagnostics)
		if what, err := syncLicenses(ctx, r.c, k, name, image, ids, configured); err != nil {
			fail(what, err)
			return
		}
	}
	recordLicenses(ctx, resp.Private, licenses, &resp.Diagnostics)
	if want.plan != 0 && want.plan != srv.PlanID {
		if _, err = powerTo(ctx, r.c, name, powerStopped); err != nil {
			fail("Cannot stop the server for its rescale", err)
			return
		}
		req := api.RescaleRequest{PlanID: &want.plan, UpgradeDisk: m.UpgradeDisk.ValueBoolPointer()}
		if _, err = act(ctx, r.c, func() (*api.Server, error) { return r.c.RescaleServer(ctx, name, req) }); err != nil {
			fail("Cannot rescale the server", err)
			return
		}
	}
	if srv, err = powerTo(ctx, r.c, name, orDefault(m.PowerState.ValueString(), powerState(srv.Status))); err != nil {
		fail("Cannot power the server", err)
		return
	}
	r.save(ctx, k, &m, srv, &resp.State, &resp.Diagnostics)
}

func (r *serverResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m serverModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	ctx, cancel := within(ctx, m.Timeouts.Delete, serverDeleteTimeout, &resp.Diagnostics)
	defer cancel()
	if resp.Diagnostics.HasError() {
		return
	}
	err := r.c.RetryBusy(ctx, func() error { return r.c.DeleteServer(ctx, m.ID.ValueString()) })
	if err != nil && !isNotFound(err) {
		resp.Diagnostics.AddError("Cannot delete the server", describeError(err))
	}
}

// ImportState takes a server's id or name.
func (r *serverResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	srv, err := r.c.GetServer(ctx, req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Cannot import the server "+req.ID, describeError(err))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), idString(srv.ID))...)
}

// act starts an operation on a server (waiting out a busy server) and waits for it
// to end; it returns the server as the start answered it.
func act(ctx context.Context, c *client.Client, start func() (*api.Server, error)) (*api.Server, error) {
	var srv *api.Server
	err := c.RetryBusy(ctx, func() error {
		var err error
		srv, err = start()
		return err
	})
	if err != nil {
		return nil, err
	}
	if srv.Operation != nil {
		if _, err := c.WaitOperation(ctx, srv.Operation.ID); err != nil {
			return srv, err
		}
	}
	return srv, nil
}

// powerTo brings a server to the power state want and returns it as it then is. It
// first waits for an operation in progress (whoever started it). A stop is an ACPI
// shutdown, then, when the guest ignores it (Berth ends the shutdown in error after
// its timeout), a forced power-off.
func powerTo(ctx context.Context, c *client.Client, name, want string) (*api.Server, error) {
	for misfits := 0; ; {
		srv, err := c.GetServer(ctx, name)
		if err != nil {
			return nil, err
		}
		if srv.Operation != nil {
			if _, err := c.WaitOperation(ctx, srv.Operation.ID); err != nil && !errors.Is(err, client.ErrOperationFailed) {
				return nil, err
			}
			continue
		}
		var action string
		switch {
		case want == powerRunning && srv.Status == "stopped":
			action = client.PowerOn
		case want == powerStopped && srv.Status == "running":
			action = client.PowerShutdown
		case powerState(srv.Status) == want:
			return srv, nil
		default:
			return srv, fmt.Errorf("server %s is %s: no power action makes it %s", name, srv.Status, want)
		}
		_, err = act(ctx, c, func() (*api.Server, error) { return c.PowerServer(ctx, name, action) })
		if errors.Is(err, client.ErrOperationFailed) && action == client.PowerShutdown {
			_, err = act(ctx, c, func() (*api.Server, error) { return c.PowerServer(ctx, name, client.PowerOff) })
		}
		if errors.Is(err, client.ErrValidation) && misfits < 3 {
			misfits++ // the action no longer fit: the server changed meanwhile
		} else if err != nil {
			return nil, err
		}
		// Done, or changed meanwhile: look again.
	}
}
