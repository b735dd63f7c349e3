package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// derivedLedger checks the ledger of metering passes derived from the meters (issues
// 29 and 34) against charges worked out hour by hour here: over a month's end and a
// day's, with a monthly cap, a rate change, a stop before the account's charged_to
// (which keeps the hours charged), a restart, and more hours in one day than one row
// holds. The ledger shows one entry per resource and hour, each (resource, hour)
// once, with balances that run; every page of it is a slice of the whole; Charged is
// each resource's entries' sum; a pass at the same time again charges nothing.
func derivedLedger(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 20, 15, 0, 0, time.UTC)
	s, a, _ := twoAccounts(t, open, "derived", t0)
	const many = 1030 // snapshots of 1 an hour: over a row's 1,024 lines in an hour
	cap := hosting.Money(10)
	in(t, s, func(tx store.Tx) error {
		if _, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: a, Type: hosting.TxTopup, Amount: 10000000, CreatedAt: t0}); err != nil {
			return err
		}
		for _, m := range []hosting.Meter{
			{ResourceType: hosting.ResourceServer, ResourceID: 1, ResourceName: "s1", Rate: 10, BilledFrom: t0},
			{ResourceType: hosting.ResourceServer, ResourceID: 2, ResourceName: "s2", Rate: 7, BilledFrom: t0.Add(30 * time.Minute)},
			// 3 an hour up to 10 a month, 2 of November's charged before it.
			{ResourceType: hosting.ResourceVolume, ResourceID: 3, ResourceName: "v3", Rate: 3, MonthlyCap: &cap, BilledFrom: t0,
				MonthStart: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), MonthCharged: 2},
		} {
			m.AccountID, m.StartedAt = a, t0
			if _, err := tx.OpenMeter(ctx, m); err != nil {
				return err
			}
		}
		for i := range many {
			if _, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: a, ResourceType: hosting.ResourceSnapshot, ResourceID: int64(100 + i),
				ResourceName: "p", Rate: 1, StartedAt: t0, BilledFrom: t0.Add(2 * time.Hour), StoppedAt: ptr(t0.Add(3 * time.Hour))}); err != nil {
				return err
			}
		}
		return nil
	})
	pass := func(at time.Time) store.ChargeResult {
		t.Helper()
		var res store.ChargeResult
		in(t, s, func(tx store.Tx) error {
			var err error
			res, err = tx.ChargeDue(ctx, store.ChargeStep{Upto: at, Now: at})
			return err
		})
		return res
	}
	// The charges expected, hour by hour.
	type hour struct {
		typ string
		id  int64
		at  time.Time
	}
	want := map[hour]hosting.Money{}
	volumeMonth := map[time.Month]hosting.Money{time.November: 2}
	charge := func(typ string, id int64, rate hosting.Money, from, to time.Time) {
		for h := from; h.Before(to); h = h.Add(time.Hour) {
			amount := rate
			if typ == hosting.ResourceVolume {
				amount = min(rate, cap-volumeMonth[h.Month()])
				volumeMonth[h.Month()] += amount
			}
			if amount > 0 {
				want[hour{typ, id, h}] = amount
			}
		}
	}
	p1 := t0.Add(90 * time.Minute) // 21:45: s1's 20:15 and 21:15, s2's 20:45 and 21:45, v3's 20:15 and 21:15
	if res := pass(p1); res.Accounts != 1 || res.Hours != 6 {
		t.Errorf("pass at %s: %+v; want 6 hours of the one account", p1, res)
	}
	// s1 at 20 from its next hour (22:15); s2 stopped at 21:00, before the pass's end:
	// its hour at 21:45 charged, none after; then restarted at 23:00.
	in(t, s, func(tx store.Tx) error {
		if err := tx.SetMeterRate(ctx, hosting.ResourceServer, 1, 20, nil); err != nil {
			return err
		}
		if err := tx.StopMeter(ctx, hosting.ResourceServer, 2, t0.Add(45*time.Minute)); err != nil {
			return err
		}
		return tx.RestartMeter(ctx, hosting.ResourceServer, 2, t0.Add(165*time.Minute))
	})
	p2 := t0.Add(28 * time.Hour) // the next day, December's 2nd at 00:15
	pass(p2)
	charge(hosting.ResourceServer, 1, 10, t0, t0.Add(2*time.Hour))
	charge(hosting.ResourceServer, 1, 20, t0.Add(2*time.Hour), p2.Add(time.Millisecond))
	charge(hosting.ResourceServer, 2, 7, t0.Add(30*time.Minute), t0.Add(90*time.Minute+time.Millisecond))
	charge(hosting.ResourceServer, 2, 7, t0.Add(165*time.Minute), p2.Add(time.Millisecond))
	charge(hosting.ResourceVolume, 3, 3, t0, p2.Add(time.Millisecond))
	for i := range many {
		charge(hosting.ResourceSnapshot, int64(100+i), 1, t0.Add(2*time.Hour), t0.Add(3*time.Hour))
	}
	if res := pass(p2); res.Total != 0 || res.Hours != 0 {
		t.Errorf("a second pass at %s: %+v; want nothing charged", p2, res)
	}

	all, total, err := s.Transactions(ctx, a, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if total != len(want)+1 || len(all) != total {
		t.Fatalf("the ledger shows %d entries of %d; want %d charges and the top-up", len(all), total, len(want))
	}
	got := map[hour]hosting.Money{}
	byResource := map[[2]any]hosting.Money{}
	balance := hosting.Money(0)
	ids := map[int64]bool{}
	for i := len(all) - 1; i >= 0; i-- {
		e := all[i]
		balance += e.Amount
		if e.BalanceAfter != balance {
			t.Fatalf("entry %d (%d): balance after %s, the entries up to it sum to %s", i, e.ID, e.BalanceAfter, balance)
		}
		if ids[e.ID] || (i < len(all)-1 && e.ID <= all[i+1].ID) {
			t.Fatalf("entry %d: id %d given twice or not after the one before (%d)", i, e.ID, all[i+1].ID)
		}
		ids[e.ID] = true
		if e.Type != hosting.TxCharge {
			continue
		}
		h := hour{e.ResourceType, *e.ResourceID, e.PeriodStart.UTC()}
		if _, twice := got[h]; twice {
			t.Fatalf("%s %d charged twice for %s", h.typ, h.id, h.at)
		}
		got[h] = -e.Amount
		byResource[[2]any{h.typ, h.id}] -= e.Amount
	}
	for h, m := range want {
		if got[h] != m {
			t.Errorf("%s %d at %s: charged %s, want %s", h.typ, h.id, h.at, got[h], m)
		}
	}
	for h := range got {
		if _, ok := want[h]; !ok {
			t.Errorf("%s %d at %s: charged %s, want nothing", h.typ, h.id, h.at, got[h])
		}
	}
	for _, r := range [][2]any{{hosting.ResourceServer, int64(1)}, {hosting.ResourceServer, int64(2)}, {hosting.ResourceVolume, int64(3)},
		{hosting.ResourceSnapshot, int64(100)}, {hosting.ResourceSnapshot, int64(100 + many - 1)}} {
		if c, err := s.Charged(ctx, r[0].(string), r[1].(int64)); err != nil || c != byResource[r] {
			t.Errorf("%s %d: Charged %s, %v; its entries sum to %s", r[0], r[1], c, err, byResource[r])
		}
	}
	acct, err := s.Account(ctx, a)
	if err != nil || acct.Credit != balance {
		t.Errorf("credit %s, %v; the ledger sums to %s", acct.Credit, err, balance)
	}
	// Pages of 7 from each offset near the rows' edges, and a page past the end.
	for _, off := range []int{0, 1, 5, 40, 100, total - 1030, total - 1026, total - 1025, total - 9, total - 3, total, total + 5} {
		page, n, err := s.Transactions(ctx, a, 7, off)
		if err != nil || n != total {
			t.Fatalf("page at %d: %d in all, %v", off, n, err)
		}
		wantPage := all[min(max(off, 0), total):min(max(off, 0)+7, total)]
		if fmt.Sprint(ledgerIDs(page)) != fmt.Sprint(ledgerIDs(wantPage)) {
			t.Errorf("page of 7 at %d: %v, want %v", off, ledgerIDs(page), ledgerIDs(wantPage))
		}
	}
	derivedAfterReset(t, s, a, t0)
}

// derivedAfterReset is the end of derivedLedger: the account reset, a meter opened
// before where the last pass got is charged from its first hour.
func derivedAfterReset(t *testing.T, s store.Store, a int64, t0 time.Time) {
	ctx := context.Background()
	in(t, s, func(tx store.Tx) error {
		if _, err := tx.ResetAccount(ctx, a, t0); err != nil {
			return err
		}
		_, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: a, ResourceType: hosting.ResourceServer, ResourceID: 9, ResourceName: "s9",
			Rate: 4, StartedAt: t0, BilledFrom: t0.Add(time.Hour)})
		return err
	})
	var res store.ChargeResult
	in(t, s, func(tx store.Tx) error {
		var err error
		res, err = tx.ChargeDue(ctx, store.ChargeStep{Upto: t0.Add(90 * time.Minute), Now: t0.Add(90 * time.Minute)})
		return err
	})
	if c, err := s.Charged(ctx, hosting.ResourceServer, 9); err != nil || res.Hours != 1 || c != 4 {
		t.Errorf("after a reset: a meter from %s charged %s, %v, by a pass of %+v; want its hour, 4", t0.Add(time.Hour), c, err, res)
	}
}

// ledgerIDs are the ids and balances of a ledger's entries.
func ledgerIDs(list []hosting.Transaction) [][2]int64 {
	out := make([][2]int64, len(list))
	for i, t := range list {
		out[i] = [2]int64{t.ID, int64(t.BalanceAfter)}
	}
	return out
}
