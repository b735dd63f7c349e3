package webui

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
)

// The Volumes pages (docs/api.md, Volumes): the account's volumes with the form that
// makes one, and each volume's page, where it is attached, detached, grown, renamed
// and deleted. Making and growing one ask to confirm the price first: the form posts
// without confirm=1 and is answered with the price and a button that posts again with
// it. Every form works without JavaScript; htmx only refreshes a busy volume's status.

// volumeRow is a volume as the list and its page show it.
type volumeRow struct {
	hosting.Volume
	Location string
	// Server is the server it is attached to (nil: detached).
	Server *hosting.Server
	// Hourly and Monthly are what it costs now: each started hour, at most a month.
	Hourly, Monthly    hosting.Money
	Device, MountPoint string
}

// volumeWorld is what the volume pages read besides the volumes: the catalog and the
// account's servers.
type volumeWorld struct {
	cat     *catalog
	servers []hosting.Server
	byID    map[int64]hosting.Server
}

func (c *Console) volumeWorld(r *req) (*volumeWorld, error) {
	cat, err := c.catalog(r.ctx())
	if err != nil {
		return nil, err
	}
	list, err := c.svc.Servers.Servers(r.ctx(), r.p, store.ServerFilter{})
	if err != nil {
		return nil, err
	}
	w := &volumeWorld{cat: cat, servers: list, byID: make(map[int64]hosting.Server, len(list))}
	for _, s := range list {
		w.byID[s.ID] = s
	}
	return w, nil
}

func (w *volumeWorld) row(v hosting.Volume) volumeRow {
	row := volumeRow{Volume: v, Location: w.cat.locationName(v.LocationID), Device: compute.VolumeDevice(v.ID),
		MountPoint: compute.VolumeMountPoint(v.ID)}
	if v.ServerID != nil {
		if s, ok := w.byID[*v.ServerID]; ok {
			row.Server = &s
		}
	}
	row.Hourly, row.Monthly = ops.VolumePrice(v.SizeGB, w.cat.loc[v.LocationID].Location)
	return row
}

// sellsVolumes reports whether a location prices volumes (docs/api.md, Volumes).
func sellsVolumes(l hosting.Location) bool {
	return l.VolumePriceGBHour != 0 || l.VolumePriceGBMonth != 0
}

// volumeBusy reports whether a volume is about to change by itself, so that its
// page polls it.
func volumeBusy(v hosting.Volume) bool {
	return v.Operation != nil || v.Status == hosting.VolumeCreating
}

func volumeURL(id int64) string { return "/volumes/" + itoa(id) }

// ---- the list and the create form ----

// volumeForm is the create form: where a volume can go, and what was entered.
type volumeForm struct {
	Locations []ops.LocationOffer
	Servers   []serverRow
	Formats   []string

	Name, Size, Place, Format string
	Automount                 bool
	Errors                    map[string][]string
	Messages                  []string
}

// volumeEntry reads the create form's fields as they were entered. place is
// "location:ID" or "server:ID": one choice, so the form cannot send both.
func volumeEntry(r *req, f *volumeForm) {
	f.Name, f.Size = strings.TrimSpace(r.FormValue("name")), strings.TrimSpace(r.FormValue("size_gb"))
	f.Place, f.Format, f.Automount = r.FormValue("place"), r.FormValue("format"), r.FormValue("automount") == "1"
}

// order is what the form asks for.
func (f *volumeForm) order() ops.VolumeOrder {
	o := ops.VolumeOrder{Name: &f.Name, SizeGB: sizeOf(f.Size)}
	kind, raw, _ := strings.Cut(f.Place, ":")
	switch kind {
	case "location":
		o.LocationID = idOf(raw)
	case "server":
		o.ServerID = idOf(raw)
	}
	if f.Format != "" {
		o.Format = &f.Format
	}
	if f.Automount {
		o.Automount = &f.Automount
	}
	return o
}

func (c *Console) volumeForm(r *req, w *volumeWorld) *volumeForm {
	f := &volumeForm{Formats: hosting.VolumeFormats, Size: strconv.Itoa(hosting.VolumeMinGB)}
	for _, l := range w.cat.Locations {
		if sellsVolumes(l.Location) {
			f.Locations = append(f.Locations, l)
		}
	}
	for _, s := range w.servers {
		if sellsVolumes(w.cat.loc[s.LocationID].Location) {
			f.Servers = append(f.Servers, rowOf(s, w.cat, nil))
		}
	}
	if len(f.Locations) > 0 {
		f.Place = "location:" + itoa(f.Locations[0].ID)
	}
	// A link may preset the fields: a server's page its place ("server:ID"), the
	// price's page, left, what was entered.
	q := r.URL.Query()
	for field, to := range map[string]*string{"name": &f.Name, "size_gb": &f.Size, "place": &f.Place, "format": &f.Format} {
		if x := q.Get(field); x != "" {
			*to = x
		}
	}
	f.Automount = q.Get("automount") == "1"
	return f
}

// query is the form's fields as a link's query that presets them.
func (f *volumeForm) query() string {
	q := url.Values{"name": {f.Name}, "size_gb": {f.Size}, "place": {f.Place}, "format": {f.Format}}
	if f.Automount {
		q.Set("automount", "1")
	}
	return q.Encode()
}

func (c *Console) volumeList(r *req, status int, w *volumeWorld, f *volumeForm) error {
	vols, err := c.svc.Volumes.Volumes(r.ctx(), r.p, store.VolumeFilter{})
	if err != nil {
		return err
	}
	rows := make([]volumeRow, len(vols))
	live := false
	for i, v := range vols {
		rows[i] = w.row(v)
		live = live || volumeBusy(v)
	}
	c.render(r, status, "volumes", "console.nav.volumes", "volumes", map[string]any{"Rows": rows, "Live": live, "Form": f})
	return nil
}

func (c *Console) volumesPage(r *req) error {
	w, err := c.volumeWorld(r)
	if err != nil {
		return err
	}
	return c.volumeList(r, http.StatusOK, w, c.volumeForm(r, w))
}

// volumeReview is the page that shows a new volume's price before it is made.
type volumeReview struct {
	F        *volumeForm
	SizeGB   int64
	Location string
	Server   *hosting.Server
	Hourly   hosting.Money
	Monthly  hosting.Money
	Back     string
}

// createVolume answers the create form: without confirm=1 with the price to confirm
// (or the form again with what its rules refuse), with it by making the volume.
func (c *Console) createVolume(r *req) error {
	w, err := c.volumeWorld(r)
	if err != nil {
		return err
	}
	f := c.volumeForm(r, w)
	volumeEntry(r, f)
	o := f.order()
	if r.FormValue("confirm") != "1" {
		rv, err := c.reviewVolume(r, w, f, o)
		if err != nil {
			return c.volumeFormFailed(r, w, f, err)
		}
		c.render(r, http.StatusOK, "volumereview", "console.volumes.review_title", "volumes", rv)
		return nil
	}
	vol, err := c.svc.Volumes.CreateVolume(r.ctx(), r.p, o)
	if err != nil {
		return c.volumeFormFailed(r, w, f, err)
	}
	setFlash(r.w, r.Request, flash{OK: true, Msgs: []string{r.T("console.volumes.created", "name", vol.Name)}})
	return r.redirect(volumeURL(vol.ID))
}

// volumeFormFailed shows the list with the create form again, what was entered and
// what was refused: a rule's message next to its field, a busy server's above the
// form. Errors that are not the caller's to fix are the error page's, as r.done has it.
func (c *Console) volumeFormFailed(r *req, w *volumeWorld, f *volumeForm, err error) error {
	code := hosting.ErrorCode(err)
	status, ok := statusOf(code)
	if !ok || code == hosting.CodeInternal || code == hosting.CodeUnauthenticated || code == hosting.CodeNotFound {
		return err
	}
	f.Errors, f.Messages = c.fieldErrors(r.lang, err), c.messages(r.lang, err)
	return c.volumeList(r, status, w, f)
}

// reviewVolume checks what the form says by itself and finds the location whose
// prices it shows. What needs the store (quotas, credit, the server's state) is
// checked when the volume is made.
func (c *Console) reviewVolume(r *req, w *volumeWorld, f *volumeForm, o ops.VolumeOrder) (*volumeReview, error) {
	if err := ops.CheckVolumeOrder(o); err != nil {
		return nil, err
	}
	rv := &volumeReview{F: f, SizeGB: *o.SizeGB, Back: "/volumes?" + f.query() + "#create"}
	locID := o.LocationID
	if o.ServerID != nil {
		s, ok := w.byID[*o.ServerID]
		if !ok {
			return nil, hosting.Invalid("server_id", "validation.server_unknown")
		}
		rv.Server, locID = &s, &s.LocationID
	}
	loc, ok := w.cat.loc[*locID]
	if !ok {
		return nil, hosting.Invalid("location_id", "validation.location_unknown")
	}
	if !sellsVolumes(loc.Location) {
		return nil, hosting.Invalid("location_id", "validation.volumes_not_sold")
	}
	rv.Location = w.cat.locationName(loc.ID)
	rv.Hourly, rv.Monthly = ops.VolumePrice(int(rv.SizeGB), loc.Location)
	return rv, nil
}

// ---- one volume ----

// volumePage is a volume's page: the volume, the servers it can be attached to,
// and a refused form's values and messages.
type volumePage struct {
	V        volumeRow
	Live     bool
	Servers  []hosting.Server
	Entered  map[string]string
	Errors   map[string][]string
	Messages []string
}

func (c *Console) volumeOf(r *req) (volumeRow, *volumeWorld, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return volumeRow{}, nil, err
	}
	vol, err := c.svc.Volumes.Volume(r.ctx(), r.p, hosting.VolumeRef{ID: id})
	if err != nil {
		return volumeRow{}, nil, err
	}
	w, err := c.volumeWorld(r)
	if err != nil {
		return volumeRow{}, nil, err
	}
	return w.row(vol), w, nil
}

func (c *Console) showVolume(r *req, status int, failed error) error {
	row, w, err := c.volumeOf(r)
	if err != nil {
		return err
	}
	p := &volumePage{V: row, Live: volumeBusy(row.Volume), Entered: map[string]string{}}
	for _, s := range w.servers {
		if s.LocationID == row.LocationID {
			p.Servers = append(p.Servers, s)
		}
	}
	if failed != nil {
		for _, f := range []string{"name", "size_gb", "server_id"} {
			p.Entered[f] = strings.TrimSpace(r.PostFormValue(f))
		}
		p.Errors, p.Messages = c.fieldErrors(r.lang, failed), c.messages(r.lang, failed)
	}
	c.render(r, status, "volume", "console.volumes.one", "volumes", p)
	return nil
}

func (c *Console) volumePage(r *req) error { return c.showVolume(r, http.StatusOK, nil) }

// volumeAction runs a form's action on the path's volume: on success back to its
// page saying okID; refused by the rules, its page again with the messages next to
// their fields; anything else as r.done says.
func (c *Console) volumeAction(r *req, act func(id int64) (hosting.Volume, error), okID string) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	vol, err := act(id)
	if hosting.ErrorCode(err) == hosting.CodeValidationFailed {
		return c.showVolume(r, http.StatusUnprocessableEntity, err)
	}
	return r.done(err, volumeURL(id), okID, "name", vol.Name)
}

func (c *Console) attachVolume(r *req) error {
	return c.volumeAction(r, func(id int64) (hosting.Volume, error) {
		auto := r.FormValue("automount") == "1"
		return c.svc.Volumes.AttachVolume(r.ctx(), r.p, hosting.VolumeRef{ID: id}, formID(r, "server_id"), &auto)
	}, "console.volumes.attach_started")
}

func (c *Console) detachVolume(r *req) error {
	return c.volumeAction(r, func(id int64) (hosting.Volume, error) {
		return c.svc.Volumes.DetachVolume(r.ctx(), r.p, hosting.VolumeRef{ID: id})
	}, "console.volumes.detach_started")
}

func (c *Console) renameVolume(r *req) error {
	return c.volumeAction(r, func(id int64) (hosting.Volume, error) {
		name := strings.TrimSpace(r.FormValue("name"))
		return c.svc.Volumes.UpdateVolume(r.ctx(), r.p, hosting.VolumeRef{ID: id}, ops.VolumeUpdate{Name: &name})
	}, "console.saved")
}

// volumeGrowth is the page that shows a volume's new price before it grows.
type volumeGrowth struct {
	V               volumeRow
	SizeGB          int64
	Hourly, Monthly hosting.Money
}

// resizeVolume answers the grow form: without confirm=1 with the new price to
// confirm (or the volume's page with what the rules refuse), with it by growing.
func (c *Console) resizeVolume(r *req) error {
	size := sizeOf(r.FormValue("size_gb"))
	if r.FormValue("confirm") == "1" {
		return c.volumeAction(r, func(id int64) (hosting.Volume, error) {
			return c.svc.Volumes.ResizeVolume(r.ctx(), r.p, hosting.VolumeRef{ID: id}, size)
		}, "console.volumes.resize_started")
	}
	row, w, err := c.volumeOf(r)
	if err != nil {
		return err
	}
	if err := ops.CheckVolumeGrowth(row.Volume, size); err != nil {
		return c.showVolume(r, http.StatusUnprocessableEntity, err)
	}
	g := &volumeGrowth{V: row, SizeGB: *size}
	g.Hourly, g.Monthly = ops.VolumePrice(int(*size), w.cat.loc[row.LocationID].Location)
	c.render(r, http.StatusOK, "volumegrow", "console.volumes.resize_title", "volumes", g)
	return nil
}

// sizeOf reads a size in GB: nil when empty, 0 (out of range) when not a number.
func sizeOf(raw string) *int64 {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		n = 0
	}
	return &n
}

func (c *Console) deleteVolumePage(r *req) error {
	row, _, err := c.volumeOf(r)
	if err != nil {
		return err
	}
	c.render(r, http.StatusOK, "volumedelete", "console.volumes.delete_title", "volumes", map[string]any{"V": row})
	return nil
}

// deleteVolume deletes a detached volume; an attached one's refusal is shown on the
// confirmation page, which says to detach it first.
func (c *Console) deleteVolume(r *req) error {
	row, _, err := c.volumeOf(r)
	if err != nil {
		return err
	}
	err = c.svc.Volumes.DeleteVolume(r.ctx(), r.p, hosting.VolumeRef{ID: row.ID})
	if hosting.ErrorCode(err) == hosting.CodeValidationFailed {
		c.render(r, http.StatusUnprocessableEntity, "volumedelete", "console.volumes.delete_title", "volumes",
			map[string]any{"V": row, "Messages": c.messages(r.lang, err)})
		return nil
	}
	if err != nil {
		return r.done(err, volumeURL(row.ID), "")
	}
	return r.done(nil, "/volumes", "console.volumes.deleted", "name", row.Name)
}

// volumeState is what the "volumestatus" template shows: a volume's status, and
// its operation in progress, in words.
type volumeState struct {
	Status       hosting.VolumeStatus
	Text, OpText string
	Op           hosting.OpType
}

// VolumeState is a volume's status and operation in progress, in words.
func (v *view) VolumeState(vol hosting.Volume) volumeState {
	s := volumeState{Status: vol.Status, Text: v.T("console.volume_status." + string(vol.Status))}
	if op := vol.Operation; op != nil {
		s.Op, s.OpText = op.Type, v.T("console.operation_running", "type", v.OpType(op.Type))
	}
	return s
}
