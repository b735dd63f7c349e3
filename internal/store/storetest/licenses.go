package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// licenses checks the catalog's licenses and a server's (docs/api.md, Licenses): the
// products read back as applied (retired ones gone), a key pool's stock and keys
// (each given once, given back when cancelled), a cancelled license listed until its
// paid month ends, and the month's charge as one set-based step: the price times the
// server's vCPUs for a per-vCPU license, the ledger and the credit moved, the license
// paid through the next month, nothing charged twice.
func licenses(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	dec := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	s, a, _ := twoAccounts(t, open, "lic", now)
	c := catalog()
	c.Licenses = []hosting.License{
		{ID: 1, Name: "win", Vendor: "Microsoft", Per: hosting.LicensePerVCPU, PriceMonthly: 42000, ImageIDs: []int64{2}, Provisioning: hosting.ProvisionNone},
		{ID: 2, Name: "panel", Vendor: "Acme", Per: hosting.LicensePerServer, PriceMonthly: 100000, Provisioning: hosting.ProvisionKeyPool},
		{ID: 3, Name: "gone", Vendor: "Acme", Per: hosting.LicensePerServer, PriceMonthly: 1, Provisioning: hosting.ProvisionNone},
	}
	in(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, c) })
	c.Licenses = c.Licenses[:2]
	in(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, c) })
	ls, err := s.Licenses(ctx)
	if err != nil || len(ls) != 2 || !slices.Equal(ls[0].ImageIDs, []int64{2}) || ls[0].Per != hosting.LicensePerVCPU ||
		ls[0].PriceMonthly != 42000 || !ls[0].InStock || ls[1].InStock || len(ls[1].ImageIDs) != 0 {
		t.Fatalf("licenses: %+v, %v", ls, err)
	}
	if _, err := s.License(ctx, 3); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a retired license: %v", err)
	}

	var srv, win, panel int64
	in(t, s, func(tx store.Tx) error {
		var err error
		if _, err = tx.AddTransaction(ctx, hosting.Transaction{AccountID: a, Type: hosting.TxTopup, Amount: 1000000, CreatedAt: now}); err != nil {
			return err
		}
		if srv, err = tx.CreateServer(ctx, hosting.Server{AccountID: a, Name: "server-lic001", DisplayName: "w", Status: hosting.StatusRunning,
			LocationID: 1, PlanID: 2, ImageID: 2, VCPUs: 4, MemoryMB: 8192, DiskGB: 80, CreatedAt: now}); err != nil {
			return err
		}
		if win, err = tx.AddServerLicense(ctx, hosting.ServerLicense{AccountID: a, ServerID: srv, LicenseID: 1, Name: "win",
			Status: hosting.LicenseActive, StartedAt: now, PaidThrough: dec, ChargedVCPUs: 4}); err != nil {
			return err
		}
		if panel, err = tx.AddServerLicense(ctx, hosting.ServerLicense{AccountID: a, ServerID: srv, LicenseID: 2, Name: "panel",
			Status: hosting.LicenseActive, StartedAt: now, PaidThrough: dec, ChargedVCPUs: 4}); err != nil {
			return err
		}
		if _, err := tx.TakeLicenseKey(ctx, 2, panel); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a key of an empty pool: %v", err)
		}
		if err := tx.AddLicenseKeys(ctx, 2, [][]byte{[]byte("sealed-1")}, now); err != nil {
			return err
		}
		k, err := tx.TakeLicenseKey(ctx, 2, panel)
		if err != nil || string(k) != "sealed-1" {
			t.Errorf("the pool's key: %q, %v", k, err)
		}
		return nil
	})
	if l, _ := s.License(ctx, 2); l.InStock {
		t.Error("the pool's one key is taken: still in stock")
	}
	got, err := s.ServerLicenses(ctx, srv, now)
	if err != nil || len(got) != 2 || got[0].ID != win || len(got[0].SealedKey) != 0 || string(got[1].SealedKey) != "sealed-1" ||
		!got[1].PaidThrough.Equal(dec) || got[1].ChargedVCPUs != 4 || !got[1].StartedAt.Equal(now) {
		t.Fatalf("server licenses: %+v, %v", got, err)
	}

	// The first of December: one step charges both, once.
	due, err := s.EarliestLicenseDue(ctx, dec, 0)
	if err != nil || due == nil || !due.Equal(dec) {
		t.Fatalf("earliest due: %v, %v", due, err)
	}
	var res store.ChargeResult
	in(t, s, func(tx store.Tx) error {
		var err error
		res, err = tx.ChargeLicenses(ctx, store.LicenseStep{Month: dec, Now: dec})
		return err
	})
	if res.Hours != 2 || res.Total != 4*42000+100000 {
		t.Errorf("the month's step: %+v", res)
	}
	if due, err := s.EarliestLicenseDue(ctx, dec, 0); err != nil || due != nil {
		t.Errorf("due after the step: %v, %v", due, err)
	}
	if m, err := s.Charged(ctx, hosting.ResourceLicense, win); err != nil || m != 4*42000 {
		t.Errorf("win charged %s, %v", m, err)
	}
	if acct, _ := s.Account(ctx, a); acct.Credit != 1000000-4*42000-100000 {
		t.Errorf("credit %s", acct.Credit)
	}
	jan := dec.AddDate(0, 1, 0)
	if l, _ := s.ServerLicense(ctx, srv, win); !l.PaidThrough.Equal(jan) {
		t.Errorf("paid through %s, want %s", l.PaidThrough, jan)
	}
	// December's report: both, on 4 vCPUs; a smaller record keeps the most, a larger
	// one raises it.
	in(t, s, func(tx store.Tx) error { return tx.RecordLicenseUse(ctx, []int64{win}, dec, 2) })
	in(t, s, func(tx store.Tx) error { return tx.RecordLicenseUse(ctx, []int64{panel}, dec, 8) })
	rep, err := s.LicenseReport(ctx, dec)
	if err != nil || len(rep) != 2 || rep[0].License != "win" || rep[0].Server != "server-lic001" || rep[0].Account != "lic-a@example.com" ||
		rep[0].MaxVCPUs != 4 || rep[1].MaxVCPUs != 8 || !rep[0].Started.Equal(now) || rep[0].Cancelled != nil {
		t.Errorf("December's report: %+v, %v", rep, err)
	}
	if rep, err := s.LicenseReport(ctx, now); err != nil || len(rep) != 0 {
		t.Errorf("November's report (nothing recorded): %+v, %v", rep, err)
	}

	// Cancelled: the key goes back; listed until its paid month ends; not charged.
	in(t, s, func(tx store.Tx) error { return tx.CancelServerLicense(ctx, panel, dec.Add(time.Hour)) })
	err = s.InTx(ctx, func(tx store.Tx) error { return tx.CancelServerLicense(ctx, panel, dec.Add(time.Hour)) })
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("cancelled twice: %v", err)
	}
	if l, _ := s.License(ctx, 2); !l.InStock {
		t.Error("the key of a cancelled license was not given back")
	}
	if got, _ := s.ServerLicenses(ctx, srv, jan.Add(-time.Millisecond)); len(got) != 2 || got[1].Status != hosting.LicenseCancelled ||
		len(got[1].SealedKey) != 0 || got[1].CancelledAt == nil {
		t.Errorf("before its month ends: %+v", got)
	}
	if got, _ := s.ServerLicenses(ctx, srv, jan); len(got) != 1 || got[0].ID != win {
		t.Errorf("once its month ended: %+v", got)
	}
	in(t, s, func(tx store.Tx) error {
		var err error
		res, err = tx.ChargeLicenses(ctx, store.LicenseStep{Month: jan, Now: jan, Account: a})
		return err
	})
	if res.Hours != 1 || res.Total != 4*42000 {
		t.Errorf("January: %+v, want the held one only", res)
	}
}

// licenseHooks checks a webhook license's hook (docs/operating.md, License hooks): read
// back with its secrets as applied, retired or not, never with the catalog's list;
// none for a product not provisioned by webhook; the held licenses of webhook products
// of a server and of an account; a pending one moved to active only from pending.
func licenseHooks(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	s, a, b := twoAccounts(t, open, "lhk", now)
	in := func(fn func(tx store.Tx) error) {
		t.Helper()
		if err := s.InTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	c := catalog()
	hook := &hosting.LicenseHook{URL: "http://10.0.0.5/berth", Secrets: []string{"whsec_new", "whsec_old"}}
	c.Licenses = []hosting.License{
		{ID: 1, Name: "plain", Vendor: "Acme", Per: hosting.LicensePerServer, PriceMonthly: 1, Provisioning: hosting.ProvisionNone},
		{ID: 2, Name: "hooked", Vendor: "Acme", Per: hosting.LicensePerServer, PriceMonthly: 1, Provisioning: hosting.ProvisionWebhook, Hook: hook},
	}
	in(func(tx store.Tx) error { return tx.ApplyCatalog(ctx, c) })
	if h, err := s.LicenseHook(ctx, 2); err != nil || h == nil || h.URL != hook.URL || !slices.Equal(h.Secrets, hook.Secrets) {
		t.Errorf("hook: %+v, %v", h, err)
	}
	if h, err := s.LicenseHook(ctx, 1); err != nil || h != nil {
		t.Errorf("the hook of a product provisioned by none: %+v, %v", h, err)
	}
	if ls, err := s.Licenses(ctx); err != nil || len(ls) != 2 || ls[1].Hook != nil {
		t.Errorf("the catalog's list shows a hook: %+v, %v", ls, err)
	}
	var srvA, srvA2, srvB, hookedA, hookedA2, hookedB int64
	in(func(tx store.Tx) error {
		mk := func(account int64, name string) int64 {
			id, err := tx.CreateServer(ctx, hosting.Server{AccountID: account, Name: name, DisplayName: name, Status: hosting.StatusRunning,
				LocationID: 1, PlanID: 2, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, CreatedAt: now})
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		hold := func(account, server, lic int64, st hosting.LicenseStatus) int64 {
			id, err := tx.AddServerLicense(ctx, hosting.ServerLicense{AccountID: account, ServerID: server, LicenseID: lic, Name: "l",
				Status: st, StartedAt: now, PaidThrough: now, ChargedVCPUs: 1})
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		srvA, srvA2, srvB = mk(a, "server-lhk001"), mk(a, "server-lhk002"), mk(b, "server-lhk003")
		hookedA = hold(a, srvA, 2, hosting.LicensePending)
		hold(a, srvA, 1, hosting.LicenseActive)
		hookedA2 = hold(a, srvA2, 2, hosting.LicenseActive)
		hold(a, srvA2, 2, hosting.LicenseFailed)
		hookedB = hold(b, srvB, 2, hosting.LicenseActive)
		return tx.CancelServerLicense(ctx, hookedA2, now)
	})
	ids := func(ls []hosting.ServerLicense, err error) []int64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, l := range ls {
			out = append(out, l.ID)
		}
		return out
	}
	if got := ids(s.HookedLicenses(ctx, a, 0)); !slices.Equal(got, []int64{hookedA}) {
		t.Errorf("account a's hooked licenses %v, want %d (not the plain, failed or cancelled ones)", got, hookedA)
	}
	if got := ids(s.HookedLicenses(ctx, 0, srvB)); !slices.Equal(got, []int64{hookedB}) {
		t.Errorf("server b's hooked licenses %v, want %d", got, hookedB)
	}
	if got := ids(s.HookedLicenses(ctx, 0, srvA2)); len(got) != 0 {
		t.Errorf("a server with only a cancelled and a failed one: %v", got)
	}
	in(func(tx store.Tx) error {
		if ok, err := tx.SetServerLicenseStatus(ctx, hookedA, hosting.LicensePending, hosting.LicenseActive); err != nil || !ok {
			t.Errorf("pending to active: %v, %v", ok, err)
		}
		if ok, err := tx.SetServerLicenseStatus(ctx, hookedA, hosting.LicensePending, hosting.LicenseFailed); err != nil || ok {
			t.Errorf("pending to failed once active: %v, %v", ok, err)
		}
		return nil
	})
	if l, err := s.ServerLicense(ctx, srvA, hookedA); err != nil || l.Status != hosting.LicenseActive {
		t.Errorf("after the moves: %+v, %v", l, err)
	}
	// Retired, the product's hook still serves the licenses held.
	c.Licenses = c.Licenses[:1]
	in(func(tx store.Tx) error { return tx.ApplyCatalog(ctx, c) })
	if h, err := s.LicenseHook(ctx, 2); err != nil || h == nil || h.URL != hook.URL {
		t.Errorf("a retired product's hook: %+v, %v", h, err)
	}
}
