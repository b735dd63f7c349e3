package webui_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/compute/simdriver"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testenv"
)

// The order form's volumes (docs/api.md, Volumes: an order's volume_ids and
// automount) through the real console on the sim.

// orderVolumesWorld is an account with three volumes besides a server: daten and
// fern detached in locations 1 and 2, belegt attached to the server alt-1.
type orderVolumesWorld struct {
	v                         *visitor
	sim                       *simdriver.Driver
	env                       *testenv.Env
	a                         hosting.Account
	other                     string // alt-1's id
	daten, fern, belegt, base string // the volumes' ids; base: the path of their pages
}

func newOrderVolumesWorld(t *testing.T, lang string) *orderVolumesWorld {
	t.Helper()
	w := &orderVolumesWorld{}
	w.env = testenv.New(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver {
		w.sim, _ = d.(*simdriver.Driver)
		return d
	}})
	w.v, w.a = signedIn(t, w.env, lang)
	token, _ := apiToken(t, w.env, w.a.ID)
	w.other = orderedServer(t, w.env, token, "alt-1", 1)
	id := func(path string) string { return strings.TrimPrefix(path, "/volumes/") }
	w.daten = id(createVolume(t, w.v, url.Values{"name": {"daten"}, "size_gb": {"20"}, "place": {"location:1"}, "format": {"ext4"}}))
	w.fern = id(createVolume(t, w.v, url.Values{"name": {"fern"}, "size_gb": {"10"}, "place": {"location:2"}}))
	w.belegt = id(createVolume(t, w.v, url.Values{"name": {"belegt"}, "size_gb": {"10"}, "place": {"server:" + w.other}}))
	return w
}

// orderOf is an order of web-2 in location 1 with these volumes.
func orderOf(volumeIDs ...string) url.Values {
	return url.Values{"location_id": {"1"}, "plan_id": {"1"}, "source": {"image:1"}, "display_name": {"web-2"}, "volume_ids": volumeIDs}
}

func box(id string, attrs string) string {
	return `<input type="checkbox" name="volume_ids" value="` + id + `"` + attrs + `>`
}

// TestOrderFormOffersVolumes: the form offers the account's detached volumes by
// location, the location ordered in first; those of another location cannot be
// ticked until that location is chosen; an attached one is not offered.
func TestOrderFormOffersVolumes(t *testing.T) {
	t.Parallel()
	w := newOrderVolumesWorld(t, "de")
	p := w.v.get("/servers/new")
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, `<legend>Volumes (Speicher)</legend>`, box(w.daten, ""), "daten", "20 GB · ext4", box(w.fern, " disabled"),
		"An einem anderen Standort: Bestellen Sie dort, um diese anzuhängen.", `name="automount" value="1"`,
		"Jedes wird weiter für sich abgerechnet")
	if here, there := strings.Index(p.body, `data-location="1"`), strings.Index(p.body, `data-location="2"`); here < 0 || there < here {
		t.Errorf("location 1's volumes at %d, location 2's at %d: want the location ordered in first", here, there)
	}
	if strings.Contains(p.body, `name="volume_ids" value="`+w.belegt+`"`) {
		t.Error("a volume attached to a server is offered")
	}
	p = w.v.get("/servers/new?location_id=2")
	wantText(t, p, box(w.fern, ""), box(w.daten, " disabled"))
	if here, there := strings.Index(p.body, `data-location="2"`), strings.Index(p.body, `data-location="1"`); there < here {
		t.Error("location 2 chosen, its volumes are not first")
	}
}

// TestOrderFormVolumeRefusals: what the core refuses of an order's volumes is said
// next to the volumes in the account's language, the form keeping what was ticked;
// nothing is ordered.
func TestOrderFormVolumeRefusals(t *testing.T) {
	t.Parallel()
	w := newOrderVolumesWorld(t, "de")
	w.v.get("/servers/new")
	for _, tt := range []struct {
		ids  []string
		want string
	}{
		{[]string{w.daten, w.fern}, "Volume und Server müssen am selben Standort sein."},
		{[]string{w.daten, w.belegt}, "Das Volume hängt an Server " + w.other + ": Trennen Sie es zuerst."},
		{[]string{w.daten, "999999"}, "Volume 999999 gibt es nicht."},
		{[]string{w.daten, w.daten}, "Volume " + w.daten + " ist doppelt angegeben."},
	} {
		p := w.v.post("/servers", orderOf(tt.ids...))
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantText(t, p, `<html lang="de">`, `value="web-2"`, box(w.daten, " checked"))
		fieldAfter(t, p, `id="order-volumes"`, tt.want)
	}
	servers, err := w.env.App.Service.Servers(context.Background(), hosting.Principal{Account: w.a}, store.ServerFilter{})
	if err != nil || len(servers) != 1 {
		t.Fatalf("refused orders: servers %v (%v), want alt-1 alone", len(servers), err)
	}
}

// TestOrderFormAttachesVolumes: an order with a volume ticked and automount makes the
// server with the volume attached, its filesystem mounted by the guest; the server's
// page lists it.
func TestOrderFormAttachesVolumes(t *testing.T) {
	t.Parallel()
	w := newOrderVolumesWorld(t, "en")
	w.v.get("/servers/new")
	form := orderOf(w.daten)
	form.Set("automount", "1")
	p := w.v.post("/servers", form)
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/servers/") {
		t.Fatalf("order: %d → %q; body: %.2000s", p.status, p.location, p.body)
	}
	sid := strings.TrimPrefix(p.location, "/servers/")
	wantText(t, w.v.follow(p), "web-2 is being set up.", `<tr data-volume="daten">`)
	waitVolume(t, w.v, "/volumes/"+w.daten, `data-attached="`+sid+`"`)
	wantText(t, w.v.get("/servers/"+sid), `<a href="/volumes/`+w.daten+`">daten</a>`)

	id, _ := hosting.ParseID(sid)
	srv, err := w.env.App.Service.Server(context.Background(), hosting.Principal{Account: w.a}, hosting.ServerRef{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	vid, _ := hosting.ParseID(w.daten)
	disks, err := w.sim.GuestDisks(context.Background(), srv.Name)
	if err != nil || len(disks) != 1 || disks[0].Serial != w.daten || disks[0].MountPoint != compute.VolumeMountPoint(vid) {
		t.Errorf("the guest sees %+v (%v), want daten mounted at %s", disks, err, compute.VolumeMountPoint(vid))
	}
}
