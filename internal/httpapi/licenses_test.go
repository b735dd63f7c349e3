package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/testenv"
)

// Licenses (docs/api.md, Licenses). The default catalog sells three: 1
// windows-server-standard (4.2000 a vCPU a month, required by image 5, offered at
// location 1), 2 cpanel-solo (19.9900 a server, from a key pool) and 3
// plesk-web-admin (11.4900 a server). Plan 2 has 2 vCPUs, plan 3 has 4.

const (
	licWindows = 1
	licCPanel  = 2
	licPlesk   = 3
	imgWindows = 5
)

// serverLicenses lists a server's licenses by their product id.
func serverLicenses(t testing.TB, c caller, server int64) map[int64]map[string]any {
	t.Helper()
	out := map[int64]map[string]any{}
	for _, l := range items(t, c.Do("GET", fmt.Sprintf("/servers/%d/licenses", server), nil).Want(t, http.StatusOK)) {
		out[num(t, l["license_id"])] = l
	}
	return out
}

// addKeys fills a key pool product's pool.
func addKeys(t testing.TB, env *testenv.Env, license int64, keys ...string) {
	t.Helper()
	if _, err := env.App.Service.AddLicenseKeys(context.Background(), license, keys); err != nil {
		t.Fatal(err)
	}
}

// TestLicensesCatalog: GET /licenses lists the catalog's products as the contract
// shapes them; a key pool without a free key is out of stock until keys are added.
func TestLicensesCatalog(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "read")
	byID := func() map[int64]map[string]any {
		out := map[int64]map[string]any{}
		for _, l := range items(t, a.Do("GET", "/licenses", nil).Want(t, http.StatusOK)) {
			out[num(t, l["id"])] = l
		}
		return out
	}
	ls := byID()
	win := ls[licWindows]
	if win["name"] != "windows-server-standard" || win["vendor"] != "Microsoft" || win["per"] != "vcpu" ||
		win["price_monthly"] != "4.2000" || fmt.Sprint(win["image_ids"]) != "[5]" || win["in_stock"] != true {
		t.Errorf("windows: %v", win)
	}
	if p := ls[licPlesk]; p["per"] != "server" || p["price_monthly"] != "11.4900" || p["in_stock"] != true || fmt.Sprint(p["image_ids"]) != "[]" {
		t.Errorf("plesk: %v", p)
	}
	if c := ls[licCPanel]; c["in_stock"] != false {
		t.Errorf("cpanel with an empty pool: %v, want out of stock", c)
	}
	addKeys(t, env, licCPanel, "CPANEL-KEY-1")
	if c := byID()[licCPanel]; c["in_stock"] != true {
		t.Errorf("cpanel with a key: %v, want in stock", c)
	}
	if _, err := env.App.Service.AddLicenseKeys(context.Background(), licPlesk, []string{"k"}); err == nil {
		t.Error("keys added to a license provisioned without a pool")
	}
	// The keys are stored sealed: the database does not hold them in the clear.
	var sealed []byte
	if err := env.App.DB.WriteDB().QueryRow(`SELECT sealed FROM license_keys`).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if len(sealed) == 0 || bytes.Contains(sealed, []byte("CPANEL-KEY")) {
		t.Errorf("a key pool's key is stored as %q", sealed)
	}
}

// TestServerLicenses: a server's licenses end to end: the image's required one at
// order (per vCPU, not removable), one named in the order (scope licenses too), one
// added from the key pool with its key (only the server's account sees it), the
// rules' 422s, a removal listed as cancelled until its paid month ends, and a
// reinstall that cancels and adds the image's license.
func TestServerLicenses(t *testing.T) {
	t.Parallel()
	env, clock := billingEnv(t)
	clock.Set(billingStart.AddDate(0, 0, 9)) // the 10th
	a := env.NewAccount("en", "100", "")

	// An order of the Windows image holds its license; license_ids needs the scope.
	noLic := tokenCaller{env, a.NewToken("servers")}
	wantError(t, noLic.Do("POST", "/servers", with(baseOrder(), "plan_id", 2, "image_id", imgWindows, "license_ids", []int{licPlesk})),
		http.StatusForbidden, "missing_scope")
	srv := runningServer(t, a, "plan_id", 2, "image_id", imgWindows, "license_ids", []int{licPlesk})
	id := num(t, srv["id"])
	held := serverLicenses(t, a, id)
	win, plesk := held[licWindows], held[licPlesk]
	if len(held) != 2 || win["status"] != "active" || win["key"] != nil || plesk["status"] != "active" {
		t.Fatalf("licenses after the order: %v", held)
	}
	if win["paid_through"] != "2027-01-01T00:00:00Z" || win["started_at"] != "2026-12-10T00:00:00Z" {
		t.Errorf("windows license times: %v", win)
	}
	if got := charged(t, env, hosting.ResourceLicense, num(t, win["id"])); got != money(t, "8.4000") {
		t.Errorf("windows on 2 vCPUs charged %s, want 8.4000", got)
	}
	if got := charged(t, env, hosting.ResourceLicense, num(t, plesk["id"])); got != money(t, "11.4900") {
		t.Errorf("plesk charged %s, want 11.4900", got)
	}
	tx := items(t, a.Do("GET", "/billing/transactions", nil).Want(t, http.StatusOK))
	found := false
	for _, e := range tx {
		if r, ok := e["resource"].(map[string]any); ok && r["type"] == "license" && num(t, r["id"]) == num(t, win["id"]) {
			found = e["amount"] == "-8.4000" && e["period_start"] == "2026-12-01T00:00:00Z" &&
				strings.Contains(e["description"].(string), "windows-server-standard")
		}
	}
	if !found {
		t.Errorf("no ledger entry of the windows license's month: %v", tx)
	}

	// The image's license cannot be removed; a license of no server's is 404.
	e := wantInvalid(t, a.Do("DELETE", fmt.Sprintf("/servers/%d/licenses/%d", id, num(t, win["id"])), nil), "license_id")
	if !strings.Contains(e.Errors["license_id"][0], "image") {
		t.Errorf("removal of the image's license: %v", e.Errors)
	}
	wantNotFound(t, a.Do("DELETE", fmt.Sprintf("/servers/%d/licenses/999999", id), nil))

	// Adding: the rules, each a 422 on license_id.
	path := fmt.Sprintf("/servers/%d/licenses", id)
	wantInvalid(t, a.Do("POST", path, map[string]any{}), "license_id")
	wantInvalid(t, a.Do("POST", path, map[string]any{"license_id": 99}), "license_id")
	wantInvalid(t, a.Do("POST", path, map[string]any{"license_id": licPlesk}), "license_id")
	e = wantInvalid(t, a.Do("POST", path, map[string]any{"license_id": licCPanel}), "license_id")
	if !strings.Contains(e.Errors["license_id"][0], "out of stock") {
		t.Errorf("an empty pool: %v", e.Errors)
	}
	wantError(t, noLic.Do("POST", path, map[string]any{"license_id": licCPanel}), http.StatusForbidden, "missing_scope")
	addKeys(t, env, licCPanel, "CP-0001")
	cp := data(t, a.Do("POST", path, map[string]any{"license_id": licCPanel}).Want(t, http.StatusCreated))
	if cp["status"] != "active" || cp["key"] != "CP-0001" {
		t.Errorf("cpanel license: %v", cp)
	}
	if got := serverLicenses(t, a, id)[licCPanel]["key"]; got != "CP-0001" {
		t.Errorf("cpanel key listed: %v", got)
	}
	other := env.NewAccount("en", "10", "")
	wantNotFound(t, other.Do("GET", path, nil))
	wantNotFound(t, other.Do("DELETE", fmt.Sprintf("%s/%d", path, num(t, cp["id"])), nil))
	// The pool is empty again: out of stock for the next server.
	ls := items(t, a.Do("GET", "/licenses", nil).Want(t, http.StatusOK))
	if ls[licCPanel-1]["in_stock"] != false {
		t.Errorf("the pool's one key is taken, still in stock: %v", ls[licCPanel-1])
	}

	// Removed: cancelled until the paid month ends, its key back in the pool, no
	// refund.
	before := credit(t, a)
	a.Do("DELETE", fmt.Sprintf("%s/%d", path, num(t, cp["id"])), nil).Want(t, http.StatusNoContent)
	wantNotFound(t, a.Do("DELETE", fmt.Sprintf("%s/%d", path, num(t, cp["id"])), nil))
	if got := serverLicenses(t, a, id)[licCPanel]; got["status"] != "cancelled" || got["key"] != nil {
		t.Errorf("removed cpanel license: %v", got)
	}
	if got := credit(t, a); got != before {
		t.Errorf("a removal moved the credit from %s to %s", before, got)
	}
	if ls := items(t, a.Do("GET", "/licenses", nil).Want(t, http.StatusOK)); ls[licCPanel-1]["in_stock"] != true {
		t.Errorf("the key was not given back: %v", ls[licCPanel-1])
	}
	// Not enough credit for a month: insufficient_credit on license_id.
	poor := env.NewAccount("de", "1", "")
	psrv := runningServer(t, poor)
	r := poor.Do("POST", fmt.Sprintf("/servers/%d/licenses", num(t, psrv["id"])), map[string]any{"license_id": licPlesk})
	e = wantError(t, r, http.StatusUnprocessableEntity, "insufficient_credit")
	if !strings.Contains(e.Errors["license_id"][0], "Guthaben") {
		t.Errorf("German refusal: %v", e.Errors)
	}

	// Reinstalled to Ubuntu: the Windows license is cancelled; back to Windows: held
	// again, charged again.
	reinstall := func(image int) {
		t.Helper()
		serverAfter(t, a, data(t, a.Do("POST", fmt.Sprintf("/servers/%d/reinstall", id), map[string]any{"image_id": image}).Want(t, 200)))
	}
	reinstall(1)
	held = serverLicenses(t, a, id)
	if held[licWindows]["status"] != "cancelled" || held[licPlesk]["status"] != "active" {
		t.Errorf("after a reinstall to ubuntu: %v", held)
	}
	reinstall(imgWindows)
	var active int
	for _, l := range items(t, a.Do("GET", path, nil).Want(t, http.StatusOK)) {
		if num(t, l["license_id"]) == licWindows && l["status"] == "active" {
			active++
			if got := charged(t, env, hosting.ResourceLicense, num(t, l["id"])); got != money(t, "8.4000") {
				t.Errorf("windows again: charged %s", got)
			}
		}
	}
	if active != 1 {
		t.Errorf("after a reinstall to windows: %d active windows licenses", active)
	}

	// After the month: the cancelled ones are no longer listed.
	clock.Set(billingStart.AddDate(0, 1, 0))
	meter(t, env)
	for _, l := range items(t, a.Do("GET", path, nil).Want(t, http.StatusOK)) {
		if l["status"] == "cancelled" {
			t.Errorf("listed after its paid month: %v", l)
		}
	}

	// Deleting the server cancels what it holds.
	a.Do("DELETE", fmt.Sprintf("/servers/%d", id), nil).Want(t, http.StatusNoContent)
	evs := items(t, a.Do("GET", "/events?types=license.*", nil).Want(t, http.StatusOK))
	cancelled := 0
	for _, ev := range evs {
		if ev["type"] == "license.cancelled" {
			cancelled++
		}
	}
	if cancelled != 4 { // cpanel, windows (reinstall), then plesk and windows
		t.Errorf("%d license.cancelled events, want 4: %v", cancelled, evs)
	}
}

// TestOrderLicenses: an order's licenses are checked with it, each a 422 on
// license_ids, and its credit check counts their month.
func TestOrderLicenses(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("fr", "100", "")
	for _, ids := range [][]int{{99}, {licPlesk, licPlesk}, {licCPanel}} {
		r := a.Do("POST", "/servers", with(baseOrder(), "license_ids", ids))
		wantInvalid(t, r, "license_ids")
	}
	// 11.4900 of plesk and an hour of plan 1 (0.0070): 11.4969 is too little.
	poor := env.NewAccount("en", "11.4969", "")
	e := wantError(t, poor.Do("POST", "/servers", with(baseOrder(), "license_ids", []int{licPlesk})),
		http.StatusUnprocessableEntity, "insufficient_credit")
	if !strings.Contains(e.Errors["plan_id"][0], "11.4970") {
		t.Errorf("credit refusal: %v", e.Errors)
	}
	if got := credit(t, poor); got != money(t, "11.4969") {
		t.Errorf("a refused order charged: credit %s", got)
	}
	rich := env.NewAccount("en", "11.4970", "")
	order(t, rich, with(baseOrder(), "license_ids", []int{licPlesk}))
	if got := credit(t, rich); got != 0 {
		t.Errorf("credit after the order %s, want 0", got)
	}
	env.AssertLedger(t)
}

// TestLicenseBillingMonths: licenses are charged by the calendar month in the
// metering pass, beside the hourly charges: one held from the 20th to the 3rd of the
// next month is charged twice; a rescale from 2 to 4 vCPUs mid-month charges the
// difference at once and the next month at 4; a month that overdraws suspends the
// account's servers. The ledger balances after each (billingEnv).
func TestLicenseBillingMonths(t *testing.T) {
	t.Parallel()
	t.Run("held from the 20th to the 3rd", func(t *testing.T) {
		t.Parallel()
		env, clock := billingEnv(t)
		clock.Set(billingStart.AddDate(0, 0, 19))
		a := env.NewAccount("en", "100", "")
		srv := runningServer(t, a, "plan_id", 2, "image_id", imgWindows)
		id := num(t, srv["id"])
		lic := num(t, serverLicenses(t, a, id)[licWindows]["id"])
		for _, at := range []time.Time{billingStart.AddDate(0, 0, 25), billingStart.AddDate(0, 1, 0).Add(-time.Millisecond)} {
			clock.Set(at)
			meter(t, env)
			if got := charged(t, env, hosting.ResourceLicense, lic); got != money(t, "8.4000") {
				t.Fatalf("at %s: charged %s, want one month (8.4000)", at, got)
			}
		}
		clock.Set(billingStart.AddDate(0, 1, 0))
		meter(t, env)
		meter(t, env)
		if got := charged(t, env, hosting.ResourceLicense, lic); got != money(t, "16.8000") {
			t.Fatalf("on the first: charged %s, want two months (16.8000)", got)
		}
		if got := serverLicenses(t, a, id)[licWindows]["paid_through"]; got != "2027-02-01T00:00:00Z" {
			t.Errorf("paid through %v", got)
		}
		clock.Set(billingStart.AddDate(0, 1, 2))
		meter(t, env)
		a.Do("DELETE", fmt.Sprintf("/servers/%d", id), nil).Want(t, http.StatusNoContent)
		clock.Set(billingStart.AddDate(0, 3, 0))
		meter(t, env)
		if got := charged(t, env, hosting.ResourceLicense, lic); got != money(t, "16.8000") {
			t.Errorf("after the deletion: charged %s, want two months (16.8000)", got)
		}
	})
	t.Run("rescale 2 to 4 vCPUs mid-month", func(t *testing.T) {
		t.Parallel()
		env, clock := billingEnv(t)
		clock.Set(billingStart.AddDate(0, 0, 9))
		a := env.NewAccount("en", "100", "")
		srv := runningServer(t, a, "plan_id", 2, "image_id", imgWindows)
		id := num(t, srv["id"])
		lic := num(t, serverLicenses(t, a, id)[licWindows]["id"])
		serverAfter(t, a, data(t, a.Do("POST", fmt.Sprintf("/servers/%d/power", id), map[string]any{"action": "off"}).Want(t, 200)))
		clock.Set(billingStart.AddDate(0, 0, 14))
		serverAfter(t, a, data(t, a.Do("POST", fmt.Sprintf("/servers/%d/rescale", id), map[string]any{"plan_id": 3}).Want(t, 200)))
		if got := charged(t, env, hosting.ResourceLicense, lic); got != money(t, "16.8000") {
			t.Fatalf("after the rescale: charged %s, want 8.4000 and the 2 vCPUs more (16.8000)", got)
		}
		// Back down and up again within the month: paid for 4 already.
		serverAfter(t, a, data(t, a.Do("POST", fmt.Sprintf("/servers/%d/rescale", id), map[string]any{"plan_id": 2}).Want(t, 200)))
		serverAfter(t, a, data(t, a.Do("POST", fmt.Sprintf("/servers/%d/rescale", id), map[string]any{"plan_id": 3}).Want(t, 200)))
		if got := charged(t, env, hosting.ResourceLicense, lic); got != money(t, "16.8000") {
			t.Fatalf("after down and up again: charged %s, want still 16.8000", got)
		}
		clock.Set(billingStart.AddDate(0, 1, 0))
		meter(t, env)
		if got := charged(t, env, hosting.ResourceLicense, lic); got != money(t, "33.6000") {
			t.Errorf("the next month on 4 vCPUs: charged %s, want 33.6000", got)
		}
		// The operator's report of December: the most vCPUs the server had in it.
		rows, err := env.App.Service.LicenseReport(context.Background(), billingStart)
		if err != nil || len(rows) != 1 || rows[0].MaxVCPUs != 4 || rows[0].License != "windows-server-standard" ||
			!rows[0].From.Equal(billingStart.AddDate(0, 0, 9)) || !rows[0].To.Equal(billingStart.AddDate(0, 1, 0)) ||
			rows[0].Server != srv["name"] {
			t.Errorf("December's report: %+v, %v", rows, err)
		}
	})
	t.Run("a month that overdraws suspends", func(t *testing.T) {
		t.Parallel()
		env, clock := billingEnv(t)
		clock.Set(billingStart.AddDate(0, 0, 27))
		a := env.NewAccount("en", "13", "")
		srv := runningServer(t, a, "license_ids", []int{licPlesk})
		id := num(t, srv["id"])
		// GET /billing counts the month the licenses will take on the first: the
		// credit lasts the 4 days to it, not the weeks the server's hours alone would.
		if b := data(t, a.Do("GET", "/billing", nil).Want(t, 200)); b["days_left"] == nil || num(t, b["days_left"]) != 4 {
			t.Errorf("days left before a month of licenses the credit cannot pay: %v (credit %v, hourly %v)",
				b["days_left"], b["credit"], b["hourly_burn"])
		}
		clock.Set(billingStart.AddDate(0, 1, 0))
		meter(t, env)
		if got := credit(t, a); got >= 0 {
			t.Fatalf("credit %s after the second month of plesk, want below zero", got)
		}
		if s := data(t, a.Do("GET", fmt.Sprintf("/servers/%d", id), nil).Want(t, 200)); s["status"] != "suspended" {
			t.Errorf("server after an overdrawing license month: %v", s["status"])
		}
	})
}

// TestServerLicenseListBound: a server lists at most 64 licenses, the cancelled ones
// whose month is paid included: adding and removing one over and over stops at 422.
func TestServerLicenseListBound(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 100000})
	a := env.NewAccount("en", "10000", "")
	srv := runningServer(t, a)
	path := fmt.Sprintf("/servers/%d/licenses", num(t, srv["id"]))
	for i := range hosting.MaxListedLicenses {
		l := data(t, a.Do("POST", path, map[string]any{"license_id": licPlesk}).Want(t, http.StatusCreated))
		if i < hosting.MaxListedLicenses-1 {
			a.Do("DELETE", fmt.Sprintf("%s/%d", path, num(t, l["id"])), nil).Want(t, http.StatusNoContent)
		}
	}
	if n := len(items(t, a.Do("GET", path, nil).Want(t, http.StatusOK))); n != hosting.MaxListedLicenses {
		t.Fatalf("%d listed, want %d", n, hosting.MaxListedLicenses)
	}
	wantInvalid(t, a.Do("POST", path, map[string]any{"license_id": licWindows}), "license_id")
}

// TestSandboxClockChargesLicenses: a test clock's advance across month boundaries
// charges each month of a license, as the metering pass would have (docs/api.md, The
// sandbox), for the advancing account only; a reset removes its licenses.
func TestSandboxClockChargesLicenses(t *testing.T) {
	t.Parallel()
	env := clockEnv(t)
	a := env.NewAccount("en", "100", "")
	b := env.NewAccount("en", "100", "")
	for _, acct := range []*testenv.Account{a, b} {
		runningServer(t, acct, "license_ids", []int{licPlesk})
	}
	advance(t, a, "1440h") // March 1 to April 30: April is charged, May not yet
	for _, tc := range []struct {
		acct   *testenv.Account
		months int
	}{{a, 2}, {b, 1}} {
		byType, n := charges(t, env, tc.acct.ID)
		if n[hosting.ResourceLicense] != tc.months || byType[hosting.ResourceLicense] != hosting.Money(tc.months)*money(t, "11.4900") {
			t.Errorf("account %d: %d license charges of %s, want %d months", tc.acct.ID, n[hosting.ResourceLicense],
				byType[hosting.ResourceLicense], tc.months)
		}
	}
	env.AssertLedger(t)
	a.Sandbox("POST", "/reset", map[string]any{}).Want(t, http.StatusOK)
	var left int
	if err := env.App.DB.WriteDB().QueryRow(env.App.DB.Rebind(`SELECT COUNT(*) FROM server_licenses WHERE account_id = ?`), a.ID).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d licenses after a reset", left)
	}
}

// TestLicenseBoundaries: the license of DELETE /servers/{id}/licenses/{license} is a
// positive id of this server's (anything else is 404, and nothing is removed), and
// POST's license_id takes only a positive integer (null, a string, a fraction, a
// number past int64, an empty body, a repeated or case-folded key: 422 naming the
// field, no license added, no credit taken).
func TestLicenseBoundaries(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 30})
	a := env.NewAccount("de", "1000", "")
	srv := runningServer(t, a)
	id := num(t, srv["id"])
	held := data(t, a.Do("POST", fmt.Sprintf("/servers/%d/licenses", id), map[string]any{"license_id": licPlesk}).Want(t, http.StatusCreated))
	before := credit(t, a)
	for _, ref := range []string{"0", "-1", "+" + itoa(num(t, held["id"])), itoa(num(t, held["id"])) + ".0", "abc", "9223372036854775807",
		"9223372036854775808", "99999999999999999999", "%20", "1e3"} {
		wantNotFound(t, a.Do("DELETE", fmt.Sprintf("/servers/%d/licenses/%s", id, ref), nil))
	}
	for _, body := range []string{`{"license_id":null}`, `{"license_id":"2"}`, `{"license_id":1.5}`, `{"license_id":9223372036854775808}`,
		`{"license_id":-1}`, `{"license_id":0}`, `{}`, `{"license_id":[2]}`, `{"license_id":true}`, ``, `null`,
		`{"license_id":2,"license_id":2}`, `{"License_Id":2}`} {
		r := a.Do("POST", fmt.Sprintf("/servers/%d/licenses", id), body)
		if r.Status != http.StatusUnprocessableEntity || r.Map(t)["code"] != "validation_failed" {
			t.Errorf("%s: %d %s, want 422 validation_failed", body, r.Status, r.Body)
			continue
		}
		if errs, _ := r.Map(t)["errors"].(map[string]any); len(errs) == 0 {
			t.Errorf("%s: a 422 that names no field", body)
		}
	}
	if got := serverLicenses(t, a, id); len(got) != 1 {
		t.Errorf("licenses after the refused requests: %v", got)
	}
	if got := credit(t, a); got != before {
		t.Errorf("credit moved from %s to %s by refused requests", before, got)
	}
}
