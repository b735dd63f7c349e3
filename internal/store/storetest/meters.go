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

// meterBurn checks an account's burn (accounts.burn, the sum of its active meters'
// rates, which a metering step's credit-low check reads): moved by opening,
// stopping, restarting and re-rating a meter, not by a stop of a stopped meter or of
// a resource without one, and zero after a sandbox reset.
func meterBurn(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	s, a, b := twoAccounts(t, open, "burn", now)
	next := now.Add(time.Hour)
	steps := []struct {
		name   string
		change func(tx store.Tx) error
		a, b   int64 // the burns after it
	}{
		{"a server's meter opened", func(tx store.Tx) error {
			_, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: a, ResourceType: hosting.ResourceServer, ResourceID: 1, ResourceName: "s1",
				Rate: 70, StartedAt: now, BilledFrom: next, MonthStart: month})
			return err
		}, 70, 0},
		{"a volume's meter opened", func(tx store.Tx) error {
			_, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: a, ResourceType: hosting.ResourceVolume, ResourceID: 1, ResourceName: "v1",
				Rate: 11, StartedAt: now, BilledFrom: next, MonthStart: month})
			return err
		}, 81, 0},
		{"another account's meter opened", func(tx store.Tx) error {
			_, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: b, ResourceType: hosting.ResourceServer, ResourceID: 2, ResourceName: "s2",
				Rate: 5, StartedAt: now, BilledFrom: next, MonthStart: month})
			return err
		}, 81, 5},
		{"a meter opened stopped", func(tx store.Tx) error {
			_, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: a, ResourceType: hosting.ResourceSnapshot, ResourceID: 3, ResourceName: "p3",
				Rate: 1000, StartedAt: now, StoppedAt: &now, MonthStart: month})
			return err
		}, 81, 5},
		{"the server's meter stopped", func(tx store.Tx) error {
			return tx.StopMeter(ctx, hosting.ResourceServer, 1, now.Add(30*time.Minute))
		}, 11, 5},
		{"the server's meter stopped again", func(tx store.Tx) error {
			return tx.StopMeter(ctx, hosting.ResourceServer, 1, now.Add(40*time.Minute))
		}, 11, 5},
		{"a stop of a resource without a meter", func(tx store.Tx) error {
			return tx.StopMeter(ctx, hosting.ResourceServer, 99, now)
		}, 11, 5},
		{"the stopped server's rate changed", func(tx store.Tx) error {
			return tx.SetMeterRate(ctx, hosting.ResourceServer, 1, 90, nil)
		}, 11, 5},
		{"the server's meter restarted", func(tx store.Tx) error {
			return tx.RestartMeter(ctx, hosting.ResourceServer, 1, now.Add(time.Hour))
		}, 101, 5},
		{"the volume's rate changed", func(tx store.Tx) error {
			cap := hosting.Money(1000)
			return tx.SetMeterRate(ctx, hosting.ResourceVolume, 1, 22, &cap)
		}, 112, 5},
		{"the account reset", func(tx store.Tx) error {
			_, err := tx.ResetAccount(ctx, a, now.Add(2*time.Hour))
			return err
		}, 0, 5},
	}
	for _, st := range steps {
		if err := s.InTx(ctx, st.change); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := burnOf(t, s, a); got != st.a {
			t.Errorf("after %s: burn of a %d, want %d", st.name, got, st.a)
		}
		if got := burnOf(t, s, b); got != st.b {
			t.Errorf("after %s: burn of b %d, want %d", st.name, got, st.b)
		}
	}
}

// burnOf reads an account's burn.
func burnOf(t *testing.T, s store.Store, account int64) int64 {
	t.Helper()
	var burn int64
	err := s.InTx(context.Background(), func(tx store.Tx) error {
		return tx.SQL().QueryRowContext(context.Background(), s.Rebind(`SELECT burn FROM accounts WHERE id = ?`), account).Scan(&burn)
	})
	if err != nil {
		t.Fatal(err)
	}
	return burn
}

// chargeLimit checks a charge step's Limit: it ends after the account (by when its
// first hour is due, then by id) that takes it to that many meter hours, each
// account's hours charged whole; the next step charges the rest, the ledger balanced
// after each.
func chargeLimit(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	s, a, b := twoAccounts(t, open, "limit", now)
	// Five meters, due at 11:00, 11:10, 11:00, 11:20, 11:10 by id: 1, 3 and 5 are a's
	// (due first at 11:00), 2 and 4 b's (at 11:10).
	due := []time.Duration{0, 10 * time.Minute, 0, 20 * time.Minute, 10 * time.Minute}
	err := s.InTx(ctx, func(tx store.Tx) error {
		for _, id := range []int64{a, b} {
			if _, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: id, Type: hosting.TxTopup, Amount: 100000, CreatedAt: now}); err != nil {
				return err
			}
		}
		for i, d := range due {
			next := now.Add(time.Hour + d)
			acct := []int64{a, b}[i%2]
			if _, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: acct, ResourceType: hosting.ResourceServer, ResourceID: int64(i + 1),
				ResourceName: "m", Rate: hosting.Money(10 * (i + 1)), StartedAt: now, BilledFrom: next, MonthStart: month}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	upto := now.Add(90 * time.Minute)
	for _, step := range []struct {
		limit int
		want  []int64 // resource ids charged
	}{
		{2, []int64{1, 3, 5}},
		{2, []int64{2, 4}},
		{10, nil},
	} {
		var res store.ChargeResult
		err := s.InTx(ctx, func(tx store.Tx) error {
			var err error
			res, err = tx.ChargeDue(ctx, store.ChargeStep{Upto: upto, Now: upto, Limit: step.limit})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		var want hosting.Money
		for _, id := range step.want {
			want += hosting.Money(10 * id)
		}
		if res.Hours != len(step.want) || res.Total != want {
			t.Errorf("step with limit %d: %d hours, %s; want %d, %s", step.limit, res.Hours, res.Total, len(step.want), want)
		}
		for _, id := range step.want {
			if c, err := s.Charged(ctx, hosting.ResourceServer, id); err != nil || c != hosting.Money(10*id) {
				t.Errorf("after the step with limit %d: server %d charged %s, %v; want %d", step.limit, id, c, err, 10*id)
			}
		}
	}
	for _, id := range []int64{a, b} {
		acct, err := s.Account(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		list, _, err := s.Transactions(ctx, id, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		var sum hosting.Money
		for _, tr := range list {
			sum += tr.Amount
		}
		if acct.Credit != sum {
			t.Errorf("account %d: credit %s, ledger sums to %s", id, acct.Credit, sum)
		}
	}
}

// chargeTwiceRefused checks that a charge step never charges a window of time twice:
// when the ledger has a row for one of its accounts' window already (as if a step
// had charged it without moving the account's charged_to), the step fails with
// ErrConflict and leaves nothing behind, neither the rows written for the accounts
// before it nor their charged_to moved on, the credit taken or the spend counted; in
// a transaction of its own and joined to a held one alike (there the held
// transaction's own writes stay).
func chargeTwiceRefused(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	next := now.Add(time.Hour)
	s, a, b := twoAccounts(t, open, "twice", now)
	in(t, s, func(tx store.Tx) error {
		for _, id := range []int64{a, b} {
			if _, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: id, Type: hosting.TxTopup, Amount: 100000, CreatedAt: now}); err != nil {
				return err
			}
		}
		// Servers 1 and 3 are a's, 2 and 4 b's: the step writes a's charges first.
		for i := int64(1); i <= 4; i++ {
			if _, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: []int64{a, b}[(i+1)%2], ResourceType: hosting.ResourceServer, ResourceID: i,
				ResourceName: "m", Rate: hosting.Money(10 * i), StartedAt: now, BilledFrom: next, MonthStart: month}); err != nil {
				return err
			}
		}
		// b's window, from its day's start (its charged_to is before), in the ledger
		// already: the step's last account. It shows no entry (0 lines).
		day := next.Truncate(24 * time.Hour)
		_, err := tx.SQL().ExecContext(ctx, s.Rebind(`INSERT INTO transactions (account_id, type, amount, balance_after, description,
			period_start, created_at, lines, lines_before, window_end, first_line) VALUES (?, 'charge', 0, 100000, '', ?, ?, 0, 1, ?, 0)`),
			b, day.UnixMilli(), now.UnixMilli(), day.Add(24*time.Hour).UnixMilli())
		return err
	})
	type state struct {
		credit  [2]hosting.Money
		entries [2]int
		charged [4]hosting.Money
		spent   hosting.Money
		due     time.Time
	}
	read := func() state {
		t.Helper()
		var st state
		for i, id := range []int64{a, b} {
			acct, err := s.Account(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			list, _, err := s.Transactions(ctx, id, 100, 0)
			if err != nil {
				t.Fatal(err)
			}
			st.credit[i], st.entries[i] = acct.Credit, len(list)
			spent, err := s.Spent(ctx, id, month)
			if err != nil {
				t.Fatal(err)
			}
			st.spent += spent
		}
		for i := range st.charged {
			c, err := s.Charged(ctx, hosting.ResourceServer, int64(i+1))
			if err != nil {
				t.Fatal(err)
			}
			st.charged[i] = c
		}
		due, err := s.EarliestDue(ctx, next, 0)
		if err != nil || due == nil {
			t.Fatalf("earliest due: %v, %v", due, err)
		}
		st.due = *due
		return st
	}
	before := read()
	if want := (state{credit: [2]hosting.Money{100000, 100000}, entries: [2]int{1, 1}, due: next}); before != want {
		t.Fatalf("before the step: %+v, want %+v", before, want)
	}
	step := func(tx store.Tx) error {
		_, err := tx.ChargeDue(ctx, store.ChargeStep{Upto: next, Now: next})
		return err
	}
	if err := s.InTx(ctx, step); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a step over an hour charged already: %v, want ErrConflict", err)
	}
	if after := read(); after != before {
		t.Errorf("after the refused step: %+v, want it as before, %+v", after, before)
	}

	// Joined to a held transaction, as under an Idempotency-Key: the step undoes only
	// itself, and the holder's top-up commits.
	hctx, hold := store.WithHold(ctx)
	defer hold.Release()
	if err := s.InTx(hctx, func(tx store.Tx) error {
		_, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: a, Type: hosting.TxTopup, Amount: 5, CreatedAt: now})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.InTx(hctx, step); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a joined step over an hour charged already: %v, want ErrConflict", err)
	}
	if err := hold.Commit(func(store.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	want := before
	want.credit[0] += 5
	want.entries[0]++
	if after := read(); after != want {
		t.Errorf("after the held transaction with the refused step committed: %+v, want %+v", after, want)
	}
}

// spent checks Spent and DailySpend (GET /billing's month_to_date, the console's
// chart): charges net of refunds by the UTC day of the hour they paid for, from the
// ledger's single writes and a charge step's set-based one alike; top-ups,
// adjustments and entries without an hour not counted; each account its own; none
// after a sandbox reset.
func spent(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	oct31 := time.Date(2026, 10, 31, 0, 0, 0, 0, time.UTC)
	nov1 := oct31.AddDate(0, 0, 1)
	nov2 := nov1.AddDate(0, 0, 1)
	s, a, b := twoAccounts(t, open, "spent", now)
	at := func(d time.Time, h int) *time.Time { p := d.Add(time.Duration(h) * time.Hour); return &p }
	err := s.InTx(ctx, func(tx store.Tx) error {
		for _, tr := range []hosting.Transaction{
			{AccountID: a, Type: hosting.TxTopup, Amount: 100000},
			{AccountID: a, Type: hosting.TxCharge, Amount: -100, ResourceType: hosting.ResourceServer, ResourceID: ptr[int64](1), PeriodStart: at(oct31, 23)},
			{AccountID: a, Type: hosting.TxCharge, Amount: -70, ResourceType: hosting.ResourceServer, ResourceID: ptr[int64](1), PeriodStart: at(nov1, 0)},
			{AccountID: a, Type: hosting.TxRefund, Amount: 20, ResourceType: hosting.ResourceServer, ResourceID: ptr[int64](1), PeriodStart: at(nov1, 5)},
			{AccountID: a, Type: hosting.TxAdjustment, Amount: -30, PeriodStart: at(nov1, 6)},
			{AccountID: a, Type: hosting.TxCharge, Amount: -5, Description: "no hour"},
			{AccountID: b, Type: hosting.TxTopup, Amount: 100000},
			{AccountID: b, Type: hosting.TxCharge, Amount: -9, ResourceType: hosting.ResourceServer, ResourceID: ptr[int64](2), PeriodStart: at(nov1, 1)},
		} {
			tr.CreatedAt = now
			if _, err := tx.AddTransaction(ctx, tr); err != nil {
				return err
			}
		}
		_, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: a, ResourceType: hosting.ResourceServer, ResourceID: 3, ResourceName: "s3",
			Rate: 40, StartedAt: now.Add(-time.Hour), BilledFrom: now, MonthStart: nov1})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.InTx(ctx, func(tx store.Tx) error {
		res, err := tx.ChargeDue(ctx, store.ChargeStep{Upto: now, Now: now})
		if err == nil && res.Hours != 1 {
			t.Errorf("charge step: %d hours, want 1", res.Hours)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	check := func(when string, acct int64, from time.Time, want hosting.Money, days map[time.Time]hosting.Money) {
		t.Helper()
		if got, err := s.Spent(ctx, acct, from); err != nil || got != want {
			t.Errorf("%s: account %d spent %s since %s, %v; want %s", when, acct, got, from.Format(time.DateOnly), err, want)
		}
		list, err := s.DailySpend(ctx, acct, oct31)
		if err != nil {
			t.Fatal(err)
		}
		got := map[time.Time]hosting.Money{}
		for _, d := range list {
			got[d.Day.UTC()] += d.Spent
		}
		for d, m := range got {
			if m != days[d] {
				t.Errorf("%s: account %d spent %s on %s, want %s", when, acct, m, d.Format(time.DateOnly), days[d])
			}
		}
		for d, m := range days {
			if _, ok := got[d]; !ok {
				t.Errorf("%s: account %d has no spend on %s, want %s", when, acct, d.Format(time.DateOnly), m)
			}
		}
	}
	check("charged", a, nov1, 90, map[time.Time]hosting.Money{oct31: 100, nov1: 50, nov2: 40})
	check("charged", a, oct31, 190, map[time.Time]hosting.Money{oct31: 100, nov1: 50, nov2: 40})
	check("charged", b, nov1, 9, map[time.Time]hosting.Money{nov1: 9})
	if err := s.InTx(ctx, func(tx store.Tx) error { _, err := tx.ResetAccount(ctx, a, now); return err }); err != nil {
		t.Fatal(err)
	}
	check("after a reset", a, oct31, 0, nil)
	check("after the other's reset", b, nov1, 9, map[time.Time]hosting.Money{nov1: 9})
}

// chargeCrossings checks what a charge step tells of the accounts it charged: those
// it left overdrawn, and those it took below CreditLowDays or CreditMailDays of their
// burn from at or above that line (once, in the step that crosses it), in id order.
func chargeCrossings(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	s := open(t)
	low, mail := hosting.Money(hosting.CreditLowDays*24), hosting.Money(hosting.CreditMailDays*24)
	const rate = 10
	type acct struct {
		name   string
		credit hosting.Money // before the step
		extra  hosting.Money // the rate of a stopped meter with an hour still due (charged, not in the burn)
		id     int64
	}
	accts := []*acct{
		{name: "overdrawn", credit: rate / 2},
		{name: "low", credit: low * rate},
		{name: "mail", credit: mail * rate},
		{name: "all", credit: low * rate, extra: 1000 * rate},
		{name: "none", credit: 1000 * low * rate},
		{name: "below already", credit: mail*rate - 1},
	}
	next := now.Add(time.Hour)
	stopped := next.Add(30 * time.Minute)
	err := s.InTx(ctx, func(tx store.Tx) error {
		for i, a := range accts {
			var err error
			if a.id, err = tx.CreateAccount(ctx, hosting.Account{Email: "cross-" + a.name + "@example.com", Language: "en", Currency: "EUR",
				CreatedAt: now}); err != nil {
				return err
			}
			if _, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: a.id, Type: hosting.TxTopup, Amount: a.credit, CreatedAt: now}); err != nil {
				return err
			}
			if _, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: a.id, ResourceType: hosting.ResourceServer, ResourceID: int64(10*i + 1),
				ResourceName: "s", Rate: rate, StartedAt: now, BilledFrom: next, MonthStart: month}); err != nil {
				return err
			}
			if a.extra > 0 {
				if _, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: a.id, ResourceType: hosting.ResourceServer, ResourceID: int64(10*i + 2),
					ResourceName: "big", Rate: a.extra, StartedAt: now, BilledFrom: next, StoppedAt: &stopped, MonthStart: month}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var res store.ChargeResult
	if err := s.InTx(ctx, func(tx store.Tx) error {
		var err error
		res, err = tx.ChargeDue(ctx, store.ChargeStep{Upto: next, Now: next})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ids := func(names ...string) []int64 {
		var out []int64
		for _, a := range accts {
			for _, n := range names {
				if a.name == n {
					out = append(out, a.id)
				}
			}
		}
		return out
	}
	for _, c := range []struct {
		what      string
		got, want []int64
	}{
		{"overdrawn", res.Overdrawn, ids("overdrawn", "all")},
		{"credit low", res.CreditLow, ids("low", "all")},
		{"credit mail", res.CreditMail, ids("mail", "all")},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: accounts %v, want %v", c.what, c.got, c.want)
		}
	}
	if want := hosting.Money(len(accts)*rate + 1000*rate); res.Total != want || res.Hours != len(accts)+1 {
		t.Errorf("step: %d hours, %s; want %d, %s", res.Hours, res.Total, len(accts)+1, want)
	}
}

// chargedTotals checks Charged, what a resource was charged in all (what a refund
// gives back): its first hour written before its meter opened, the hours of a
// metering step, a charge written one at a time; not a refund. A held license's
// charges are its own; another account's resource has its own; a resource never
// charged was charged nothing.
func chargedTotals(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 22, 30, 0, 0, time.UTC)
	month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	dec := month.AddDate(0, 1, 0)
	s, a, b := twoAccounts(t, open, "charged", now)
	c := catalog()
	c.Licenses = []hosting.License{{ID: 1, Name: "win", Vendor: "Microsoft", Per: hosting.LicensePerVCPU, PriceMonthly: 42000,
		ImageIDs: []int64{2}, Provisioning: hosting.ProvisionNone}}
	in(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, c) })
	next := now.Add(time.Hour)
	var lic int64
	in(t, s, func(tx store.Tx) error {
		for _, tr := range []hosting.Transaction{
			{AccountID: a, Type: hosting.TxTopup, Amount: 1000000},
			// A server's first hour, then its meter, as ops opens one.
			{AccountID: a, Type: hosting.TxCharge, Amount: -70, ResourceType: hosting.ResourceServer, ResourceID: ptr[int64](1), PeriodStart: &now},
		} {
			tr.CreatedAt = now
			if _, err := tx.AddTransaction(ctx, tr); err != nil {
				return err
			}
		}
		if _, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: a, ResourceType: hosting.ResourceServer, ResourceID: 1, ResourceName: "s1",
			Rate: 70, StartedAt: now, BilledFrom: next, MonthStart: month, MonthCharged: 70}); err != nil {
			return err
		}
		if _, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: a, ResourceType: hosting.ResourceVolume, ResourceID: 1, ResourceName: "v1",
			Rate: 11, StartedAt: now, BilledFrom: next, MonthStart: month}); err != nil {
			return err
		}
		srv, err := tx.CreateServer(ctx, hosting.Server{AccountID: a, Name: "server-chg001", DisplayName: "w", Status: hosting.StatusRunning,
			LocationID: 1, PlanID: 2, ImageID: 2, VCPUs: 2, MemoryMB: 4096, DiskGB: 40, CreatedAt: now})
		if err != nil {
			return err
		}
		if lic, err = tx.AddServerLicense(ctx, hosting.ServerLicense{AccountID: a, ServerID: srv, LicenseID: 1, Name: "win",
			Status: hosting.LicenseActive, StartedAt: now, PaidThrough: dec, ChargedVCPUs: 2}); err != nil {
			return err
		}
		for _, tr := range []hosting.Transaction{
			// The volume's hour written one at a time after its meter opened, and given back.
			{AccountID: a, Type: hosting.TxCharge, Amount: -11, ResourceType: hosting.ResourceVolume, ResourceID: ptr[int64](1), PeriodStart: &now},
			{AccountID: a, Type: hosting.TxRefund, Amount: 11, ResourceType: hosting.ResourceVolume, ResourceID: ptr[int64](1), PeriodStart: &now},
			// The license's month at acceptance.
			{AccountID: a, Type: hosting.TxCharge, Amount: -84000, ResourceType: hosting.ResourceLicense, ResourceID: &lic, PeriodStart: &month},
			// Another account's server, of another id.
			{AccountID: b, Type: hosting.TxCharge, Amount: -5, ResourceType: hosting.ResourceServer, ResourceID: ptr[int64](2), PeriodStart: &now},
		} {
			tr.CreatedAt = now
			if _, err := tx.AddTransaction(ctx, tr); err != nil {
				return err
			}
		}
		return nil
	})
	check := func(when string, want map[string]hosting.Money) {
		t.Helper()
		for _, r := range []struct {
			name string
			typ  string
			id   int64
		}{{"server 1", hosting.ResourceServer, 1}, {"volume 1", hosting.ResourceVolume, 1}, {"license", hosting.ResourceLicense, lic},
			{"server 2", hosting.ResourceServer, 2}, {"snapshot 9", hosting.ResourceSnapshot, 9}, {"license 999", hosting.ResourceLicense, 999}} {
			if got, err := s.Charged(ctx, r.typ, r.id); err != nil || got != want[r.name] {
				t.Errorf("%s: %s charged %s, %v; want %s", when, r.name, got, err, want[r.name])
			}
		}
	}
	check("opened", map[string]hosting.Money{"server 1": 70, "volume 1": 11, "license": 84000, "server 2": 5})
	// The next hour of each meter, then December's month of the license.
	in(t, s, func(tx store.Tx) error {
		_, err := tx.ChargeDue(ctx, store.ChargeStep{Upto: next, Now: next})
		return err
	})
	check("an hour later", map[string]hosting.Money{"server 1": 140, "volume 1": 22, "license": 84000, "server 2": 5})
	in(t, s, func(tx store.Tx) error {
		_, err := tx.ChargeLicenses(ctx, store.LicenseStep{Month: dec, Now: next})
		return err
	})
	check("December", map[string]hosting.Money{"server 1": 140, "volume 1": 22, "license": 168000, "server 2": 5})
}

// in runs fn in a transaction of s, and fails the test if it fails.
func in(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := s.InTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// ptr is a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
