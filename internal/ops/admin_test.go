package ops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// TestOperatorLists: what `admin account list` and `admin token list` read.
func TestOperatorLists(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	svc, ctx := env.App.Service, context.Background()
	before, err := svc.Accounts(ctx, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	a, b := newHolder(t, svc, "a@example.com"), newHolder(t, svc, "b@example.com")
	all, err := svc.Accounts(ctx, 0, 10000)
	if err != nil || len(all) != len(before)+2 || all[len(all)-2].ID != a.ID || all[len(all)-1].ID != b.ID {
		t.Fatalf("Accounts = %+v, %v; want a then b last", all, err)
	}

	old, _, err := svc.CreateToken(ctx, a.ID, "old", "read", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RevokeToken(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	cur, _, err := svc.CreateToken(ctx, a.ID, "current", "read,power", 0)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := svc.Tokens(ctx, a.ID)
	if err != nil || len(ts) != 2 || ts[0].ID != cur.ID || ts[1].ID != old.ID || ts[1].RevokedAt == nil {
		t.Fatalf("Tokens(a) = %+v, %v; want current, then old revoked", ts, err)
	}
	if ts, err := svc.Tokens(ctx, b.ID); err != nil || len(ts) != 0 {
		t.Errorf("Tokens(b) = %+v, %v; want none", ts, err)
	}
	if _, err := svc.Tokens(ctx, 4242); err == nil || !strings.Contains(err.Error(), "4242") {
		t.Errorf("Tokens of no account: %v, want an error naming 4242", err)
	}
}
