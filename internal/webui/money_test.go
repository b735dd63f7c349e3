package webui_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testenv"
)

var (
	// amountRE finds an amount shown with its currency.
	amountRE = regexp.MustCompile(`(-?[0-9][0-9.,]*) EUR`)
	// byTheRule is formatMoney's rule: two decimals, or three or four ending in a
	// digit that is not 0.
	byTheRule = regexp.MustCompile(`^-?[0-9]+[.,][0-9]{2}([0-9]?[1-9])?$`)
)

// amounts are the amounts a page shows (its text and its tooltips).
func amounts(p page) []string {
	var out []string
	for _, m := range amountRE.FindAllStringSubmatch(html.UnescapeString(p.body), -1) {
		out = append(out, m[1])
	}
	return out
}

// TestConsoleMoneyOneRule: every amount on the pages that show money (the order
// form's prices, a server's rescale prices, the billing page's figures, ledger and
// chart, the volumes' prices, the activity's billing events, a refusal naming an
// amount) is written by the one rule, in English and in German: whole amounts with
// cents, sub-cent ones with the decimals they need and no more.
func TestConsoleMoneyOneRule(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	for _, lang := range []string{"en", "de"} {
		v, a := signedIn(t, env, lang)
		token, _ := apiToken(t, env, a.ID)
		sid := orderedServer(t, env, token, "web-1", 1)
		// A top-up writes a billing event for the activity page.
		credit, _ := hosting.ParseMoney("10")
		if _, err := env.App.Service.AddCredit(context.Background(), a.ID, credit, "test"); err != nil {
			t.Fatal(err)
		}
		v.get("/volumes")
		review := v.post("/volumes", url.Values{"name": {"pgdata"}, "size_gb": {"50"}, "place": {"location:1"}})
		wantStatus(t, review, http.StatusOK)

		// An account whose credit does not cover an hour is told what one costs.
		poorEmail := "poor-" + lang + "@example.com"
		if _, err := env.App.Service.CreateAccount(context.Background(), ops.NewAccount{Email: poorEmail, Password: password,
			Language: lang}); err != nil {
			t.Fatal(err)
		}
		poor := newVisitor(t, env)
		wantStatus(t, poor.signIn(poorEmail, password), http.StatusSeeOther)
		poor.get("/servers/new")
		refused := poor.post("/servers", url.Values{"location_id": {"1"}, "plan_id": {"1"}, "source": {"image:1"}})
		wantStatus(t, refused, http.StatusUnprocessableEntity)

		var cents, subcent int
		for _, pg := range []struct {
			name string
			p    page
		}{
			{"order", v.get("/servers/new")}, {"server", v.get("/servers/" + sid)}, {"billing", v.get("/billing")},
			{"volumes", v.get("/volumes")}, {"volume review", review}, {"activity", v.get("/activity")},
			{"refused order", refused},
		} {
			found := amounts(pg.p)
			if len(found) == 0 {
				t.Errorf("%s (%s): no amount shown", pg.name, lang)
			}
			for _, s := range found {
				if !byTheRule.MatchString(s) {
					t.Errorf("%s (%s) shows %q EUR, not by the rule", pg.name, lang, s)
				}
				if regexp.MustCompile(`[.,][0-9]{2}$`).MatchString(s) {
					cents++
				} else {
					subcent++
				}
			}
		}
		if cents == 0 || subcent == 0 {
			t.Errorf("%s: %d amounts in cents, %d below a cent: the pages were not looked at", lang, cents, subcent)
		}
	}
}
