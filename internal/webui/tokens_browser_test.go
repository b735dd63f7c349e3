package webui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/testenv"
)

// wrappedHeadersJS answers the headers (and buttons) of the page's tables that take
// more than one line: each is measured as it is and again kept to one line.
const wrappedHeadersJS = `(() => {
  const out = [];
  for (const th of document.querySelectorAll('table.list thead th, table.list td.actions button')) {
    const h = th.getBoundingClientRect().height;
    const ws = th.style.whiteSpace;
    th.style.whiteSpace = 'nowrap';
    const one = th.getBoundingClientRect().height;
    th.style.whiteSpace = ws;
    if (h > one + 0.5) out.push(th.textContent.trim() + ': ' + h + ' px, one line ' + one + ' px');
  }
  return out;
})()`

// TestBrowserTokensTable: at 1280 px, the API tokens table's headers and its Revoke
// buttons each fit on one line, in every language of the console, with tokens that have every scope, a long
// name, a last use and an expiry.
func TestBrowserTokensTable(t *testing.T) {
	ctx := browserTab(t)
	dir := artifactDir(t)
	env := testenv.New(t)
	a, email := newAccount(t, env, "en")
	bg := context.Background()
	var all []string
	for _, sc := range hosting.AllScopes {
		all = append(all, string(sc))
	}
	for _, name := range []string{"deploy", "a-rather-long-token-name-for-the-ci-pipeline"} {
		_, secret, err := env.App.Service.CreateToken(bg, a.ID, name, strings.Join(all, ","), 30*24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		env.Do(secret, "GET", "/me", nil, nil).Want(t, 200)
	}
	root := env.Root
	run(t, ctx, "sign in", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(root+"/signin"), chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), email), chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Submit(chromedp.CSS("#email")), chromedp.WaitVisible(chromedp.CSS(`a[href="/servers"][aria-current="page"]`)))
	for _, lang := range []string{"en", "de", "fr"} {
		if _, err := env.App.Service.SetLanguage(bg, hosting.Principal{Account: a}, lang); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, lang+": the API page", chromedp.Navigate(root+"/settings/api"),
			chromedp.WaitVisible(chromedp.CSS(`html[lang="`+lang+`"] tr[data-token]`)))
		if wide := get(t, ctx, "width", chromedp.Evaluate[int](`window.innerWidth`)); wide != 1280 {
			t.Fatalf("the window is %d px wide, want 1280", wide)
		}
		if wrapped := get(t, ctx, lang+": headers", chromedp.Evaluate[[]string](wrappedHeadersJS)); len(wrapped) > 0 {
			t.Errorf("%s: at 1280 px these headers wrap: %q", lang, wrapped)
		}
		shot(t, ctx, dir, "settings-api-1280-"+lang)
	}
}
