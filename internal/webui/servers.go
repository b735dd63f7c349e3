package webui

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/metrics"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
)

// catalog indexes what the catalog offers, to show names instead of ids.
type catalog struct {
	Locations []ops.LocationOffer
	Apps      []hosting.App
	loc       map[int64]ops.LocationOffer
	plan      map[int64]hosting.Plan
	image     map[int64]hosting.Image
	app       map[int64]hosting.App
}

func (c *Console) catalog(ctx context.Context) (*catalog, error) {
	ls, err := c.svc.Catalog.Locations(ctx)
	if err != nil {
		return nil, err
	}
	apps, err := c.svc.Catalog.Apps(ctx)
	if err != nil {
		return nil, err
	}
	cat := &catalog{Locations: ls, Apps: apps, loc: map[int64]ops.LocationOffer{}, plan: map[int64]hosting.Plan{},
		image: map[int64]hosting.Image{}, app: map[int64]hosting.App{}}
	for _, l := range ls {
		cat.loc[l.ID] = l
		for _, p := range l.Plans {
			cat.plan[p.ID] = p
		}
		for _, i := range l.Images {
			cat.image[i.ID] = i
		}
	}
	for _, a := range apps {
		cat.app[a.ID] = a
	}
	return cat, nil
}

func (cat *catalog) locationName(id int64) string {
	if l, ok := cat.loc[id]; ok {
		return l.Name + " (" + l.City + ")"
	}
	return "#" + itoa(id)
}

func (cat *catalog) planName(id int64) string {
	if p, ok := cat.plan[id]; ok {
		return p.Name
	}
	return "#" + itoa(id)
}

func (cat *catalog) imageName(id int64) string {
	if i, ok := cat.image[id]; ok {
		return i.Name
	}
	return "#" + itoa(id)
}

// serverRow is a server as the list and its page show it.
type serverRow struct {
	hosting.Server
	Location, Plan, Image, App, Project string
}

func rowOf(srv hosting.Server, cat *catalog, projects map[int64]string) serverRow {
	row := serverRow{Server: srv, Location: cat.locationName(srv.LocationID), Plan: cat.planName(srv.PlanID),
		Image: cat.imageName(srv.ImageID)}
	if srv.AppID != nil {
		if a, ok := cat.app[*srv.AppID]; ok {
			row.App = a.Name
		}
	}
	if srv.ProjectID != nil {
		row.Project = projects[*srv.ProjectID]
	}
	return row
}

func projectNames(ps []hosting.Project) map[int64]string {
	m := make(map[int64]string, len(ps))
	for _, p := range ps {
		m[p.ID] = p.Name
	}
	return m
}

// formID reads an id field of a form; absent or not a positive integer is nil.
func formID(r *req, field string) *int64 {
	id, err := hosting.ParseID(strings.TrimSpace(r.FormValue(field)))
	if err != nil {
		return nil
	}
	return &id
}

// pathID reads an id of the path; anything else is not found.
func pathID(r *req, name string) (int64, error) {
	id, err := hosting.ParseID(r.PathValue(name))
	if err != nil {
		return 0, hosting.ErrNotFound()
	}
	return id, nil
}

// ---- the list ----

func (c *Console) serversPage(r *req) error {
	var f store.ServerFilter
	var inProject *hosting.Project
	projects, err := c.svc.Projects.Projects(r.ctx(), r.p)
	if err != nil {
		return err
	}
	if raw := r.URL.Query().Get("project_id"); raw != "" {
		id, err := hosting.ParseID(raw)
		if err != nil {
			return hosting.ErrNotFound()
		}
		for i := range projects {
			if projects[i].ID == id {
				inProject = &projects[i]
			}
		}
		if inProject == nil {
			return hosting.ErrNotFound()
		}
		f.ProjectID = &id
	}
	list, err := c.svc.Servers.Servers(r.ctx(), r.p, f)
	if err != nil {
		return err
	}
	cat, err := c.catalog(r.ctx())
	if err != nil {
		return err
	}
	names := projectNames(projects)
	rows := make([]serverRow, len(list))
	live := false
	for i, s := range list {
		rows[i] = rowOf(s, cat, names)
		live = live || transient(s)
	}
	c.render(r, http.StatusOK, "servers", "console.nav.servers", "servers", map[string]any{
		"Rows": rows, "Live": live, "Project": inProject, "Self": r.URL.RequestURI()})
	return nil
}

// ---- ordering ----

// orderForm is the order form's state: what the catalog offers at the chosen
// location, what the account has, and the values entered.
type orderForm struct {
	Cat      *catalog
	Loc      ops.LocationOffer
	Keys     []hosting.SSHKey
	Projects []hosting.Project
	Recipes  []hosting.Recipe
	// Volumes are the account's detached volumes by location, the chosen one's
	// first: only its own can be attached (docs/api.md, Volumes).
	Volumes []volumeGroup
	// Licenses are the catalog's license products (docs/api.md, Licenses).
	Licenses []licenseOffer
	Credit   hosting.Money

	PlanID      int64
	Source      string // "image:ID" or "app:ID"
	KeyIDs      []int64
	VolumeIDs   []int64
	LicenseIDs  []int64
	Automount   bool
	ProjectID   int64
	RecipeID    int64
	DisplayName string
	Errors      map[string][]string
	Messages    []string
}

// volumeGroup is one location's detached volumes as the order form offers them: a
// server ordered in another location (Here false) cannot take them.
type volumeGroup struct {
	LocationID int64
	Location   string
	Here       bool
	Volumes    []hosting.Volume
}

func (c *Console) orderFormFor(r *req) (*orderForm, error) {
	cat, err := c.catalog(r.ctx())
	if err != nil {
		return nil, err
	}
	f := &orderForm{Cat: cat, Credit: r.p.Account.Credit}
	if acct, err := c.svc.Accounts.Account(r.ctx(), r.p); err == nil {
		f.Credit = acct.Credit
	}
	if f.Keys, err = c.svc.SSHKeys.SSHKeys(r.ctx(), r.p); err != nil {
		return nil, err
	}
	if f.Projects, err = c.svc.Projects.Projects(r.ctx(), r.p); err != nil {
		return nil, err
	}
	if f.Recipes, err = c.svc.Recipes.RecipeNames(r.ctx(), r.p); err != nil {
		return nil, err
	}
	vols, err := c.svc.Volumes.Volumes(r.ctx(), r.p, store.VolumeFilter{})
	if err != nil {
		return nil, err
	}
	lics, err := c.svc.Licenses.Licenses(r.ctx())
	if err != nil {
		return nil, err
	}
	orderEntry(r, f)
	f.Volumes = detachedVolumes(vols, cat, f.Loc.ID)
	f.Licenses = licenseOffers(r, f, lics)
	return f, nil
}

// orderEntry reads the values entered into f, the location first: a plan or image of
// another location does not carry over, and the first in stock is chosen instead.
func orderEntry(r *req, f *orderForm) {
	if len(f.Cat.Locations) > 0 {
		f.Loc = f.Cat.Locations[0]
	}
	if id := formID(r, "location_id"); id != nil {
		if l, ok := f.Cat.loc[*id]; ok {
			f.Loc = l
		}
	}
	if id := formID(r, "plan_id"); id != nil {
		f.PlanID = *id
	}
	if id := formID(r, "project_id"); id != nil {
		f.ProjectID = *id
	}
	if id := formID(r, "recipe_id"); id != nil {
		f.RecipeID = *id
	}
	f.Source, f.DisplayName = r.FormValue("source"), r.FormValue("display_name")
	f.KeyIDs, f.VolumeIDs, f.LicenseIDs = formIDs(r, "ssh_key_ids"), formIDs(r, "volume_ids"), formIDs(r, "license_ids")
	f.Automount = r.FormValue("automount") == "1"
	if _, ok := planOf(f.Loc, f.PlanID); !ok {
		f.PlanID = 0
		for _, p := range f.Loc.Plans {
			if f.Loc.InStock[p.ID] {
				f.PlanID = p.ID
				break
			}
		}
	}
	if strings.HasPrefix(f.Source, "image:") {
		id, _ := strconv.ParseInt(strings.TrimPrefix(f.Source, "image:"), 10, 64)
		if !offersImage(f.Loc, id) {
			f.Source = ""
		}
	}
	if f.Source == "" && len(f.Loc.Images) > 0 {
		f.Source = "image:" + itoa(f.Loc.Images[0].ID)
	}
}

// formIDs reads a list of ids of a form (checkboxes); what is not an id is left out.
func formIDs(r *req, field string) []int64 {
	var ids []int64
	for _, raw := range r.Form[field] {
		if id, err := hosting.ParseID(strings.TrimSpace(raw)); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// detachedVolumes groups the available volumes attached to no server by location:
// here's first, then the others by name.
func detachedVolumes(vols []hosting.Volume, cat *catalog, here int64) []volumeGroup {
	var groups []volumeGroup
	at := map[int64]int{}
	for _, v := range vols {
		if v.ServerID != nil || v.Status != hosting.VolumeAvailable {
			continue
		}
		i, ok := at[v.LocationID]
		if !ok {
			i = len(groups)
			at[v.LocationID] = i
			groups = append(groups, volumeGroup{LocationID: v.LocationID, Location: cat.locationName(v.LocationID),
				Here: v.LocationID == here})
		}
		groups[i].Volumes = append(groups[i].Volumes, v)
	}
	slices.SortStableFunc(groups, func(a, b volumeGroup) int {
		if a.Here != b.Here {
			if a.Here {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Location, b.Location)
	})
	return groups
}

func planOf(l ops.LocationOffer, id int64) (hosting.Plan, bool) {
	for _, p := range l.Plans {
		if p.ID == id {
			return p, true
		}
	}
	return hosting.Plan{}, false
}

func offersImage(l ops.LocationOffer, id int64) bool {
	for _, i := range l.Images {
		if i.ID == id {
			return true
		}
	}
	return false
}

func (c *Console) orderPage(r *req) error {
	f, err := c.orderFormFor(r)
	if err != nil {
		return err
	}
	c.render(r, http.StatusOK, "order", "console.order_title", "servers", f)
	return nil
}

// order places an order from the form. Image or app is one choice ("source"), so the
// form cannot send both. What the rules refuse is shown next to its field, a volume
// ordered that is busy above the form; the form keeps what was entered.
func (c *Console) order(r *req) error {
	o := ops.Order{LocationID: formID(r, "location_id"), PlanID: formID(r, "plan_id"),
		ProjectID: formID(r, "project_id"), RecipeID: formID(r, "recipe_id"),
		SSHKeyIDs: formIDs(r, "ssh_key_ids"), VolumeIDs: formIDs(r, "volume_ids"), LicenseIDs: formIDs(r, "license_ids")}
	src := r.FormValue("source")
	switch {
	case strings.HasPrefix(src, "image:"):
		o.ImageID = idOf(strings.TrimPrefix(src, "image:"))
	case strings.HasPrefix(src, "app:"):
		o.AppID = idOf(strings.TrimPrefix(src, "app:"))
	}
	if dn := strings.TrimSpace(r.FormValue("display_name")); dn != "" {
		o.DisplayName = &dn
	}
	if pw := r.FormValue("root_password"); pw != "" {
		o.RootPassword = &pw
	}
	if r.FormValue("automount") == "1" {
		auto := true
		o.Automount = &auto
	}
	srv, err := c.svc.Servers.OrderServer(r.ctx(), r.p, o)
	if err == nil {
		setFlash(r.w, r.Request, flash{OK: true, Msgs: []string{r.T("console.ordered", "name", srv.DisplayName)}})
		return r.redirect("/servers/" + itoa(srv.ID))
	}
	status := http.StatusUnprocessableEntity
	switch hosting.ErrorCode(err) {
	case hosting.CodeValidationFailed, hosting.CodeInsufficientCredit:
	case hosting.CodeBusy:
		status = http.StatusConflict
	default:
		return err
	}
	f, ferr := c.orderFormFor(r)
	if ferr != nil {
		return ferr
	}
	f.Errors, f.Messages = c.fieldErrors(r.lang, err), c.messages(r.lang, err)
	c.render(r, status, "order", "console.order_title", "servers", f)
	return nil
}

func idOf(s string) *int64 {
	id, err := hosting.ParseID(s)
	if err != nil {
		return nil
	}
	return &id
}

// ---- one server ----

func (c *Console) serverPage(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	srv, err := c.svc.Servers.Server(r.ctx(), r.p, hosting.ServerRef{ID: id})
	if err != nil {
		return err
	}
	cat, err := c.catalog(r.ctx())
	if err != nil {
		return err
	}
	projects, err := c.svc.Projects.Projects(r.ctx(), r.p)
	if err != nil {
		return err
	}
	snaps, err := c.svc.Snapshots.Snapshots(r.ctx(), r.p, hosting.ServerRef{ID: id})
	if err != nil {
		return err
	}
	opts, err := c.svc.Servers.RescaleOptions(r.ctx(), r.p, hosting.ServerRef{ID: id})
	if err != nil {
		return err
	}
	rng, ok := metrics.ParseRange(r.URL.Query().Get("range"))
	if !ok {
		rng = metrics.Ranges[0]
	}
	charts := c.charts(r, srv.ID, rng)
	activity, err := c.serverActivity(r, srv)
	if err != nil {
		return err
	}
	vols, err := c.serverVolumes(r, srv)
	if err != nil {
		return err
	}
	opRows, opsTotal, err := c.serverOps(r, srv)
	if err != nil {
		return err
	}
	ptrs, err := c.svc.RDNS.RDNS(r.ctx(), r.p, hosting.ServerRef{ID: id})
	if err != nil {
		return err
	}
	lics, licChoices, err := c.serverLicenses(r, srv)
	if err != nil {
		return err
	}
	row := rowOf(srv, cat, projectNames(projects))
	c.render(r, http.StatusOK, "server", "console.server_title", "servers", map[string]any{
		"Licenses": lics, "LicenseChoices": licChoices,
		"S": &row, "Live": transient(srv), "Actions": powerButtons(srv),
		"Projects": projects, "Snapshots": snaps, "Rescale": opts, "Images": cat.loc[srv.LocationID].Images,
		"Range": rng.Name, "Ranges": rangeNames(), "Charts": charts, "Activity": activity, "Volumes": vols,
		"Ops": opRows, "OpsTotal": opsTotal, "PTRs": ptrs,
		"ActivityAll": activityQuery{Resource: "server:" + itoa(srv.ID)}.url(0)})
	return nil
}

// powerButtons are the power actions a server's page offers now.
func powerButtons(srv hosting.Server) []powerButton {
	var actions []powerButton
	for _, a := range hosting.PowerActions {
		if _, ok := a.Transition(srv.Status); ok && srv.Operation == nil && !srv.Suspended {
			actions = append(actions, powerButton{Action: a, Ask: confirmPower(a)})
		}
	}
	return actions
}

func rangeNames() []string {
	var ranges []string
	for _, x := range metrics.Ranges {
		ranges = append(ranges, x.Name)
	}
	return ranges
}

// setRDNS sets the PTR of one of the server's addresses (docs/api.md, Reverse DNS),
// or with reset=1 gives it back its default name.
func (c *Console) setRDNS(r *req) error {
	return c.serverAction(r, func(id int64) error {
		ip, ptr := strings.TrimSpace(r.FormValue("ip")), strings.TrimSpace(r.FormValue("ptr"))
		var to *string
		if r.FormValue("reset") != "1" {
			to = &ptr
		}
		_, err := c.svc.RDNS.SetRDNS(r.ctx(), r.p, hosting.ServerRef{ID: id}, &ip, to)
		return err
	}, "console.rdns.saved")
}

// powerButton is a power action the server's page offers; Ask when it asks first
// (confirm.go).
type powerButton struct {
	Action hosting.PowerAction
	Ask    bool
}

// serverVolumes are the volumes a server's page lists: those attached to it, and
// those its operation holds on their way to it (an order's, an attachment's).
func (c *Console) serverVolumes(r *req, srv hosting.Server) ([]hosting.Volume, error) {
	if srv.Operation == nil {
		return c.svc.Volumes.Volumes(r.ctx(), r.p, store.VolumeFilter{ServerID: &srv.ID})
	}
	all, err := c.svc.Volumes.Volumes(r.ctx(), r.p, store.VolumeFilter{})
	if err != nil {
		return nil, err
	}
	var out []hosting.Volume
	for _, v := range all {
		if (v.ServerID != nil && *v.ServerID == srv.ID) || (v.Operation != nil && v.Operation.ID == srv.Operation.ID) {
			out = append(out, v)
		}
	}
	return out, nil
}

func (c *Console) serverAction(r *req, act func(id int64) error, okID string) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return r.done(act(id), "/servers/"+itoa(id), okID)
}

func (c *Console) power(r *req) error {
	return c.serverAction(r, func(id int64) error {
		a := r.FormValue("action")
		action, err := ops.ParsePowerAction(&a)
		if err != nil {
			return err
		}
		_, err = c.svc.Servers.Power(r.ctx(), r.p, id, action)
		return err
	}, "console.power_started")
}

func (c *Console) updateServer(r *req) error {
	return c.serverAction(r, func(id int64) error {
		name := r.FormValue("display_name")
		u := ops.ServerUpdate{DisplayName: &name}
		if pid := formID(r, "project_id"); pid != nil {
			u.ProjectID = pid
		} else {
			u.ClearProject = true
		}
		_, err := c.svc.Servers.UpdateServer(r.ctx(), r.p, id, u)
		return err
	}, "console.saved")
}

func (c *Console) reinstall(r *req) error {
	return c.serverAction(r, func(id int64) error {
		_, err := c.svc.Servers.Reinstall(r.ctx(), r.p, id, formID(r, "image_id"))
		return err
	}, "console.reinstall_started")
}

func (c *Console) rescale(r *req) error {
	return c.serverAction(r, func(id int64) error {
		_, err := c.svc.Servers.Rescale(r.ctx(), r.p, id, formID(r, "plan_id"), r.FormValue("upgrade_disk") == "1")
		return err
	}, "console.rescale_started")
}

func (c *Console) createSnapshot(r *req) error {
	return c.serverAction(r, func(id int64) error {
		name := strings.TrimSpace(r.FormValue("name"))
		_, err := c.svc.Snapshots.CreateSnapshot(r.ctx(), r.p, id, &name, r.FormValue("include_memory") == "1")
		return err
	}, "console.snapshot_started")
}

func (c *Console) restoreSnapshot(r *req) error {
	sid, err := pathID(r, "sid")
	if err != nil {
		return err
	}
	return c.serverAction(r, func(id int64) error {
		_, err := c.svc.Snapshots.RestoreSnapshot(r.ctx(), r.p, id, sid)
		return err
	}, "console.restore_started")
}

func (c *Console) deleteSnapshot(r *req) error {
	sid, err := pathID(r, "sid")
	if err != nil {
		return err
	}
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	deleted, err := c.svc.Snapshots.DeleteSnapshot(r.ctx(), r.p, id, sid)
	msg := "console.snapshot_deleted"
	if !deleted {
		msg = "console.snapshot_delete_scheduled"
	}
	return r.done(err, "/servers/"+itoa(id), msg)
}

func (c *Console) deleteServerPage(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	srv, err := c.svc.Servers.Server(r.ctx(), r.p, hosting.ServerRef{ID: id})
	if err != nil {
		return err
	}
	c.render(r, http.StatusOK, "delete", "console.delete_title", "servers", srv)
	return nil
}

func (c *Console) deleteServer(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	srv, err := c.svc.Servers.Server(r.ctx(), r.p, hosting.ServerRef{ID: id})
	if err != nil {
		return err
	}
	if err := c.svc.Servers.DeleteServer(r.ctx(), r.p, id); err != nil {
		return r.done(err, "/servers/"+itoa(id), "")
	}
	return r.done(nil, "/servers", "console.server_deleted", "name", srv.DisplayName)
}

// ---- charts ----

// chart is one rendered chart with its caption.
type chart struct {
	ID, Title, Caption string
	SVG                any
}

func (c *Console) charts(r *req, serverID int64, rng metrics.Range) []chart {
	var s metrics.Series
	if c.cfg.Metrics != nil {
		var err error
		if s, err = c.cfg.Metrics.Series(r.ctx(), serverID, rng, c.svc.Gate.NowFor(r.p.Account.ID)); err != nil {
			c.log.Warn("console metrics", "server", serverID, "err", err)
		}
	}
	to := time.Now().Unix()
	from := to - int64(rng.Span.Seconds())
	lang := r.lang
	return []chart{
		{ID: "cpu", Title: r.T("console.chart.cpu"), Caption: captionOf(r, "console.chart.caption_cpu", s.CPU, nil, percent),
			SVG: lineChart("cpu", r.T("console.chart.cpu"), from, to, 100, line{"a", s.CPU})},
		{ID: "network", Title: r.T("console.chart.network"), Caption: captionOf(r, "console.chart.caption_network", s.NetIn, s.NetOut, rate(lang)),
			SVG: lineChart("network", r.T("console.chart.network"), from, to, 0, line{"a", s.NetIn}, line{"b", s.NetOut})},
		{ID: "disk", Title: r.T("console.chart.disk"), Caption: captionOf(r, "console.chart.caption_disk", s.DiskRead, s.DiskWrite, rate(lang)),
			SVG: lineChart("disk", r.T("console.chart.disk"), from, to, 0, line{"a", s.DiskRead}, line{"b", s.DiskWrite})},
	}
}

// captionOf says the latest and the highest value of one or two series in words.
func captionOf(r *req, id string, a, b []metrics.Point, unit func(float64) string) string {
	if len(a) == 0 && len(b) == 0 {
		return r.T("console.chart.no_data")
	}
	last := func(ps []metrics.Point) float64 {
		if len(ps) == 0 {
			return 0
		}
		return ps[len(ps)-1].Value
	}
	peak := func(ps []metrics.Point) float64 {
		m := 0.0
		for _, p := range ps {
			m = max(m, p.Value)
		}
		return m
	}
	if b == nil {
		return r.T(id, "latest", unit(last(a)), "peak", unit(peak(a)))
	}
	return r.T(id, "latest_a", unit(last(a)), "peak_a", unit(peak(a)),
		"latest_b", unit(last(b)), "peak_b", unit(peak(b)))
}
