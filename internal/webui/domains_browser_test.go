package webui_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/internal/testenv"
)

// TestBrowserDomains: in the browser, a zone is added from the Domains page, an
// RRset set with the editor and listed on the zone's page; a refused record is said
// next to the records. The pages work by keyboard and 375 px wide.
func TestBrowserDomains(t *testing.T) {
	ctx := browserTab(t)
	dir := artifactDir(t)
	env := testenv.New(t)
	_, email := newAccount(t, env, "en")
	root := env.Root

	run(t, ctx, "sign in", chromedp.Navigate(root+"/signin"), chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), email), chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Submit(chromedp.CSS("#email")), chromedp.WaitVisible(chromedp.CSS(`a[href="/servers"][aria-current="page"]`)))
	run(t, ctx, "the Domains page", chromedp.Click(chromedp.CSS(`header nav a[href="/domains"]`)),
		chromedp.WaitVisible(chromedp.CSS("#domain_name")))
	run(t, ctx, "add a zone", chromedp.SendKeys(chromedp.CSS("#domain_name"), "example.com"),
		chromedp.Submit(chromedp.CSS("#domain_name")), chromedp.WaitVisible(chromedp.CSS(".notice.ok")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-rrset="@ SOA"]`)))
	zone := get(t, ctx, "location", chromedp.Location())

	run(t, ctx, "a refused record", chromedp.SetValue(chromedp.CSS("#rrset_name"), "www"),
		chromedp.SendKeys(chromedp.CSS("#rrset_records"), "192.0.2.10\nnot-an-address"),
		chromedp.Click(chromedp.CSS(`form[action$="/rrsets"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(".field-error")))
	if msg := get(t, ctx, "the message", chromedp.Text(chromedp.CSS(".field-error"))); !strings.Contains(msg, "Record 2 (not-an-address)") {
		t.Errorf("message %q does not name the record", msg)
	}
	run(t, ctx, "set the RRset", chromedp.SetValue(chromedp.CSS("#rrset_records"), "192.0.2.10 ; web\n192.0.2.11"),
		chromedp.Click(chromedp.CSS(`form[action$="/rrsets"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-rrset="www A"]`)))
	row := get(t, ctx, "its row", chromedp.Evaluate[string](`document.querySelector('tr[data-rrset="www A"]').innerText.replace(/\s+/g, ' ')`))
	for _, want := range []string{"192.0.2.10 ; web", "192.0.2.11", "zone's (3600)"} {
		if !strings.Contains(row, want) {
			t.Errorf("row %q lacks %q", row, want)
		}
	}
	shot(t, ctx, dir, "domain")
	checkKeyboard(t, ctx, "domain")
	checkNarrow(t, ctx, dir, zone, "domain")

	run(t, ctx, "filter the RRsets", chromedp.SendKeys(chromedp.CSS("#rrset_search"), "WWW"),
		chromedp.SetValue(chromedp.CSS("#rrset_filter_type"), "A"),
		chromedp.Click(chromedp.CSS(`form[data-rrset-filter] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("[data-rrset-matched]")))
	if rows := get(t, ctx, "the rows", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('tr[data-rrset]')].map(r => r.dataset.rrset)`)); strings.Join(rows, ",") != "www A" {
		t.Errorf("filtered rows %q, want www A alone", rows)
	}
	if msg := get(t, ctx, "the count", chromedp.Text(chromedp.CSS("[data-rrset-matched]"))); !strings.Contains(msg, "1 of the zone's 3 RRsets match.") {
		t.Errorf("count %q", msg)
	}
	shot(t, ctx, dir, "domain-filtered")
	run(t, ctx, "every RRset again", chromedp.Click(chromedp.CSS("[data-rrset-matched] a")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-rrset="@ SOA"]`)))

	run(t, ctx, "the list", chromedp.Navigate(root+"/domains"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-domain="example.com"]`)))
	if n := get(t, ctx, "its count", chromedp.Text(chromedp.CSS(`tr[data-domain="example.com"] [data-rrsets]`))); n != "3" {
		t.Errorf("the list counts %q RRsets, want 3", n)
	}
	shot(t, ctx, dir, "domains")
	checkKeyboard(t, ctx, "domains")
	checkNarrow(t, ctx, dir, root+"/domains", "domains")
}
