package httpapi_test

// License hooks (docs/operating.md, Licenses): a license product provisioned by
// webhook has Berth POST each change of a server's license of it to the operator's
// hook, signed as account webhooks' deliveries are, retried on their schedule. The
// hook is a receiver on 127.0.0.1 (a private address, allowed for an operator's hook).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/webhook"
)

const licHooked = 9

// hookDelivery is a license hook's request as the operator's hook reads it.
type hookDelivery struct {
	received
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      struct {
		LicenseID       int64  `json:"license_id"`
		License         string `json:"license"`
		ServerLicenseID int64  `json:"server_license_id"`
		Status          string `json:"status"`
		AccountID       int64  `json:"account_id"`
		At              string `json:"at"`
		Server          struct {
			ID        int64    `json:"id"`
			Name      string   `json:"name"`
			Addresses []string `json:"addresses"`
			VCPUs     int      `json:"vcpus"`
			Suspended bool     `json:"suspended"`
		} `json:"server"`
	} `json:"data"`
}

// hookedEnv is a billing env whose catalog sells licHooked (10.0000 a server a month),
// provisioned by a hook at a receiver answering status, and the hook's secret.
func hookedEnv(t *testing.T, status int) (*testenv.Env, *testenv.FakeClock, *receiver, string) {
	t.Helper()
	env, clock := billingEnv(t, testenv.Options{RateLimit: 100000})
	rcv := newReceiver(t, status)
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	c := billingCatalog()
	c.Licenses = append(c.Licenses, hosting.License{ID: licHooked, Name: "cloudlinux", Vendor: "CloudLinux", Per: hosting.LicensePerServer,
		PriceMonthly: money(t, "10"), Provisioning: hosting.ProvisionWebhook,
		Hook: &hosting.LicenseHook{URL: rcv.URL + "/licenses", Secrets: []string{secret}}})
	if err := env.App.Service.ApplyCatalog(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return env, clock, rcv, secret
}

// hookDeliveries waits until the receiver got n deliveries of typ, checks that each
// is signed with secret as Standard Webhooks has it, and returns them.
func hookDeliveries(t *testing.T, rcv *receiver, secret, typ string, n int) []hookDelivery {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		rcv.mu.Lock()
		got := append([]received(nil), rcv.got...)
		rcv.mu.Unlock()
		var of []hookDelivery
		for _, g := range got {
			d := hookDelivery{received: g}
			if err := json.Unmarshal(g.body, &d); err != nil {
				t.Fatalf("a hook's body %q: %v", g.body, err)
			}
			if d.Type != typ {
				continue
			}
			if g.path != "/licenses" || g.header.Get("Content-Type") != "application/json" ||
				!strings.HasPrefix(g.header.Get("webhook-id"), "lh_") {
				t.Errorf("%s delivery: path %s, headers %v", typ, g.path, g.header)
			}
			if ts, err := strconv.ParseInt(g.header.Get("webhook-timestamp"), 10, 64); err != nil || ts <= 0 {
				t.Errorf("%s delivery: webhook-timestamp %q", typ, g.header.Get("webhook-timestamp"))
			}
			if sig, want := g.header.Get("webhook-signature"), hmacSignature(t, secret, g); sig != want {
				t.Errorf("%s delivery: webhook-signature %q, want %q", typ, sig, want)
			}
			of = append(of, d)
		}
		if len(of) >= n {
			return of
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hook got %d %s deliveries, want %d (all: %d)", len(of), typ, n, len(got))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitLicenseStatus waits until the server's license of product lic is in status.
func waitLicenseStatus(t *testing.T, c caller, server int64, lic int64, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		l := serverLicenses(t, c, server)[lic]
		if l["status"] == status {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %d's license %d: %v, want %s", server, lic, l, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// licenseEvents are the account's license events of types, oldest first.
func licenseEvents(t *testing.T, c caller, types string) []map[string]any {
	t.Helper()
	return items(t, c.Do("GET", "/events?types="+types, nil).Want(t, http.StatusOK))
}

// TestLicenseHookLifecycle: a license of a webhook product is pending until its hook
// answers the activate (sent once the server has its addresses), then active; the
// operator's suspension and its lifting, and the removal, each reach the hook once,
// signed, with the server as it then is.
func TestLicenseHookLifecycle(t *testing.T) {
	t.Parallel()
	env, _, rcv, secret := hookedEnv(t, http.StatusOK)
	ctx := context.Background()
	a := env.NewAccount("en", "100", "")
	srv := runningServer(t, a, "license_ids", []int{licHooked})
	id := num(t, srv["id"])

	act := hookDeliveries(t, rcv, secret, ops.LicenseHookActivate, 1)[0]
	l := waitLicenseStatus(t, a, id, licHooked, "active")
	d := act.Data
	if d.LicenseID != licHooked || d.License != "cloudlinux" || d.ServerLicenseID != num(t, l["id"]) || d.AccountID != a.ID ||
		d.Status != "pending" || d.Server.ID != id || d.Server.Name != srv["name"] || d.Server.VCPUs != 1 || d.Server.Suspended {
		t.Errorf("activate: %+v", d)
	}
	if ip, ok := srv["ipv4"].(string); len(d.Server.Addresses) == 0 || (ok && ip != "" && d.Server.Addresses[0] != ip) {
		t.Errorf("activate's addresses %v, the server's IPv4 %v", d.Server.Addresses, srv["ipv4"])
	}
	if got := charged(t, env, hosting.ResourceLicense, num(t, l["id"])); got != money(t, "10") {
		t.Errorf("the license charged %s, want 10.0000 (charged when held, pending included)", got)
	}
	evs := licenseEvents(t, a, "license.*")
	if len(evs) != 2 || evs[0]["type"] != "license.created" || evs[0]["data"].(map[string]any)["status"] != "pending" ||
		evs[1]["type"] != "license.activated" || evs[1]["data"].(map[string]any)["status"] != "active" {
		t.Errorf("license events %v: want created (pending), then activated", evs)
	}

	// The operator suspends the server (twice: one change) and lifts it.
	for range 2 {
		if _, err := env.App.Service.SetServerSuspended(ctx, id, true); err != nil {
			t.Fatal(err)
		}
	}
	if s := hookDeliveries(t, rcv, secret, ops.LicenseHookSuspend, 1)[0]; !s.Data.Server.Suspended || s.Data.ServerLicenseID != d.ServerLicenseID {
		t.Errorf("suspend: %+v", s.Data)
	}
	if _, err := env.App.Service.SetServerSuspended(ctx, id, false); err != nil {
		t.Fatal(err)
	}
	if u := hookDeliveries(t, rcv, secret, ops.LicenseHookUnsuspend, 1)[0]; u.Data.Server.Suspended {
		t.Errorf("unsuspend: %+v", u.Data)
	}

	// New addresses (as a provisioning that gives the server others would): the hook
	// gets them, the activate not again.
	moved := compute.Machine{IPv4: "192.0.2.99", IPv6: "2001:db8::99"}
	if err := env.App.DB.InTx(ctx, func(tx store.Tx) error { return env.App.Service.Provisioned(id, moved)(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	if m := hookDeliveries(t, rcv, secret, ops.LicenseHookAddressChange, 1)[0]; fmt.Sprint(m.Data.Server.Addresses) != "[192.0.2.99 2001:db8::99]" {
		t.Errorf("address change: %+v", m.Data)
	}

	// Removed: cancelled, and the hook told.
	a.Do("DELETE", fmt.Sprintf("/servers/%d/licenses/%d", id, d.ServerLicenseID), nil).Want(t, http.StatusNoContent)
	if c := hookDeliveries(t, rcv, secret, ops.LicenseHookCancel, 1)[0]; c.Data.Status != "cancelled" || c.Data.ServerLicenseID != d.ServerLicenseID {
		t.Errorf("cancel: %+v", c.Data)
	}
	waitLicenseStatus(t, a, id, licHooked, "cancelled")
	if n := len(hookDeliveries(t, rcv, secret, ops.LicenseHookSuspend, 1)); n != 1 {
		t.Errorf("%d suspend deliveries for one suspension", n)
	}
	// A license of none provisioning tells no hook: every delivery is the hooked one's.
	runningServer(t, a, "license_ids", []int{licPlesk})
	rcv.mu.Lock()
	total := len(rcv.got)
	rcv.mu.Unlock()
	if total != 5 {
		t.Errorf("the hook got %d deliveries, want 5 (activate, suspend, unsuspend, address change, cancel)", total)
	}
}

// retryOnSchedule waits (at most wait) until the one job of kind is retryable after
// attempt, checks its wait on the schedule of account webhooks (webhook.Schedule),
// and makes it run now. Account webhooks' deliveries and license hooks retry alike.
func retryOnSchedule(t *testing.T, env *testenv.Env, kind string, attempt int, wait time.Duration) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(wait)
	for {
		jobs, err := env.App.Jobs(ctx, kind)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 1 {
			t.Fatalf("%d %s jobs, want 1", len(jobs), kind)
		}
		j := jobs[0]
		// A retry due within River's scheduler interval is "available" at once,
		// to run at its scheduled_at.
		if (j.State == "retryable" || j.State == "available") && j.Attempt == attempt && len(j.Errors) == attempt {
			if got, want := j.ScheduledAt.Sub(*j.AttemptedAt), webhook.Schedule[attempt-1]; got != want {
				t.Errorf("after attempt %d the next is %s later, want %s", attempt, got, want)
			}
			if err := env.App.RetryJob(ctx, j.ID); err != nil {
				t.Fatal(err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("attempt %d: job %s at attempt %d", attempt, j.State, j.Attempt)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLicenseHookRetried: a hook that answers 500 is tried again on the schedule,
// with the same webhook-id; its 200 activates the license.
func TestLicenseHookRetried(t *testing.T) {
	t.Parallel()
	env, _, rcv, secret := hookedEnv(t, http.StatusInternalServerError)
	a := env.NewAccount("en", "100", "")
	id := num(t, runningServer(t, a, "license_ids", []int{licHooked})["id"])
	retryOnSchedule(t, env, ops.LicenseHookKind, 1, time.Minute)
	hookDeliveries(t, rcv, secret, ops.LicenseHookActivate, 2)
	retryOnSchedule(t, env, ops.LicenseHookKind, 2, time.Minute)
	if l := serverLicenses(t, a, id)[licHooked]; l["status"] != "pending" {
		t.Errorf("after two failed attempts: %v, want pending", l)
	}
	rcv.status.Store(http.StatusOK)
	got := hookDeliveries(t, rcv, secret, ops.LicenseHookActivate, 3)
	waitLicenseStatus(t, a, id, licHooked, "active")
	if got[0].header.Get("webhook-id") != got[2].header.Get("webhook-id") || got[0].Data.At != got[2].Data.At {
		t.Errorf("a retry's id or data changed: %q, %q", got[0].header.Get("webhook-id"), got[2].header.Get("webhook-id"))
	}
}

// TestLicenseHookGivesUp: a hook that never answers 2xx is tried
// webhook.MaxAttempts times on the schedule; then the license is failed, its charge
// refunded (the ledger holds: billingEnv's cleanup), and the account told.
func TestLicenseHookGivesUp(t *testing.T) {
	t.Parallel()
	env, _, rcv, secret := hookedEnv(t, http.StatusBadGateway)
	a := env.NewAccount("en", "100", "")
	id := num(t, runningServer(t, a, "license_ids", []int{licHooked})["id"])
	before := credit(t, a)
	for attempt := 1; attempt < webhook.MaxAttempts; attempt++ {
		retryOnSchedule(t, env, ops.LicenseHookKind, attempt, time.Minute)
	}
	l := waitLicenseStatus(t, a, id, licHooked, "failed")
	if n := len(hookDeliveries(t, rcv, secret, ops.LicenseHookActivate, webhook.MaxAttempts)); n != webhook.MaxAttempts {
		t.Errorf("%d attempts, want %d", n, webhook.MaxAttempts)
	}
	if got := credit(t, a) - before; got != money(t, "10") {
		t.Errorf("the credit went up by %s, want the license's 10.0000 refunded", got)
	}
	refunded := false
	for _, e := range items(t, a.Do("GET", "/billing/transactions", nil).Want(t, http.StatusOK)) {
		if r, ok := e["resource"].(map[string]any); ok && r["type"] == "license" && num(t, r["id"]) == num(t, l["id"]) {
			refunded = refunded || (e["type"] == "refund" && e["amount"] == "10.0000")
		}
	}
	if !refunded {
		t.Error("no refund of the failed license in the ledger")
	}
	if evs := licenseEvents(t, a, "license.failed"); len(evs) != 1 || evs[0]["data"].(map[string]any)["status"] != "failed" {
		t.Errorf("license.failed events %v", evs)
	}
	// A failed license is not held: removing it is 404, and no cancel is sent.
	wantNotFound(t, a.Do("DELETE", fmt.Sprintf("/servers/%d/licenses/%d", id, num(t, l["id"])), nil))
}

// TestLicenseHookCreditSuspension: the suspension of the account's servers for
// exhausted credit reaches the hook as a suspend, its lifting by a top-up as an
// unsuspend.
func TestLicenseHookCreditSuspension(t *testing.T) {
	t.Parallel()
	env, clock, rcv, secret := hookedEnv(t, http.StatusOK)
	ctx := context.Background()
	a := env.NewAccount("en", "10.0140", "") // the license's month and two hours of plan 1
	id := num(t, runningServer(t, a, "license_ids", []int{licHooked})["id"])
	waitLicenseStatus(t, a, id, licHooked, "active")
	clock.Set(billingStart.Add(2 * time.Hour))
	meter(t, env)
	if c := credit(t, a); c >= 0 {
		t.Fatalf("credit %s, want below zero", c)
	}
	if s := hookDeliveries(t, rcv, secret, ops.LicenseHookSuspend, 1)[0]; s.Data.Server.ID != id || !s.Data.Server.Suspended {
		t.Errorf("suspend: %+v", s.Data)
	}
	if _, err := env.App.Service.AddCredit(ctx, a.ID, money(t, "5"), ""); err != nil {
		t.Fatal(err)
	}
	if u := hookDeliveries(t, rcv, secret, ops.LicenseHookUnsuspend, 1)[0]; u.Data.Server.Suspended {
		t.Errorf("unsuspend: %+v", u.Data)
	}
}

// TestLicenseHookGoesWithItsChange: the hook's job is enqueued in the transaction of
// the change (the outbox rule): a license refused for want of credit leaves no job
// and sends nothing; the one accepted after a top-up is sent.
func TestLicenseHookGoesWithItsChange(t *testing.T) {
	t.Parallel()
	env, _, rcv, secret := hookedEnv(t, http.StatusOK)
	ctx := context.Background()
	a := env.NewAccount("en", "1", "")
	id := num(t, runningServer(t, a)["id"])
	path := fmt.Sprintf("/servers/%d/licenses", id)
	if e := wantError(t, a.Do("POST", path, map[string]any{"license_id": licHooked}), http.StatusUnprocessableEntity,
		"insufficient_credit"); len(e.Errors["license_id"]) == 0 {
		t.Errorf("a license above the credit: %+v", e)
	}
	if jobs, err := env.App.Jobs(ctx, ops.LicenseHookKind); err != nil || len(jobs) != 0 {
		t.Fatalf("license hook jobs after a refused license: %d, %v", len(jobs), err)
	}
	if _, err := env.App.Service.AddCredit(ctx, a.ID, money(t, "20"), ""); err != nil {
		t.Fatal(err)
	}
	a.Do("POST", path, map[string]any{"license_id": licHooked}).Want(t, http.StatusCreated)
	hookDeliveries(t, rcv, secret, ops.LicenseHookActivate, 1)
	waitLicenseStatus(t, a, id, licHooked, "active")
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.got) != 1 {
		t.Errorf("the hook got %d deliveries, want the accepted license's activate alone", len(rcv.got))
	}
}
