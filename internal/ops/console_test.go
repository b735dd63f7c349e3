package ops_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testenv"
)

func newHolder(t *testing.T, svc *ops.Service, email string) hosting.Account {
	t.Helper()
	a, err := svc.CreateAccount(context.Background(), ops.NewAccount{Email: email, Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestSessions(t *testing.T) {
	t.Parallel()
	clock := testenv.NewFakeClock(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC))
	env := testenv.New(t, testenv.Options{Clock: clock.Now})
	svc, ctx := env.App.Service, context.Background()
	a := newHolder(t, svc, "ada@example.com")

	for _, tt := range []struct{ email, password string }{
		{"ada@example.com", "wrong password"}, {"nobody@example.com", "correct horse battery"}, {"", ""},
		{"ada@example.com", string(make([]byte, 100))},
	} {
		if _, _, _, err := svc.SignIn(ctx, tt.email, tt.password, 0); !hosting.IsCode(err, hosting.CodeUnauthenticated) {
			t.Errorf("SignIn(%q, %q): %v, want unauthenticated", tt.email, tt.password, err)
		}
	}
	sess, acct, secret, err := svc.SignIn(ctx, " ada@example.com ", "correct horse battery", time.Hour)
	if err != nil || acct.ID != a.ID {
		t.Fatalf("SignIn: %v (account %d)", err, acct.ID)
	}
	if string(sess.Hash) == secret || len(sess.Hash) != 32 {
		t.Fatal("the session secret is stored, not its hash")
	}
	p, _, err := svc.SessionPrincipal(ctx, secret)
	if err != nil || p.Account.ID != a.ID || !p.Token.Scopes.Has(hosting.ScopeServers) {
		t.Fatalf("SessionPrincipal: %v %+v", err, p)
	}
	for _, bad := range []string{"", "berths_nope", "berth_" + secret[7:], secret + "x"} {
		if _, _, err := svc.SessionPrincipal(ctx, bad); !hosting.IsCode(err, hosting.CodeUnauthenticated) {
			t.Errorf("SessionPrincipal(%q): %v", bad, err)
		}
	}
	clock.Advance(time.Hour)
	if _, _, err := svc.SessionPrincipal(ctx, secret); !hosting.IsCode(err, hosting.CodeUnauthenticated) {
		t.Errorf("an expired session: %v", err)
	}
	_, _, second, _ := svc.SignIn(ctx, "ada@example.com", "correct horse battery", time.Hour)
	if err := svc.SignOut(ctx, second); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.SessionPrincipal(ctx, second); !hosting.IsCode(err, hosting.CodeUnauthenticated) {
		t.Errorf("a signed-out session: %v", err)
	}
	if err := svc.SignOut(ctx, second); err != nil {
		t.Errorf("signing out twice: %v", err)
	}
}

func TestAccountTokens(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	svc, ctx := env.App.Service, context.Background()
	a, b := newHolder(t, svc, "a@example.com"), newHolder(t, svc, "b@example.com")
	pa, pb := hosting.Principal{Account: a}, hosting.Principal{Account: b}

	for _, tt := range []struct {
		name   string
		scopes []string
		exp    time.Duration
		field  string
	}{
		{"", nil, 0, "name"}, {"x", []string{"root"}, 0, "scopes"}, {"x", nil, -time.Hour, "expires_in"},
	} {
		_, _, err := svc.CreateAccountToken(ctx, pa, tt.name, tt.scopes, tt.exp)
		var he *hosting.Error
		if !hosting.IsCode(err, hosting.CodeValidationFailed) || !asError(err, &he) || he.Fields[tt.field] == nil {
			t.Errorf("CreateAccountToken(%q, %v, %v): %v, want a field error on %s", tt.name, tt.scopes, tt.exp, err, tt.field)
		}
	}
	tok, secret, err := svc.CreateAccountToken(ctx, pa, "deploy", []string{"servers"}, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Scopes.String(); got != "read,servers" || tok.ExpiresAt == nil {
		t.Errorf("token scopes %s, expiry %v", got, tok.ExpiresAt)
	}
	if _, err := svc.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if list, _ := svc.AccountTokens(ctx, pb); len(list) != 0 {
		t.Errorf("b sees a's tokens: %v", list)
	}
	if err := svc.RevokeAccountToken(ctx, pb, tok.ID); !hosting.IsCode(err, hosting.CodeNotFound) {
		t.Errorf("b revokes a's token: %v", err)
	}
	if err := svc.RevokeAccountToken(ctx, pa, tok.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.RevokeAccountToken(ctx, pa, tok.ID); !hosting.IsCode(err, hosting.CodeNotFound) {
		t.Errorf("revoking twice: %v", err)
	}
	if _, err := svc.Authenticate(ctx, secret); !hosting.IsCode(err, hosting.CodeUnauthenticated) {
		t.Errorf("a revoked token authenticates: %v", err)
	}
	if list, _ := svc.AccountTokens(ctx, pa); len(list) != 0 {
		t.Errorf("a revoked token is listed: %v", list)
	}
}

func TestLanguageAndBudget(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	svc, ctx := env.App.Service, context.Background()
	p := hosting.Principal{Account: newHolder(t, svc, "a@example.com")}
	for _, l := range []string{"", "xx", "EN", "de-DE"} {
		if _, err := svc.SetLanguage(ctx, p, l); !hosting.IsCode(err, hosting.CodeValidationFailed) {
			t.Errorf("SetLanguage(%q): %v", l, err)
		}
	}
	if a, err := svc.SetLanguage(ctx, p, "fr"); err != nil || a.Language != "fr" {
		t.Fatalf("SetLanguage(fr): %v %q", err, a.Language)
	}
	for _, m := range []hosting.Money{0, -1} {
		if _, err := svc.UpdateBudget(ctx, p, &m); !hosting.IsCode(err, hosting.CodeValidationFailed) {
			t.Errorf("UpdateBudget(%s): %v", m, err)
		}
	}
	m := hosting.Money(500000)
	if a, err := svc.UpdateBudget(ctx, p, &m); err != nil || a.Budget == nil || *a.Budget != m {
		t.Fatalf("UpdateBudget: %v", err)
	}
	if a, err := svc.UpdateBudget(ctx, p, nil); err != nil || a.Budget != nil {
		t.Fatalf("clearing the budget: %v", err)
	}
}

// TestDailySpend: charges net of refunds per UTC day of the hour they pay for; the
// last 30 days, today last, empty days as zero.
func TestDailySpend(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	clock := testenv.NewFakeClock(now)
	env := testenv.New(t, testenv.Options{Clock: clock.Now})
	svc, ctx := env.App.Service, context.Background()
	a := newHolder(t, svc, "a@example.com")
	if _, err := svc.AddCredit(ctx, a.ID, 1000000, ""); err != nil {
		t.Fatal(err)
	}
	id := int64(1)
	write := func(typ hosting.TxType, amount hosting.Money, period time.Time) {
		err := env.App.DB.InTx(ctx, func(tx store.Tx) error {
			id++
			_, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: a.ID, Type: typ, Amount: amount, ResourceType: hosting.ResourceServer,
				ResourceID: &id, PeriodStart: &period, CreatedAt: now})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	today := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	write(hosting.TxCharge, -100, today.Add(23*time.Hour))               // today, last hour
	write(hosting.TxCharge, -300, today.Add(-time.Hour))                 // yesterday 23:00
	write(hosting.TxCharge, -200, today.Add(-24*time.Hour))              // yesterday 00:00
	write(hosting.TxRefund, 200, today.Add(-24*time.Hour))               // …refunded
	write(hosting.TxCharge, -999, today.AddDate(0, 0, -30))              // 31 days ago: out of range
	write(hosting.TxCharge, -7, today.AddDate(0, 0, -29).Add(time.Hour)) // the first day shown
	days, err := svc.DailySpend(ctx, hosting.Principal{Account: a}, 30)
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 30 || !days[29].Day.Equal(today) || !days[0].Day.Equal(today.AddDate(0, 0, -29)) {
		t.Fatalf("days: %d, first %v, last %v", len(days), days[0].Day, days[len(days)-1].Day)
	}
	want := map[int]hosting.Money{0: 7, 28: 300, 29: 100}
	for i, d := range days {
		if d.Spent != want[i] {
			t.Errorf("day %d (%s): %s, want %s", i, d.Day.Format("2006-01-02"), d.Spent, want[i])
		}
	}
}

func asError(err error, target **hosting.Error) bool {
	he, ok := err.(*hosting.Error)
	if ok {
		*target = he
	}
	return ok
}

// TestTokenQuota: an account may hold as many tokens as its quota; revoked and
// expired ones do not count. The holder meets it in the console, the operator in
// `admin token create`.
func TestTokenQuota(t *testing.T) {
	t.Parallel()
	clock := testenv.NewFakeClock(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC))
	env := testenv.New(t, testenv.Options{Clock: clock.Now})
	svc, ctx := env.App.Service, context.Background()
	a := newHolder(t, svc, "quota@example.com")
	p := hosting.Principal{Account: a}
	if _, err := svc.SetQuotas(ctx, a.ID, map[string]int{"tokens": 2}); err != nil {
		t.Fatal(err)
	}
	wantQuota := func(err error) {
		t.Helper()
		var he *hosting.Error
		if !errors.As(err, &he) || he.Code != hosting.CodeValidationFailed || len(he.Fields["token_quota"]) != 1 ||
			he.Fields["token_quota"][0].Args["quota"] != 2 {
			t.Fatalf("past the token quota: %v", err)
		}
	}
	short, _, err := svc.CreateAccountToken(ctx, p, "short", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	long, _, err := svc.CreateAccountToken(ctx, p, "long", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = svc.CreateAccountToken(ctx, p, "third", nil, 0)
	wantQuota(err)
	_, _, err = svc.CreateToken(ctx, a.ID, "by the operator", "read", 0)
	wantQuota(err)

	// An expired token does not count.
	clock.Advance(time.Hour)
	third, _, err := svc.CreateAccountToken(ctx, p, "third", nil, 0)
	if err != nil {
		t.Fatalf("a token once one expired: %v", err)
	}
	_, _, err = svc.CreateAccountToken(ctx, p, "fourth", nil, 0)
	wantQuota(err)
	// Nor does a revoked one.
	if err := svc.RevokeAccountToken(ctx, p, long.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.CreateAccountToken(ctx, p, "fourth", nil, 0); err != nil {
		t.Fatalf("a token once one was revoked: %v", err)
	}
	_ = short
	_ = third
}

func TestSetQuotasRefusesNonsense(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	svc, ctx := env.App.Service, context.Background()
	a := newHolder(t, svc, "q@example.com")
	for _, set := range []map[string]int{{"servers": -1}, {"tokens": -1 << 62}, {"disks": 1}, {"": 0}} {
		if _, err := svc.SetQuotas(ctx, a.ID, set); err == nil {
			t.Errorf("SetQuotas(%v): no error", set)
		}
	}
	if _, err := svc.SetQuotas(ctx, 1<<62, map[string]int{"servers": 1}); err == nil {
		t.Error("SetQuotas of no account: no error")
	}
	if _, err := svc.CreateAccount(ctx, ops.NewAccount{Email: "n@example.com", Password: "correct horse battery",
		Quotas: map[string]int{"recipes": -1}}); err == nil {
		t.Error("CreateAccount with a negative quota: no error")
	}
	got, err := svc.SetQuotas(ctx, a.ID, map[string]int{"recipes": 0, "servers": 7})
	if err != nil {
		t.Fatal(err)
	}
	want := hosting.DefaultQuotas
	want.Recipes, want.Servers = 0, 7
	if got.Quotas != want {
		t.Errorf("quotas %+v, want %+v", got.Quotas, want)
	}
	if acct, err := env.App.DB.Account(ctx, a.ID); err != nil || acct.Quotas != want {
		t.Errorf("stored quotas %+v (%v), want %+v", acct.Quotas, err, want)
	}
}
