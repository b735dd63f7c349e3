package tfprovider

import (
	"context"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

type projectModel struct {
	recordFields
	Name types.String `tfsdk:"name"`
}

func newProjectResource() resource.Resource {
	return &record[api.Project, projectModel]{
		base: base{name: "project"},
		what: "project",
		desc: "A project: a folder of servers. A rename changes it in place. Deleting it leaves its servers running, " +
			"in no project.",
		attrs: map[string]schema.Attribute{
			"name": schema.StringAttribute{MarkdownDescription: "The project's name, 1 to 64 characters, unique in the account.",
				Required: true},
		},
		list: (*client.Client).ListProjects,
		create: func(c *client.Client, ctx context.Context, m *projectModel) (*api.Project, error) {
			return c.CreateProject(ctx, api.ProjectWrite{Name: m.Name.ValueStringPointer()})
		},
		update: func(c *client.Client, ctx context.Context, id int64, m *projectModel) (*api.Project, error) {
			return c.UpdateProject(ctx, id, api.ProjectWrite{Name: m.Name.ValueStringPointer()})
		},
		delete:  (*client.Client).DeleteProject,
		key:     func(p api.Project) (int64, string) { return p.ID, p.Name },
		fill:    func(m *projectModel, p *api.Project) { m.Name = trimmed(m.Name, p.Name) },
		common:  func(m *projectModel) *recordFields { return &m.recordFields },
		created: func(p *api.Project) time.Time { return p.CreatedAt },
	}
}

type recipeModel struct {
	recordFields
	Name   types.String `tfsdk:"name"`
	Script types.String `tfsdk:"script"`
}

func newRecipeResource() resource.Resource {
	return &record[api.Recipe, recipeModel]{
		base: base{name: "recipe"},
		what: "recipe",
		desc: "A recipe: a shell script a server runs once, at its first boot (see `berth_server.recipe_id`). " +
			"Name and script change in place; servers already ordered keep what they ran. Needs the token scope `recipes`.",
		attrs: map[string]schema.Attribute{
			"name":   schema.StringAttribute{MarkdownDescription: "The recipe's name.", Required: true},
			"script": schema.StringAttribute{MarkdownDescription: "The script, at most 64 KiB.", Required: true},
		},
		list: (*client.Client).ListRecipes,
		create: func(c *client.Client, ctx context.Context, m *recipeModel) (*api.Recipe, error) {
			return c.CreateRecipe(ctx, api.RecipeWrite{Name: m.Name.ValueStringPointer(), Script: m.Script.ValueStringPointer()})
		},
		update: func(c *client.Client, ctx context.Context, id int64, m *recipeModel) (*api.Recipe, error) {
			return c.UpdateRecipe(ctx, id, api.RecipeWrite{Name: m.Name.ValueStringPointer(), Script: m.Script.ValueStringPointer()})
		},
		delete: (*client.Client).DeleteRecipe,
		key:    func(r api.Recipe) (int64, string) { return r.ID, r.Name },
		fill: func(m *recipeModel, r *api.Recipe) {
			m.Name, m.Script = trimmed(m.Name, r.Name), types.StringValue(r.Script)
		},
		common:  func(m *recipeModel) *recordFields { return &m.recordFields },
		created: func(r *api.Recipe) time.Time { return r.CreatedAt },
	}
}

type sshKeyModel struct {
	recordFields
	Name        types.String `tfsdk:"name"`
	PublicKey   types.String `tfsdk:"public_key"`
	Fingerprint types.String `tfsdk:"fingerprint"`
}

func newSSHKeyResource() resource.Resource {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	return &record[api.SSHKey, sshKeyModel]{
		base: base{name: "ssh_key"},
		what: "SSH key",
		desc: "An SSH public key of the account, for `berth_server.ssh_key_ids`. Berth cannot change a key, so a change " +
			"of its name or of the key replaces it; servers already ordered keep the key they got. Needs the token scope `ssh-keys`.",
		attrs: map[string]schema.Attribute{
			"name": schema.StringAttribute{MarkdownDescription: "The key's label, 1 to 64 characters.", Required: true,
				PlanModifiers: replace},
			"public_key": schema.StringAttribute{MarkdownDescription: "The public key in OpenSSH's format (ed25519, ecdsa, " +
				"or rsa of at least 2048 bits), e.g. `file(\"~/.ssh/id_ed25519.pub\")`. An account holds a key once. Only the " +
				"key counts (its type and base64 part): another comment or other whitespace, such as the line end `file()` " +
				"reads, is no change, and the state keeps the spelling it has (after an import, Berth's).",
				Required: true, PlanModifiers: []planmodifier.String{keepSameKey{}, stringplanmodifier.RequiresReplace()}},
			"fingerprint": schema.StringAttribute{MarkdownDescription: "The key's SHA256 fingerprint (`SHA256:...`).",
				Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		},
		list: (*client.Client).ListSSHKeys,
		create: func(c *client.Client, ctx context.Context, m *sshKeyModel) (*api.SSHKey, error) {
			return c.CreateSSHKey(ctx, api.SSHKeyCreate{Name: m.Name.ValueStringPointer(), PublicKey: m.PublicKey.ValueStringPointer()})
		},
		delete: (*client.Client).DeleteSSHKey,
		key:    func(k api.SSHKey) (int64, string) { return k.ID, k.Name },
		fill: func(m *sshKeyModel, k *api.SSHKey) {
			m.Name, m.Fingerprint = trimmed(m.Name, k.Name), types.StringValue(k.Fingerprint)
			// Berth keeps the key normalised (one space between its parts, no
			// trailing newline); the configuration's or state's spelling of the
			// same key stays (sameKey).
			if !sameKey(m.PublicKey.ValueString(), k.PublicKey) {
				m.PublicKey = types.StringValue(k.PublicKey)
			}
		},
		common:  func(m *sshKeyModel) *recordFields { return &m.recordFields },
		created: func(k *api.SSHKey) time.Time { return k.CreatedAt },
	}
}

// trimmed is a name as Berth keeps it (without surrounding spaces), or as the
// configuration spells it when that differs only by those.
func trimmed(cur types.String, name string) types.String {
	if strings.TrimSpace(cur.ValueString()) == name && !cur.IsUnknown() && !cur.IsNull() {
		return cur
	}
	return types.StringValue(name)
}
