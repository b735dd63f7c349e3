package webui_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/internal/testenv"
)

// TestBrowserLicenses: in the browser, the order form's per-vCPU price follows the
// plan chosen and the Windows image ticks and fixes its license (another image gives
// the box back); a server ordered with plesk ticked lists both licenses on its page,
// a key pool's license added there shows its key read-only, and plesk is removed
// through the confirmation page (listed cancelled after). The pages work by keyboard
// and 375 px wide.
func TestBrowserLicenses(t *testing.T) {
	ctx := browserTab(t)
	dir := artifactDir(t)
	env := testenv.New(t, testenv.Options{SimTimeScale: 0.02})
	_, email := newAccount(t, env, "en")
	if _, err := env.App.Service.AddLicenseKeys(context.Background(), 2, []string{"CPANEL-7Q2-XK"}); err != nil {
		t.Fatal(err)
	}
	root := env.Root

	run(t, ctx, "sign in", chromedp.Navigate(root+"/signin"), chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), email), chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Submit(chromedp.CSS("#email")), chromedp.WaitVisible(chromedp.CSS(`a[href="/servers"][aria-current="page"]`)))

	win := `#order-licenses input[name="license_ids"][value="1"]`
	winPrice := `#order-licenses label[data-license="windows-server-standard"] [data-plan-price]`
	run(t, ctx, "the order form", chromedp.Navigate(root+"/servers/new"), chromedp.WaitVisible(chromedp.CSS(win)))
	if got := get(t, ctx, "windows' price", chromedp.Text(chromedp.CSS(winPrice))); got != "4.20 EUR a month with s1-1c-1g" {
		t.Errorf("windows' price with plan 1: %q", got)
	}
	run(t, ctx, "plan 2", chromedp.Click(chromedp.CSS(`input[name="plan_id"][value="2"]`)))
	if got := get(t, ctx, "windows' price", chromedp.Text(chromedp.CSS(winPrice))); got != "8.40 EUR a month with s2-2c-4g" {
		t.Errorf("windows' price after choosing plan 2: %q", got)
	}
	box := func(what string) string {
		t.Helper()
		return get(t, ctx, what, chromedp.Evaluate[string](`(() => { const b = document.querySelector('`+win+`'); return b.checked + " " + b.disabled; })()`))
	}
	if got := box("windows with ubuntu"); got != "false false" {
		t.Errorf("windows with ubuntu chosen: checked, disabled = %s", got)
	}
	chooseImage(t, ctx, "5")
	if got := box("windows with its image"); got != "true true" {
		t.Errorf("windows with its image chosen: checked, disabled = %s", got)
	}
	chooseImage(t, ctx, "1")
	if got := box("windows with ubuntu again"); got != "false false" {
		t.Errorf("windows with ubuntu chosen again: checked, disabled = %s", got)
	}
	checkKeyboard(t, ctx, "order-licenses")
	chooseImage(t, ctx, "5")
	run(t, ctx, "order win-1", chromedp.Click(chromedp.CSS(`#order-licenses input[name="license_ids"][value="3"]`)),
		chromedp.SendKeys(chromedp.CSS("#display_name"), "win-1"))
	shot(t, ctx, dir, "order-licenses")
	// Clicked right after typing the name: the name's change event (on blur, at the
	// button's mousedown) must not move the page under the mouse, or the click is lost.
	run(t, ctx, "submit", chromedp.Click(chromedp.CSS(`#order-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#server-live [data-status="running"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#server-licenses tr[data-license="plesk-web-admin"] [data-license-status="active"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#server-licenses tr[data-license="windows-server-standard"] [data-license-status="active"]`)))
	server := get(t, ctx, "location", chromedp.Location())
	if n := get(t, ctx, "windows' remove button", chromedp.Evaluate[int](
		`document.querySelectorAll('tr[data-license="windows-server-standard"] button').length`)); n != 0 {
		t.Error("the image's license offers its removal")
	}

	run(t, ctx, "add cpanel", chromedp.SetValue(chromedp.CSS("#license_id"), "2"),
		chromedp.Click(chromedp.CSS(`button[data-action="add-license"]`)), chromedp.WaitVisible(chromedp.CSS(".notice.ok")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-license="cpanel-solo"] input[data-license-key]`)))
	key := get(t, ctx, "cpanel's key", chromedp.Evaluate[string](
		`(() => { const k = document.querySelector('tr[data-license="cpanel-solo"] input[data-license-key]'); return k.value + " " + k.readOnly; })()`))
	if key != "CPANEL-7Q2-XK true" {
		t.Errorf("cpanel's key field: %q, want the key, read-only", key)
	}
	run(t, ctx, "the licenses", chromedp.ScrollIntoView(chromedp.CSS("#server-licenses")))
	shot(t, ctx, dir, "server-licenses")
	checkKeyboard(t, ctx, "server-licenses")
	checkNarrow(t, ctx, dir, server, "server-licenses")

	remove := `tr[data-license="plesk-web-admin"] button[data-action="remove-license"]`
	run(t, ctx, "remove plesk", chromedp.Navigate(server), chromedp.Click(chromedp.CSS(remove)),
		chromedp.WaitVisible(chromedp.CSS("button[data-confirm]")))
	q := get(t, ctx, "the question", chromedp.Text(chromedp.CSS("[data-question]")))
	if !strings.HasPrefix(q, "Remove license plesk-web-admin from win-1? Its paid month is not refunded") {
		t.Errorf("the question: %q", q)
	}
	shot(t, ctx, dir, "confirm-license-remove")
	checkKeyboard(t, ctx, "confirm-license-remove")
	run(t, ctx, "cancel", chromedp.Click(chromedp.CSS("a[data-cancel]")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-license="plesk-web-admin"] [data-license-status="active"]`)))
	run(t, ctx, "remove plesk again", chromedp.Click(chromedp.CSS(remove)), chromedp.WaitVisible(chromedp.CSS("button[data-confirm]")),
		chromedp.Click(chromedp.CSS("button[data-confirm]")), chromedp.WaitVisible(chromedp.CSS(".notice.ok")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-license="plesk-web-admin"] [data-license-status="cancelled"]`)))
	if n := get(t, ctx, "plesk's remove button", chromedp.Evaluate[int](
		`document.querySelectorAll('`+remove+`').length`)); n != 0 {
		t.Error("a cancelled license offers its removal")
	}
	run(t, ctx, "the licenses", chromedp.ScrollIntoView(chromedp.CSS("#server-licenses")))
	shot(t, ctx, dir, "server-licenses-removed")
}

// chooseImage chooses an image in the order form as a person does: the select
// changes, and says so (a change event, which SetValue alone does not send).
func chooseImage(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	run(t, ctx, "image "+id, chromedp.SetValue(chromedp.CSS("#source"), "image:"+id))
	get(t, ctx, "image "+id+" changed", chromedp.Evaluate[any](`document.getElementById("source").dispatchEvent(new Event("change", {bubbles: true})); 0`))
}
