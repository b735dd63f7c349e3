package webui

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

// ---- SSH keys ----

func (c *Console) keysPage(r *req) error {
	ks, err := c.svc.SSHKeys.SSHKeys(r.ctx(), r.p)
	if err != nil {
		return err
	}
	c.render(r, http.StatusOK, "keys", "console.nav.keys", "keys", ks)
	return nil
}

func (c *Console) createKey(r *req) error {
	name, key := r.FormValue("name"), r.FormValue("public_key")
	_, err := c.svc.SSHKeys.CreateSSHKey(r.ctx(), r.p, &name, &key)
	return r.done(err, "/ssh-keys", "console.key_added")
}

func (c *Console) deleteKey(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return r.done(c.svc.SSHKeys.DeleteSSHKey(r.ctx(), r.p, id), "/ssh-keys", "console.deleted")
}

// ---- projects ----

func (c *Console) projectsPage(r *req) error {
	ps, err := c.svc.Projects.Projects(r.ctx(), r.p)
	if err != nil {
		return err
	}
	c.render(r, http.StatusOK, "projects", "console.nav.projects", "projects", ps)
	return nil
}

func (c *Console) createProject(r *req) error {
	name := r.FormValue("name")
	_, err := c.svc.Projects.CreateProject(r.ctx(), r.p, &name)
	return r.done(err, "/projects", "console.saved")
}

func (c *Console) renameProject(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	name := r.FormValue("name")
	_, err = c.svc.Projects.RenameProject(r.ctx(), r.p, id, &name)
	return r.done(err, "/projects", "console.saved")
}

func (c *Console) deleteProject(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return r.done(c.svc.Projects.DeleteProject(r.ctx(), r.p, id), "/projects", "console.deleted")
}

// ---- recipes ----

func (c *Console) recipesPage(r *req) error {
	rs, err := c.svc.Recipes.RecipeNames(r.ctx(), r.p)
	if err != nil {
		return err
	}
	c.render(r, http.StatusOK, "recipes", "console.nav.recipes", "recipes", rs)
	return nil
}

func (c *Console) createRecipe(r *req) error {
	name, script := r.FormValue("name"), normalizeNewlines(r.FormValue("script"))
	_, err := c.svc.Recipes.CreateRecipe(r.ctx(), r.p, &name, &script)
	return r.done(err, "/recipes", "console.saved")
}

func (c *Console) recipePage(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	rc, err := c.svc.Recipes.Recipe(r.ctx(), r.p, id)
	if err != nil {
		return err
	}
	c.render(r, http.StatusOK, "recipe", "console.recipe_title", "recipes", rc)
	return nil
}

func (c *Console) updateRecipe(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	name, script := r.FormValue("name"), normalizeNewlines(r.FormValue("script"))
	_, err = c.svc.Recipes.UpdateRecipe(r.ctx(), r.p, id, &name, &script)
	return r.done(err, "/recipes/"+itoa(id), "console.saved")
}

func (c *Console) deleteRecipe(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return r.done(c.svc.Recipes.DeleteRecipe(r.ctx(), r.p, id), "/recipes", "console.deleted")
}

// normalizeNewlines undoes the CRLF a browser sends for a textarea: a shell script
// must have LF line ends.
func normalizeNewlines(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// ---- billing ----

// spendDays is how many days the spend chart shows.
const spendDays = 30

// txRow is a ledger entry as the history shows it.
type txRow struct {
	hosting.Transaction
	Text string
}

func (c *Console) billingPage(r *req) error {
	page, err := pageParam(r)
	if err != nil {
		return err
	}
	sum, err := c.svc.Accounts.Billing(r.ctx(), r.p)
	if err != nil {
		return err
	}
	days, err := c.svc.Accounts.DailySpend(r.ctx(), r.p, spendDays)
	if err != nil {
		return err
	}
	list, total, err := c.svc.Accounts.Transactions(r.ctx(), r.p, page)
	if err != nil {
		return err
	}
	names, err := c.resourceNames(r, list)
	if err != nil {
		return err
	}
	rows := make([]txRow, len(list))
	for i, t := range list {
		text, m := billing.Describe(t)
		if text == "" {
			if t.ResourceID != nil {
				if name, ok := names[t.ResourceType+":"+itoa(*t.ResourceID)]; ok {
					m.Args["name"] = name
				}
			}
			text = r.T(m.ID, mapArgs(m.Args)...)
		}
		rows[i] = txRow{Transaction: t, Text: text}
	}
	v := &view{r: r, Account: r.p.Account}
	budgetPct := -1
	if sum.Budget != nil && *sum.Budget > 0 {
		budgetPct = int(min(int64(sum.MonthToDate)*100/int64(*sum.Budget), 999))
	}
	c.render(r, http.StatusOK, "billing", "console.nav.billing", "billing", map[string]any{
		"Sum": sum, "BudgetPct": budgetPct, "Days": days, "Rows": rows, "Total": total,
		"Pager": newPager(r, "/billing", page, lastPage(total, ops.TransactionsPageSize), ""),
		"Chart": barChart("spend", r.T("console.billing.chart"), days, v.Money)})
	return nil
}

// resourceNames are the names the ledger gives the servers and volumes that the
// page's transactions name and that still exist, by "type:id": a server's display
// name, a volume's name as it is now. An entry of one deleted keeps the name it was
// written with (for a server, its machine name). It reads at most a page's
// resources, however many the account has (the server reads come from memory).
func (c *Console) resourceNames(r *req, list []hosting.Transaction) (map[string]string, error) {
	names, looked := map[string]string{}, map[string]bool{}
	for _, t := range list {
		if t.ResourceID == nil {
			continue
		}
		key := t.ResourceType + ":" + itoa(*t.ResourceID)
		if looked[key] {
			continue
		}
		looked[key] = true
		var name string
		var err error
		switch t.ResourceType {
		case hosting.ResourceServer:
			var s hosting.Server
			s, err = c.svc.Servers.Server(r.ctx(), r.p, hosting.ServerRef{ID: *t.ResourceID})
			name = s.DisplayName
		case hosting.ResourceVolume:
			var v hosting.Volume
			v, err = c.svc.Volumes.Volume(r.ctx(), r.p, hosting.VolumeRef{ID: *t.ResourceID})
			name = v.Name
		default:
			continue
		}
		switch {
		case hosting.IsCode(err, hosting.CodeNotFound): // deleted: the name written stays
		case err != nil:
			return nil, err
		default:
			names[key] = name
		}
	}
	return names, nil
}

func mapArgs(m map[string]any) []any {
	out := make([]any, 0, 2*len(m))
	for k, v := range m {
		out = append(out, k, v)
	}
	return out
}

// ---- settings ----

func (c *Console) settingsPage(r *req) error {
	acct, err := c.svc.Accounts.Account(r.ctx(), r.p)
	if err != nil {
		return err
	}
	budget := ""
	if acct.Budget != nil {
		budget = strings.TrimRight(strings.TrimRight(acct.Budget.String(), "0"), ".")
	}
	c.render(r, http.StatusOK, "settings", "console.nav.settings", "settings", map[string]any{
		"Languages": hosting.Languages, "Budget": budget})
	return nil
}

func (c *Console) setLanguage(r *req) error {
	a, err := c.svc.Accounts.SetLanguage(r.ctx(), r.p, r.FormValue("language"))
	if err == nil {
		r.lang = a.Language // say it in the new language
	}
	return r.done(err, "/settings", "console.saved")
}

// changePassword answers Settings' password form (ops ChangePassword): the other
// sign-ins of the account end, this one stays. A wrong current password counts
// against the sign-in throttle of the account's email as a failed sign-in does, so
// that a session left open lets no one try passwords faster than the sign-in form;
// while it holds, the form is refused as the sign-in is.
func (c *Console) changePassword(r *req) error {
	now := time.Now()
	key := emailKey(r.p.Account.Email)
	res, err := c.byEmail.Peek(r.ctx(), key, now)
	if err != nil {
		return err
	}
	if !res.Allowed {
		if t := c.cfg.Telemetry; t != nil {
			t.RateLimited("console", "email")
		}
		mins := int((res.RetryAfter + time.Minute - 1) / time.Minute)
		setFlash(r.w, r.Request, flash{Msgs: []string{r.T("console.signin_throttled", "minutes", mins)}})
		return r.redirect("/settings")
	}
	err = c.svc.Sessions.ChangePassword(r.ctx(), r.p, r.secret, r.PostFormValue("current_password"),
		r.PostFormValue("new_password"), r.PostFormValue("new_password_again"))
	var he *hosting.Error
	if errors.As(err, &he) && slices.ContainsFunc(he.Fields["current_password"], func(m hosting.Msg) bool {
		return m.ID == "validation.password_wrong"
	}) {
		if _, err := c.byEmail.Allow(r.ctx(), key, now); err != nil {
			return err
		}
		if t := c.cfg.Telemetry; t != nil {
			t.SignInFailed()
		}
	}
	return r.done(err, "/settings", "console.password_changed")
}

func (c *Console) setBudget(r *req) error {
	raw := strings.TrimSpace(strings.Replace(r.FormValue("budget"), ",", ".", 1))
	var budget *hosting.Money
	if raw != "" {
		m, err := hosting.ParseMoney(raw)
		if err != nil {
			return r.done(hosting.Invalid("budget", "console.budget_invalid"), "/settings", "")
		}
		budget = &m
	}
	_, err := c.svc.Accounts.UpdateBudget(r.ctx(), r.p, budget)
	return r.done(err, "/settings", "console.saved")
}

// ---- settings → API ----

// expiries are the lifetimes a new token can have, "" for never.
var expiries = []struct{ Value, Label string }{
	{"", "console.expiry.never"}, {"24h", "console.expiry.day"}, {"168h", "console.expiry.week"},
	{"720h", "console.expiry.month"}, {"2160h", "console.expiry.quarter"}, {"8760h", "console.expiry.year"},
}

// tokenForm is the API page: the tokens, the create form and, once, a new secret.
type tokenForm struct {
	Tokens   []hosting.Token
	Scopes   []hosting.Scope
	Expiries []struct{ Value, Label string }
	Now      time.Time
	// What was entered, and what went wrong.
	Name     string
	Checked  map[hosting.Scope]bool
	Expiry   string
	Errors   map[string][]string
	Messages []string
	// The token just created, shown once.
	New    *hosting.Token
	Secret string
}

func (c *Console) tokenForm(r *req) (*tokenForm, error) {
	ts, err := c.svc.Accounts.AccountTokens(r.ctx(), r.p)
	if err != nil {
		return nil, err
	}
	return &tokenForm{Tokens: ts, Scopes: hosting.AllScopes, Expiries: expiries, Now: c.svc.Gate.Now(),
		Checked: map[hosting.Scope]bool{hosting.ScopeRead: true}}, nil
}

func (c *Console) apiPage(r *req) error {
	f, err := c.tokenForm(r)
	if err != nil {
		return err
	}
	c.render(r, http.StatusOK, "api", "console.api_title", "api", f)
	return nil
}

// createToken answers with the page itself rather than a redirect: the secret is
// shown this once and never stored.
func (c *Console) createToken(r *req) error {
	name := strings.TrimSpace(r.FormValue("name"))
	scopes := r.Form["scopes"]
	expiry := r.FormValue("expires_in")
	var d time.Duration
	known := false
	for _, e := range expiries {
		known = known || e.Value == expiry
	}
	var err error
	if !known {
		err = hosting.Invalid("expires_in", "console.expiry_future")
	} else if expiry != "" {
		d, _ = time.ParseDuration(expiry)
	}
	var t hosting.Token
	var secret string
	if err == nil {
		t, secret, err = c.svc.Accounts.CreateAccountToken(r.ctx(), r.p, name, scopes, d)
	}
	if err != nil {
		if code := hosting.ErrorCode(err); code != hosting.CodeValidationFailed {
			return err
		}
	}
	f, ferr := c.tokenForm(r)
	if ferr != nil {
		return ferr
	}
	status := http.StatusOK
	if err != nil {
		status = http.StatusUnprocessableEntity
		f.Name, f.Expiry = name, expiry
		for _, s := range scopes {
			f.Checked[hosting.Scope(s)] = true
		}
		f.Errors, f.Messages = c.fieldErrors(r.lang, err), c.messages(r.lang, err)
	} else {
		f.New, f.Secret = &t, secret
	}
	c.render(r, status, "api", "console.api_title", "api", f)
	return nil
}

func (c *Console) revokeToken(r *req) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return r.done(c.svc.Accounts.RevokeAccountToken(r.ctx(), r.p, id), "/settings/api", "console.token_revoked")
}
