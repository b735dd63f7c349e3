package webui_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testenv"
)

// Licenses (docs/api.md, Licenses) through the real console. The default catalog
// sells 1 windows-server-standard (4.2000 a vCPU a month, required by image 5
// windows-server-2022, at location 1), 2 cpanel-solo (19.9900 a server, from a key
// pool: out of stock while it is empty) and 3 plesk-web-admin (11.4900 a server).
// Plan 1 has 1 vCPU, plan 2 has 2.

// licenseBox is the order form's checkbox of a product.
func licenseBox(t *testing.T, p page, id string) string {
	t.Helper()
	m := regexp.MustCompile(`<input type="checkbox" name="license_ids" value="` + id + `"[^>]*>`).FindString(p.body)
	if m == "" {
		t.Fatalf("the form has no box of license %s", id)
	}
	return m
}

// licenseLabel is the text of the order form's label of a product.
func licenseLabel(t *testing.T, p page, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<label class="check" data-license="` + name + `">(.*?)</label>`).FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("the form has no label of %s", name)
	}
	return strings.Join(strings.Fields(html.UnescapeString(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(m[1], " "))), " ")
}

// TestOrderFormOffersLicenses: the order form offers each product with its monthly
// price, a per-vCPU one also with the plan chosen (and each plan's for the script
// to follow the choice); the one the image chosen requires is ticked and says so; an
// empty key pool's is disabled and out of stock; the credit line says licenses are
// charged for the month. In the account's language.
func TestOrderFormOffersLicenses(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, _ := signedIn(t, env, "en")
	p := v.get("/servers/new")
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, "The first hour of the plan and this month of each license are charged when you order.", `<legend>Licenses</legend>`)
	for _, tt := range []struct{ name, want string }{
		{"windows-server-standard", "windows-server-standard Microsoft · 4.20 EUR a month per vCPU · 4.20 EUR a month with s1-1c-1g " +
			"Required by windows-server-2022: a server of it holds this license whatever is ticked."},
		{"cpanel-solo", "cpanel-solo cPanel · 19.99 EUR a month · out of stock"},
		{"plesk-web-admin", "plesk-web-admin Plesk · 11.49 EUR a month"},
	} {
		if got := licenseLabel(t, p, tt.name); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if box := licenseBox(t, p, "1"); strings.Contains(box, "checked") || !strings.Contains(box, `data-images="5"`) ||
		!strings.Contains(html.UnescapeString(box), `"2":"8.40 EUR a month with s2-2c-4g"`) {
		t.Errorf("windows with ubuntu chosen: %s", box)
	}
	if box := licenseBox(t, p, "2"); !strings.Contains(box, " disabled") {
		t.Errorf("cpanel with an empty pool: %s, want disabled", box)
	}
	if box := licenseBox(t, p, "3"); strings.Contains(box, "disabled") || strings.Contains(box, "checked") || strings.Contains(box, "data-plan-prices") {
		t.Errorf("plesk: %s", box)
	}

	// The Windows image and plan 2 chosen: its license is ticked, priced for 2 vCPUs.
	p = v.get("/servers/new?location_id=1&plan_id=2&source=image:5")
	if box := licenseBox(t, p, "1"); !strings.Contains(box, " checked") || strings.Contains(box, "data-ticked") {
		t.Errorf("windows with its image chosen: %s, want ticked (not by the visitor)", box)
	}
	if got := licenseLabel(t, p, "windows-server-standard"); !strings.Contains(got, "4.20 EUR a month per vCPU · 8.40 EUR a month with s2-2c-4g") {
		t.Errorf("windows on plan 2: %q", got)
	}
	// A location that does not offer the image: no word of it.
	if got := licenseLabel(t, v.get("/servers/new?location_id=2"), "windows-server-standard"); strings.Contains(got, "Required") {
		t.Errorf("at hel1 (no Windows image): %q", got)
	}

	de, _ := signedIn(t, env, "de")
	p = de.get("/servers/new")
	wantText(t, p, "Die erste Stunde des Tarifs und dieser Monat jeder Lizenz werden bei der Bestellung berechnet.", `<legend>Lizenzen</legend>`)
	if got := licenseLabel(t, p, "windows-server-standard"); !strings.Contains(got, "4,20 EUR pro Monat je vCPU · 4,20 EUR pro Monat mit s1-1c-1g") {
		t.Errorf("German windows: %q", got)
	}
	if got := licenseLabel(t, p, "cpanel-solo"); got != "cpanel-solo cPanel · 19,99 EUR pro Monat · ausverkauft" {
		t.Errorf("German cpanel: %q", got)
	}
}

// heldBy lists a server's licenses by product name: "status key".
func heldBy(t *testing.T, env *testenv.Env, a hosting.Account, server string) map[string]string {
	t.Helper()
	id, _ := hosting.ParseID(server)
	ls, err := env.App.Service.ServerLicenses(context.Background(), hosting.Principal{Account: a}, hosting.ServerRef{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range ls {
		out[l.Name] = strings.TrimSpace(string(l.Status) + " " + l.Key)
	}
	return out
}

// licenseRow is the text of a server page's row of a license.
func licenseRow(t *testing.T, p page, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr data-license="` + name + `" data-license-id="\d+">(.*?)</tr>`).FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("the page lists no license %s", name)
	}
	return m[1]
}

// TestOrderWithLicenses: an order of the Windows image with plesk ticked holds both,
// each charged for the month (windows for the plan's 2 vCPUs); the server's page
// lists them active, plesk removable, windows not, saying why.
func TestOrderWithLicenses(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	v.get("/servers/new")
	p := v.post("/servers", url.Values{"location_id": {"1"}, "plan_id": {"2"}, "source": {"image:5"}, "display_name": {"win-1"},
		"license_ids": {"3"}})
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/servers/") {
		t.Fatalf("order: %d → %q; body: %.2000s", p.status, p.location, p.body)
	}
	sid := strings.TrimPrefix(p.location, "/servers/")
	if got := heldBy(t, env, a, sid); len(got) != 2 || got["windows-server-standard"] != "active" || got["plesk-web-admin"] != "active" {
		t.Errorf("held after the order: %v", got)
	}
	acct, err := env.App.Service.Account(context.Background(), hosting.Principal{Account: a})
	if err != nil {
		t.Fatal(err)
	}
	// 100 less the first hour of plan 2 (0.0110), windows on 2 vCPUs (8.40), plesk (11.49).
	if want, _ := hosting.ParseMoney("80.099"); acct.Credit != want {
		t.Errorf("credit after the order: %s, want %s", acct.Credit, want)
	}

	p = v.follow(p)
	wantText(t, p, "win-1 is being set up.", `<h2 id="h-licenses">Licenses</h2>`)
	win, plesk := licenseRow(t, p, "windows-server-standard"), licenseRow(t, p, "plesk-web-admin")
	for _, row := range []string{win, plesk} {
		if !strings.Contains(row, `data-license-status="active">active</span>`) || strings.Contains(row, "<input") {
			t.Errorf("a row: %s, want active without a key", row)
		}
	}
	if strings.Contains(win, "remove") || !strings.Contains(html.UnescapeString(win), "Required by the image windows-server-2022: reinstall another image to drop it.") {
		t.Errorf("windows' row: %s, want not removable, saying why", win)
	}
	if !strings.Contains(plesk, `data-action="remove-license"`) || !strings.Contains(plesk, `<form method="get" action="/servers/`+sid+`/licenses/`) {
		t.Errorf("plesk's row: %s, want its removal behind the confirmation page", plesk)
	}
	// Neither is offered again; cpanel is, out of stock.
	add := regexp.MustCompile(`(?s)<select id="license_id" name="license_id" required>(.*?)</select>`).FindStringSubmatch(p.body)
	if add == nil || strings.Contains(add[1], "plesk") || strings.Contains(add[1], "windows") ||
		!strings.Contains(html.UnescapeString(add[1]), `<option value="2" disabled>cpanel-solo (cPanel) · 19.99 EUR a month · out of stock</option>`) {
		t.Errorf("the licenses offered to add: %v", add)
	}
}

// TestOrderFormLicenseRefusals: what the core refuses of an order's licenses is said
// next to the licenses in the account's language, the form keeping what was ticked;
// a credit that does not cover them names the amount by the console's money rule;
// nothing is ordered.
func TestOrderFormLicenseRefusals(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "de")
	v.get("/servers/new")
	for _, tt := range []struct {
		ids   []string
		field string
		want  string
	}{
		{[]string{"3", "999999"}, `id="order-licenses"`, "Eine Lizenz mit der ID 999999 wird nicht angeboten."},
		{[]string{"3", "2"}, `id="order-licenses"`, "Die Lizenz cpanel-solo ist nicht vorrätig."},
		{[]string{"3", "3"}, `id="order-licenses"`, "Die Lizenz 3 ist mehrfach angegeben."},
	} {
		p := v.post("/servers", url.Values{"location_id": {"1"}, "plan_id": {"1"}, "source": {"image:1"}, "display_name": {"web-2"},
			"license_ids": tt.ids})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantText(t, p, `<html lang="de">`, `value="web-2"`)
		if box := licenseBox(t, p, "3"); !strings.Contains(box, " checked") {
			t.Errorf("%v: plesk is no longer ticked: %s", tt.ids, box)
		}
		fieldAfter(t, p, tt.field, tt.want)
	}

	// Too little credit for the plan's hour and the license's month.
	poorEmail := "poor-licenses@example.com"
	five, _ := hosting.ParseMoney("5")
	if _, err := env.App.Service.CreateAccount(context.Background(), ops.NewAccount{Email: poorEmail, Password: password,
		Language: "en", Credit: five}); err != nil {
		t.Fatal(err)
	}
	poor := newVisitor(t, env)
	wantStatus(t, poor.signIn(poorEmail, password), http.StatusSeeOther)
	poor.get("/servers/new")
	p := poor.post("/servers", url.Values{"location_id": {"1"}, "plan_id": {"1"}, "source": {"image:1"}, "license_ids": {"3"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	wantText(t, p, "ordering this plan with its licenses needs at least 11.497 EUR")

	servers, err := env.App.Service.Servers(context.Background(), hosting.Principal{Account: a}, store.ServerFilter{})
	if err != nil || len(servers) != 0 {
		t.Fatalf("refused orders made %d servers (%v)", len(servers), err)
	}
}

// TestServerLicensesAddRemove: a server's page adds a license (charged, listed
// active), one from the key pool with its key shown read-only to its account alone;
// the core's refusals come back in the account's language; a removal asks first
// (Cancel changes nothing), then lists it cancelled until its paid month ends, no
// longer removable; the forms need the CSRF token, and a blocked account changes
// nothing.
func TestServerLicensesAddRemove(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	token, _ := apiToken(t, env, a.ID)
	sid := orderedServer(t, env, token, "web-1", 1)
	base := "/servers/" + sid
	p := v.get(base)
	wantText(t, p, "This server holds no licenses.", `<label for="license_id">Add a license</label>`,
		`<option value="1">windows-server-standard (Microsoft) · 4.20 EUR a month on this server (4.20 EUR per vCPU)</option>`)

	// Without the CSRF token: refused, nothing added.
	wantStatus(t, v.post(base+"/licenses", url.Values{"license_id": {"3"}, "csrf": {"forged"}}), http.StatusForbidden)
	if got := heldBy(t, env, a, sid); len(got) != 0 {
		t.Fatalf("a forged form added %v", got)
	}

	p = v.follow(v.post(base+"/licenses", url.Values{"license_id": {"3"}}))
	wantText(t, p, "License plesk-web-admin was added; this month was charged.")
	if row := licenseRow(t, p, "plesk-web-admin"); !strings.Contains(row, `data-license-status="active"`) {
		t.Errorf("plesk after adding: %s", row)
	}
	// The core's refusals, as a notice: held already, out of stock, unknown.
	for _, tt := range []struct{ id, want string }{
		{"3", "The server holds license 3 already."},
		{"2", "License cpanel-solo is out of stock."},
		{"999999", "No license with id 999999 is sold."},
		{"", "This field is required."},
	} {
		p := v.post(base+"/licenses", url.Values{"license_id": {tt.id}})
		if p.status != http.StatusSeeOther || p.location != base {
			t.Fatalf("license %q: %d → %q", tt.id, p.status, p.location)
		}
		wantText(t, v.follow(p), `<div class="notice error" role="alert"><p>`+tt.want+`</p>`)
	}

	// A key from the pool, shown to its account only, read-only.
	if _, err := env.App.Service.AddLicenseKeys(context.Background(), 2, []string{"CPANEL-7Q2-XK"}); err != nil {
		t.Fatal(err)
	}
	v.follow(v.post(base+"/licenses", url.Values{"license_id": {"1"}}))
	p = v.follow(v.post(base+"/licenses", url.Values{"license_id": {"2"}}))
	if strings.Contains(p.body, `id="license_id"`) || !strings.Contains(p.body, "The server holds every license sold.") {
		t.Error("a server holding every license is offered one to add")
	}
	if row := licenseRow(t, p, "cpanel-solo"); !regexp.MustCompile(`<input id="license-key-\d+" class="mono" readonly value="CPANEL-7Q2-XK" aria-label="Activation key of cpanel-solo"`).MatchString(row) {
		t.Errorf("cpanel's row: %s, want its key read-only", row)
	}
	other, _ := signedIn(t, env, "en")
	if p := other.get(base); p.status != http.StatusNotFound || strings.Contains(p.body, "CPANEL-7Q2-XK") {
		t.Errorf("another account sees the server's page: %d", p.status)
	}
	wantStatus(t, other.get(base+"/licenses/1/remove"), http.StatusNotFound)

	// The removal asks first, saying the month is not refunded.
	lid := regexp.MustCompile(`<tr data-license="plesk-web-admin" data-license-id="(\d+)">`).FindStringSubmatch(p.body)[1]
	ask := v.get(base + "/licenses/" + lid + "/remove")
	wantStatus(t, ask, http.StatusOK)
	wantText(t, ask, "Remove license plesk-web-admin from web-1? Its paid month is not refunded: it stays listed as cancelled until ",
		`<form method="post" action="`+base+`/licenses/`+lid+`/remove"`, `<a href="`+base+`" data-cancel>Cancel</a>`)
	if got := heldBy(t, env, a, sid)["plesk-web-admin"]; got != "active" {
		t.Fatalf("the question removed plesk: %q", got)
	}
	wantStatus(t, v.post(base+"/licenses/"+lid+"/remove", url.Values{"csrf": {"forged"}}), http.StatusForbidden)
	p = v.follow(v.post(base+"/licenses/"+lid+"/remove", nil))
	wantText(t, p, "License plesk-web-admin was cancelled: it stays listed until its paid month ends.")
	if row := licenseRow(t, p, "plesk-web-admin"); !strings.Contains(row, `data-license-status="cancelled">cancelled</span>`) ||
		strings.Contains(row, "remove") {
		t.Errorf("plesk after its removal: %s, want cancelled and not removable", row)
	}
	if got := heldBy(t, env, a, sid); got["plesk-web-admin"] != "cancelled" || got["cpanel-solo"] != "active CPANEL-7Q2-XK" ||
		got["windows-server-standard"] != "active" {
		t.Errorf("after the removal: %v", got)
	}
	// Cancelled: not removable again; offered again.
	wantStatus(t, v.get(base+"/licenses/"+lid+"/remove"), http.StatusNotFound)
	wantStatus(t, v.post(base+"/licenses/"+lid+"/remove", nil), http.StatusNotFound)
	wantText(t, v.get(base), `<option value="3">plesk-web-admin (Plesk) · 11.49 EUR a month</option>`)

	// A blocked account may look, not change.
	if _, err := env.App.Service.SetAccountBlocked(context.Background(), a.ID, true); err != nil {
		t.Fatal(err)
	}
	v.get(base)
	wantStatus(t, v.post(base+"/licenses", url.Values{"license_id": {"3"}}), http.StatusForbidden)
	if got := heldBy(t, env, a, sid)["plesk-web-admin"]; got != "cancelled" {
		t.Errorf("a blocked account added plesk: %q", got)
	}
}

// TestImageLicenseNotRemovable: the license a server's image requires is not
// removable from its page, and a crafted removal is refused in the account's
// language; it stays active.
func TestImageLicenseNotRemovable(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "de")
	v.get("/servers/new")
	p := v.post("/servers", url.Values{"location_id": {"1"}, "plan_id": {"1"}, "source": {"image:5"}, "display_name": {"win-1"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("order: %d; body: %.2000s", p.status, p.body)
	}
	base := p.location
	p = v.follow(p)
	row := licenseRow(t, p, "windows-server-standard")
	if strings.Contains(row, "remove") || !strings.Contains(html.UnescapeString(row), "Erforderlich für das Image windows-server-2022") {
		t.Errorf("windows' row: %s", row)
	}
	lid := regexp.MustCompile(`<tr data-license="windows-server-standard" data-license-id="(\d+)">`).FindStringSubmatch(p.body)
	ask := v.get(base + "/licenses/" + lid[1] + "/remove")
	wantStatus(t, ask, http.StatusUnprocessableEntity)
	wantText(t, ask, "Das Image des Servers erfordert diese Lizenz")
	p = v.post(base+"/licenses/"+lid[1]+"/remove", nil)
	wantText(t, v.follow(p), "Das Image des Servers erfordert diese Lizenz: Installieren Sie ein anderes Image, um sie abzugeben.")
	if got := heldBy(t, env, a, strings.TrimPrefix(base, "/servers/"))["windows-server-standard"]; got != "active" {
		t.Errorf("windows after a removal refused: %q", got)
	}
}
