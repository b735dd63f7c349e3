package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/testenv"
)

// Billing tests run on a fake clock: a month passes in milliseconds. Every test ends
// by asserting the ledger invariants (testenv.AssertLedger).

// billingStart is midnight of the first of a 31-day month.
var billingStart = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// Extra plans for billing tests, offered at location 1 (snapshot price 0.0001/GB-h):
// plan 7's month costs less than its hourly price for every hour of it (never capped);
// plan 8's disk makes a 20 GB disk-only snapshot in the sim driver.
func billingCatalog() hosting.Catalog {
	c := catalog.Default()
	c.Plans = append(c.Plans,
		hosting.Plan{ID: 7, Name: "u1-uncapped", VCPUs: 1, MemoryMB: 1024, DiskGB: 25, PriceHourly: 100, PriceMonthly: 100000},
		hosting.Plan{ID: 8, Name: "d1-58g", VCPUs: 1, MemoryMB: 1024, DiskGB: 58, PriceHourly: 70, PriceMonthly: 45100})
	c.Locations[0].Offers = append(c.Locations[0].Offers, hosting.PlanOffer{PlanID: 7}, hosting.PlanOffer{PlanID: 8})
	return c
}

func billingEnv(t *testing.T, opts ...testenv.Options) (*testenv.Env, *testenv.FakeClock) {
	t.Helper()
	clock := testenv.NewFakeClock(billingStart)
	var o testenv.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Clock = clock.Now
	env := testenv.New(t, o)
	if err := env.App.Service.ApplyCatalog(context.Background(), billingCatalog()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.AssertLedger(t) })
	return env, clock
}

// meter runs a metering pass at the clock's time.
func meter(t testing.TB, env *testenv.Env) {
	t.Helper()
	if _, err := env.App.Service.Meter(context.Background()); err != nil {
		t.Fatalf("metering pass: %v", err)
	}
}

// charged is what a resource's charges came to.
func charged(t testing.TB, env *testenv.Env, typ string, id int64) hosting.Money {
	t.Helper()
	m, err := env.App.DB.Charged(context.Background(), typ, id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func billingOf(t testing.TB, c caller) map[string]any {
	t.Helper()
	return data(t, c.Do("GET", "/billing", nil).Want(t, http.StatusOK))
}

func credit(t testing.TB, c caller) hosting.Money {
	t.Helper()
	return money(t, billingOf(t, c)["credit"].(string))
}

// TestBillingFullMonth: a server running a whole 31-day month is charged exactly
// min(744 × hourly, monthly), whether the passes run every hour or catch up at once;
// the next month starts afresh.
func TestBillingFullMonth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		plan   int64
		hourly hosting.Money
		want   string
	}{
		{"capped at the monthly price", 1, 70, "4.5100"}, // 744 × 0.0070 = 5.2080
		{"below the monthly price", 7, 100, "7.4400"},    // 744 × 0.0100 < 10.0000
		{"capped, a bigger plan", 3, 240, "15.4900"},     // 744 × 0.0240 = 17.8560
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, clock := billingEnv(t)
			a := env.NewAccount("en", "100", "")
			srv := runningServer(t, a, "plan_id", tc.plan)
			id := num(t, srv["id"])
			if got := charged(t, env, "server", id); got != tc.hourly {
				t.Fatalf("after the order: charged %s, want the first hour %s", got, tc.hourly)
			}
			// A day of hourly passes, some of them twice, then the rest of the month
			// caught up in one pass at its last millisecond.
			for h := 1; h <= 24; h++ {
				clock.Set(billingStart.Add(time.Duration(h) * time.Hour))
				meter(t, env)
				if h%5 == 0 {
					meter(t, env)
				}
			}
			if got, want := charged(t, env, "server", id), 25*tc.hourly; got != want {
				t.Fatalf("after 25 started hours: charged %s, want %s", got, want)
			}
			clock.Set(billingStart.AddDate(0, 1, 0).Add(-time.Millisecond))
			meter(t, env)
			meter(t, env)
			want := money(t, tc.want)
			if got := charged(t, env, "server", id); got != want {
				t.Fatalf("a whole month: charged %s, want %s", got, want)
			}
			b := billingOf(t, a)
			if money(t, b["month_to_date"].(string)) != want || money(t, b["credit"].(string)) != money(t, "100")-want {
				t.Errorf("billing at the month's end: %v", b)
			}
			// The first hour of the next month is charged in the next month.
			clock.Set(billingStart.AddDate(0, 1, 0))
			meter(t, env)
			if got := charged(t, env, "server", id); got != want+tc.hourly {
				t.Errorf("into the next month: charged %s, want %s", got, want+tc.hourly)
			}
			if b := billingOf(t, a); money(t, b["month_to_date"].(string)) != tc.hourly {
				t.Errorf("month to date on the first of the month: %v", b)
			}
		})
	}
}

// TestBillingDeleteMidHour: the hour in progress was paid when it began; deleting
// the server charges nothing more.
func TestBillingDeleteMidHour(t *testing.T) {
	t.Parallel()
	env, clock := billingEnv(t)
	a := env.NewAccount("en", "10", "")
	srv := runningServer(t, a)
	id := num(t, srv["id"])
	clock.Set(billingStart.Add(time.Hour))
	meter(t, env)
	clock.Set(billingStart.Add(90 * time.Minute))
	a.Do("DELETE", "/servers/"+itoa(id), nil).Want(t, http.StatusNoContent)
	before := credit(t, a)
	for _, d := range []time.Duration{2 * time.Hour, 5 * time.Hour, 48 * time.Hour} {
		clock.Set(billingStart.Add(d))
		meter(t, env)
	}
	if got := charged(t, env, "server", id); got != 2*70 {
		t.Errorf("charged %s, want two hours (0.0140)", got)
	}
	if after := credit(t, a); after != before {
		t.Errorf("credit moved from %s to %s after the delete", before, after)
	}
	b := billingOf(t, a)
	if b["hourly_burn"] != "0.0000" || b["days_left"] != nil || b["monthly_burn"] != b["month_to_date"] {
		t.Errorf("billing with nothing left: %v", b)
	}
}

// TestBillingSnapshot: a 20 GB snapshot kept 3 hours is charged 3 × 20 × the
// location's GB-hour price.
func TestBillingSnapshot(t *testing.T) {
	t.Parallel()
	env, clock := billingEnv(t)
	a := env.NewAccount("en", "10", "")
	srv := runningServer(t, a, "plan_id", 8)
	name := srv["name"].(string)
	clock.Set(billingStart.Add(10 * time.Minute))
	snap, _ := createSnapshot(t, a, name, map[string]any{"name": "before-upgrade"})
	if num(t, snap["size_gb"]) != 20 {
		t.Fatalf("snapshot of %v GB; this test wants 20", snap["size_gb"])
	}
	sid := num(t, snap["id"])
	b := billingOf(t, a)
	if b["hourly_burn"] != "0.0090" { // 0.0070 the server + 20 × 0.0001 the snapshot
		t.Errorf("hourly burn with the snapshot: %v", b)
	}
	for _, m := range []time.Duration{70, 130, 179} {
		clock.Set(billingStart.Add(m * time.Minute))
		meter(t, env)
	}
	a.Do("DELETE", fmt.Sprintf("/servers/%s/snapshots/%d", name, sid), nil).Want(t, http.StatusAccepted)
	clock.Set(billingStart.Add(10 * time.Hour))
	meter(t, env)
	if got, want := charged(t, env, "snapshot", sid), hosting.Money(3*20*1); got != want {
		t.Errorf("snapshot charged %s, want %s", got, want)
	}
	// The ledger names what each charge was for, in the account's language.
	var snapCharges int
	for _, tr := range items(t, a.Do("GET", "/billing/transactions", nil).Want(t, http.StatusOK)) {
		if r, _ := tr["resource"].(map[string]any); r != nil && r["type"] == "snapshot" {
			snapCharges++
			if tr["amount"] != "-0.0020" || r["name"] != "before-upgrade" || num(t, r["id"]) != sid ||
				!strings.HasPrefix(tr["description"].(string), "Snapshot before-upgrade: the hour from 2026-12-01 ") {
				t.Errorf("snapshot charge %v", tr)
			}
		}
	}
	if snapCharges != 3 {
		t.Errorf("%d snapshot charges in the history, want 3", snapCharges)
	}
}

// TestBillingOutage: berthd is down for 5 hours; when it comes back the missed hours
// are charged, exactly once however many passes run.
func TestBillingOutage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clock := testenv.NewFakeClock(billingStart)
	env := testenv.New(t, testenv.Options{DataDir: dir, Clock: clock.Now})
	a := env.NewAccount("en", "10", "")
	srv := runningServer(t, a)
	id := num(t, srv["id"])
	clock.Set(billingStart.Add(time.Hour + time.Minute))
	meter(t, env)
	env.AssertLedger(t)
	env.Close()

	// Down from 01:01 to 06:30: the hours from 02:00 to 06:00 were missed.
	clock.Set(billingStart.Add(6*time.Hour + 30*time.Minute))
	back := testenv.New(t, testenv.Options{DataDir: dir, Clock: clock.Now})
	t.Cleanup(func() { back.AssertLedger(t) })
	for range 3 {
		meter(t, back)
	}
	if got := charged(t, back, "server", id); got != 7*70 {
		t.Errorf("charged %s, want 7 hours (0.0490): 00:00 to 06:00", got)
	}
	if c := credit(t, back.As(a)); c != money(t, "10")-7*70 {
		t.Errorf("credit %s", c)
	}
}

// TestBillingSuspension: an hourly charge that takes the credit below zero suspends
// the account's servers (powered off); a top-up above zero lifts that suspension,
// not an operator's.
func TestBillingSuspension(t *testing.T) {
	t.Parallel()
	// WaitStatus polls every 5 ms: on a loaded machine a suspension's job took long
	// enough for the polls to pass the default 120 requests a minute (CI saw 429).
	env, clock := billingEnv(t, testenv.Options{RateLimit: 100000})
	ctx := context.Background()
	a := env.NewAccount("en", "0.0280", "") // four hours of plan 1
	one := runningServer(t, a)
	two := runningServer(t, a)
	if _, err := env.App.Service.SetServerSuspended(ctx, num(t, two["id"]), true); err != nil {
		t.Fatal(err)
	}
	a.WaitStatus(t, two["name"].(string), "suspended", 10*time.Second)
	// 00:00 both ordered (0.0140 left); 01:00 two more hours: exactly zero, not below.
	clock.Set(billingStart.Add(time.Hour))
	meter(t, env)
	if c := credit(t, a); c != 0 {
		t.Fatalf("credit %s, want 0", c)
	}
	if s := data(t, a.Do("GET", "/servers/"+one["name"].(string), nil).Want(t, 200)); s["status"] != "running" {
		t.Fatalf("a credit of exactly zero suspended the server: %v", s)
	}
	// 02:00: below zero.
	clock.Set(billingStart.Add(2 * time.Hour))
	meter(t, env)
	if c := credit(t, a); c != -140 {
		t.Fatalf("credit %s, want -0.0140", c)
	}
	name := one["name"].(string)
	a.WaitStatus(t, name, "suspended", 10*time.Second)
	wantError(t, a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "on"}), http.StatusForbidden, "server_suspended")
	if m, err := env.App.Driver().Machine(ctx, name); err != nil || m.State != compute.StateStopped {
		t.Errorf("suspended server's machine: %+v, %v; want it powered off", m, err)
	}
	// Suspended servers keep their resources and are still billed.
	clock.Set(billingStart.Add(3 * time.Hour))
	meter(t, env)
	if c := credit(t, a); c != -280 {
		t.Fatalf("credit %s, want -0.0280", c)
	}
	// A top-up that leaves the credit below zero lifts nothing.
	if _, err := env.App.Service.AddCredit(ctx, a.ID, 100, ""); err != nil {
		t.Fatal(err)
	}
	a.WaitStatus(t, name, "suspended", time.Second)
	// One above zero lifts the suspension for credit: the server is left powered off.
	if _, err := env.App.Service.AddCredit(ctx, a.ID, money(t, "1"), ""); err != nil {
		t.Fatal(err)
	}
	a.WaitStatus(t, name, "stopped", time.Second)
	a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "on"}).Want(t, http.StatusOK)
	// The operator's suspension stays.
	a.WaitStatus(t, two["name"].(string), "suspended", time.Second)
	if c := credit(t, a); c != money(t, "1.0100")-280-100+100 {
		t.Errorf("credit after the top-ups: %s", c)
	}
	// Each step wrote its event: the suspension once, the top-ups, the lift once.
	if got := eventTypes(events(t, a, "?types=account.*,billing.topped_up")); !slices.Equal(got,
		[]string{"billing.topped_up", "account.suspended", "billing.topped_up", "billing.topped_up", "account.unsuspended"}) {
		t.Errorf("events %v", got)
	}
}

// failingCreate makes every machine creation fail while on: for good, or with err
// when set.
type failingCreate struct {
	compute.Driver
	on  atomic.Bool
	err error
}

func (f *failingCreate) Create(ctx context.Context, key string, spec compute.Spec) (compute.Machine, error) {
	if f.on.Load() {
		if f.err != nil {
			return compute.Machine{}, f.err
		}
		return compute.Machine{}, fmt.Errorf("%w: no host has room", compute.ErrFailed)
	}
	return f.Driver.Create(ctx, key, spec)
}

// TestBillingFailedProvisioning: a failed provisioning refunds its hour, and the
// server is not billed after.
func TestBillingFailedProvisioning(t *testing.T) {
	t.Parallel()
	fail := &failingCreate{}
	env, clock := billingEnv(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver { fail.Driver = d; return fail }})
	a := env.NewAccount("de", "1", "")
	fail.on.Store(true)
	srv := order(t, a, baseOrder())
	a.WaitStatus(t, srv["name"].(string), "error", 10*time.Second)
	if c := credit(t, a); c != money(t, "1") {
		t.Errorf("credit after the failed provisioning: %s, want the hour back", c)
	}
	id := num(t, srv["id"])
	for _, h := range []time.Duration{1, 2, 30} {
		clock.Set(billingStart.Add(h * time.Hour))
		meter(t, env)
	}
	if c := credit(t, a); c != money(t, "1") {
		t.Errorf("credit %s: a server that never ran was billed", c)
	}
	list := items(t, a.Do("GET", "/billing/transactions", nil).Want(t, http.StatusOK))
	if len(list) != 3 || list[0]["type"] != "refund" || list[0]["amount"] != "0.0070" ||
		list[0]["description"] != "Erstattung: Server "+srv["name"].(string)+" konnte nicht bereitgestellt werden" ||
		num(t, list[0]["resource"].(map[string]any)["id"]) != id || list[1]["type"] != "charge" || list[2]["type"] != "topup" {
		t.Errorf("history: %v", list)
	}
}

// TestBillingParallelOrders: 50 orders at once with credit for exactly 10 hours of the
// plan: exactly 10 are accepted, the rest refused for credit, and the credit ends at 0.
func TestBillingParallelOrders(t *testing.T) {
	t.Parallel()
	env, _ := billingEnv(t)
	a := env.NewAccount("en", "0.0700", "")
	rs := concurrently(50, func() *testenv.Response { return a.Do("POST", "/servers", baseOrder()) })
	if got := statuses(rs); got[http.StatusCreated] != 10 || got[http.StatusUnprocessableEntity] != 40 {
		t.Fatalf("statuses %v, want 10 × 201 and 40 × 422", got)
	}
	for _, r := range rs {
		if r.Status == http.StatusUnprocessableEntity {
			wantError(t, r, http.StatusUnprocessableEntity, "insufficient_credit")
		}
	}
	if c := credit(t, a); c != 0 {
		t.Errorf("credit %s, want exactly 0", c)
	}
	if n := len(items(t, a.Do("GET", "/servers", nil).Want(t, 200))); n != 10 {
		t.Errorf("%d servers, want 10", n)
	}
}

// TestBillingEndpoints: GET /billing's figures and GET /billing/transactions' pages.
func TestBillingEndpoints(t *testing.T) {
	t.Parallel()
	env, clock := billingEnv(t)
	ctx := context.Background()
	a := env.NewAccount("de", "50", "")
	b := billingOf(t, a)
	if b["credit"] != "50.0000" || b["currency"] != "EUR" || b["hourly_burn"] != "0.0000" || b["monthly_burn"] != "0.0000" ||
		b["days_left"] != nil || b["month_to_date"] != "0.0000" || b["budget"] != nil {
		t.Errorf("billing of a new account: %v", b)
	}
	if _, err := env.App.Service.SetBudget(ctx, a.ID, ptr(money(t, "25"))); err != nil {
		t.Fatal(err)
	}
	// 2026-12-31 12:00: 12 hours left in the month for a 0.0240/h server.
	clock.Set(time.Date(2026, 12, 31, 12, 0, 0, 0, time.UTC))
	runningServer(t, a, "plan_id", 3)
	b = billingOf(t, a)
	if b["credit"] != "49.9760" || b["hourly_burn"] != "0.0240" || b["month_to_date"] != "0.0240" ||
		b["monthly_burn"] != "0.2880" || b["budget"] != "25.0000" || num(t, b["days_left"]) != 86 { // 49.976 / 0.576
		t.Errorf("billing with one server: %v", b)
	}

	// 120 entries: the opening credit, a charge and 118 top-ups.
	for i := range 118 {
		desc := ""
		if i == 117 {
			desc = "Bank transfer 2026-12"
		}
		if _, err := env.App.Service.AddCredit(ctx, a.ID, 1, desc); err != nil {
			t.Fatal(err)
		}
	}
	var ids []int64
	for page, want := range []int{1: 50, 2: 50, 3: 20, 4: 0} {
		if page == 0 {
			continue
		}
		r := a.Do("GET", fmt.Sprintf("/billing/transactions?page=%d", page), nil).Want(t, http.StatusOK)
		body := r.Map(t)
		list := body["data"].([]any)
		meta := body["meta"].(map[string]any)
		links := body["links"].(map[string]any)
		if len(list) != want || num(t, meta["total"]) != 120 || num(t, meta["last_page"]) != 3 || num(t, meta["per_page"]) != 50 ||
			num(t, meta["current_page"]) != int64(page) {
			t.Errorf("page %d: %d items, meta %v", page, len(list), meta)
		}
		if want > 0 && (num(t, meta["from"]) != int64((page-1)*50+1) || num(t, meta["to"]) != int64((page-1)*50+want)) {
			t.Errorf("page %d: meta %v", page, meta)
		}
		if want == 0 && (meta["from"] != nil || meta["to"] != nil) {
			t.Errorf("empty page: meta %v", meta)
		}
		base := env.URL + "/billing/transactions"
		if links["first"] != base+"?page=1" || links["last"] != base+"?page=3" || meta["path"] != base {
			t.Errorf("page %d: links %v, meta %v", page, links, meta)
		}
		if (page == 1) != (links["prev"] == nil) || (page >= 3) != (links["next"] == nil) {
			t.Errorf("page %d: prev/next %v", page, links)
		}
		if page == 2 && (links["prev"] != base+"?page=1" || links["next"] != base+"?page=3") {
			t.Errorf("page 2: links %v", links)
		}
		for _, x := range list {
			ids = append(ids, num(t, x.(map[string]any)["id"]))
		}
		if page == 1 {
			first := list[0].(map[string]any)
			if first["description"] != "Bank transfer 2026-12" || first["type"] != "topup" || first["amount"] != "0.0001" ||
				first["resource"] != nil || first["period_start"] != nil {
				t.Errorf("newest entry: %v", first)
			}
			if d := list[1].(map[string]any)["description"]; d != "Aufladung" {
				t.Errorf("a top-up without words, in German: %v", d)
			}
		}
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] >= ids[i-1] {
			t.Fatalf("not newest first: %v", ids)
		}
	}
	// Far past the end: (page-1)*50 does not fit an int64 (FuzzAPIRequest).
	for _, p := range []string{"184467440737095517", "999999999999999999", "9223372036854775807"} {
		r := a.Do("GET", "/billing/transactions?page="+p, nil).Want(t, http.StatusOK)
		body := r.Map(t)
		meta := body["meta"].(map[string]any)
		if len(body["data"].([]any)) != 0 || meta["from"] != nil || meta["to"] != nil || !strings.Contains(string(r.Body), `"current_page":`+p+",") {
			t.Errorf("page=%s: %s", p, r.Body)
		}
	}
	for _, p := range []string{"0", "-1", "x", "1.5", "", "99999999999999999999"} {
		e := wantInvalid(t, a.Do("GET", "/billing/transactions?page="+p, nil), "page")
		if e.Message != msg("de", "validation.page") {
			t.Errorf("page=%s: %q", p, e.Message)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestBillingVolume: a 100 GB volume kept a whole month is charged exactly the
// location's monthly cap (100 × 0.0440), attached or not, the hours past it free; a
// growth bills the new size from the next hour; the ledger names it; deleting it
// stops the charges.
func TestBillingVolume(t *testing.T) {
	t.Parallel()
	env, clock := billingEnv(t)
	a := env.NewAccount("en", "100", "")
	vol := createVolume(t, a, map[string]any{"location_id": 1, "size_gb": 100})
	id := num(t, vol["id"])
	if got := charged(t, env, "volume", id); got != money(t, "0.0100") {
		t.Fatalf("after the creation: charged %s, want the first hour 0.0100", got)
	}
	if b := billingOf(t, a); b["hourly_burn"] != "0.0100" {
		t.Errorf("hourly burn with the volume: %v", b)
	}
	for h := 1; h <= 500; h += 7 {
		clock.Set(billingStart.Add(time.Duration(h) * time.Hour))
		meter(t, env)
	}
	clock.Set(billingStart.AddDate(0, 1, 0).Add(-time.Millisecond))
	meter(t, env)
	if got := charged(t, env, "volume", id); got != money(t, "4.4000") {
		t.Fatalf("a whole month of 100 GB: charged %s, want the cap 4.4000", got)
	}
	var described bool
	for _, tr := range items(t, a.Do("GET", "/billing/transactions", nil).Want(t, http.StatusOK)) {
		if r, _ := tr["resource"].(map[string]any); r != nil && r["type"] == "volume" && num(t, r["id"]) == id {
			described = strings.HasPrefix(tr["description"].(string), "Volume "+vol["name"].(string)+": the hour from ")
		}
	}
	if !described {
		t.Error("the volume's charges are not described")
	}

	// Next month: grown to 150 GB mid-hour; that hour stays at 100 GB, the next at 150.
	next := billingStart.AddDate(0, 1, 0)
	clock.Set(next)
	meter(t, env)
	clock.Set(next.Add(30 * time.Minute))
	volumeAfter(t, a, data(t, a.Do("POST", fmt.Sprintf("/volumes/%d/resize", id), map[string]any{"size_gb": 150}).Want(t, 200)))
	clock.Set(next.Add(time.Hour))
	meter(t, env)
	if got, want := charged(t, env, "volume", id), money(t, "4.4000")+money(t, "0.0100")+money(t, "0.0150"); got != want {
		t.Errorf("after the growth: charged %s, want %s", got, want)
	}
	a.Do("DELETE", fmt.Sprintf("/volumes/%d", id), nil).Want(t, http.StatusNoContent)
	clock.Set(next.Add(10 * time.Hour))
	meter(t, env)
	if got, want := charged(t, env, "volume", id), money(t, "4.4250"); got != want {
		t.Errorf("after the deletion: charged %s, want %s", got, want)
	}
}

// failingVolumes is a driver whose volumes cannot be made (compute.ErrFailed).
type failingVolumes struct{ *volumeGate }

func (failingVolumes) CreateVolume(context.Context, string, compute.VolumeSpec) error {
	return fmt.Errorf("%w: the pool is full", compute.ErrFailed)
}

// TestBillingVolumeNotMade: a volume whose creation failed is in error, refunded its
// first hour and never billed again; it can still be deleted.
func TestBillingVolumeNotMade(t *testing.T) {
	t.Parallel()
	env, clock := billingEnv(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver {
		return failingVolumes{gateVolumes(d)}
	}})
	a := env.NewAccount("en", "100", "")
	vol := data(t, a.Do("POST", "/volumes", map[string]any{"name": "broken", "size_gb": 50, "location_id": 1}).Want(t, 201))
	op := data(t, a.Do("GET", fmt.Sprintf("/operations/%d?wait=30", opID(t, vol)), nil).Want(t, 200))
	if op["status"] != "error" {
		t.Fatalf("the creation: %v", op)
	}
	id := num(t, vol["id"])
	if got := data(t, a.Do("GET", fmt.Sprintf("/volumes/%d", id), nil).Want(t, 200)); got["status"] != "error" {
		t.Errorf("the volume: %v", got)
	}
	clock.Set(billingStart.Add(5 * time.Hour))
	meter(t, env)
	if got := charged(t, env, "volume", id); got != money(t, "0.0050") {
		t.Errorf("a volume never made: charged %s, want only its first hour (refunded)", got)
	}
	if c := credit(t, a); c != money(t, "100") {
		t.Errorf("credit %s, want 100", c)
	}
	a.Do("DELETE", fmt.Sprintf("/volumes/%d", id), nil).Want(t, http.StatusNoContent)
}

// TestCreditAdjustments: an operator's correction (berthd admin credit adjust) is an
// adjustment in the history with its reason, a billing.adjusted event, and moves the
// credit both ways: below zero it suspends the servers as a charge would, above zero
// again it lifts that. Zero, no reason, a reason too long, an unknown account and a
// sum past what an account holds are refused and write nothing.
func TestCreditAdjustments(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ctx := context.Background()
	a := env.NewAccount("en", "20", "")
	srv := runningServer(t, a)
	name := srv["name"].(string)
	start := credit(t, a)
	svc := env.App.Service
	for _, tc := range []struct {
		name        string
		account     int64
		amount      hosting.Money
		description string
		want        string
	}{
		{"zero", a.ID, 0, "x", "zero"},
		{"no reason", a.ID, money(t, "-1"), "  ", "description"},
		{"a reason too long", a.ID, money(t, "-1"), strings.Repeat("é", 201), "200"},
		{"an unknown account", 1 << 40, money(t, "1"), "x", "no account"},
		{"past what an account holds", a.ID, hosting.Money(1 << 62), "x", "more than an account may hold"},
		{"the most negative amount", a.ID, -hosting.Money(1<<63 - 1), "x", "more than an account may hold"},
		{"the largest amount", a.ID, hosting.Money(1<<63 - 1), "x", "more than an account may hold"},
	} {
		if _, err := svc.AdjustCredit(ctx, tc.account, tc.amount, tc.description); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	// A top-up past it too: SQLite would have summed it into a float.
	if _, err := svc.AddCredit(ctx, a.ID, hosting.Money(1<<62), ""); err == nil || !strings.Contains(err.Error(), "more than an account may hold") {
		t.Errorf("a top-up past what an account holds: %v", err)
	}
	if got := credit(t, a); got != start {
		t.Fatalf("credit %s after refused adjustments, want %s", got, start)
	}
	// A mistaken top-up of 90 taken back: below zero, the server is suspended.
	tr, err := svc.AdjustCredit(ctx, a.ID, -(start + money(t, "5")), "  top-up of 1 December booked twice ")
	if err != nil || tr.Type != hosting.TxAdjustment || tr.BalanceAfter != money(t, "-5") || tr.Description != "top-up of 1 December booked twice" {
		t.Fatalf("adjustment: %+v, %v", tr, err)
	}
	a.WaitStatus(t, name, "suspended", 10*time.Second)
	last := items(t, a.Do("GET", "/billing/transactions", nil).Want(t, http.StatusOK))[0]
	if last["type"] != "adjustment" || last["amount"] != (-(start + money(t, "5"))).String() || last["balance_after"] != "-5.0000" ||
		last["description"] != "top-up of 1 December booked twice" {
		t.Errorf("the history's newest entry: %v", last)
	}
	// Back above zero by an adjustment: the suspension for credit is lifted.
	if _, err := svc.AdjustCredit(ctx, a.ID, money(t, "5.0001"), "goodwill"); err != nil {
		t.Fatal(err)
	}
	a.WaitStatus(t, name, "stopped", 10*time.Second)
	if got := credit(t, a); got != 1 {
		t.Errorf("credit %s, want 0.0001", got)
	}
	l := events(t, a, "?types=billing.*,account.*")
	if got := eventTypes(l); !slices.Equal(got, []string{"billing.topped_up", "billing.adjusted", "account.suspended", "billing.adjusted", "account.unsuspended"}) {
		t.Errorf("events %v", got)
	}
}
