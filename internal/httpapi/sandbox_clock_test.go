package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/testenv"
)

// clockStart is the test clocks' start: the first hour of a calendar month, so that
// 720 hours stay in one month and its cap.
var clockStart = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func clockEnv(t *testing.T) *testenv.Env {
	return testenv.New(t, testenv.Options{Sandbox: true, Clock: testenv.NewFakeClock(clockStart).Now})
}

// clockNow reads an account's test clock.
func clockNow(t *testing.T, a *testenv.Account) time.Time {
	t.Helper()
	d := data(t, a.Sandbox("GET", "/clock", nil).Want(t, http.StatusOK))
	at, err := time.Parse(time.RFC3339Nano, d["now"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return at
}

func advance(t *testing.T, a *testenv.Account, by string) time.Time {
	t.Helper()
	d := data(t, a.Sandbox("POST", "/clock", map[string]any{"advance": by}).Want(t, http.StatusOK))
	at, err := time.Parse(time.RFC3339Nano, d["now"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// charges sums an account's ledger entries of type charge, by resource type.
func charges(t *testing.T, e *testenv.Env, accountID int64) (byType map[string]hosting.Money, hours map[string]int) {
	t.Helper()
	list, _, err := e.App.DB.Transactions(context.Background(), accountID, 100_000, 0)
	if err != nil {
		t.Fatal(err)
	}
	byType, hours = map[string]hosting.Money{}, map[string]int{}
	for _, tx := range list {
		if tx.Type == hosting.TxCharge {
			byType[tx.ResourceType] -= tx.Amount
			hours[tx.ResourceType]++
		}
	}
	return byType, hours
}

// TestClockAdvanceChargesTheMonth: 720 hours on a test clock charge a server exactly
// its plan's monthly cap and a snapshot its GB-hours, through the real metering pass,
// before the answer; the account's records take their times from its clock.
func TestClockAdvanceChargesTheMonth(t *testing.T) {
	e := clockEnv(t)
	a := e.NewAccount("en", "100", "")
	if got := clockNow(t, a); !got.Equal(clockStart) {
		t.Fatalf("clock starts at %s, want the system clock's %s", got, clockStart)
	}
	srv := order(t, a, map[string]any{"display_name": "month", "plan_id": 1, "location_id": 1, "image_id": 1})
	id := num(t, srv["id"])
	waitOp(t, a, opID(t, srv))
	snap := data(t, a.Do("POST", fmt.Sprintf("/servers/%d/snapshots", id), map[string]any{"name": "keep"}).Want(t, http.StatusCreated))
	if snap["status"] != "creating" {
		t.Fatalf("snapshot %v", snap)
	}
	a.WaitStatus(t, fmt.Sprint(id), "running", 60*time.Second)
	var size int64
	for _, s := range a.Do("GET", fmt.Sprintf("/servers/%d/snapshots", id), nil).Want(t, http.StatusOK).Map(t)["data"].([]any) {
		size = num(t, s.(map[string]any)["size_gb"])
	}
	if size <= 0 {
		t.Fatalf("snapshot size %d", size)
	}

	now := advance(t, a, "720h")
	if want := clockStart.Add(720 * time.Hour); !now.Equal(want) {
		t.Fatalf("advanced clock %s, want %s", now, want)
	}
	if got := clockNow(t, a); !got.Equal(now) {
		t.Fatalf("GET clock %s after advance, want %s", got, now)
	}
	byType, hours := charges(t, e, a.ID)
	if want := money(t, "4.51"); byType[hosting.ResourceServer] != want {
		t.Errorf("server charged %s over 721 hours, want the monthly cap %s", byType[hosting.ResourceServer], want)
	}
	// The snapshot's first hour at its creation, then each hour to the clock's now.
	if want := hosting.Money(size) * money(t, "0.0001") * 721; byType[hosting.ResourceSnapshot] != want || hours[hosting.ResourceSnapshot] != 721 {
		t.Errorf("snapshot charged %s in %d hours, want %s in 721", byType[hosting.ResourceSnapshot], hours[hosting.ResourceSnapshot], want)
	}
	e.AssertLedger(t)

	// What the account writes now is dated by its clock ...
	p := data(t, a.Do("POST", "/projects", map[string]any{"name": "later"}).Want(t, http.StatusCreated))
	if p["created_at"] != now.Format("2006-01-02T15:04:05Z") && p["created_at"] != now.Format(time.RFC3339Nano) {
		t.Errorf("project created_at %v, want the account's now %s", p["created_at"], now)
	}
	// ... and another advance charges nothing twice.
	advance(t, a, "1h")
	byType2, _ := charges(t, e, a.ID)
	if byType2[hosting.ResourceServer] != byType[hosting.ResourceServer] {
		t.Errorf("server charged %s after the cap was reached, want still %s", byType2[hosting.ResourceServer], byType[hosting.ResourceServer])
	}
	e.AssertLedger(t)
}

// TestClockAdvanceFillsMetrics: the metrics of an account's server cover the time an
// advance skipped, at times on the account's clock. (On the system clock: samples
// older than a week of it are pruned.)
func TestClockAdvanceFillsMetrics(t *testing.T) {
	e := testenv.New(t, testenv.Options{Sandbox: true})
	a := e.NewAccount("en", "100", "")
	srv := order(t, a, map[string]any{"display_name": "busy", "plan_id": 2, "location_id": 1, "image_id": 1})
	id := num(t, srv["id"])
	waitOp(t, a, opID(t, srv))
	b := e.NewAccount("en", "100", "")
	other := order(t, b, map[string]any{"display_name": "bystander", "plan_id": 2, "location_id": 1, "image_id": 1})
	waitOp(t, b, opID(t, other))
	now := advance(t, a, "48h")
	// Another account's clock did not move: nothing is filled in for its server over
	// the time this account skipped.
	if got, err := e.App.DB.MetricSamples(context.Background(), int64(num(t, other["id"])), now.Add(-48*time.Hour), now.Add(time.Hour)); err != nil || len(got) > 5 {
		t.Errorf("another account's server has %d samples over this account's advance (%v)", len(got), err)
	}
	m := data(t, a.Do("GET", fmt.Sprintf("/servers/%d/metrics?range=24h", id), nil).Want(t, http.StatusOK))
	points := m["cpu"].([]any)
	if len(points) < 300 {
		t.Fatalf("24h of metrics after a 48h advance has %d points, want about 360", len(points))
	}
	at := time.Unix(num(t, points[len(points)-1].([]any)[0]), 0)
	if d := now.Sub(at); d < 0 || d > time.Hour {
		t.Errorf("last point at %s, want within the hour before the account's now %s", at, now)
	}
}

// TestClockAdvanceSuspendsWhenCreditRunsOut: the metering pass an advance runs
// suspends the servers of an account whose credit it exhausts, as a real month does.
func TestClockAdvanceSuspendsWhenCreditRunsOut(t *testing.T) {
	e := clockEnv(t)
	a := e.NewAccount("en", "1.00", "")
	srv := order(t, a, map[string]any{"display_name": "runs-out", "plan_id": 1, "location_id": 1, "image_id": 1})
	id := num(t, srv["id"])
	waitOp(t, a, opID(t, srv))
	advance(t, a, "720h")
	got := data(t, a.Do("GET", fmt.Sprintf("/servers/%d", id), nil).Want(t, http.StatusOK))
	if got["status"] != "suspended" {
		t.Fatalf("server after its account's credit ran out: %v, want suspended", got)
	}
	me := data(t, a.Do("GET", "/me", nil).Want(t, http.StatusOK))
	credit, err := hosting.ParseMoney(me["credit"].(string))
	if err != nil || credit >= 0 {
		t.Fatalf("credit %v after 720 h on 1.00, want below zero", me["credit"])
	}
	e.AssertLedger(t)
}

// TestClocksOfAccountsAreTheirOwn: two accounts advancing in parallel each see only
// their own time and their own charges.
func TestClocksOfAccountsAreTheirOwn(t *testing.T) {
	e := clockEnv(t)
	accts := []*testenv.Account{e.NewAccount("en", "100", ""), e.NewAccount("en", "100", "")}
	ids := make([]int64, len(accts))
	for i, a := range accts {
		srv := order(t, a, map[string]any{"display_name": fmt.Sprintf("own-%d", i), "plan_id": 2, "location_id": 1, "image_id": 1})
		ids[i] = num(t, srv["id"])
		waitOp(t, a, opID(t, srv))
	}
	var wg sync.WaitGroup
	for i, a := range accts {
		wg.Go(func() {
			for range i + 1 {
				if r := a.Sandbox("POST", "/clock", map[string]any{"advance": "24h"}); r.Status != http.StatusOK {
					t.Errorf("advance: %d %s", r.Status, r.Body)
				}
			}
		})
	}
	wg.Wait()
	for i, a := range accts {
		want := clockStart.Add(time.Duration(i+1) * 24 * time.Hour)
		if got := clockNow(t, a); !got.Equal(want) {
			t.Errorf("account %d clock %s, want %s", i, got, want)
		}
		// The first hour at the order, then one for each hour of its own days.
		_, hours := charges(t, e, a.ID)
		if want := 1 + 24*(i+1); hours[hosting.ResourceServer] != want {
			t.Errorf("account %d charged %d server hours, want %d", i, hours[hosting.ResourceServer], want)
		}
	}
	// A third account never moved: still on the system clock.
	if got := clockNow(t, e.NewAccount("en", "1", "")); !got.Equal(clockStart) {
		t.Errorf("untouched account's clock %s, want %s", got, clockStart)
	}
	e.AssertLedger(t)
}

// TestClockAdvanceRules: the advance must be a Go duration over 0 and at most 8760h;
// anything else is a 422 on advance in the account's language.
func TestClockAdvanceRules(t *testing.T) {
	e := clockEnv(t)
	a := e.NewAccount("de", "100", "read")
	for _, body := range []any{
		map[string]any{}, map[string]any{"advance": nil}, map[string]any{"advance": ""}, map[string]any{"advance": "0s"},
		map[string]any{"advance": "-1h"}, map[string]any{"advance": "8760h1ms"}, map[string]any{"advance": "8761h"},
		map[string]any{"advance": "9223372036854775807h"}, map[string]any{"advance": "72"}, map[string]any{"advance": "soon"},
		map[string]any{"advance": 72}, map[string]any{"advance": []any{"1h"}},
		map[string]any{"advance": "1h", "Advance": "1h"},
	} {
		r := a.Sandbox("POST", "/clock", body).Want(t, http.StatusUnprocessableEntity)
		if errs := r.Map(t)["errors"].(map[string]any); errs["advance"] == nil && errs["Advance"] == nil {
			t.Errorf("%v: errors %v, want one on advance", body, errs)
		}
	}
	if got := clockNow(t, a); !got.Equal(clockStart) {
		t.Fatalf("refused advances moved the clock to %s", got)
	}
	if got := advance(t, a, "8760h"); !got.Equal(clockStart.Add(8760 * time.Hour)) {
		t.Fatalf("advance 8760h: %s", got)
	}
}

// TestClockNeverGoesBack: a restart keeps every account's clock where it was.
func TestClockNeverGoesBack(t *testing.T) {
	dir := t.TempDir()
	clock := testenv.NewFakeClock(clockStart)
	e := testenv.New(t, testenv.Options{Sandbox: true, Clock: clock.Now, DataDir: dir})
	a := e.NewAccount("en", "100", "")
	now := advance(t, a, "72h")
	e.Close()
	e2 := testenv.New(t, testenv.Options{Sandbox: true, Clock: clock.Now, DataDir: dir})
	if got := clockNow(t, e2.As(a)); !got.Equal(now) {
		t.Fatalf("clock after a restart %s, want %s", got, now)
	}
}

// TestResetPutsTheClockBack: a sandbox reset puts the account back on the system
// clock (its records that the clock dated are gone with it); another account's clock
// stays where it was.
func TestResetPutsTheClockBack(t *testing.T) {
	e := clockEnv(t)
	a, b := e.NewAccount("en", "100", ""), e.NewAccount("en", "100", "")
	advance(t, a, "72h")
	kept := advance(t, b, "5h")
	a.Sandbox("POST", "/reset", map[string]any{}).Want(t, http.StatusOK)
	if got := clockNow(t, a); !got.Equal(clockStart) {
		t.Errorf("clock after a reset %s, want the system clock's %s", got, clockStart)
	}
	if got := clockNow(t, b); !got.Equal(kept) {
		t.Errorf("another account's clock after a reset %s, want %s", got, kept)
	}
	p := data(t, a.Do("POST", "/projects", map[string]any{"name": "after-reset"}).Want(t, http.StatusCreated))
	if p["created_at"] != clockStart.Format(time.RFC3339) {
		t.Errorf("created_at after a reset %v, want %s", p["created_at"], clockStart.Format(time.RFC3339))
	}
	e.AssertLedger(t)
}
