package webui_test

import (
	"context"
	"path"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/internal/testenv"
)

// TestBrowserVolumes: in the browser, a volume is created from the Volumes page after
// its price is shown, attached to a running server of its location, grown after its
// new price is shown, detached and deleted after the confirmation page; its page
// follows each operation to its end by itself (htmx). The pages work by keyboard and
// 375 px wide. A server ordered with it through the order form shows it attached.
func TestBrowserVolumes(t *testing.T) {
	ctx := browserTab(t)
	dir := artifactDir(t)
	env := testenv.New(t)
	a, email := newAccount(t, env, "en")
	token, _ := apiToken(t, env, a.ID)
	sid := orderedServer(t, env, token, "web-1", 1)
	root := env.Root

	run(t, ctx, "sign in", chromedp.Navigate(root+"/signin"), chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), email), chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Submit(chromedp.CSS("#email")), chromedp.WaitVisible(chromedp.CSS(`a[href="/servers"][aria-current="page"]`)))
	run(t, ctx, "the Volumes page", chromedp.Click(chromedp.CSS(`header nav a[href="/volumes"]`)),
		chromedp.WaitVisible(chromedp.CSS("#volume_name")))
	run(t, ctx, "fill the form", chromedp.SendKeys(chromedp.CSS("#volume_name"), "pgdata"),
		chromedp.SetValue(chromedp.CSS("#volume_size"), "50"), chromedp.SetValue(chromedp.CSS("#volume_format"), "ext4"),
		chromedp.Submit(chromedp.CSS("#volume_name")), chromedp.WaitVisible(chromedp.CSS("[data-price]")))
	wantPrice(t, ctx, "0.005 EUR an hour, at most 2.20 EUR a month")
	shot(t, ctx, dir, "volume-review")
	run(t, ctx, "create it", chromedp.Click(chromedp.CSS("button[data-confirm]")),
		chromedp.WaitVisible(chromedp.CSS(`#volume-live [data-status="available"]`)))
	vol := get(t, ctx, "location", chromedp.Location())

	run(t, ctx, "attach it", chromedp.SetValue(chromedp.CSS("#attach_server"), sid),
		chromedp.Click(chromedp.CSS(`button[data-action="attach"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#volume-live [data-attached="`+sid+`"] a`)))
	shot(t, ctx, dir, "volume")
	checkKeyboard(t, ctx, "volume")

	run(t, ctx, "grow it", chromedp.SetValue(chromedp.CSS("#resize_size"), "100"),
		chromedp.Click(chromedp.CSS(`button[data-action="resize"]`)), chromedp.WaitVisible(chromedp.CSS("[data-price]")))
	wantPrice(t, ctx, "0.01 EUR an hour, at most 4.40 EUR a month")
	run(t, ctx, "confirm the growth", chromedp.Click(chromedp.CSS("button[data-confirm]")),
		chromedp.WaitVisible(chromedp.CSS(`#volume-live [data-size="100"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#volume-live [data-operation]`)))

	run(t, ctx, "the server's page lists it", chromedp.Navigate(root+"/servers/"+sid),
		chromedp.Click(chromedp.CSS(`tr[data-volume="pgdata"] a`)), chromedp.WaitVisible(chromedp.CSS(`button[data-action="detach"]`)))
	if loc := get(t, ctx, "location", chromedp.Location()); loc != vol {
		t.Errorf("the server's page links to %s, want %s", loc, vol)
	}
	run(t, ctx, "detach it", chromedp.Click(chromedp.CSS(`button[data-action="detach"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#volume-live [data-attached=""]`)), chromedp.WaitVisible(chromedp.CSS("#attach_server")))

	checkVolumeList(t, ctx, dir, root)
	checkNarrow(t, ctx, dir, vol, "volume")
	orderWithVolume(t, ctx, dir, root, vol)

	run(t, ctx, "delete it", chromedp.Navigate(vol+"/delete"), chromedp.WaitVisible(chromedp.CSS("button.danger")))
	shot(t, ctx, dir, "volume-delete")
	run(t, ctx, "confirm the deletion", chromedp.Click(chromedp.CSS("button.danger")),
		chromedp.WaitVisible(chromedp.CSS(".notice.ok")))
	if text := get(t, ctx, "the list", chromedp.Text(chromedp.CSS("main"))); !strings.Contains(text, "Volume pgdata was deleted.") ||
		!strings.Contains(text, "No volumes yet.") {
		t.Errorf("after the deletion: %q", text)
	}
}

// orderWithVolume orders db-1 through the order form with the detached pgdata ticked
// and automount: the new server's page lists pgdata once it is attached, refreshing
// by itself. Then pgdata is detached again from its page.
func orderWithVolume(t *testing.T, ctx context.Context, dir, root, vol string) {
	t.Helper()
	box := `#order-volumes input[name="volume_ids"][value="` + path.Base(vol) + `"]`
	run(t, ctx, "the order form", chromedp.Navigate(root+"/servers/new"), chromedp.WaitVisible(chromedp.CSS(box)))
	run(t, ctx, "tick pgdata", chromedp.Click(chromedp.CSS(box)), chromedp.Click(chromedp.CSS(`#order-volumes input[name="automount"]`)),
		chromedp.SendKeys(chromedp.CSS("#display_name"), "db-1"))
	shot(t, ctx, dir, "order-volumes")
	run(t, ctx, "order db-1", chromedp.Click(chromedp.CSS(`#order-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#server-live [data-status="running"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#server-volumes tr[data-volume="pgdata"] [data-status="available"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#server-volumes [data-operation]`)))
	if h1 := get(t, ctx, "the server's name", chromedp.Text(chromedp.CSS("h1"))); !strings.HasPrefix(h1, "db-1") {
		t.Errorf("after the order the page is %q's, want db-1's", h1)
	}
	shot(t, ctx, dir, "server-volumes")
	run(t, ctx, "pgdata's page", chromedp.Click(chromedp.CSS(`#server-volumes tr[data-volume="pgdata"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`button[data-action="detach"]`)))
	run(t, ctx, "detach it again", chromedp.Click(chromedp.CSS(`button[data-action="detach"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#volume-live [data-attached=""]`)))
}

// checkVolumeList checks the list's row of the detached 100 GB pgdata, and the page
// by keyboard and 375 px wide.
func checkVolumeList(t *testing.T, ctx context.Context, dir, root string) {
	t.Helper()
	run(t, ctx, "the list", chromedp.Navigate(root+"/volumes"), chromedp.WaitVisible(chromedp.CSS(`tr[data-volume="pgdata"]`)))
	row := get(t, ctx, "its row", chromedp.Evaluate[string](`document.querySelector('tr[data-volume="pgdata"]').innerText.replace(/\s+/g, ' ')`))
	for _, want := range []string{"100 GB", "fsn1 (Falkenstein)", "not attached", "available", "ext4"} {
		if !strings.Contains(row, want) {
			t.Errorf("row %q lacks %q", row, want)
		}
	}
	shot(t, ctx, dir, "volumes")
	checkKeyboard(t, ctx, "volumes")
	checkNarrow(t, ctx, dir, root+"/volumes", "volumes")
}

// wantPrice fails unless the page's price reads want.
func wantPrice(t *testing.T, ctx context.Context, want string) {
	t.Helper()
	if got := get(t, ctx, "the price", chromedp.Text(chromedp.CSS("[data-price]"))); got != want {
		t.Errorf("price %q, want %q", got, want)
	}
}
