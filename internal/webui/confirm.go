package webui

import (
	"net/http"
	"slices"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

// A destructive action asks first, as a server's deletion always has (delete.html):
// its button on the page is a GET form that leads to a page saying what will be
// lost, and only that page's POST form acts; its Cancel goes back untouched. Without
// JavaScript it works the same. The actions that ask: a forced power-off and a
// reset, a reinstall, a snapshot's restore and deletion, an SSH key's deletion, a
// recipe's deletion, an API token's revocation, a license's removal (licenses.go)
// (and the deletions of a server, a volume and a webhook, on their own pages).

// confirmation is what confirm.html shows: the question, and the form that acts.
type confirmation struct {
	Question string
	// Action is where the form posts, with Fields as its hidden fields besides csrf.
	Action string
	Fields map[string]string
	Button string
	// Cancel is where Cancel leads back to.
	Cancel string
}

func (c *Console) confirm(r *req, titleID, nav string, cf confirmation) error {
	c.render(r, http.StatusOK, "confirm", titleID, nav, cf)
	return nil
}

// confirmPower is a power action that asks first: those that stop a server without
// its guest's say.
func confirmPower(a hosting.PowerAction) bool {
	return slices.Contains([]hosting.PowerAction{hosting.PowerOff, hosting.PowerReset}, a)
}

// powerPage asks before a forced power-off or a reset; another action needs no
// question and is sent back to the server's page.
func (c *Console) powerPage(r *req) error {
	srv, err := c.pathServer(r)
	if err != nil {
		return err
	}
	a := r.URL.Query().Get("action")
	action, err := ops.ParsePowerAction(&a)
	if err != nil || !confirmPower(action) {
		return r.redirect("/servers/" + itoa(srv.ID))
	}
	return c.confirm(r, "console.power."+string(action), "servers", confirmation{
		Question: r.T("console.confirm."+string(action), "name", srv.DisplayName),
		Action:   "/servers/" + itoa(srv.ID) + "/power", Fields: map[string]string{"action": string(action)},
		Button: r.T("console.power." + string(action)), Cancel: "/servers/" + itoa(srv.ID)})
}

// reinstallPage asks before a reinstall with the image chosen.
func (c *Console) reinstallPage(r *req) error {
	srv, err := c.pathServer(r)
	if err != nil {
		return err
	}
	cat, err := c.catalog(r.ctx())
	if err != nil {
		return err
	}
	fields := map[string]string{}
	image := cat.imageName(srv.ImageID)
	if id := formID(r, "image_id"); id != nil {
		image, fields["image_id"] = cat.imageName(*id), itoa(*id)
	}
	return c.confirm(r, "console.reinstall", "servers", confirmation{
		Question: r.T("console.confirm.reinstall", "name", srv.DisplayName, "image", image),
		Action:   "/servers/" + itoa(srv.ID) + "/reinstall", Fields: fields,
		Button: r.T("console.reinstall"), Cancel: "/servers/" + itoa(srv.ID)})
}

// snapshotPage asks before a snapshot's restore (what "restore") or deletion.
func (c *Console) snapshotPage(what string) handler {
	return func(r *req) error {
		srv, err := c.pathServer(r)
		if err != nil {
			return err
		}
		sid, err := pathID(r, "sid")
		if err != nil {
			return err
		}
		snaps, err := c.svc.Snapshots.Snapshots(r.ctx(), r.p, hosting.ServerRef{ID: srv.ID})
		if err != nil {
			return err
		}
		i := slices.IndexFunc(snaps, func(s hosting.Snapshot) bool { return s.ID == sid })
		if i < 0 {
			return hosting.ErrNotFound()
		}
		cf := confirmation{Action: "/servers/" + itoa(srv.ID) + "/snapshots/" + itoa(sid) + "/" + what,
			Cancel: "/servers/" + itoa(srv.ID)}
		if what == "restore" {
			cf.Question = r.T("console.confirm.restore", "name", srv.DisplayName, "snapshot", snaps[i].Name)
			cf.Button = r.T("console.restore")
			return c.confirm(r, "console.confirm.restore_title", "servers", cf)
		}
		cf.Question = r.T("console.confirm.snapshot_delete", "name", srv.DisplayName, "snapshot", snaps[i].Name)
		cf.Button = r.T("console.delete_for_good")
		return c.confirm(r, "console.confirm.snapshot_delete_title", "servers", cf)
	}
}

// deleteKeyPage asks before an SSH key's deletion.
func (c *Console) deleteKeyPage(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	ks, err := c.svc.SSHKeys.SSHKeys(r.ctx(), r.p)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(ks, func(k hosting.SSHKey) bool { return k.ID == id })
	if i < 0 {
		return hosting.ErrNotFound()
	}
	return c.confirm(r, "console.confirm.key_delete_title", "keys", confirmation{
		Question: r.T("console.confirm.key_delete", "name", ks[i].Name, "fingerprint", ks[i].Fingerprint),
		Action:   "/ssh-keys/" + itoa(id) + "/delete", Button: r.T("console.delete_for_good"), Cancel: "/ssh-keys"})
}

// deleteRecipePage asks before a recipe's deletion.
func (c *Console) deleteRecipePage(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	rc, err := c.svc.Recipes.Recipe(r.ctx(), r.p, id)
	if err != nil {
		return err
	}
	return c.confirm(r, "console.confirm.recipe_delete_title", "recipes", confirmation{
		Question: r.T("console.confirm.recipe_delete", "name", rc.Name),
		Action:   "/recipes/" + itoa(id) + "/delete", Button: r.T("console.delete_for_good"), Cancel: "/recipes/" + itoa(id)})
}

// revokeTokenPage asks before an API token's revocation.
func (c *Console) revokeTokenPage(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	ts, err := c.svc.Accounts.AccountTokens(r.ctx(), r.p)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(ts, func(t hosting.Token) bool { return t.ID == id })
	if i < 0 {
		return hosting.ErrNotFound()
	}
	return c.confirm(r, "console.confirm.token_revoke_title", "api", confirmation{
		Question: r.T("console.confirm.token_revoke", "name", ts[i].Name),
		Action:   "/settings/api/tokens/" + itoa(id) + "/revoke", Button: r.T("console.revoke"), Cancel: "/settings/api"})
}

// pathServer is the server the path's id names.
func (c *Console) pathServer(r *req) (hosting.Server, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return hosting.Server{}, err
	}
	return c.svc.Servers.Server(r.ctx(), r.p, hosting.ServerRef{ID: id})
}
