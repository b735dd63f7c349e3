package webui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// The account's activity (docs/api.md, Events): its events newest first, a page at a
// time, each said in a sentence of the reader's language with a link to what it is
// about while that still exists. The server page shows the latest of its server's.

// activityPageSize is how many events a page of the activity shows.
const activityPageSize = 50

// serverActivitySize is how many of its latest events a server's page shows.
const serverActivitySize = 20

// eventFamilies are the activity filter's choices: the resource part of the event
// types (server, operation, ..., account), in the order of hosting.EventTypes.
var eventFamilies = func() []string {
	var out []string
	for _, t := range hosting.EventTypes {
		if f := familyOf(t); !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}()

func familyOf(t hosting.EventType) string {
	f, _, _ := strings.Cut(string(t), ".")
	return f
}

// eventRow is an event as the activity tables show it.
type eventRow struct {
	ID        int64
	Type      hosting.EventType
	At        time.Time
	Text      string
	Detail    string
	Link      string
	LinkText  string
	RequestID string
}

// eventTable is what the "events" template draws: rows and whether they get a
// column of links (a server's own page needs none).
type eventTable struct {
	V     *view
	Rows  []eventRow
	Links bool
}

// EventTable hands rows to the "events" template with the view around them.
func (v *view) EventTable(rows []eventRow, links bool) eventTable {
	return eventTable{V: v, Rows: rows, Links: links}
}

// activityQuery is what the activity page was asked: a family of types, a resource,
// and the cursor of an older page.
type activityQuery struct {
	Family   string
	Resource string
	res      *hosting.EventResource
	before   int64
}

func parseActivityQuery(q url.Values) (activityQuery, error) {
	var a activityQuery
	var v hosting.Validation
	if a.Family = q.Get("type"); a.Family != "" && !slices.Contains(eventFamilies, a.Family) {
		v.Add("type", "console.activity.type_invalid")
	}
	if a.Resource = q.Get("resource"); a.Resource != "" {
		if res, ok := hosting.ParseEventResource(a.Resource); ok {
			a.res = &res
		} else {
			v.Add("resource", "validation.event_resource")
		}
	}
	if raw := q.Get("before"); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 1 {
			v.Add("before", "validation.page")
		}
		a.before = n
	}
	return a, v.Err("type", "resource", "before")
}

func (a activityQuery) filter(limit int) hosting.EventFilter {
	f := hosting.EventFilter{Newest: true, Before: a.before, Resource: a.res, Limit: limit}
	if a.Family != "" {
		f.Types = []hosting.EventPattern{hosting.EventPattern(a.Family + ".*")}
	}
	return f
}

// url is the activity page of this query, before the event before (0: the newest).
func (a activityQuery) url(before int64) string {
	q := url.Values{}
	if a.Family != "" {
		q.Set("type", a.Family)
	}
	if a.Resource != "" {
		q.Set("resource", a.Resource)
	}
	if before > 0 {
		q.Set("before", strconv.FormatInt(before, 10))
	}
	if len(q) == 0 {
		return "/activity"
	}
	return "/activity?" + q.Encode()
}

func (c *Console) activityPage(r *req) error {
	a, err := parseActivityQuery(r.URL.Query())
	if err != nil {
		return err
	}
	events, err := c.svc.Events.Events(r.ctx(), r.p, a.filter(activityPageSize+1), 0)
	if err != nil {
		return err
	}
	older := ""
	if len(events) > activityPageSize {
		events = events[:activityPageSize]
		older = a.url(events[len(events)-1].ID)
	}
	ex := &existing{c: c, r: r}
	rows, err := c.eventRows(r, ex, events)
	if err != nil {
		return err
	}
	about, err := ex.name(a)
	if err != nil {
		return err
	}
	newest := ""
	if a.before > 0 {
		newest = a.url(0)
	}
	c.render(r, http.StatusOK, "activity", "console.nav.activity", "activity", map[string]any{
		"Rows": rows, "Families": eventFamilies, "Q": a, "About": about, "Older": older, "Newest": newest,
		"All": activityQuery{Family: a.Family}.url(0)})
	return nil
}

// serverActivity is the latest events of a server, for its page.
func (c *Console) serverActivity(r *req, srv hosting.Server) ([]eventRow, error) {
	f := hosting.EventFilter{Newest: true, Resource: &hosting.EventResource{Type: "server", ID: srv.ID}, Limit: serverActivitySize}
	events, err := c.svc.Events.Events(r.ctx(), r.p, f, 0)
	if err != nil {
		return nil, err
	}
	ex := &existing{c: c, r: r, servers: map[int64]hosting.Server{srv.ID: srv}}
	return c.eventRows(r, ex, events)
}

func (c *Console) eventRows(r *req, ex *existing, events []hosting.Event) ([]eventRow, error) {
	rows := make([]eventRow, len(events))
	for i, e := range events {
		row := eventRow{ID: e.ID, Type: e.Type, At: e.CreatedAt, RequestID: e.RequestID}
		d := eventData{}
		_ = json.Unmarshal(e.Data, &d) // the data is ours: a field it lacks stays empty
		var err error
		if row.Link, row.LinkText, err = ex.link(e, &d); err != nil {
			return nil, err
		}
		row.Text, row.Detail = c.sentence(r, ex, e, d)
		rows[i] = row
	}
	return rows, nil
}

// eventData is every field of the data of every event type (hosting's
// ServerEventData ... AccountEventData): one event's fills those of its type.
type eventData struct {
	ID             int64    `json:"id"`
	ServerID       int64    `json:"server_id"`
	VolumeID       int64    `json:"volume_id"`
	Name           string   `json:"name"`
	Status         string   `json:"status"`
	PreviousStatus string   `json:"previous_status"`
	Changes        []string `json:"changes"`
	Type           string   `json:"type"`
	Error          string   `json:"error"`
	Credit         string   `json:"credit"`
	Amount         string   `json:"amount"`
	Reason         string   `json:"reason"`
	SizeGB         int      `json:"size_gb"`
	Domain         string   `json:"domain"`
	IP             string   `json:"ip"`
	PTR            string   `json:"ptr"`
	Subject        string   `json:"subject"`
}

// sentence says what an event reports in the reader's language
// (console.event.<type>), and a detail for a failed operation (its error).
func (c *Console) sentence(r *req, ex *existing, e hosting.Event, d eventData) (string, string) {
	v := &view{r: r, Account: r.p.Account}
	var args []any
	switch familyOf(e.Type) {
	case "server":
		args = []any{"name", d.Name, "status", v.Status(hosting.Status(d.Status)),
			"previous", v.Status(hosting.Status(d.PreviousStatus)), "changes", changeList(r, d.Changes)}
	case "operation":
		args = []any{"operation", c.opTypeText(r.lang, hosting.OpType(d.Type)), "server", ex.serverName(d.ServerID)}
		if d.VolumeID != 0 {
			args = append(args, "volume", ex.volumeName(d.VolumeID))
		}
	case "snapshot":
		args = []any{"name", d.Name, "server", ex.serverName(d.ServerID), "status", r.T("console.snapshot_status." + d.Status)}
	case "volume":
		args = []any{"name", d.Name, "server", ex.serverName(d.ServerID), "size", d.SizeGB, "changes", changeList(r, d.Changes)}
	case "domain":
		args = []any{"name", d.Name, "changes", changeList(r, d.Changes)}
	case "rrset":
		args = []any{"domain", d.Domain, "rrset", d.Name + " " + d.Type}
	case "rdns":
		args = []any{"ip", d.IP, "ptr", d.PTR, "server", ex.serverName(d.ServerID)}
	case "license":
		args = []any{"name", d.Name, "server", ex.serverName(d.ServerID)}
	case "ticket":
		args = []any{"subject", d.Subject}
	case "ssh_key", "project", "recipe":
		args = []any{"name", d.Name}
	case "billing":
		args = []any{"credit", moneyText(v, d.Credit), "amount", moneyText(v, d.Amount)}
	case "account":
		args = []any{"changes", changeList(r, d.Changes)}
	}
	id := "console.event." + string(e.Type)
	switch {
	case !slices.Contains(hosting.EventTypes, e.Type):
		id, args = "console.event.other", []any{"type", string(e.Type)}
	case familyOf(e.Type) == "operation" && d.ServerID == 0 && d.VolumeID != 0:
		// A volume's operation that concerns no server (docs/api.md, Volumes).
		id = "console.event.volume_" + string(e.Type)
	}
	return r.T(id, args...), d.Error
}

// changeLabels name the fields an update event lists as changed: a server's
// (display_name, project_id), a volume's (name, project_id, and status once made),
// a domain's (ttl, rrsets) and the account's.
var changeLabels = map[string]string{
	"display_name": "console.display_name", "name": "console.col.name", "project_id": "console.col.project",
	"status": "console.col.status", "language": "console.language", "budget": "console.billing.budget",
	"ttl": "console.col.ttl", "rrsets": "console.col.records",
}

func changeList(r *req, fields []string) string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f
		if id, ok := changeLabels[f]; ok {
			out[i] = r.T(id)
		}
	}
	return strings.Join(out, ", ")
}

func moneyText(v *view, s string) string {
	m, err := hosting.ParseMoney(s)
	if err != nil {
		return s
	}
	return v.Money(m)
}

// existing knows which of the account's resources still exist, to link an event to
// its resource: each kind is read once, when a row first needs it.
type existing struct {
	c        *Console
	r        *req
	servers  map[int64]hosting.Server
	keys     map[int64]bool
	projects map[int64]string
	recipes  map[int64]string
	volumes  map[int64]string
	domains  map[int64]string
}

// link is where an event's resource is shown and the link's text, "" when it is
// gone. d is the event's data, nil when only its resource is known.
func (ex *existing) link(e hosting.Event, d *eventData) (string, string, error) {
	id := e.Resource.ID
	switch e.Resource.Type {
	case "operation", "snapshot", "license": // a license is shown on its server's page
		if d == nil {
			return "", "", nil
		}
		if d.VolumeID != 0 { // a volume's operation: shown with its volume
			return ex.volumeLink(d.VolumeID)
		}
		id = d.ServerID
		fallthrough
	case "server":
		if err := ex.loadServers(); err != nil || ex.servers[id].ID == 0 {
			return "", "", err
		}
		return "/servers/" + itoa(id), ex.servers[id].DisplayName, nil
	case "ssh_key":
		if err := ex.loadKeys(); err != nil || !ex.keys[id] {
			return "", "", err
		}
		return "/ssh-keys", ex.r.T("console.nav.keys"), nil
	case "project":
		if err := ex.loadProjects(); err != nil || ex.projects[id] == "" {
			return "", "", err
		}
		return "/servers?project_id=" + itoa(id), ex.projects[id], nil
	case "recipe":
		if err := ex.loadRecipes(); err != nil || ex.recipes[id] == "" {
			return "", "", err
		}
		return "/recipes/" + itoa(id), ex.recipes[id], nil
	case "volume":
		return ex.volumeLink(id)
	case "domain": // a zone's events and its RRsets' (docs/api.md, Domains)
		if err := ex.loadDomains(); err != nil || ex.domains[id] == "" {
			return "", "", err
		}
		return domainURL(id), ex.domains[id], nil
	case "account":
		if familyOf(e.Type) == "billing" {
			return "/billing", ex.r.T("console.nav.billing"), nil
		}
		return "/settings", ex.r.T("console.nav.settings"), nil
	}
	return "", "", nil
}

// name is what the page says its events are about: the name of the resource a
// filters by while it exists, else the resource as the query gave it; "" for all.
func (ex *existing) name(a activityQuery) (string, error) {
	if a.res == nil {
		return "", nil
	}
	link, text, err := ex.link(hosting.Event{Resource: *a.res}, nil)
	if err != nil || link == "" {
		return a.Resource, err
	}
	return text, nil
}

// volumeLink is a volume's page and name while it exists.
func (ex *existing) volumeLink(id int64) (string, string, error) {
	if err := ex.loadVolumes(); err != nil || ex.volumes[id] == "" {
		return "", "", err
	}
	return volumeURL(id), ex.volumes[id], nil
}

// volumeName is a volume's name while it exists, else its id.
func (ex *existing) volumeName(id int64) string {
	if ex.loadVolumes() == nil && ex.volumes[id] != "" {
		return ex.volumes[id]
	}
	return "#" + itoa(id)
}

func (ex *existing) loadVolumes() error {
	if ex.volumes != nil {
		return nil
	}
	list, err := ex.c.svc.Volumes.Volumes(ex.r.ctx(), ex.r.p, store.VolumeFilter{})
	if err != nil {
		return err
	}
	ex.volumes = make(map[int64]string, len(list))
	for _, v := range list {
		ex.volumes[v.ID] = v.Name
	}
	return nil
}

// serverName is a server's display name while it exists, else its id.
func (ex *existing) serverName(id int64) string {
	if ex.loadServers() == nil && ex.servers[id].ID != 0 {
		return ex.servers[id].DisplayName
	}
	return "#" + itoa(id)
}

func (ex *existing) loadServers() error {
	if ex.servers != nil {
		return nil
	}
	list, err := ex.c.svc.Servers.Servers(ex.r.ctx(), ex.r.p, store.ServerFilter{})
	if err != nil {
		return err
	}
	ex.servers = make(map[int64]hosting.Server, len(list))
	for _, s := range list {
		ex.servers[s.ID] = s
	}
	return nil
}

func (ex *existing) loadKeys() error {
	if ex.keys != nil {
		return nil
	}
	list, err := ex.c.svc.SSHKeys.SSHKeys(ex.r.ctx(), ex.r.p)
	if err != nil {
		return err
	}
	ex.keys = map[int64]bool{}
	for _, k := range list {
		ex.keys[k.ID] = true
	}
	return nil
}

func (ex *existing) loadProjects() error {
	if ex.projects != nil {
		return nil
	}
	list, err := ex.c.svc.Projects.Projects(ex.r.ctx(), ex.r.p)
	if err != nil {
		return err
	}
	ex.projects = projectNames(list)
	return nil
}

func (ex *existing) loadRecipes() error {
	if ex.recipes != nil {
		return nil
	}
	list, err := ex.c.svc.Recipes.RecipeNames(ex.r.ctx(), ex.r.p)
	if err != nil {
		return err
	}
	ex.recipes = make(map[int64]string, len(list))
	for _, rc := range list {
		ex.recipes[rc.ID] = rc.Name
	}
	return nil
}

func (ex *existing) loadDomains() error {
	if ex.domains != nil {
		return nil
	}
	list, err := ex.c.svc.Domains.Domains(ex.r.ctx(), ex.r.p)
	if err != nil {
		return err
	}
	ex.domains = make(map[int64]string, len(list))
	for _, d := range list {
		ex.domains[d.ID] = d.Name
	}
	return nil
}
