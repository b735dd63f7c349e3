package webui_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testenv"
)

// The Volumes pages (docs/api.md, Volumes) through the real console on the sim.

// orderedServer orders a server through the API and waits until it runs; it answers
// its id.
func orderedServer(t *testing.T, env *testenv.Env, token, name string, location int) string {
	t.Helper()
	srv := env.Do(token, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": location, "image_id": 1, "display_name": name}, nil).
		Want(t, 201).Map(t)["data"].(map[string]any)
	op := int64(srv["operation"].(map[string]any)["id"].(float64))
	env.Do(token, "GET", fmt.Sprintf("/operations/%d?wait=60", op), nil, nil).Want(t, 200)
	return fmt.Sprint(srv["id"])
}

var volumeIDRE = regexp.MustCompile(`^/volumes/(\d+)$`)

// createVolume makes a volume through the form and its price's page, and answers
// its page's path once it is available.
func createVolume(t *testing.T, v *visitor, form url.Values) string {
	t.Helper()
	v.get("/volumes")
	p := v.post("/volumes", form)
	wantStatus(t, p, http.StatusOK)
	confirm := url.Values{"confirm": {"1"}}
	for k := range form {
		confirm.Set(k, form.Get(k))
	}
	p = v.post("/volumes", confirm)
	if p.status != http.StatusSeeOther || !volumeIDRE.MatchString(p.location) {
		t.Fatalf("create: %d → %q; body: %.800s", p.status, p.location, p.body)
	}
	waitVolume(t, v, p.location, `data-status="available"`)
	return p.location
}

// waitVolume reloads a volume's page until it shows want and no operation.
func waitVolume(t *testing.T, v *visitor, path, want string) page {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p := v.get(path)
		if p.status == http.StatusOK && strings.Contains(p.body, want) && !strings.Contains(p.body, "data-operation=") {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never shows %s: %.3000s", path, want, p.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConsoleVolumes walks a volume's life through the pages: its price shown before
// it is made (nothing made yet), made, listed, attached to a server of its location
// (the server's page lists it), refused deletion while attached, grown only after its
// new price is shown, renamed, detached and deleted after the confirmation page.
func TestConsoleVolumes(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	token, _ := apiToken(t, env, a.ID)
	sid := orderedServer(t, env, token, "web-1", 1)
	orderedServer(t, env, token, "far-away", 2)

	p := v.get("/volumes")
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, `<a href="/volumes" aria-current="page">Volumes</a>`, "No volumes yet.",
		`<option value="location:1" selected>fsn1 (Falkenstein) · 0.044 EUR per GB a month at most</option>`,
		`<option value="server:`+sid+`">web-1 (fsn1 (Falkenstein))</option>`)
	p = v.post("/volumes", url.Values{"name": {"data"}, "size_gb": {"50"}, "place": {"location:1"}, "format": {"ext4"}})
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, "Create this volume?", "50 GB", "fsn1 (Falkenstein)", "0.005 EUR an hour, at most 2.20 EUR a month",
		`name="confirm" value="1"`)
	if vols := volumesOf(t, env, a); len(vols) != 0 {
		t.Fatalf("the price's page made %d volumes", len(vols))
	}
	path := createVolume(t, v, url.Values{"name": {"data"}, "size_gb": {"50"}, "place": {"location:1"}, "format": {"ext4"}})
	id := strings.TrimPrefix(path, "/volumes/")
	p = v.get("/volumes")
	wantText(t, p, `<a href="`+path+`">data</a>`, `data-size="50">50 GB`, "not attached", `data-status="available"`, "ext4")

	// Only the servers of its location are offered.
	p = v.get(path)
	wantText(t, p, `<option value="`+sid+`">web-1 (running)</option>`, "/dev/disk/by-id/scsi-0BERTH_Volume_"+id)
	if strings.Contains(p.body, "far-away") {
		t.Error("a server of another location is offered")
	}
	wantText(t, v.follow(v.post(path+"/attach", url.Values{"server_id": {sid}})), "The volume is being attached.")
	p = waitVolume(t, v, path, `data-attached="`+sid+`"`)
	wantText(t, p, `<a href="/servers/`+sid+`">web-1</a>`)
	wantText(t, v.get("/volumes"), `<a href="/servers/`+sid+`">web-1</a>`)
	wantText(t, v.get("/servers/"+sid), `<a href="`+path+`">data</a>`, `<a href="/volumes">All volumes</a>`)

	p = v.get(path + "/delete")
	wantText(t, p, "data is attached to web-1: detach it first.")
	if strings.Contains(p.body, `action="`+path+`/delete"`) {
		t.Error("the confirmation page of an attached volume offers to delete it")
	}
	p = v.post(path+"/delete", nil)
	wantStatus(t, p, http.StatusUnprocessableEntity)
	wantText(t, p, "The volume is attached: detach it first.")

	growVolume(t, v, path)
	p = v.post(path+"/rename", url.Values{"name": {"db"}})
	wantText(t, v.follow(p), "Saved.", "<h1>db</h1>")

	wantText(t, v.follow(v.post(path+"/detach", nil)), "The volume is being detached.")
	waitVolume(t, v, path, `data-attached=""`)
	wantText(t, v.get(path+"/delete"), "Delete db (100 GB) and its data?")
	p = v.follow(v.post(path+"/delete", nil))
	wantText(t, p, "Volume db was deleted.", "No volumes yet.")
	wantStatus(t, v.get(path), http.StatusNotFound)
}

// growVolume refuses a smaller size next to its field, then grows the volume to 100
// GB after the page that shows its new price.
func growVolume(t *testing.T, v *visitor, path string) {
	t.Helper()
	p := v.post(path+"/resize", url.Values{"size_gb": {"40"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	wantText(t, p, "A volume only grows: give more than 50 GB.", `value="40"`)
	fieldAfter(t, p, `id="resize_size"`, "A volume only grows")
	p = v.post(path+"/resize", url.Values{"size_gb": {"100"}})
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, "data grows from 50 GB to 100 GB.", "0.005 EUR an hour, at most 2.20 EUR a month",
		"0.01 EUR an hour, at most 4.40 EUR a month")
	if p := v.get(path); !strings.Contains(p.body, `data-size="50"`) {
		t.Fatal("the price's page grew the volume")
	}
	wantText(t, v.follow(v.post(path+"/resize", url.Values{"size_gb": {"100"}, "confirm": {"1"}})), "The volume is being grown.")
	wantText(t, waitVolume(t, v, path, `data-size="100"`), "0.01 EUR an hour, at most 4.40 EUR a month")
}

// fieldAfter fails unless msg is shown after the field and before the form's end.
func fieldAfter(t *testing.T, p page, field, msg string) {
	t.Helper()
	at := strings.Index(p.body, field)
	if at < 0 {
		t.Fatalf("no %s", field)
	}
	rest := html.UnescapeString(p.body[at:])
	end := strings.Index(rest, "</form>")
	if m := strings.Index(rest, `<span class="field-error">`+msg); m < 0 || m > end {
		t.Errorf("%q is not shown next to %s", msg, field)
	}
}

func volumesOf(t *testing.T, env *testenv.Env, a hosting.Account) []hosting.Volume {
	t.Helper()
	vols, err := env.App.Service.Volumes(context.Background(), hosting.Principal{Account: a}, store.VolumeFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return vols
}

// TestConsoleVolumeRefusals: what the rules refuse is said next to its field in the
// account's language, with what was entered kept; another account's volume is not
// found; a form without the CSRF token changes nothing.
func TestConsoleVolumeRefusals(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "de")
	v.get("/volumes")
	for _, tt := range []struct {
		form        url.Values
		field, want string
	}{
		{url.Values{"name": {"Daten!"}, "size_gb": {"20"}, "place": {"location:1"}}, `id="volume_name"`,
			"Kleinbuchstaben, Ziffern und Bindestriche"},
		{url.Values{"name": {"daten"}, "size_gb": {"5"}, "place": {"location:1"}}, `id="volume_size"`, "Muss zwischen 10 und 10240 GB liegen."},
		{url.Values{"name": {"daten"}, "size_gb": {"zwanzig"}, "place": {"location:1"}}, `id="volume_size"`, "Muss zwischen 10 und 10240 GB liegen."},
		{url.Values{"name": {"daten"}, "size_gb": {"20"}, "place": {"location:1"}, "format": {"ext4"}, "automount": {"1"}}, `name="automount"`,
			"Automount braucht einen Server"},
		{url.Values{"name": {"daten"}, "size_gb": {"20"}, "place": {"server:999999"}}, `id="volume_place"`, "Diesen Server gibt es nicht."},
		{url.Values{"name": {"daten"}, "size_gb": {"20"}, "place": {"location:1"}, "format": {"ntfs"}}, `id="volume_format"`, "Muss eines davon sein: ext4, xfs."},
	} {
		for _, confirm := range []string{"", "1"} {
			form := url.Values{"confirm": {confirm}}
			for k := range tt.form {
				form.Set(k, tt.form.Get(k))
			}
			p := v.post("/volumes", form)
			wantStatus(t, p, http.StatusUnprocessableEntity)
			wantText(t, p, `<html lang="de">`, tt.want, `value="`+tt.form.Get("name")+`"`)
			fieldAfter(t, p, tt.field, tt.want)
		}
	}
	if vols := volumesOf(t, env, a); len(vols) != 0 {
		t.Fatalf("refused forms made %d volumes", len(vols))
	}
	path := createVolume(t, v, url.Values{"name": {"daten"}, "size_gb": {"20"}, "place": {"location:1"}})
	p := v.post(path+"/rename", url.Values{"name": {"Daten"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	fieldAfter(t, p, `id="rename_name"`, "Kleinbuchstaben, Ziffern und Bindestriche")
	p = v.post(path+"/attach", url.Values{"server_id": {"999999"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	wantText(t, p, `<span class="field-error">Diesen Server gibt es nicht.</span>`)

	other, _ := signedIn(t, env, "en")
	other.get("/volumes")
	wantStatus(t, other.get(path), http.StatusNotFound)
	wantStatus(t, other.get(path+"/delete"), http.StatusNotFound)
	for _, action := range []string{"/attach", "/detach", "/resize", "/rename", "/delete"} {
		wantStatus(t, other.post(path+action, url.Values{"size_gb": {"30"}, "name": {"mine"}, "confirm": {"1"}}), http.StatusNotFound)
	}
	wantStatus(t, v.post(path+"/delete", url.Values{"csrf": {"forged"}}), http.StatusForbidden)
	wantStatus(t, v.post("/volumes", url.Values{"csrf": {"forged"}, "confirm": {"1"}, "name": {"forged"}, "size_gb": {"10"},
		"place": {"location:1"}}), http.StatusForbidden)
	if vols := volumesOf(t, env, a); len(vols) != 1 || vols[0].Name != "daten" {
		t.Fatalf("volumes after refused forms: %+v", vols)
	}
}

// attachGate holds the sim's volume attachments until released, so that a test sees
// an attachment's operation while it runs.
type attachGate struct {
	compute.Driver
	compute.Volumes
	release chan struct{}
}

func (g *attachGate) Unwrap() []compute.Driver { return []compute.Driver{g.Driver} }

func (g *attachGate) AttachVolume(ctx context.Context, key, machine string, spec compute.VolumeSpec, automount bool) error {
	select {
	case <-g.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Volumes.AttachVolume(ctx, key, machine, spec, automount)
}

// TestConsoleVolumeBusy: while a volume's attachment runs, its page, the list and
// the server's page (which lists it) say so in words of the account's language, and
// poll for its end; a change of the volume, a volume made on the server, or a server
// ordered with it, meanwhile is refused with the reason.
func TestConsoleVolumeBusy(t *testing.T) {
	t.Parallel()
	var gate *attachGate
	env := testenv.New(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver {
		vs, _ := compute.As[compute.Volumes](d)
		gate = &attachGate{Driver: d, Volumes: vs, release: make(chan struct{})}
		return gate
	}})
	v, a := signedIn(t, env, "en")
	token, _ := apiToken(t, env, a.ID)
	sid := orderedServer(t, env, token, "web-1", 1)
	path := createVolume(t, v, url.Values{"name": {"data"}, "size_gb": {"10"}, "place": {"location:1"}})
	v.follow(v.post(path+"/attach", url.Values{"server_id": {sid}}))

	p := v.get(path)
	wantText(t, p, `data-operation="attach_volume"`, "in progress: volume attachment", `hx-get="`+path+`" hx-trigger="every 2s"`)
	if strings.Contains(p.body, `data-action="detach"`) || strings.Contains(p.body, `data-action="attach"`) {
		t.Error("a busy volume offers to attach or detach")
	}
	wantText(t, v.get("/volumes"), `data-operation="attach_volume"`, `hx-get="/volumes" hx-trigger="every 2s"`)
	// The server's page names the operation in words and lists the volume on its way,
	// refreshed with the status.
	wantText(t, v.get("/servers/"+sid), `<span data-operation="attach_volume">in progress: volume attachment</span>`,
		`<tr data-volume="data">`, `hx-select-oob="#server-volumes,#server-licenses,#server-operations"`)
	p = v.follow(v.post(path+"/resize", url.Values{"size_gb": {"20"}, "confirm": {"1"}}))
	wantText(t, p, `class="notice error"`, "The volume is busy with another operation (volume attachment)")
	// The server it attaches to is held too: a volume made on it is refused above the
	// form, which keeps what was entered.
	p = v.post("/volumes", url.Values{"name": {"logs"}, "size_gb": {"10"}, "place": {"server:" + sid}, "confirm": {"1"}})
	wantStatus(t, p, http.StatusConflict)
	wantText(t, p, "The server is busy with another operation (volume attachment)", `value="logs"`, `<option value="server:`+sid+`" selected>`)
	orderBusyVolume(t, v, strings.TrimPrefix(path, "/volumes/"))
	for lang, want := range map[string]string{"de": "läuft gerade: Anhängen eines Volumes", "fr": "en cours : attachement de volume"} {
		v.follow(v.post("/settings/language", url.Values{"language": {lang}}))
		wantText(t, v.get("/servers/"+sid), want)
	}
	close(gate.release)
	p = waitVolume(t, v, path, `data-attached="`+sid+`"`)
	if strings.Contains(p.body, "hx-trigger") {
		t.Error("the page still polls once the volume is idle")
	}
}

// orderBusyVolume: the order form offers a volume being attached, not to be ticked,
// saying why; an order with it is refused above the form, which keeps what was
// entered.
func orderBusyVolume(t *testing.T, v *visitor, id string) {
	t.Helper()
	p := v.get("/servers/new")
	wantText(t, p, `<input type="checkbox" name="volume_ids" value="`+id+`" disabled>`, "in progress: volume attachment")
	p = v.post("/servers", url.Values{"location_id": {"1"}, "plan_id": {"1"}, "source": {"image:1"}, "display_name": {"web-2"},
		"volume_ids": {id}})
	wantStatus(t, p, http.StatusConflict)
	wantText(t, p, `class="notice error"`, "The volume is busy with another operation (volume attachment)", `value="web-2"`)
}

// TestActivityOfVolumes: a volume's events link to its page while it exists, named;
// its operation that concerns no server names the volume, not a server; the kind
// "Volumes" is offered by its name.
func TestActivityOfVolumes(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	forgetEvents(t, env, a.ID)
	path := createVolume(t, v, url.Values{"name": {"data"}, "size_gb": {"10"}, "place": {"location:1"}})
	p := v.get("/activity")
	wantText(t, p, `<option value="volume">Volumes</option>`)
	got := map[string]string{}
	for _, r := range shownEvents(p) {
		got[r.typ] += r.text + "|"
	}
	for typ, want := range map[string]string{
		"volume.created":      "Volume data is being created. data",
		"operation.started":   "Operation “volume creation” on volume data started.",
		"operation.succeeded": "Operation “volume creation” on volume data succeeded.",
	} {
		if !strings.Contains(got[typ], want) {
			t.Errorf("%s: %q lacks %q", typ, got[typ], want)
		}
	}
	if n := strings.Count(p.body, `<a href="`+path+`">data</a>`); n < 4 { // created, updated, started, succeeded
		t.Errorf("%d events link to the volume's page, want 4: %v", n, got)
	}
	wantText(t, v.get("/activity?resource=volume:"+strings.TrimPrefix(path, "/volumes/")), "Only the events of data.")
	v.follow(v.post(path+"/delete", nil))
	p = v.get("/activity")
	if strings.Contains(p.body, `href="`+path+`"`) {
		t.Error("a deleted volume's events still link to its page")
	}
	wantText(t, p, "Volume data was deleted.")
}
