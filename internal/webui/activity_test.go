package webui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/i18n"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testenv"
)

// The activity page and a server's activity (docs/api.md, Events), through the real
// console.

// addEvents writes events straight into the store, as the changes that report them
// would (the types no change of today writes yet included).
func addEvents(t *testing.T, env *testenv.Env, events ...hosting.Event) []hosting.Event {
	t.Helper()
	var out []hosting.Event
	err := env.App.DB.InTx(context.Background(), func(tx store.Tx) error {
		var err error
		out, err = tx.AddEvents(context.Background(), events)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// forgetEvents removes the account's events so far (its opening credit's top-up),
// so that a test sees only those it makes.
func forgetEvents(t *testing.T, env *testenv.Env, account int64) {
	t.Helper()
	db := env.App.DB
	if _, err := db.WriteDB().Exec(db.Rebind(`DELETE FROM events WHERE account_id = ?`), account); err != nil {
		t.Fatal(err)
	}
}

// sampleEvent is an event of typ with the data its family carries; the server it
// names (9001) does not exist.
func sampleEvent(t *testing.T, account int64, typ hosting.EventType) hosting.Event {
	family, _, _ := strings.Cut(string(typ), ".")
	res := hosting.EventResource{Type: family, ID: 9001}
	var data any
	switch family {
	case "server":
		data = hosting.ServerEventData{ID: 9001, Name: "srv-gone", Status: hosting.StatusRunning, PreviousStatus: hosting.StatusStopped,
			Changes: []string{"display_name"}}
	case "operation":
		sid := int64(9001)
		data = hosting.OperationEventData{ID: 9001, ServerID: &sid, Type: hosting.OpPower, Status: hosting.OpError, Error: "the host is down"}
	case "snapshot":
		data = hosting.SnapshotEventData{ID: 9001, ServerID: 9001, Name: "before-upgrade", Status: "available"}
	case "ssh_key":
		data = hosting.SSHKeyEventData{ID: 9001, Name: "laptop", Fingerprint: "SHA256:x"}
	case "project", "recipe":
		data = hosting.NamedEventData{ID: 9001, Name: "shop"}
	case "billing":
		res, data = hosting.EventResource{Type: "account", ID: account}, hosting.BillingEventData{Credit: "12.5000", Amount: "10.0000"}
	case "account":
		res, data = hosting.EventResource{Type: "account", ID: account}, hosting.AccountEventData{Changes: []string{"language"}, Reason: "credit"}
	case "volume":
		sid := int64(9001)
		data = hosting.VolumeEventData{ID: 9001, Name: "pgdata", SizeGB: 20, Status: hosting.VolumeAvailable, ServerID: &sid,
			Changes: []string{"name"}}
	case "domain":
		data = hosting.DomainEventData{ID: 9001, Name: "example.com", Serial: 2026112701, Changes: []string{"ttl"}}
	case "rrset":
		res, data = hosting.EventResource{Type: "domain", ID: 9001}, hosting.RRsetEventData{DomainID: 9001, Domain: "example.com", Name: "www", Type: "A", Serial: 2026112702}
	case "rdns":
		res, data = hosting.EventResource{Type: "server", ID: 9001}, hosting.RDNSEventData{ServerID: 9001, IP: "192.0.2.7", PTR: "mail.example.com"}
	case "license":
		data = hosting.LicenseEventData{ID: 9001, ServerID: 9001, LicenseID: 1, Name: "windows-server-standard", Status: hosting.LicenseActive}
	case "ticket":
		data = hosting.TicketEventData{ID: 9001, Subject: "Disk full", Status: hosting.TicketOpen, Priority: hosting.PriorityNormal}
	}
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return hosting.Event{AccountID: account, Type: typ, Resource: res, Data: raw, RequestID: "req-" + string(typ), CreatedAt: time.Now()}
}

var eventRowRE = regexp.MustCompile(`(?s)<tr data-event="([^"]+)" data-event-id="(\d+)">(.*?)</tr>`)

type shownEvent struct {
	typ, id, text string
}

// shownEvents are the rows of an events table, in the page's order, as text.
func shownEvents(p page) []shownEvent {
	var out []shownEvent
	tags := regexp.MustCompile(`<[^>]+>`)
	for _, m := range eventRowRE.FindAllStringSubmatch(p.body, -1) {
		text := strings.Join(strings.Fields(html.UnescapeString(tags.ReplaceAllString(m[3], " "))), " ")
		out = append(out, shownEvent{m[1], m[2], text})
	}
	return out
}

// TestEveryEventTypeHasASentence: each type of hosting.EventTypes has its sentence in
// every language of the console, not the English one again.
func TestEveryEventTypeHasASentence(t *testing.T) {
	t.Parallel()
	cat := i18n.MustLoad()
	if !slices.Equal(cat.Languages(), []string{"en", "de", "fr"}) {
		t.Fatalf("languages %v: this test names them", cat.Languages())
	}
	ids := cat.IDs()
	for _, typ := range hosting.EventTypes {
		id := "console.event." + string(typ)
		if !slices.Contains(ids, id) {
			t.Errorf("no message %s", id)
			continue
		}
		for _, lang := range []string{"de", "fr"} {
			if cat.T(lang, id, nil) == cat.T("en", id, nil) {
				t.Errorf("%s in %s is the English sentence", id, lang)
			}
		}
	}
}

// wantSentences are the English sentences of sampleEvent's events.
var wantSentences = map[hosting.EventType]string{
	hosting.EventServerCreated:       "Server srv-gone was ordered.",
	hosting.EventServerUpdated:       "Server srv-gone was changed: Display name.",
	hosting.EventServerStatusChanged: "Server srv-gone went from stopped to running.",
	hosting.EventServerDeleted:       "Server srv-gone was deleted.",
	hosting.EventOperationStarted:    "Operation “power action” on server #9001 started.",
	hosting.EventOperationSucceeded:  "Operation “power action” on server #9001 succeeded.",
	hosting.EventOperationFailed:     "Operation “power action” on server #9001 failed. the host is down",
	hosting.EventSnapshotCreated:     "Snapshot before-upgrade of server #9001 is being taken.",
	hosting.EventSnapshotUpdated:     "Snapshot before-upgrade of server #9001 is now available.",
	hosting.EventSnapshotDeleted:     "Snapshot before-upgrade of server #9001 was deleted.",
	hosting.EventSSHKeyCreated:       "SSH key laptop was added.",
	hosting.EventSSHKeyDeleted:       "SSH key laptop was deleted.",
	hosting.EventProjectCreated:      "Project shop was created.",
	hosting.EventProjectUpdated:      "A project was renamed shop.",
	hosting.EventProjectDeleted:      "Project shop was deleted.",
	hosting.EventRecipeCreated:       "Recipe shop was created.",
	hosting.EventRecipeUpdated:       "Recipe shop was changed.",
	hosting.EventRecipeDeleted:       "Recipe shop was deleted.",
	hosting.EventBillingToppedUp:     "10.00 EUR was added to the credit, which is now 12.50 EUR.",
	hosting.EventBillingAdjusted:     "The provider adjusted the credit by 10.00 EUR; it is now 12.50 EUR.",
	hosting.EventBillingCreditLow:    "The credit is running low: 12.50 EUR is left, less than 7 days at the current cost.",
	hosting.EventAccountUpdated:      "The account's settings were changed: Language.",
	hosting.EventAccountSuspended:    "The servers were suspended: the credit ran out.",
	hosting.EventAccountUnsuspended:  "The suspension was lifted.",
	hosting.EventWebhookCreated:      "A webhook was created.",
	hosting.EventWebhookUpdated:      "A webhook was changed.",
	hosting.EventWebhookDeleted:      "A webhook was deleted.",
	hosting.EventWebhookDisabled:     "Berth disabled a webhook: its receiver is gone or failed every attempt.",
	hosting.EventWebhookTest:         "A webhook was sent a test event.",
	hosting.EventVolumeCreated:       "Volume pgdata is being created.",
	hosting.EventVolumeUpdated:       "Volume pgdata was changed: Name.",
	hosting.EventVolumeAttached:      "Volume pgdata was attached to server #9001.",
	hosting.EventVolumeDetached:      "Volume pgdata was detached from server #9001.",
	hosting.EventVolumeResized:       "Volume pgdata was grown to 20 GB.",
	hosting.EventVolumeDeleted:       "Volume pgdata was deleted.",
	hosting.EventDomainCreated:       "Domain example.com was added.",
	hosting.EventDomainUpdated:       "Domain example.com was changed: TTL.",
	hosting.EventDomainDeleted:       "Domain example.com was deleted.",
	hosting.EventRRsetCreated:        "Records www A were added to domain example.com.",
	hosting.EventRRsetUpdated:        "Records www A of domain example.com were replaced.",
	hosting.EventRRsetDeleted:        "Records www A of domain example.com were deleted.",
	hosting.EventRDNSUpdated:         "The reverse DNS of 192.0.2.7 on server #9001 is now mail.example.com.",
	hosting.EventLicenseCreated:      "Server #9001 holds license windows-server-standard.",
	hosting.EventLicenseActivated:    "License windows-server-standard of server #9001 is active: its vendor activated it.",
	hosting.EventLicenseFailed:       "License windows-server-standard of server #9001 failed: its vendor did not activate it; it was refunded.",
	hosting.EventLicenseCancelled:    "License windows-server-standard of server #9001 was cancelled.",
	hosting.EventTicketCreated:       "Support ticket “Disk full” was opened.",
	hosting.EventTicketReplied:       "Support answered ticket “Disk full”.",
	hosting.EventTicketCustomerReply: "You wrote to support ticket “Disk full”.",
	hosting.EventTicketClosed:        "Support ticket “Disk full” was closed.",
	hosting.EventTicketReopened:      "Support ticket “Disk full” was reopened.",
}

// allActivity is every row of the activity pages (50 rows a page, each linking the
// next older), newest first.
func allActivity(t *testing.T, v *visitor) []shownEvent {
	t.Helper()
	p := v.get("/activity")
	wantStatus(t, p, http.StatusOK)
	rows := shownEvents(p)
	for len(rows) > 0 && len(rows)%50 == 0 {
		more := shownEvents(v.get("/activity?before=" + rows[len(rows)-1].id))
		if len(more) == 0 {
			break
		}
		rows = append(rows, more...)
	}
	return rows
}

// TestActivityShowsEveryType: each event type is shown as its sentence, newest first,
// with the request id, in each language.
func TestActivityShowsEveryType(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	forgetEvents(t, env, a.ID)
	var events []hosting.Event
	for _, typ := range hosting.EventTypes {
		events = append(events, sampleEvent(t, a.ID, typ))
	}
	written := addEvents(t, env, events...)
	rows := allActivity(t, v)
	if len(rows) != len(hosting.EventTypes) {
		t.Fatalf("%d rows, want one per type (%d)", len(rows), len(hosting.EventTypes))
	}
	for i, row := range rows {
		e := written[len(written)-1-i] // newest first
		if row.typ != string(e.Type) || row.id != fmt.Sprint(e.ID) {
			t.Errorf("row %d is %s #%s, want %s #%d (newest first)", i, row.typ, row.id, e.Type, e.ID)
		}
		if s := wantSentences[e.Type]; !strings.Contains(row.text, s) {
			t.Errorf("%s: row %q lacks %q", e.Type, row.text, s)
		}
		if !strings.Contains(row.text, "Request req-"+string(e.Type)) {
			t.Errorf("%s: row %q lacks its request id", e.Type, row.text)
		}
	}
	for _, lang := range []string{"de", "fr"} {
		w, b := signedIn(t, env, lang)
		var es []hosting.Event
		for _, typ := range hosting.EventTypes {
			es = append(es, sampleEvent(t, b.ID, typ))
		}
		addEvents(t, env, es...)
		for _, row := range allActivity(t, w) {
			if s := wantSentences[hosting.EventType(row.typ)]; strings.Contains(row.text, s) || strings.Contains(row.text, "console.") {
				t.Errorf("%s %s: %q is not translated", lang, row.typ, row.text)
			}
		}
	}
}

// TestActivityOfRealChanges: the console's and the API's changes show, newest first,
// linked to what still exists; another account's never show, not even asked for by
// their resource.
func TestActivityOfRealChanges(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	forgetEvents(t, env, a.ID)
	token, _ := apiToken(t, env, a.ID)
	v.get("/projects")
	v.follow(v.post("/projects", url.Values{"name": {"shop"}}))
	v.follow(v.post("/projects", url.Values{"name": {"blog"}}))
	env.Do(token, "POST", "/recipes", map[string]any{"name": "nginx", "script": "#!/bin/sh\n"},
		http.Header{"X-Request-Id": {"req-recipe-1"}}).Want(t, 201)
	blog := projectID(t, env, a, "blog")
	v.follow(v.post("/projects/"+blog+"/delete", nil))

	w, b := signedIn(t, env, "en")
	w.get("/projects")
	w.follow(w.post("/projects", url.Values{"name": {"secret-of-b"}}))
	other := projectID(t, env, b, "secret-of-b")

	p := v.get("/activity")
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, `<a href="/activity" aria-current="page">Activity</a>`)
	rows := shownEvents(p)
	var got []string
	for _, r := range rows {
		got = append(got, r.typ)
	}
	if want := []string{"project.deleted", "recipe.created", "project.created", "project.created"}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for i, want := range []string{"Project blog was deleted. no longer exists", "Recipe nginx was created. Request req-recipe-1 nginx",
		"Project blog was created. no longer exists", "Project shop was created. shop"} {
		if !strings.Contains(rows[i].text, want) {
			t.Errorf("row %d %q lacks %q", i, rows[i].text, want)
		}
	}
	wantText(t, p, `href="/recipes/`, `href="/servers?project_id=`)
	if strings.Contains(p.body, "secret-of-b") {
		t.Error("another account's event is shown")
	}
	p = v.get("/activity?resource=project:" + other)
	wantStatus(t, p, http.StatusOK)
	if len(shownEvents(p)) != 0 || strings.Contains(p.body, "secret-of-b") {
		t.Errorf("another account's project's events: %v", shownEvents(p))
	}
	wantText(t, p, "No events.")
}

func projectID(t *testing.T, env *testenv.Env, a hosting.Account, name string) string {
	t.Helper()
	ps, err := env.App.Service.Projects(context.Background(), hosting.Principal{Account: a})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Name == name {
			return fmt.Sprint(p.ID)
		}
	}
	t.Fatalf("no project %s", name)
	return ""
}

// TestActivityOfVolumeChanges: a volume made, renamed (through its page) and moved to
// a project (as PATCH /volumes/{id} does) is said to have changed its status, name
// and project, in the words of the account's language, as a server's changes are.
func TestActivityOfVolumeChanges(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	for lang, want := range map[string][]string{ // newest first: moved, renamed, made
		"en": {"Volume db was changed: Project.", "Volume db was changed: Name.", "Volume data was changed: Status."},
		"de": {"Volume db wurde geändert: Projekt.", "Volume db wurde geändert: Bezeichnung.", "Volume data wurde geändert: Zustand."},
		"fr": {"Le volume db a été modifié : Projet.", "Le volume db a été modifié : Nom.", "Le volume data a été modifié : État."},
	} {
		v, a := signedIn(t, env, lang)
		path := createVolume(t, v, url.Values{"name": {"data"}, "size_gb": {"10"}, "place": {"location:1"}})
		v.follow(v.post(path+"/rename", url.Values{"name": {"db"}}))
		v.get("/projects")
		v.follow(v.post("/projects", url.Values{"name": {"shop"}}))
		pid, _ := hosting.ParseID(projectID(t, env, a, "shop"))
		vid, _ := hosting.ParseID(strings.TrimPrefix(path, "/volumes/"))
		if _, err := env.App.Service.UpdateVolume(context.Background(), hosting.Principal{Account: a}, hosting.VolumeRef{ID: vid},
			ops.VolumeUpdate{ProjectID: &pid}); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range shownEvents(v.get("/activity?type=volume")) {
			if r.typ == string(hosting.EventVolumeUpdated) {
				got = append(got, r.text)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%s: volume.updated rows %q, want %q", lang, got, want)
		}
		for i := range want {
			if !strings.Contains(got[i], want[i]) {
				t.Errorf("%s: row %q lacks %q", lang, got[i], want[i])
			}
		}
	}
}

// TestActivityPages: 50 events a page, newest first; Older leads on until none are
// left, Newest back to the start, and the filter goes along.
func TestActivityPages(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	var events []hosting.Event
	for i := range 120 {
		e := sampleEvent(t, a.ID, hosting.EventProjectCreated)
		e.Data = []byte(fmt.Sprintf(`{"id":%d,"name":"p-%03d"}`, i+1, i))
		events = append(events, e, sampleEvent(t, a.ID, hosting.EventSSHKeyCreated))
	}
	addEvents(t, env, events...)
	olderRE := regexp.MustCompile(`<a href="([^"]+)" rel="next">`)
	path := "/activity?type=project"
	var names []string
	for pages := 0; path != ""; pages++ {
		if pages == 3 {
			t.Fatal("more than 3 pages of 120 events")
		}
		p := v.get(path)
		wantStatus(t, p, http.StatusOK)
		rows := shownEvents(p)
		if pages < 2 && len(rows) != 50 {
			t.Errorf("page %d has %d rows", pages+1, len(rows))
		}
		for _, r := range rows {
			if r.typ != "project.created" {
				t.Fatalf("page %d shows %s through the project filter", pages+1, r.typ)
			}
			names = append(names, strings.Fields(r.text)[4]) // after the date: "Project p-119 was created."
		}
		wantText(t, p, `<option value="project" selected>`)
		if pages > 0 {
			wantText(t, p, `<a href="/activity?type=project">← Newest</a>`)
		}
		path = ""
		if m := olderRE.FindStringSubmatch(p.body); m != nil {
			path = html.UnescapeString(m[1])
			if !strings.Contains(path, "type=project") {
				t.Errorf("Older %q loses the filter", path)
			}
		}
	}
	if len(names) != 120 || names[0] != "p-119" || names[119] != "p-000" {
		t.Fatalf("%d names, from %v to %v; want p-119 down to p-000", len(names), names[:1], names[len(names)-1:])
	}
	for i := 1; i < len(names); i++ {
		if names[i] >= names[i-1] {
			t.Fatalf("not newest first at %d: %s after %s", i, names[i], names[i-1])
		}
	}
}

// TestActivityFilter: a kind of event, a resource, and what is not one of them.
func TestActivityFilter(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	forgetEvents(t, env, a.ID)
	var events []hosting.Event
	for _, typ := range hosting.EventTypes {
		events = append(events, sampleEvent(t, a.ID, typ))
	}
	key := sampleEvent(t, a.ID, hosting.EventSSHKeyDeleted)
	key.Resource.ID = 42
	addEvents(t, env, append(events, key)...)
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"type=ssh_key", []string{"ssh_key.deleted", "ssh_key.deleted", "ssh_key.created"}},
		{"type=billing", []string{"billing.credit_low", "billing.adjusted", "billing.topped_up"}},
		{"type=operation", []string{"operation.failed", "operation.succeeded", "operation.started"}},
		{"resource=ssh_key:42", []string{"ssh_key.deleted"}},
		{"resource=ssh_key:42&type=project", nil},
		{"type=project&resource=project:9001", []string{"project.deleted", "project.updated", "project.created"}},
	} {
		p := v.get("/activity?" + tt.query)
		wantStatus(t, p, http.StatusOK)
		var got []string
		for _, r := range shownEvents(p) {
			got = append(got, r.typ)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.query, got, tt.want)
		}
	}
	wantText(t, v.get("/activity?resource=ssh_key:42"), `<input type="hidden" name="resource" value="ssh_key:42">`,
		"Only the events of ssh_key:42.")
	for _, tt := range []struct{ query, msg string }{
		{"type=server.created", "Choose one of the kinds of event listed."},
		{"type=*", "Choose one of the kinds of event listed."},
		{"resource=disk:1", "Must name a resource as type:id"},
		{"before=x", "Must be a whole number of at least 1."},
		{"before=0", "Must be a whole number of at least 1."},
	} {
		p := v.get("/activity?" + tt.query)
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantText(t, p, tt.msg)
	}
}

// TestActivityInGerman: the page, its sentences and the server's section speak the
// account's language.
func TestActivityInGerman(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, _ := signedIn(t, env, "de")
	v.get("/projects")
	v.follow(v.post("/projects", url.Values{"name": {"laden"}}))
	p := v.get("/activity")
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, `<html lang="de">`, "<h1>Aktivität</h1>", "Art des Ereignisses", "Alle Arten", "Was geschah",
		"Projekt laden wurde angelegt.")
	p = v.get("/activity?type=xyz")
	wantStatus(t, p, http.StatusUnprocessableEntity)
	wantText(t, p, "Wählen Sie eine der aufgeführten Arten von Ereignissen.")
}

// TestServerActivity: a server's page shows its latest 20 events, none of another
// server's, and links to all of them.
func TestServerActivity(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	token, _ := apiToken(t, env, a.ID)
	srv := env.Do(token, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1, "display_name": "web-1"}, nil).
		Want(t, 201).Map(t)["data"].(map[string]any)
	id := int64(srv["id"].(float64))
	// Provisioned before the test's events, whose order on the page it checks.
	op := int64(srv["operation"].(map[string]any)["id"].(float64))
	env.Do(token, "GET", fmt.Sprintf("/operations/%d?wait=60", op), nil, nil).Want(t, 200)
	var events []hosting.Event
	for i := range 25 {
		e := sampleEvent(t, a.ID, hosting.EventServerUpdated)
		e.Resource.ID = id
		e.Data = []byte(fmt.Sprintf(`{"id":%d,"name":"n-%02d","status":"running","changes":["display_name"]}`, id, i))
		events = append(events, e)
	}
	elsewhere := sampleEvent(t, a.ID, hosting.EventServerDeleted) // server 9001's
	addEvents(t, env, append(events, elsewhere)...)

	p := v.get(fmt.Sprintf("/servers/%d", id))
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, `<h2 id="h-activity">Activity</h2>`, fmt.Sprintf(`<a href="/activity?resource=server%%3A%d">All events of this server`, id))
	var names []string
	for _, r := range shownEvents(p) {
		if r.typ != "server.updated" {
			t.Errorf("the server's page shows %s", r.typ)
		}
		names = append(names, strings.Fields(r.text)[4]) // after the date: "Server n-24 was changed"
	}
	if len(names) != 20 || names[0] != "n-24" || names[19] != "n-05" {
		t.Errorf("%d events %v, want n-24 down to n-05", len(names), names)
	}
	p = v.get(fmt.Sprintf("/activity?resource=server:%d", id))
	updated := 0 // its order wrote server.created and its status changes too
	for _, r := range shownEvents(p) {
		if r.typ == "server.updated" {
			updated++
		}
	}
	if updated != 25 {
		t.Errorf("all of the server's events: %d server.updated rows, want 25", updated)
	}
	wantText(t, p, "Only the events of web-1.", `<a href="/activity">Show the events of everything</a>`)
}
