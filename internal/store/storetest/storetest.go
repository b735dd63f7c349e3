// Package storetest is the suite every store.Store implementation passes (SQLite
// now, PostgreSQL in its tier).
package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

func intp(v int) *int { return &v }

// catalog is a small valid catalog.
func catalog() hosting.Catalog {
	return hosting.Catalog{
		Plans: []hosting.Plan{
			{ID: 1, Name: "small", VCPUs: 1, MemoryMB: 1024, DiskGB: 20, PriceHourly: 70, PriceMonthly: 45100},
			{ID: 2, Name: "large", VCPUs: 4, MemoryMB: 8192, DiskGB: 80, PriceHourly: 240, PriceMonthly: 154900},
		},
		Images: []hosting.Image{{ID: 1, Name: "ubuntu-24.04", OS: "ubuntu", Version: "24.04"}, {ID: 2, Name: "debian-12", OS: "debian", Version: "12"}},
		Apps:   []hosting.App{{ID: 1, Name: "docker", Description: "Docker", Version: "27", Script: "#!/bin/sh\n"}},
		Locations: []hosting.CatalogLocation{{
			Location: hosting.Location{ID: 1, Name: "fsn1", City: "Falkenstein", Country: "DE", SnapshotPriceGBHour: 1},
			Offers:   []hosting.PlanOffer{{PlanID: 1}, {PlanID: 2, Capacity: intp(3)}},
			ImageIDs: []int64{1, 2},
		}},
	}
}

// Exercise runs the suite; open returns a fresh, migrated, empty store.
func Exercise(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	in := func(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
		t.Helper()
		if err := s.InTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	newAccount := func(t *testing.T, s store.Store, email string) int64 {
		t.Helper()
		var id int64
		in(t, s, func(tx store.Tx) error {
			var err error
			id, err = tx.CreateAccount(ctx, hosting.Account{Email: email, Name: "n", PasswordHash: "h", Language: "en", Currency: "EUR", Quotas: hosting.Quotas{Servers: 5}, CreatedAt: now})
			return err
		})
		return id
	}

	t.Run("QuotasAndUsage", func(t *testing.T) {
		s := open(t)
		id := newAccount(t, s, "q@example.com")
		other := newAccount(t, s, "o@example.com")
		want := hosting.Quotas{Servers: 1, SSHKeys: 2, Projects: 3, Recipes: 0, Snapshots: 5, Tokens: 6, Volumes: 7, VolumeGB: 8, Zones: 9}
		in(t, s, func(tx store.Tx) error { return tx.SetQuotas(ctx, id, want) })
		if err := s.InTx(ctx, func(tx store.Tx) error { return tx.SetQuotas(ctx, 1<<40, want) }); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("SetQuotas of no account: %v, want ErrNotFound", err)
		}
		in(t, s, func(tx store.Tx) error {
			a, err := tx.LockAccount(ctx, id)
			if err == nil && a.Quotas != want {
				t.Errorf("quotas %+v, want %+v", a.Quotas, want)
			}
			return err
		})
		expired, later := now.Add(-time.Hour), now.Add(time.Hour)
		in(t, s, func(tx store.Tx) error {
			for i, acct := range []int64{id, id, other} {
				if _, err := tx.CreateProject(ctx, hosting.Project{AccountID: acct, Name: fmt.Sprint("p", i), CreatedAt: now}); err != nil {
					return err
				}
				if _, err := tx.CreateRecipe(ctx, hosting.Recipe{AccountID: acct, Name: "r", Script: "#!/bin/sh\n", CreatedAt: now}); err != nil {
					return err
				}
			}
			for i, exp := range []*time.Time{nil, &expired, &later} {
				tokID, err := tx.CreateToken(ctx, hosting.Token{AccountID: id, Name: "t", Hash: []byte{byte(i), 1, 2}, ExpiresAt: exp, CreatedAt: now})
				if err != nil {
					return err
				}
				if i == 0 {
					if err := tx.RevokeToken(ctx, tokID, now); err != nil {
						return err
					}
				}
			}
			return nil
		})
		u, err := s.Usage(ctx, id, now)
		if err != nil {
			t.Fatal(err)
		}
		if (u != hosting.Quotas{Projects: 2, Recipes: 2, Tokens: 1}) {
			t.Errorf("usage %+v: want 2 projects, 2 recipes, 1 token (not the revoked or the expired one)", u)
		}
		// Pages of recipes: by id, after the last one seen.
		page, err := s.RecipesAfter(ctx, id, 0, 1)
		if err != nil || len(page) != 1 || page[0].Script == "" {
			t.Fatalf("first page %+v %v", page, err)
		}
		rest, err := s.RecipesAfter(ctx, id, page[0].ID, 5)
		if err != nil || len(rest) != 1 || rest[0].ID <= page[0].ID || rest[0].AccountID != id {
			t.Fatalf("second page %+v %v", rest, err)
		}
		names, err := s.RecipeNames(ctx, id)
		if err != nil || len(names) != 2 || names[0].Script != "" || names[0].ScriptSize != len("#!/bin/sh\n") {
			t.Errorf("recipe names %+v %v", names, err)
		}
	})

	t.Run("TestClocksAndMetersOfOneAccount", func(t *testing.T) {
		s := open(t)
		a, b := newAccount(t, s, "clock-a@example.com"), newAccount(t, s, "clock-b@example.com")
		var ahead time.Duration
		for _, by := range []time.Duration{72 * time.Hour, 90 * time.Minute} {
			in(t, s, func(tx store.Tx) error {
				var err error
				var moved bool
				ahead, moved, err = tx.AdvanceClock(ctx, a, by)
				if err == nil && !moved {
					t.Errorf("advance by %s refused", by)
				}
				return err
			})
		}
		if want := 72*time.Hour + 90*time.Minute; ahead != want {
			t.Fatalf("offset after two advances %s, want %s", ahead, want)
		}
		got, err := s.ClockOffsets(ctx)
		if err != nil || len(got) != 1 || got[a] != ahead {
			t.Fatalf("ClockOffsets = %v, %v; want only account %d at %s", got, err, a, ahead)
		}
		// Meters of both accounts, one hour due each; a step for one account charges
		// only its own.
		for _, id := range []int64{a, b} {
			in(t, s, func(tx store.Tx) error {
				if _, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: id, Type: hosting.TxTopup, Amount: 10000, CreatedAt: now}); err != nil {
					return err
				}
				next := now.Add(time.Hour)
				_, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: id, ResourceType: hosting.ResourceServer, ResourceID: id, ResourceName: "m",
					Rate: 70, StartedAt: now, BilledFrom: next, MonthStart: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
				return err
			})
		}
		upto := now.Add(2 * time.Hour)
		in(t, s, func(tx store.Tx) error {
			due, err := tx.EarliestDue(ctx, upto, a)
			if err != nil || due == nil || !due.Equal(now.Add(time.Hour)) {
				t.Errorf("EarliestDue of account a = %v, %v", due, err)
			}
			res, err := tx.ChargeDue(ctx, store.ChargeStep{Upto: upto, Now: upto, Account: a})
			if err != nil || res.Hours != 2 || res.Accounts != 1 {
				t.Errorf("ChargeDue of account a = %+v, %v; want its two hours", res, err)
			}
			due, err = tx.EarliestDue(ctx, upto, b)
			if err != nil || due == nil {
				t.Errorf("account b's hour after a's step: %v, %v; want still due", due, err)
			}
			return nil
		})
		in(t, s, func(tx store.Tx) error { return tx.ResetClock(ctx, a) })
		if got, err := s.ClockOffsets(ctx); err != nil || len(got) != 0 {
			t.Fatalf("ClockOffsets after reset = %v, %v; want none", got, err)
		}
	})

	t.Run("ClockLimit", func(t *testing.T) {
		s := open(t)
		a := newAccount(t, s, "clock-limit@example.com")
		capMS := hosting.MaxClockAhead.Milliseconds()
		// plant stores an offset as a Berth before the limit could have stored it.
		plant := func(ms int64) {
			in(t, s, func(tx store.Tx) error {
				if _, err := tx.SQL().ExecContext(ctx, s.Rebind(`DELETE FROM account_clocks WHERE account_id = ?`), a); err != nil {
					return err
				}
				_, err := tx.SQL().ExecContext(ctx, s.Rebind(`INSERT INTO account_clocks (account_id, offset_ms) VALUES (?, ?)`), a, ms)
				return err
			})
		}
		advance := func(by time.Duration) (ahead time.Duration, moved bool) {
			in(t, s, func(tx store.Tx) error {
				var err error
				ahead, moved, err = tx.AdvanceClock(ctx, a, by)
				return err
			})
			return ahead, moved
		}
		for _, tc := range []struct {
			name      string
			stored    int64 // -1: no row (the system clock)
			by        time.Duration
			read      time.Duration // what ClockOffsets reads before
			moved     bool
			ahead     time.Duration
			storedNow int64
		}{
			{"first advance", -1, time.Hour, 0, true, time.Hour, 3_600_000},
			{"first advance, the whole limit", -1, hosting.MaxClockAhead, 0, true, hosting.MaxClockAhead, capMS},
			{"first advance, past the limit", -1, hosting.MaxClockAhead + time.Millisecond, 0, false, 0, -1},
			{"from 0", 0, time.Millisecond, 0, true, time.Millisecond, 1},
			{"to 1 ms below the limit", capMS - 2, time.Millisecond, hosting.MaxClockAhead - 2*time.Millisecond, true, hosting.MaxClockAhead - time.Millisecond, capMS - 1},
			{"to the limit exactly", capMS - 3_600_000, time.Hour, hosting.MaxClockAhead - time.Hour, true, hosting.MaxClockAhead, capMS},
			{"1 ms over the limit", capMS - 3_600_000, time.Hour + time.Millisecond, hosting.MaxClockAhead - time.Hour, false, hosting.MaxClockAhead - time.Hour, capMS - 3_600_000},
			{"at the limit, 1 ms more", capMS, time.Millisecond, hosting.MaxClockAhead, false, hosting.MaxClockAhead, capMS},
			{"stored past the limit", capMS + 1, time.Millisecond, hosting.MaxClockAhead, false, hosting.MaxClockAhead, capMS + 1},
			{"stored past what a duration holds", 293 * 8760 * 3_600_000, time.Hour, hosting.MaxClockAhead, false, hosting.MaxClockAhead, 293 * 8760 * 3_600_000},
			{"stored near MaxInt64", math.MaxInt64 - 1, 8760 * time.Hour, hosting.MaxClockAhead, false, hosting.MaxClockAhead, math.MaxInt64 - 1},
			{"stored MaxInt64", math.MaxInt64, time.Millisecond, hosting.MaxClockAhead, false, hosting.MaxClockAhead, math.MaxInt64},
			{"a huge advance", 0, time.Duration(math.MaxInt64 - math.MaxInt64%int64(time.Millisecond)), 0, false, 0, 0},
		} {
			in(t, s, func(tx store.Tx) error { return tx.ResetClock(ctx, a) })
			if tc.stored >= 0 {
				plant(tc.stored)
			}
			got, err := s.ClockOffsets(ctx)
			if err != nil || got[a] != tc.read {
				t.Errorf("%s: ClockOffsets = %v, %v; want %s", tc.name, got, err, tc.read)
			}
			ahead, moved := advance(tc.by)
			if moved != tc.moved || ahead != tc.ahead {
				t.Errorf("%s: AdvanceClock(%s) = %s, %v; want %s, %v", tc.name, tc.by, ahead, moved, tc.ahead, tc.moved)
			}
			var stored int64 = -1
			err = s.WriteDB().QueryRowContext(ctx, s.Rebind(`SELECT offset_ms FROM account_clocks WHERE account_id = ?`), a).Scan(&stored)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				t.Fatal(err)
			}
			if stored != tc.storedNow {
				t.Errorf("%s: stored %d ms after the advance, want %d", tc.name, stored, tc.storedNow)
			}
		}
		// Many advances summing past the limit: each that fits moves the clock, the
		// one that would pass it does not, and the clock never reads less.
		in(t, s, func(tx store.Tx) error { return tx.ResetClock(ctx, a) })
		var last time.Duration
		for i := range 110 {
			ahead, moved := advance(8760 * time.Hour)
			if want := i < hosting.MaxClockAheadYears; moved != want || ahead < last {
				t.Fatalf("advance %d: %s, moved %v after %s", i+1, ahead, moved, last)
			}
			last = ahead
		}
		if last != hosting.MaxClockAhead {
			t.Errorf("after 110 advances of a year: %s, want the limit", last)
		}
	})

	t.Run("AccountsAndLedger", func(t *testing.T) {
		s := open(t)
		id := newAccount(t, s, "a@example.com")
		err := s.InTx(ctx, func(tx store.Tx) error {
			_, err := tx.CreateAccount(ctx, hosting.Account{Email: "a@example.com", Quotas: hosting.Quotas{Servers: 1}, CreatedAt: now})
			return err
		})
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate email: %v, want ErrConflict", err)
		}
		var sum hosting.Money
		for _, amount := range []hosting.Money{100000, -70, -70, 5} {
			in(t, s, func(tx store.Tx) error {
				tr, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: id, Type: hosting.TxCharge, Amount: amount, Description: "x", CreatedAt: now})
				sum += amount
				if err == nil && tr.BalanceAfter != sum {
					t.Errorf("balance after %s = %s, want %s", amount, tr.BalanceAfter, sum)
				}
				return err
			})
		}
		a, err := s.Account(ctx, id)
		if err != nil || a.Credit != sum {
			t.Fatalf("credit %s, %v; want %s (the sum of the ledger)", a.Credit, err, sum)
		}
		txs, _, err := s.Transactions(ctx, id, 0, 0)
		if err != nil || len(txs) != 4 || txs[0].Amount != 5 {
			t.Fatalf("transactions newest first: %+v, %v", txs, err)
		}
		if _, err := s.Account(ctx, 999); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown account: %v", err)
		}
		// Accounts lists every one by id, blocked ones too, as Account reads it.
		other := newAccount(t, s, "0-first-by-email@example.com")
		in(t, s, func(tx store.Tx) error { return tx.SetAccountBlocked(ctx, other, true) })
		all, err := s.Accounts(ctx, 0, 10)
		if err != nil || len(all) != 2 || all[0].ID != id || all[1].ID != other {
			t.Fatalf("Accounts = %+v, %v; want %d then %d", all, err, id, other)
		}
		// A page at a time: the limit, then from after the last one.
		if page, err := s.Accounts(ctx, 0, 1); err != nil || len(page) != 1 || page[0].ID != id {
			t.Fatalf("Accounts' first page of 1 = %+v, %v; want %d", page, err, id)
		}
		if page, err := s.Accounts(ctx, id, 1); err != nil || len(page) != 1 || page[0].ID != other {
			t.Fatalf("Accounts after %d = %+v, %v; want %d", id, page, err, other)
		}
		if page, err := s.Accounts(ctx, other, 1); err != nil || len(page) != 0 {
			t.Fatalf("Accounts after the last = %+v, %v; want none", page, err)
		}
		if all[0].Credit != sum || all[0].Email != "a@example.com" || !all[0].CreatedAt.Equal(now) || all[0].Quotas.Servers != 5 || !all[1].Blocked {
			t.Errorf("Accounts = %+v, want them as Account reads them", all)
		}
	})

	// A password change (ops ChangePassword) writes the new hash and ends every
	// console session of the account but the one kept; another account's stay.
	t.Run("PasswordAndSignInSessions", func(t *testing.T) {
		s := open(t)
		id, other := newAccount(t, s, "a@example.com"), newAccount(t, s, "b@example.com")
		for _, sess := range []struct {
			acct int64
			hash string
		}{{id, "kept"}, {id, "ended-1"}, {id, "ended-2"}, {other, "other"}} {
			in(t, s, func(tx store.Tx) error {
				_, err := tx.CreateSession(ctx, hosting.Session{AccountID: sess.acct, Hash: []byte(sess.hash), CreatedAt: now,
					ExpiresAt: now.Add(time.Hour)})
				return err
			})
		}
		in(t, s, func(tx store.Tx) error {
			if err := tx.SetAccountPassword(ctx, id, "new hash"); err != nil {
				return err
			}
			return tx.DeleteSessionsOf(ctx, id, []byte("kept"))
		})
		if a, err := s.AccountByEmail(ctx, "a@example.com"); err != nil || a.PasswordHash != "new hash" {
			t.Fatalf("after SetAccountPassword: %q, %v", a.PasswordHash, err)
		}
		if a, err := s.Account(ctx, other); err != nil || a.PasswordHash != "h" {
			t.Fatalf("the other account's password: %q, %v", a.PasswordHash, err)
		}
		for hash, want := range map[string]bool{"kept": true, "ended-1": false, "ended-2": false, "other": true} {
			_, _, err := s.SessionByHash(ctx, []byte(hash))
			if got := err == nil; got != want || (err != nil && !errors.Is(err, store.ErrNotFound)) {
				t.Errorf("session %s there: %v (%v), want %v", hash, got, err, want)
			}
		}
		in(t, s, func(tx store.Tx) error { return tx.DeleteSessionsOf(ctx, id, nil) })
		if _, _, err := s.SessionByHash(ctx, []byte("kept")); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteSessionsOf without one kept left a session: %v", err)
		}
		err := s.InTx(ctx, func(tx store.Tx) error { return tx.SetAccountPassword(ctx, 999, "x") })
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("SetAccountPassword of no account: %v, want ErrNotFound", err)
		}
	})

	t.Run("Tokens", func(t *testing.T) {
		s := open(t)
		id := newAccount(t, s, "t@example.com")
		exp := now.Add(time.Hour)
		var tid int64
		in(t, s, func(tx store.Tx) error {
			var err error
			tid, err = tx.CreateToken(ctx, hosting.Token{AccountID: id, Name: "ci", Hash: []byte("hash-1"),
				Scopes: hosting.Scopes{hosting.ScopeRead, hosting.ScopePower}, ExpiresAt: &exp, CreatedAt: now})
			return err
		})
		tok, acct, err := s.TokenByHash(ctx, []byte("hash-1"))
		if err != nil || tok.ID != tid || acct.ID != id || !tok.Scopes.Has(hosting.ScopePower) || !tok.ExpiresAt.Equal(exp) {
			t.Fatalf("TokenByHash = %+v, %+v, %v", tok, acct, err)
		}
		if _, _, err := s.TokenByHash(ctx, []byte("nope")); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown hash: %v", err)
		}
		in(t, s, func(tx store.Tx) error { return tx.RevokeToken(ctx, tid, now) })
		in(t, s, func(tx store.Tx) error { return tx.RevokeToken(ctx, tid, now.Add(time.Hour)) })
		tok, _ = s.Token(ctx, tid)
		if tok.RevokedAt == nil || !tok.RevokedAt.Equal(now) || tok.Usable(now) {
			t.Fatalf("revoked token: %+v (the first revocation time is kept)", tok)
		}

		// Tokens lists the revoked ones too, newest first; AccountTokens leaves them out.
		other := newAccount(t, s, "u@example.com")
		var live int64
		in(t, s, func(tx store.Tx) error {
			var err error
			if live, err = tx.CreateToken(ctx, hosting.Token{AccountID: id, Name: "deploy", Hash: []byte("hash-2"), CreatedAt: now.Add(time.Minute)}); err != nil {
				return err
			}
			_, err = tx.CreateToken(ctx, hosting.Token{AccountID: other, Name: "theirs", Hash: []byte("hash-3"), CreatedAt: now})
			return err
		})
		all, err := s.Tokens(ctx, id)
		if err != nil || len(all) != 2 || all[0].ID != live || all[1].ID != tid || all[1].RevokedAt == nil || all[0].RevokedAt != nil {
			t.Fatalf("Tokens = %+v, %v; want %d then the revoked %d", all, err, live, tid)
		}
		if all[1].Name != "ci" || !all[1].Scopes.Has(hosting.ScopePower) || !all[1].ExpiresAt.Equal(exp) || !all[1].CreatedAt.Equal(now) {
			t.Errorf("Tokens read %+v, want it as Token reads it", all[1])
		}
		if live, err := s.AccountTokens(ctx, id); err != nil || len(live) != 1 || live[0].ID != all[0].ID {
			t.Errorf("AccountTokens = %+v, %v; want only the one not revoked", live, err)
		}
		if none, err := s.Tokens(ctx, 1<<40); err != nil || len(none) != 0 {
			t.Errorf("Tokens of no account = %+v, %v; want none", none, err)
		}
	})

	t.Run("CatalogApplyRetiresWithoutBreaking", func(t *testing.T) {
		s := open(t)
		c := catalog()
		in(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, c) })
		ls, err := s.Locations(ctx)
		if err != nil || len(ls) != 1 || len(ls[0].Plans) != 2 || len(ls[0].Images) != 2 || *ls[0].Plans[1].Capacity != 3 {
			t.Fatalf("locations = %+v, %v", ls, err)
		}
		c.Plans = c.Plans[:1]
		c.Locations[0].Offers = c.Locations[0].Offers[:1]
		c.Plans[0].PriceHourly = 80
		in(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, c) })
		if _, err := s.Plan(ctx, 2); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("retired plan still sold: %v", err)
		}
		if p, _ := s.Plan(ctx, 1); p.PriceHourly != 80 {
			t.Fatalf("plan not updated: %+v", p)
		}
	})

	t.Run("PlanLimits", func(t *testing.T) {
		s := open(t)
		c := catalog()
		c.Plans[0].NetworkMbps, c.Plans[0].DiskIOPS, c.Plans[0].DiskMBps = 250, 2000, 150
		c.Plans[1].DiskIOPS = 500
		in(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, c) })
		limits := func(p hosting.Plan) [3]int { return [3]int{p.NetworkMbps, p.DiskIOPS, p.DiskMBps} }
		want := map[int64][3]int{1: {250, 2000, 150}, 2: {0, 500, 0}}
		ls, err := s.Locations(ctx)
		if err != nil || len(ls) != 1 {
			t.Fatalf("locations = %+v, %v", ls, err)
		}
		for _, p := range ls[0].Plans {
			if limits(p) != want[p.ID] {
				t.Errorf("location's plan %d limits %v, want %v", p.ID, limits(p), want[p.ID])
			}
		}
		for id, w := range want {
			if p, err := s.Plan(ctx, id); err != nil || limits(p) != w {
				t.Errorf("Plan(%d) limits %v, %v; want %v", id, limits(p), err, w)
			}
		}
		// A new catalog changes a limit and lifts one (absent: none); a plan it
		// retires keeps its limits for the servers ordered with it.
		c.Plans[0].NetworkMbps, c.Plans[0].DiskMBps = 500, 0
		c.Plans = c.Plans[:1]
		c.Locations[0].Offers = c.Locations[0].Offers[:1]
		in(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, c) })
		if p, err := s.Plan(ctx, 1); err != nil || limits(p) != [3]int{500, 2000, 0} {
			t.Errorf("after a new catalog: plan 1 limits %v, %v", limits(p), err)
		}
		if _, err := s.Plan(ctx, 2); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("retired plan sold: %v", err)
		}
		if p, err := s.PlanAny(ctx, 2); err != nil || p.Name != "large" || limits(p) != want[2] {
			t.Errorf("PlanAny of a retired plan = %+v, %v", p, err)
		}
		if _, err := s.PlanAny(ctx, 99); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("PlanAny(99) = %v, want ErrNotFound", err)
		}
	})

	t.Run("ServersAndOperations", func(t *testing.T) {
		s := open(t)
		in(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, catalog()) })
		a := newAccount(t, s, "s@example.com")
		b := newAccount(t, s, "other@example.com")
		var keyID, projID, srvID int64
		in(t, s, func(tx store.Tx) error {
			var err error
			if keyID, err = tx.CreateSSHKey(ctx, hosting.SSHKey{AccountID: a, Name: "k", PublicKey: "ssh-ed25519 AAAA", Fingerprint: "SHA256:x", CreatedAt: now}); err != nil {
				return err
			}
			if projID, err = tx.CreateProject(ctx, hosting.Project{AccountID: a, Name: "web", CreatedAt: now}); err != nil {
				return err
			}
			key, err := tx.SSHKey(ctx, a, keyID)
			if err != nil {
				return err
			}
			srvID, err = tx.CreateServer(ctx, hosting.Server{AccountID: a, Name: "server-abc123", DisplayName: "web-1", ProjectID: &projID,
				Status: hosting.StatusProvisioning, LocationID: 1, PlanID: 2, ImageID: 1, VCPUs: 4, MemoryMB: 8192, DiskGB: 80,
				Keys: []hosting.SSHKey{key}, CreatedAt: now})
			return err
		})
		srv, err := s.Server(ctx, a, hosting.ServerRef{Name: "server-abc123"})
		if err != nil || srv.ID != srvID || len(srv.SSHKeyIDs) != 1 || srv.SSHKeyIDs[0] != keyID || *srv.ProjectID != projID {
			t.Fatalf("server by name = %+v, %v", srv, err)
		}
		if _, err := s.Server(ctx, b, hosting.ServerRef{ID: srvID}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another account's server: %v, want ErrNotFound", err)
		}
		if n, _ := s.ServersOfPlan(ctx, 1, 2); n != 1 {
			t.Fatalf("ServersOfPlan = %d", n)
		}
		// One operation at a time.
		var op1 int64
		in(t, s, func(tx store.Tx) error {
			var err error
			op1, err = tx.StartOperation(ctx, hosting.Operation{AccountID: a, ServerID: srvID, Type: hosting.OpProvision, StartedAt: now})
			return err
		})
		err = s.InTx(ctx, func(tx store.Tx) error {
			_, err := tx.StartOperation(ctx, hosting.Operation{AccountID: a, ServerID: srvID, Type: hosting.OpPower, Action: hosting.PowerOff, StartedAt: now})
			return err
		})
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second operation on a busy server: %v, want ErrConflict", err)
		}
		if srv, _ = s.Server(ctx, a, hosting.ServerRef{ID: srvID}); srv.Operation == nil || srv.Operation.ID != op1 {
			t.Fatalf("server operation = %+v", srv.Operation)
		}
		if running, _ := s.RunningOperations(ctx); len(running) != 1 {
			t.Fatalf("running operations = %+v", running)
		}
		in(t, s, func(tx store.Tx) error {
			if err := tx.SetServerStatus(ctx, srvID, hosting.StatusRunning); err != nil {
				return err
			}
			return tx.FinishOperation(ctx, op1, hosting.OpSuccess, "", now.Add(time.Minute))
		})
		if err := s.InTx(ctx, func(tx store.Tx) error { return tx.FinishOperation(ctx, op1, hosting.OpError, "late", now) }); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("finishing twice: %v, want ErrNotFound", err)
		}
		op, _ := s.Operation(ctx, a, op1)
		if op.Status != hosting.OpSuccess || op.FinishedAt == nil {
			t.Fatalf("finished operation = %+v", op)
		}
		if _, err := s.Operation(ctx, b, op1); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another account's operation: %v", err)
		}
		st := hosting.StatusRunning
		if list, _ := s.Servers(ctx, a, store.ServerFilter{Status: &st, ProjectID: &projID}); len(list) != 1 || list[0].Operation != nil {
			t.Fatalf("filtered list = %+v", list)
		}
		// Deleting the project unassigns the server; deleting the key keeps its copy.
		in(t, s, func(tx store.Tx) error {
			if err := tx.DeleteProject(ctx, a, projID); err != nil {
				return err
			}
			return tx.DeleteSSHKey(ctx, a, keyID)
		})
		if srv, _ = s.Server(ctx, a, hosting.ServerRef{ID: srvID}); srv.ProjectID != nil {
			t.Fatalf("server still in a deleted project: %v", *srv.ProjectID)
		}
		if keys, _ := s.ServerKeys(ctx, srvID); len(keys) != 1 || keys[0].PublicKey != "ssh-ed25519 AAAA" {
			t.Fatalf("server keys after the stored key was deleted: %+v", keys)
		}
		in(t, s, func(tx store.Tx) error { return tx.DeleteServer(ctx, srvID, now) })
		if _, err := s.Server(ctx, a, hosting.ServerRef{ID: srvID}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleted server: %v", err)
		}
		if any, err := s.ServerAny(ctx, srvID); err != nil || any.DeletedAt == nil {
			t.Fatalf("ServerAny on a deleted server = %+v, %v", any, err)
		}
	})

	// An id that names no row is ErrNotFound, whatever it is: 0 is never "any" (it
	// once found the account's first key, project, recipe or location), and an id
	// past int32 is no error (on PostgreSQL, "(? = 0 OR id = ?)" sent it as int4).
	t.Run("LookupsOfIDsThatNameNothing", func(t *testing.T) {
		s := open(t)
		in(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, catalog()) })
		a := newAccount(t, s, "z@example.com")
		var srvID, opID int64
		in(t, s, func(tx store.Tx) error {
			if _, err := tx.CreateSSHKey(ctx, hosting.SSHKey{AccountID: a, Name: "k", PublicKey: "ssh-ed25519 AAAA", Fingerprint: "SHA256:x", CreatedAt: now}); err != nil {
				return err
			}
			if _, err := tx.CreateProject(ctx, hosting.Project{AccountID: a, Name: "web", CreatedAt: now}); err != nil {
				return err
			}
			if _, err := tx.CreateRecipe(ctx, hosting.Recipe{AccountID: a, Name: "r", Script: "#!/bin/sh\n", CreatedAt: now}); err != nil {
				return err
			}
			var err error
			if srvID, err = tx.CreateServer(ctx, hosting.Server{AccountID: a, Name: "server-zero00", DisplayName: "z",
				Status: hosting.StatusProvisioning, LocationID: 1, PlanID: 1, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, CreatedAt: now}); err != nil {
				return err
			}
			opID, err = tx.StartOperation(ctx, hosting.Operation{AccountID: a, ServerID: srvID, Type: hosting.OpProvision, StartedAt: now})
			return err
		})
		lookups := []struct {
			name string
			find func(r store.Reader, id int64) error
		}{
			{"SSHKey", func(r store.Reader, id int64) error { _, err := r.SSHKey(ctx, a, id); return err }},
			{"Project", func(r store.Reader, id int64) error { _, err := r.Project(ctx, a, id); return err }},
			{"Recipe", func(r store.Reader, id int64) error { _, err := r.Recipe(ctx, a, id); return err }},
			{"Location", func(r store.Reader, id int64) error { _, err := r.Location(ctx, id); return err }},
			{"Plan", func(r store.Reader, id int64) error { _, err := r.Plan(ctx, id); return err }},
			{"Image", func(r store.Reader, id int64) error { _, err := r.Image(ctx, id); return err }},
			{"App", func(r store.Reader, id int64) error { _, err := r.App(ctx, id); return err }},
			{"Server", func(r store.Reader, id int64) error {
				_, err := r.Server(ctx, a, hosting.ServerRef{ID: id})
				return err
			}},
			{"Operation", func(r store.Reader, id int64) error { _, err := r.Operation(ctx, a, id); return err }},
			{"OperationAny", func(r store.Reader, id int64) error { _, err := r.OperationAny(ctx, id); return err }},
			{"Server of account 0", func(r store.Reader, _ int64) error {
				_, err := r.Server(ctx, 0, hosting.ServerRef{ID: srvID})
				return err
			}},
			{"Operation of account 0", func(r store.Reader, _ int64) error { _, err := r.Operation(ctx, 0, opID); return err }},
		}
		for _, l := range lookups {
			for _, id := range []int64{0, -1, 1 << 31, 1<<63 - 1} {
				if err := l.find(s, id); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("%s(%d) on the store: %v, want ErrNotFound", l.name, id, err)
				}
				in(t, s, func(tx store.Tx) error {
					if err := l.find(tx, id); !errors.Is(err, store.ErrNotFound) {
						t.Errorf("%s(%d) in a transaction: %v, want ErrNotFound", l.name, id, err)
					}
					return nil
				})
			}
		}
		if op, err := s.OperationAny(ctx, opID); err != nil || op.AccountID != a {
			t.Errorf("OperationAny(%d) = %+v, %v", opID, op, err)
		}
	})

	t.Run("OperationsNewestFirstByAccount", func(t *testing.T) {
		s := open(t)
		in(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, catalog()) })
		a := newAccount(t, s, "ops@example.com")
		b := newAccount(t, s, "ops-other@example.com")
		// Two servers of a, one of b; each operation ends before the next starts.
		var srv [3]int64
		var ops []int64 // a's, in creation order
		in(t, s, func(tx store.Tx) error {
			for i, acct := range []int64{a, a, b} {
				id, err := tx.CreateServer(ctx, hosting.Server{AccountID: acct, Name: fmt.Sprintf("server-op%04d", i), DisplayName: "s",
					Status: hosting.StatusRunning, LocationID: 1, PlanID: 1, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, CreatedAt: now})
				if err != nil {
					return err
				}
				srv[i] = id
			}
			for i, step := range []struct {
				server int
				end    hosting.OpStatus // "" leaves it running
			}{{0, hosting.OpSuccess}, {1, hosting.OpError}, {2, hosting.OpSuccess}, {0, hosting.OpSuccess}, {1, ""}} {
				acct := a
				if step.server == 2 {
					acct = b
				}
				id, err := tx.StartOperation(ctx, hosting.Operation{AccountID: acct, ServerID: srv[step.server], Type: hosting.OpPower,
					Action: hosting.PowerOff, StartedAt: now.Add(time.Duration(i) * time.Minute)})
				if err != nil {
					return err
				}
				if acct == a {
					ops = append(ops, id)
				}
				if step.end != "" {
					if err := tx.FinishOperation(ctx, id, step.end, "", now.Add(time.Duration(i)*time.Minute+time.Second)); err != nil {
						return err
					}
				}
			}
			return nil
		})
		ids := func(list []hosting.Operation) []int64 {
			out := []int64{}
			for _, o := range list {
				out = append(out, o.ID)
			}
			return out
		}
		srv0, srv2 := srv[0], srv[2]
		success, running := hosting.OpSuccess, hosting.OpRunning
		for _, tc := range []struct {
			name          string
			f             store.OperationFilter
			limit, offset int
			want          []int64
			total         int
		}{
			{"all", store.OperationFilter{}, 0, 0, []int64{ops[3], ops[2], ops[1], ops[0]}, 4},
			{"first page", store.OperationFilter{}, 3, 0, []int64{ops[3], ops[2], ops[1]}, 4},
			{"second page", store.OperationFilter{}, 3, 3, []int64{ops[0]}, 4},
			{"past the end", store.OperationFilter{}, 3, 6, []int64{}, 4},
			{"one server", store.OperationFilter{ServerID: &srv0}, 0, 0, []int64{ops[2], ops[0]}, 2},
			{"one status", store.OperationFilter{Status: &success}, 0, 0, []int64{ops[2], ops[0]}, 2},
			{"both", store.OperationFilter{ServerID: &srv0, Status: &running}, 0, 0, []int64{}, 0},
			{"another account's server", store.OperationFilter{ServerID: &srv2}, 0, 0, []int64{}, 0},
		} {
			list, total, err := s.Operations(ctx, a, tc.f, tc.limit, tc.offset)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if got := ids(list); fmt.Sprint(got) != fmt.Sprint(tc.want) || total != tc.total {
				t.Errorf("%s: %v of %d, want %v of %d", tc.name, got, total, tc.want, tc.total)
			}
		}
		list, _, err := s.Operations(ctx, a, store.OperationFilter{}, 1, 0)
		if err != nil || len(list) != 1 {
			t.Fatalf("newest: %v %v", list, err)
		}
		if o := list[0]; o.AccountID != a || o.ServerID != srv[1] || o.Status != hosting.OpRunning || o.FinishedAt != nil ||
			o.Type != hosting.OpPower || o.Action != hosting.PowerOff || !o.StartedAt.Equal(now.Add(4*time.Minute)) {
			t.Errorf("newest operation %+v", o)
		}
		// A deleted server's operations stay in the history.
		in(t, s, func(tx store.Tx) error { return tx.DeleteServer(ctx, srv0, now.Add(time.Hour)) })
		if _, total, err := s.Operations(ctx, a, store.OperationFilter{ServerID: &srv0}, 0, 0); err != nil || total != 2 {
			t.Errorf("operations of a deleted server: %d %v, want 2", total, err)
		}
		if list, total, err := s.Operations(ctx, 1<<40, store.OperationFilter{}, 0, 0); err != nil || total != 0 || list == nil || len(list) != 0 {
			t.Errorf("no account: %v of %d, %v; want an empty list", list, total, err)
		}
	})

	t.Run("UniqueNames", func(t *testing.T) {
		s := open(t)
		a := newAccount(t, s, "u@example.com")
		b := newAccount(t, s, "v@example.com")
		create := func(acct int64, name, fp string) (error, error) {
			e1 := s.InTx(ctx, func(tx store.Tx) error {
				_, err := tx.CreateProject(ctx, hosting.Project{AccountID: acct, Name: name, CreatedAt: now})
				return err
			})
			e2 := s.InTx(ctx, func(tx store.Tx) error {
				_, err := tx.CreateSSHKey(ctx, hosting.SSHKey{AccountID: acct, Name: "k", PublicKey: "p", Fingerprint: fp, CreatedAt: now})
				return err
			})
			return e1, e2
		}
		if e1, e2 := create(a, "web", "SHA256:1"); e1 != nil || e2 != nil {
			t.Fatal(e1, e2)
		}
		if e1, e2 := create(a, "web", "SHA256:1"); !errors.Is(e1, store.ErrConflict) || !errors.Is(e2, store.ErrConflict) {
			t.Fatalf("duplicates in one account: %v, %v; want ErrConflict", e1, e2)
		}
		if e1, e2 := create(b, "web", "SHA256:1"); e1 != nil || e2 != nil {
			t.Fatalf("the same names in another account: %v, %v", e1, e2)
		}
	})

	t.Run("SnapshotsAndOperationParameters", func(t *testing.T) {
		s := open(t)
		in(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, catalog()) })
		a := newAccount(t, s, "snap@example.com")
		var srv, other int64
		in(t, s, func(tx store.Tx) error {
			var err error
			mk := func(name string) (int64, error) {
				return tx.CreateServer(ctx, hosting.Server{AccountID: a, Name: name, DisplayName: name, Status: hosting.StatusRunning,
					LocationID: 1, PlanID: 1, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, CreatedAt: now})
			}
			if srv, err = mk("server-snap01"); err != nil {
				return err
			}
			other, err = mk("server-snap02")
			return err
		})
		create := func(server int64, name string) (int64, error) {
			var id int64
			err := s.InTx(ctx, func(tx store.Tx) error {
				var err error
				id, err = tx.CreateSnapshot(ctx, hosting.Snapshot{AccountID: a, ServerID: server, Name: name, IncludeMemory: true,
					Status: hosting.SnapshotCreating, CreatedAt: now})
				return err
			})
			return id, err
		}
		first, err := create(srv, "Nightly")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := create(srv, "nightly"); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("same name in another case on the same server: %v, want ErrConflict", err)
		}
		if _, err := create(other, "nightly"); err != nil {
			t.Fatalf("same name on another server: %v", err)
		}
		second, err := create(srv, "weekly")
		if err != nil {
			t.Fatal(err)
		}
		in(t, s, func(tx store.Tx) error { return tx.SnapshotReady(ctx, first, 7) })
		list, err := s.Snapshots(ctx, srv)
		if err != nil || len(list) != 2 || list[0].ID != second || list[1].SizeGB != 7 || list[1].Status != hosting.SnapshotAvailable || !list[1].IncludeMemory {
			t.Fatalf("snapshots newest first: %+v, %v", list, err)
		}
		// A snapshot scheduled for deletion while it is taken stays "deleting" when ready.
		in(t, s, func(tx store.Tx) error { return tx.ScheduleSnapshotDeletion(ctx, second) })
		in(t, s, func(tx store.Tx) error { return tx.SnapshotReady(ctx, second, 3) })
		due, err := s.Snapshot(ctx, srv, second)
		if err != nil || due.Status != hosting.SnapshotDeleting || !due.DeleteScheduled {
			t.Fatalf("scheduled snapshot: %+v, %v", due, err)
		}
		// Its server has no operation whose end would run the deletion: the sweep's to run.
		if ids, err := s.StrandedSnapshotDeletions(ctx, 10); err != nil || len(ids) != 1 || ids[0] != srv {
			t.Fatalf("stranded snapshot deletions: %v, %v; want [%d]", ids, err, srv)
		}
		in(t, s, func(tx store.Tx) error {
			sched, err := tx.ScheduledSnapshotDeletions(ctx, srv)
			if err != nil || len(sched) != 1 || sched[0].ID != second {
				t.Errorf("scheduled deletions: %+v, %v", sched, err)
			}
			return tx.DeleteSnapshot(ctx, second, now)
		})
		if ids, err := s.StrandedSnapshotDeletions(ctx, 10); err != nil || len(ids) != 0 {
			t.Fatalf("stranded snapshot deletions once deleted: %v, %v; want none", ids, err)
		}
		if _, err := s.Snapshot(ctx, srv, second); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleted snapshot: %v", err)
		}
		if _, err := s.Snapshot(ctx, other, first); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a snapshot read through another server: %v", err)
		}
		if got, err := s.SnapshotAny(ctx, second); err != nil || got.DeletedAt == nil {
			t.Fatalf("SnapshotAny of a deleted one: %+v, %v", got, err)
		}
		if _, err := create(srv, "WEEKLY"); err != nil {
			t.Fatalf("the name of a deleted snapshot is free again: %v", err)
		}

		// Operations carry their parameters.
		plan, image := int64(2), int64(2)
		var opID int64
		in(t, s, func(tx store.Tx) error {
			var err error
			opID, err = tx.StartOperation(ctx, hosting.Operation{AccountID: a, ServerID: srv, Type: hosting.OpRescale, PlanID: &plan,
				ImageID: &image, SnapshotID: &first, UpgradeDisk: true, AfterStatus: hosting.StatusStopped, Status: hosting.OpRunning, StartedAt: now})
			return err
		})
		op, err := s.Operation(ctx, a, opID)
		if err != nil || *op.PlanID != 2 || *op.ImageID != 2 || *op.SnapshotID != first || !op.UpgradeDisk || op.AfterStatus != hosting.StatusStopped {
			t.Fatalf("operation parameters: %+v, %v", op, err)
		}
		// A rescale in progress holds its place in the target plan's capacity.
		if n, err := s.ServersOfPlan(ctx, 1, 2); err != nil || n != 1 {
			t.Fatalf("servers of plan 2 with a rescale to it running: %d, %v", n, err)
		}
		in(t, s, func(tx store.Tx) error { return tx.SetServerPlan(ctx, srv, 2, 4, 8192, 80) })
		got, err := s.ServerAny(ctx, srv)
		if err != nil || got.PlanID != 2 || got.VCPUs != 4 || got.MemoryMB != 8192 || got.DiskGB != 80 {
			t.Fatalf("after SetServerPlan: %+v, %v", got, err)
		}
	})

	t.Run("SerializeRunsOneAtATime", func(t *testing.T) {
		// Two transactions serialized under one name never overlap: the second
		// gets past Serialize only once the first has committed, and then reads
		// what it wrote. (A metering pass relies on it to see the hours another
		// pass charged.)
		s := open(t)
		id := newAccount(t, s, "serial@example.com")
		entered, release := make(chan struct{}), make(chan struct{})
		var committed atomic.Bool
		errc := make(chan error, 1)
		go func() {
			errc <- s.InTx(ctx, func(tx store.Tx) error {
				if err := tx.Serialize(ctx, "storetest"); err != nil {
					return err
				}
				if _, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: id, Type: hosting.TxTopup, Amount: 100,
					Description: "first", CreatedAt: now}); err != nil {
					return err
				}
				close(entered)
				<-release
				committed.Store(true) // it commits as this returns
				return nil
			})
		}()
		<-entered
		go func() {
			time.Sleep(200 * time.Millisecond) // the second has had time to get past, were it not held
			close(release)
		}()
		in(t, s, func(tx store.Tx) error {
			if err := tx.Serialize(ctx, "storetest"); err != nil {
				return err
			}
			if !committed.Load() {
				t.Error("the second transaction got past Serialize while the first ran")
			}
			a, err := tx.Account(ctx, id)
			if err == nil && a.Credit != 100 {
				t.Errorf("after Serialize the second reads credit %s, want the first's 0.0100", a.Credit)
			}
			return err
		})
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	})

	t.Run("RollbackLeavesNothing", func(t *testing.T) {
		s := open(t)
		boom := errors.New("boom")
		err := s.InTx(ctx, func(tx store.Tx) error {
			if _, err := tx.CreateAccount(ctx, hosting.Account{Email: "r@example.com", Quotas: hosting.Quotas{Servers: 1}, CreatedAt: now}); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if _, err := s.AccountByEmail(ctx, "r@example.com"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("rolled-back account exists: %v", err)
		}
	})

	t.Run("AfterCommitRunsOnlyAfterACommit", func(t *testing.T) {
		s := open(t)
		// Committed: fn runs once, after the commit, and sees what the transaction wrote
		// from outside it.
		var ran []error
		in(t, s, func(tx store.Tx) error {
			if _, err := tx.CreateAccount(ctx, hosting.Account{Email: "c@example.com", Quotas: hosting.Quotas{Servers: 1}, CreatedAt: now}); err != nil {
				return err
			}
			tx.AfterCommit(func() {
				_, err := s.AccountByEmail(ctx, "c@example.com")
				ran = append(ran, err)
			})
			if len(ran) != 0 {
				t.Error("AfterCommit ran fn before the commit")
			}
			return nil
		})
		if len(ran) != 1 || ran[0] != nil {
			t.Fatalf("after a commit: fn ran %d times (%v), want once seeing the account", len(ran), ran)
		}
		// Rolled back: fn never runs.
		err := s.InTx(ctx, func(tx store.Tx) error {
			tx.AfterCommit(func() { t.Error("AfterCommit ran fn of a rolled-back transaction") })
			return errors.New("boom")
		})
		if err == nil {
			t.Fatal("InTx: want the error that rolled it back")
		}
	})

	t.Run("HoldCommitsTheWorkWithWhatFollows", func(t *testing.T) {
		s := open(t)
		acct := newAccount(t, s, "h@example.com")
		project := func(tx store.Tx, name string) error {
			_, err := tx.CreateProject(ctx, hosting.Project{AccountID: acct, Name: name, CreatedAt: now})
			return err
		}
		has := func(name string) bool {
			ps, err := s.Projects(ctx, acct)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				if p.Name == name {
					return true
				}
			}
			return false
		}
		record := func(key string) hosting.IdempotencyRecord {
			return hosting.IdempotencyRecord{AccountID: acct, Key: key, RequestHash: []byte("h"), State: hosting.IdempotencyDone,
				Status: 201, ContentType: "application/json", Body: []byte(`{"data":{}}`), CreatedAt: now}
		}

		// Held: InTx returns nil, nothing is visible, AfterCommit waits; a later write
		// transaction of the same context joins it (a failing one undoes only itself).
		hctx, hold := store.WithHold(ctx)
		woken := 0
		if err := s.InTx(hctx, func(tx store.Tx) error {
			tx.AfterCommit(func() { woken++ })
			return project(tx, "held")
		}); err != nil {
			t.Fatal(err)
		}
		if !hold.Held() || has("held") || woken != 0 {
			t.Fatalf("held transaction: held %v, visible %v, after-commit ran %d times", hold.Held(), has("held"), woken)
		}
		if err := s.InTx(hctx, func(tx store.Tx) error { return project(tx, "joined") }); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		if err := s.InTx(hctx, func(tx store.Tx) error {
			if err := project(tx, "undone"); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) {
			t.Fatalf("a failing joined transaction: %v", err)
		}
		if err := hold.Commit(func(tx store.Tx) error { return tx.SaveIdempotencyKey(ctx, record("k1"), now.Add(-time.Hour)) }); err != nil {
			t.Fatal(err)
		}
		if !has("held") || !has("joined") || has("undone") || woken != 1 {
			t.Fatalf("after Commit: held %v, joined %v, undone %v; after-commit ran %d times", has("held"), has("joined"), has("undone"), woken)
		}
		if rec, err := s.IdempotencyKey(ctx, acct, "k1"); err != nil || rec.Status != 201 || string(rec.Body) != `{"data":{}}` {
			t.Fatalf("the record committed with the work: %+v, %v", rec, err)
		}
		hold.Release() // after Commit: nothing

		// What follows fails (the key is taken): neither commits.
		hctx, hold = store.WithHold(ctx)
		if err := s.InTx(hctx, func(tx store.Tx) error { return project(tx, "conflicting") }); err != nil {
			t.Fatal(err)
		}
		if err := hold.Commit(func(tx store.Tx) error { return tx.SaveIdempotencyKey(ctx, record("k1"), now.Add(-time.Hour)) }); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("saving a live key again: %v, want ErrConflict", err)
		}
		if has("conflicting") {
			t.Fatal("the work of a request whose key was taken committed")
		}
		// An expired record of the key is replaced.
		in(t, s, func(tx store.Tx) error { return tx.SaveIdempotencyKey(ctx, record("k1"), now.Add(time.Second)) })

		// Released: rolled back, and the store's writer is free again.
		hctx, hold = store.WithHold(ctx)
		if err := s.InTx(hctx, func(tx store.Tx) error { return project(tx, "released") }); err != nil {
			t.Fatal(err)
		}
		hold.Release()
		in(t, s, func(tx store.Tx) error { return project(tx, "after") })
		if has("released") || !has("after") {
			t.Fatalf("after Release: released %v, after %v", has("released"), has("after"))
		}
		// A failing first transaction holds nothing.
		hctx, hold = store.WithHold(ctx)
		if err := s.InTx(hctx, func(tx store.Tx) error { return boom }); !errors.Is(err, boom) || hold.Held() {
			t.Fatalf("failing first transaction: %v, held %v", err, hold.Held())
		}
		hold.Release()
	})

	t.Run("ConsoleTickets", func(t *testing.T) { consoleTickets(t, open) })
	t.Run("PasswordResets", func(t *testing.T) { passwordResets(t, open) })
	t.Run("ConsoleSessions", func(t *testing.T) { consoleSessions(t, open) })
	t.Run("Events", func(t *testing.T) { events(t, open) })
	t.Run("Webhooks", func(t *testing.T) { webhooks(t, open) })
	t.Run("Volumes", func(t *testing.T) { volumes(t, open) })
	t.Run("Licenses", func(t *testing.T) { licenses(t, open) })
	t.Run("LicenseHooks", func(t *testing.T) { licenseHooks(t, open) })
	t.Run("Tickets", func(t *testing.T) { tickets(t, open) })
	t.Run("Domains", func(t *testing.T) { domains(t, open) })
	t.Run("MeterBurn", func(t *testing.T) { meterBurn(t, open) })
	t.Run("UsageCounts", func(t *testing.T) { usageCounts(t, open) })
	t.Run("Settings", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := context.Background()
		if _, err := s.Setting(ctx, "mail"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a setting never written: %v, want ErrNotFound", err)
		}
		at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
		for _, v := range []string{`{"from":"a@example.com"}`, `{"from":"b@example.com"}`, ""} {
			if err := s.PutSetting(ctx, "mail", v, at); err != nil {
				t.Fatal(err)
			}
			if got, err := s.Setting(ctx, "mail"); err != nil || got != v {
				t.Errorf("after writing %q: %q, %v", v, got, err)
			}
		}
		if _, err := s.Setting(ctx, "other"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another name: %v, want ErrNotFound", err)
		}
	})
	t.Run("ChargeLimit", func(t *testing.T) { chargeLimit(t, open) })
	t.Run("ChargedTotals", func(t *testing.T) { chargedTotals(t, open) })
	t.Run("ChargeTwiceRefused", func(t *testing.T) { chargeTwiceRefused(t, open) })
	t.Run("Spent", func(t *testing.T) { spent(t, open) })
	t.Run("ChargeCrossings", func(t *testing.T) { chargeCrossings(t, open) })
	t.Run("DerivedLedger", func(t *testing.T) { derivedLedger(t, open) })

	t.Run("OperatorReads", func(t *testing.T) {
		s := open(t)
		if err := s.Ready(ctx); err != nil {
			t.Fatalf("Ready on a migrated store: %v", err)
		}
		if q, err := s.JobQueue(ctx); err != nil || q != (store.JobQueue{}) {
			t.Errorf("JobQueue of an empty queue: %+v %v", q, err)
		}
		in(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, catalog()) })
		a := newAccount(t, s, "op@example.com")
		var ids []int64
		in(t, s, func(tx store.Tx) error {
			for i, st := range []hosting.Status{hosting.StatusRunning, hosting.StatusRunning, hosting.StatusStopped,
				hosting.StatusRunning, hosting.StatusProvisioning} {
				id, err := tx.CreateServer(ctx, hosting.Server{AccountID: a, Name: fmt.Sprintf("server-op%04d", i), DisplayName: "d",
					Status: st, LocationID: 1, PlanID: 1, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, CreatedAt: now})
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			if err := tx.SetServerSuspended(ctx, ids[3], true); err != nil {
				return err
			}
			return tx.DeleteServer(ctx, ids[4], now)
		})
		got, err := s.ServersByStatus(ctx)
		want := map[hosting.Status]int{hosting.StatusRunning: 2, hosting.StatusStopped: 1, hosting.StatusSuspended: 1}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("ServersByStatus = %v %v, want %v (suspended over its status, the deleted one left out)", got, err, want)
		}
	})

	t.Run("ResetAccount", func(t *testing.T) {
		s := open(t)
		in(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, catalog()) })
		// Two accounts holding one of everything; only the first is reset.
		type held struct {
			id                      int64
			live, busy, gone, early string // servers: idle, with an operation, deleted with an operation, deleted before the last reset
			liveID                  int64
		}
		fill := func(email, prefix string) held {
			h := held{id: newAccount(t, s, email), live: "server-" + prefix + "live", busy: "server-" + prefix + "busy",
				gone: "server-" + prefix + "gone"}
			in(t, s, func(tx store.Tx) error {
				if _, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: h.id, Type: hosting.TxTopup, Amount: 250000, CreatedAt: now}); err != nil {
					return err
				}
				if _, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: h.id, Type: hosting.TxTopup, Amount: 10000, CreatedAt: now}); err != nil {
					return err
				}
				if _, err := tx.CreateToken(ctx, hosting.Token{AccountID: h.id, Name: "ci", Hash: []byte("hash-" + email), CreatedAt: now}); err != nil {
					return err
				}
				key, err := tx.CreateSSHKey(ctx, hosting.SSHKey{AccountID: h.id, Name: "k", PublicKey: "ssh-ed25519 AAAA", Fingerprint: "SHA256:" + email, CreatedAt: now})
				if err != nil {
					return err
				}
				proj, err := tx.CreateProject(ctx, hosting.Project{AccountID: h.id, Name: "p", CreatedAt: now})
				if err != nil {
					return err
				}
				if _, err := tx.CreateRecipe(ctx, hosting.Recipe{AccountID: h.id, Name: "r", Script: "#!/bin/sh\n", CreatedAt: now}); err != nil {
					return err
				}
				ids := map[string]int64{}
				for _, name := range []string{h.live, h.busy, h.gone} {
					id, err := tx.CreateServer(ctx, hosting.Server{AccountID: h.id, Name: name, DisplayName: name, ProjectID: &proj,
						Status: hosting.StatusRunning, LocationID: 1, PlanID: 1, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20,
						Keys: []hosting.SSHKey{{ID: key, Name: "k", PublicKey: "ssh-ed25519 AAAA", Fingerprint: "SHA256:" + email}}, CreatedAt: now})
					if err != nil {
						return err
					}
					ids[name] = id
				}
				h.liveID = ids[h.live]
				rate := hosting.Money(70)
				next := now.Add(time.Hour)
				if _, err := tx.OpenMeter(ctx, hosting.Meter{AccountID: h.id, ResourceType: hosting.ResourceServer, ResourceID: h.liveID,
					ResourceName: h.live, Rate: rate, StartedAt: now, BilledFrom: next, MonthStart: now, MonthCharged: rate}); err != nil {
					return err
				}
				snap, err := tx.CreateSnapshot(ctx, hosting.Snapshot{AccountID: h.id, ServerID: h.liveID, Name: "s", Status: hosting.SnapshotCreating, CreatedAt: now})
				if err != nil {
					return err
				}
				if _, err := tx.StartOperation(ctx, hosting.Operation{AccountID: h.id, ServerID: h.liveID, Type: hosting.OpSnapshot,
					SnapshotID: &snap, Status: hosting.OpRunning, StartedAt: now}); err != nil {
					return err
				}
				if _, err := tx.StartOperation(ctx, hosting.Operation{AccountID: h.id, ServerID: ids[h.busy], Type: hosting.OpPower,
					Action: hosting.PowerOff, Status: hosting.OpRunning, StartedAt: now}); err != nil {
					return err
				}
				if _, err := tx.StartOperation(ctx, hosting.Operation{AccountID: h.id, ServerID: ids[h.gone], Type: hosting.OpDelete,
					Status: hosting.OpRunning, StartedAt: now}); err != nil {
					return err
				}
				if err := tx.DeleteServer(ctx, ids[h.gone], now); err != nil {
					return err
				}
				if err := tx.SaveIdempotencyKey(ctx, hosting.IdempotencyRecord{AccountID: h.id, Key: "k1", RequestHash: []byte("h"),
					Status: 201, CreatedAt: now}, now.Add(-24*time.Hour)); err != nil {
					return err
				}
				return tx.AddAuditEntry(ctx, hosting.AuditEntry{At: now, Actor: "api", AccountID: &h.id, Action: "POST /v1/servers", Status: 201})
			})
			return h
		}
		a, b := fill("reset@example.com", "a"), fill("kept@example.com", "b")
		before, err := s.Account(ctx, b.id)
		if err != nil {
			t.Fatal(err)
		}
		reset := func(id int64) store.AccountReset {
			t.Helper()
			var got store.AccountReset
			in(t, s, func(tx store.Tx) error {
				var err error
				got, err = tx.ResetAccount(ctx, id, now.Add(time.Minute))
				return err
			})
			return got
		}
		got := reset(a.id)
		if want := []string{a.live, a.busy, a.gone}; fmt.Sprint(got.Machines) != fmt.Sprint(want) || got.OpeningCredit != 250000 {
			t.Errorf("ResetAccount = %+v, want machines %v and the first top-up 25.0000", got, want)
		}
		// Everything of the account is gone; it, its token and audit entries stay.
		acct, err := s.Account(ctx, a.id)
		if err != nil || acct.Credit != 0 || acct.Email != "reset@example.com" {
			t.Errorf("account after reset = %+v, %v; want it kept with credit 0", acct, err)
		}
		if tok, owner, err := s.TokenByHash(ctx, []byte("hash-reset@example.com")); err != nil || owner.ID != a.id || !tok.Usable(now) {
			t.Errorf("token after reset: %+v %v", tok, err)
		}
		if n, err := s.CountServers(ctx, a.id); err != nil || n != 0 {
			t.Errorf("live servers after reset: %d %v", n, err)
		}
		if srv, err := s.ServerAny(ctx, a.liveID); err != nil || srv.DeletedAt == nil || srv.Operation != nil || srv.ProjectID != nil {
			t.Errorf("a reset server is kept deleted, free and without project (its name stays used): %+v %v", srv, err)
		}
		if _, err := s.Server(ctx, a.id, hosting.ServerRef{Name: a.live}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("reset server by name: %v, want ErrNotFound", err)
		}
		if keys, err := s.ServerKeys(ctx, a.liveID); err != nil || len(keys) != 0 {
			t.Errorf("key copies of a reset server: %+v %v", keys, err)
		}
		count := func(h held) (n [9]int) {
			t.Helper()
			ks, err1 := s.SSHKeys(ctx, h.id)
			ps, err2 := s.Projects(ctx, h.id)
			rs, err3 := s.Recipes(ctx, h.id)
			snaps, err4 := s.Snapshots(ctx, h.liveID)
			_, ops, err5 := s.Operations(ctx, h.id, store.OperationFilter{}, 0, 0)
			_, txs, err6 := s.Transactions(ctx, h.id, 0, 0)
			ms, err7 := s.Meters(ctx, h.id)
			_, err8 := s.IdempotencyKey(ctx, h.id, "k1")
			audit, err9 := s.AuditLog(ctx, h.id, 0, 10)
			for _, err := range []error{err1, err2, err3, err4, err5, err6, err7, err9} {
				if err != nil {
					t.Fatal(err)
				}
			}
			idem := 1
			if errors.Is(err8, store.ErrNotFound) {
				idem = 0
			}
			return [9]int{len(ks), len(ps), len(rs), len(snaps), ops, txs, len(ms), idem, len(audit)}
		}
		if got, want := count(a), [9]int{0, 0, 0, 0, 0, 0, 0, 0, 1}; got != want {
			t.Errorf("keys, projects, recipes, snapshots, operations, ledger, meters, idempotency keys, audit entries after reset: %v, want %v", got, want)
		}
		if got, want := count(b), [9]int{1, 1, 1, 1, 3, 2, 1, 1, 1}; got != want {
			t.Errorf("the other account holds %v, want %v (untouched)", got, want)
		}
		if after, err := s.Account(ctx, b.id); err != nil || after.Credit != before.Credit || after.Credit != 260000 {
			t.Errorf("the other account's credit %s, want %s", after.Credit, before.Credit)
		}
		if n, err := s.CountServers(ctx, b.id); err != nil || n != 2 {
			t.Errorf("the other account's live servers: %d %v", n, err)
		}
		// The account works as a new one; a second reset names only the machines made
		// since the first, and finds no top-up when there was none.
		var fresh int64
		in(t, s, func(tx store.Tx) error {
			p, err := tx.CreateProject(ctx, hosting.Project{AccountID: a.id, Name: "p", CreatedAt: now})
			if err != nil {
				return err
			}
			fresh, err = tx.CreateServer(ctx, hosting.Server{AccountID: a.id, Name: "server-anew01", DisplayName: "n", ProjectID: &p,
				Status: hosting.StatusStopped, LocationID: 1, PlanID: 1, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, CreatedAt: now})
			return err
		})
		if got := reset(a.id); fmt.Sprint(got.Machines) != "[server-anew01]" || got.OpeningCredit != 0 {
			t.Errorf("second reset = %+v, want only server-anew01 and no top-up", got)
		}
		if srv, err := s.ServerAny(ctx, fresh); err != nil || srv.DeletedAt == nil {
			t.Errorf("server of the second reset: %+v %v", srv, err)
		}
		if err := s.InTx(ctx, func(tx store.Tx) error { _, err := tx.ResetAccount(ctx, 1<<40, now); return err }); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("reset of no account: %v, want ErrNotFound", err)
		}
	})
}
