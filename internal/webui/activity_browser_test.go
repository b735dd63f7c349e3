package webui_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/internal/testenv"
)

// TestBrowserActivity: changes made in the console show on the Activity page, newest
// first; its filter and a row's link work in the browser, by keyboard and 375 px wide.
func TestBrowserActivity(t *testing.T) {
	ctx := browserTab(t)
	dir := artifactDir(t)
	env := testenv.New(t)
	_, email := newAccount(t, env, "en")
	root := env.Root

	run(t, ctx, "sign in", chromedp.Navigate(root+"/signin"), chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), email), chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Submit(chromedp.CSS("#email")), chromedp.WaitVisible(chromedp.CSS(`a[href="/servers"][aria-current="page"]`)))
	run(t, ctx, "create a project", chromedp.Navigate(root+"/projects"), chromedp.WaitVisible(chromedp.CSS("#project_name")),
		chromedp.SendKeys(chromedp.CSS("#project_name"), "shop"), chromedp.Submit(chromedp.CSS("#project_name")),
		chromedp.WaitVisible(chromedp.CSS(".notice.ok")))
	run(t, ctx, "add an SSH key", chromedp.Navigate(root+"/ssh-keys"), chromedp.WaitVisible(chromedp.CSS("#key_name")),
		chromedp.SendKeys(chromedp.CSS("#key_name"), "laptop"),
		chromedp.SetValue(chromedp.CSS("#public_key"), testenv.PublicKey(t)+" ada@laptop"),
		chromedp.Submit(chromedp.CSS("#key_name")), chromedp.WaitVisible(chromedp.CSS(".notice.ok")))

	run(t, ctx, "the Activity page", chromedp.Click(chromedp.CSS(`header nav a[href="/activity"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-event="ssh_key.created"]`)))
	rows := get(t, ctx, "rows", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('table.events tbody tr')].map(tr => tr.innerText.replace(/\s+/g, ' '))`))
	if len(rows) != 2 || !strings.Contains(rows[0], "SSH key laptop was added.") || !strings.Contains(rows[1], "Project shop was created.") {
		t.Fatalf("rows %q: want the key, then the project", rows)
	}
	shot(t, ctx, dir, "activity")
	checkKeyboard(t, ctx, "activity")
	checkNarrow(t, ctx, dir, root+"/activity", "activity")

	run(t, ctx, "filter to projects", chromedp.Navigate(root+"/activity"), chromedp.WaitVisible(chromedp.CSS("#event_type")),
		chromedp.SetValue(chromedp.CSS("#event_type"), "project"), chromedp.Submit(chromedp.CSS("#event_type")),
		chromedp.WaitReady(chromedp.CSS(`#event_type option[value="project"][selected]`)))
	if n := get(t, ctx, "filtered rows", chromedp.Evaluate[int](`document.querySelectorAll('tr[data-event]').length`)); n != 1 {
		t.Errorf("%d rows through the project filter, want 1", n)
	}
	run(t, ctx, "follow the row's link", chromedp.Click(chromedp.CSS(`tr[data-event="project.created"] a`)),
		chromedp.WaitVisible(chromedp.CSS("h1")))
	if loc := get(t, ctx, "location", chromedp.Location()); !strings.Contains(loc, "/servers?project_id=") {
		t.Errorf("the project's link led to %s", loc)
	}
}
