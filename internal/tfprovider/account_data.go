package tfprovider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// The account's data sources: berth_ssh_key, berth_project, berth_server,
// berth_servers, berth_account.

// byIDOrName is a data source of one record of the account, found by its id or its
// name (exactly one of them given).
type byIDOrName[T, M any] struct {
	dataBase
	what, desc string
	attrs      map[string]schema.Attribute // beside id and name
	// get finds the record of id or name (one of them empty); nil when there is none.
	get  func(ctx context.Context, c *client.Client, id, name string) (*T, error)
	fill func(ctx context.Context, c *client.Client, m *M, v *T) error
	// idName are the model's id and name.
	idName func(m *M) (id, name *types.String)
}

var _ datasource.DataSourceWithConfigValidators = (*byIDOrName[struct{}, struct{}])(nil)

func (d *byIDOrName[T, M]) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{MarkdownDescription: d.desc, Attributes: with(d.attrs, map[string]schema.Attribute{
		"id": schema.StringAttribute{MarkdownDescription: "The " + d.what + "'s id; give it or `name`.",
			Optional: true, Computed: true},
		"name": schema.StringAttribute{MarkdownDescription: "The " + d.what + "'s name; give it or `id`.",
			Optional: true, Computed: true},
	})}
}

func (d *byIDOrName[T, M]) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{datasourcevalidator.ExactlyOneOf(path.MatchRoot("id"), path.MatchRoot("name"))}
}

func (d *byIDOrName[T, M]) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m M
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, name := d.idName(&m)
	v, err := d.get(ctx, d.c, id.ValueString(), name.ValueString())
	if err == nil && v == nil {
		at, val := "name", name.ValueString()
		if !id.IsNull() {
			at, val = "id", id.ValueString()
		}
		resp.Diagnostics.AddAttributeError(path.Root(at), "No such "+d.what,
			fmt.Sprintf("The account has no %s of %s %q.", d.what, at, val))
		return
	}
	if err == nil {
		err = d.fill(ctx, d.c, &m, v)
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the "+d.what, describeError(err))
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// fromList finds a record in a whole list by its id or its name.
func fromList[T any](list func(*client.Client, context.Context) ([]T, error), key func(T) (int64, string)) func(context.Context, *client.Client, string, string) (*T, error) {
	return func(ctx context.Context, c *client.Client, id, name string) (*T, error) {
		all, err := list(c, ctx)
		if err != nil {
			return nil, err
		}
		for i, v := range all {
			vid, vname := key(v)
			if id != "" && fmt.Sprint(vid) == id || id == "" && vname == name {
				return &all[i], nil
			}
		}
		return nil, nil
	}
}

func computedString(desc string) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Computed: true}
}

func rfc3339(t time.Time) types.String { return types.StringValue(t.UTC().Format(time.RFC3339)) }

type sshKeyDataModel struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	PublicKey   types.String `tfsdk:"public_key"`
	Fingerprint types.String `tfsdk:"fingerprint"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

func newSSHKeyDataSource() datasource.DataSource {
	return &byIDOrName[api.SSHKey, sshKeyDataModel]{
		dataBase: dataBase{base{name: "ssh_key"}},
		what:     "SSH key",
		desc:     "An SSH key of the account, by id or name.",
		attrs: map[string]schema.Attribute{
			"public_key":  computedString("The public key, in OpenSSH's format."),
			"fingerprint": computedString("Its SHA256 fingerprint."),
			"created_at":  computedString("When it was added (RFC 3339)."),
		},
		get: fromList((*client.Client).ListSSHKeys, func(k api.SSHKey) (int64, string) { return k.ID, k.Name }),
		fill: func(_ context.Context, _ *client.Client, m *sshKeyDataModel, k *api.SSHKey) error {
			m.ID, m.Name, m.PublicKey = idString(k.ID), types.StringValue(k.Name), types.StringValue(k.PublicKey)
			m.Fingerprint, m.CreatedAt = types.StringValue(k.Fingerprint), rfc3339(k.CreatedAt)
			return nil
		},
		idName: func(m *sshKeyDataModel) (*types.String, *types.String) { return &m.ID, &m.Name },
	}
}

type projectDataModel struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	ServerCount types.Int64  `tfsdk:"server_count"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

func newProjectDataSource() datasource.DataSource {
	return &byIDOrName[api.Project, projectDataModel]{
		dataBase: dataBase{base{name: "project"}},
		what:     "project",
		desc:     "A project of the account, by id or name, with its number of servers.",
		attrs: map[string]schema.Attribute{
			"server_count": schema.Int64Attribute{MarkdownDescription: "How many servers it holds.", Computed: true},
			"created_at":   computedString("When it was created (RFC 3339)."),
		},
		get: fromList((*client.Client).ListProjects, func(p api.Project) (int64, string) { return p.ID, p.Name }),
		fill: func(_ context.Context, _ *client.Client, m *projectDataModel, p *api.Project) error {
			m.ID, m.Name, m.ServerCount = idString(p.ID), types.StringValue(p.Name), types.Int64Value(int64(p.ServerCount))
			m.CreatedAt = rfc3339(p.CreatedAt)
			return nil
		},
		idName: func(m *projectDataModel) (*types.String, *types.String) { return &m.ID, &m.Name },
	}
}

// serverDataAttrs are serverFields as computed attributes, beside those in skip.
func serverDataAttrs(skip ...string) map[string]schema.Attribute {
	attrs := map[string]schema.Attribute{}
	for name, desc := range serverDescriptions {
		attrs[name] = computedString(desc)
	}
	for _, n := range []string{"vcpus", "memory_mb", "disk_gb"} {
		attrs[n] = schema.Int64Attribute{MarkdownDescription: serverDescriptions[n], Computed: true}
	}
	attrs["ssh_key_ids"] = schema.SetAttribute{MarkdownDescription: serverDescriptions["ssh_key_ids"],
		ElementType: types.StringType, Computed: true}
	for _, n := range skip {
		delete(attrs, n)
	}
	return attrs
}

func newServerDataSource() datasource.DataSource {
	return &byIDOrName[api.Server, serverFields]{
		dataBase: dataBase{base{name: "server"}},
		what:     "server",
		desc:     "A server of the account, by id or by name (`server-xxxxxx`).",
		attrs:    serverDataAttrs("id", "name"),
		get: func(ctx context.Context, c *client.Client, id, name string) (*api.Server, error) {
			srv, err := c.GetServer(ctx, id+name)
			if isNotFound(err) {
				return nil, nil
			}
			return srv, err
		},
		fill: func(ctx context.Context, c *client.Client, m *serverFields, srv *api.Server) error {
			return m.fill(ctx, newCatalog(c), srv)
		},
		idName: func(m *serverFields) (*types.String, *types.String) { return &m.ID, &m.Name },
	}
}

type serversModel struct {
	ProjectID types.String `tfsdk:"project_id"`
	Servers   types.List   `tfsdk:"servers"`
}

type serversDataSource struct{ dataBase }

func newServersDataSource() datasource.DataSource {
	return &serversDataSource{dataBase{base{name: "servers"}}}
}

func (d *serversDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The account's servers in the order they were created: all of them, or those of a project.",
		Attributes: map[string]schema.Attribute{
			"project_id": schema.StringAttribute{MarkdownDescription: "Only the servers of this project.", Optional: true},
			"servers": schema.ListNestedAttribute{MarkdownDescription: "The servers.", Computed: true,
				NestedObject: schema.NestedAttributeObject{Attributes: serverDataAttrs()}},
		},
	}
}

func (d *serversDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m serversModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	var opts client.ServerListOptions
	if !m.ProjectID.IsNull() {
		opts.ProjectID = parseID(m.ProjectID, path.Root("project_id"), &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	all, err := d.c.ListServers(ctx, opts)
	if err != nil {
		resp.Diagnostics.AddError("Cannot list the servers", describeError(err))
		return
	}
	k := newCatalog(d.c)
	out := make([]serverFields, len(all))
	for i := range all {
		out[i].SSHKeyIDs = types.SetNull(types.StringType)
		if err := out[i].fill(ctx, k, &all[i]); err != nil {
			resp.Diagnostics.AddError("Cannot read Berth's catalog", describeError(err))
			return
		}
	}
	list, diags := types.ListValueFrom(ctx, serverFieldsType, out)
	resp.Diagnostics.Append(diags...)
	m.Servers = list
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

type accountModel struct {
	ID          types.String `tfsdk:"id"`
	Email       types.String `tfsdk:"email"`
	Name        types.String `tfsdk:"name"`
	Language    types.String `tfsdk:"language"`
	Currency    types.String `tfsdk:"currency"`
	Credit      types.String `tfsdk:"credit"`
	Scopes      types.Set    `tfsdk:"scopes"`
	HourlyBurn  types.String `tfsdk:"hourly_burn"`
	MonthlyBurn types.String `tfsdk:"monthly_burn"`
	DaysLeft    types.Int64  `tfsdk:"days_left"`
	MonthToDate types.String `tfsdk:"month_to_date"`
	Budget      types.String `tfsdk:"budget"`
}

type accountDataSource struct{ dataBase }

func newAccountDataSource() datasource.DataSource {
	return &accountDataSource{dataBase{base{name: "account"}}}
}

func (d *accountDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The account of the provider's token and its billing: credit, burn rate, days left. " +
			"Money is a decimal string with four decimals (`\"12.5000\"`) in the account's currency.",
		Attributes: map[string]schema.Attribute{
			"id":       computedString("The account's id."),
			"email":    computedString("Its email address."),
			"name":     computedString("Its holder's name."),
			"language": computedString("The language of Berth's messages to it: `en`, `de` or `fr`."),
			"currency": computedString("Its currency (e.g. `EUR`)."),
			"credit":   computedString("The credit left."),
			"scopes": schema.SetAttribute{MarkdownDescription: "The scopes of the provider's token.",
				ElementType: types.StringType, Computed: true},
			"hourly_burn":   computedString("What an hour costs now: the hourly prices of all that is billed."),
			"monthly_burn":  computedString("What this month costs at this burn, capped per server."),
			"days_left":     schema.Int64Attribute{MarkdownDescription: "Whole days the credit lasts at this burn; null when nothing is billed.", Computed: true},
			"month_to_date": computedString("What this month has cost so far."),
			"budget":        computedString("The monthly budget set in the console; null when none."),
		},
	}
}

func (d *accountDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	me, err := d.c.GetMe(ctx)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the account", describeError(err))
		return
	}
	b, err := d.c.GetBilling(ctx)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the account's billing", describeError(err))
		return
	}
	scopes, diags := types.SetValueFrom(ctx, types.StringType, me.Scopes)
	resp.Diagnostics.Append(diags...)
	m := accountModel{ID: idString(me.ID), Email: types.StringValue(me.Email), Name: types.StringValue(me.Name),
		Language: types.StringValue(me.Language), Currency: types.StringValue(me.Currency), Credit: types.StringValue(b.Credit),
		Scopes: scopes, HourlyBurn: types.StringValue(b.HourlyBurn), MonthlyBurn: types.StringValue(b.MonthlyBurn),
		DaysLeft: types.Int64PointerValue(b.DaysLeft), MonthToDate: types.StringValue(b.MonthToDate),
		Budget: types.StringPointerValue(b.Budget)}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
