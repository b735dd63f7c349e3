package webui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/berthhq/berth/internal/ops"
)

// TestBrowserPasswordReset: in a real browser, "Forgot your password?" on the sign-in
// page, the email typed, the mailed link opened, a new password set by keyboard, and
// the sign-in with it; each page reachable by Tab, none wider than a phone.
func TestBrowserPasswordReset(t *testing.T) {
	ctx := browserTab(t)
	dir := artifactDir(t)
	env, srv, _ := resetEnv(t)
	_, email := newAccount(t, env, "en")
	root := env.Root

	run(t, ctx, "sign-in page", chromedp.Navigate(root+"/signin"), chromedp.WaitVisible(chromedp.CSS(`a[href="/password-reset"]`)))
	run(t, ctx, "forgot", chromedp.Click(chromedp.CSS(`a[href="/password-reset"]`)), chromedp.WaitVisible(chromedp.CSS("#email")))
	shot(t, ctx, dir, "password-reset")
	checkKeyboard(t, ctx, "password-reset")
	checkNarrow(t, ctx, dir, root+"/password-reset", "password-reset")
	run(t, ctx, "reset page again", chromedp.Navigate(root+"/password-reset"), chromedp.WaitVisible(chromedp.CSS("#email")))
	run(t, ctx, "type email", chromedp.Focus(chromedp.CSS("#email")), chromedp.KeyEvent(email), chromedp.KeyEvent(kb.Enter))
	run(t, ctx, "sent", chromedp.WaitVisible(chromedp.CSS("[data-reset-sent]")))
	shot(t, ctx, dir, "password-reset-sent")

	token := resetToken(t, srv.Wait(t, 1, time.Minute)[0])
	link := root + ops.PasswordResetPath + token
	run(t, ctx, "the mailed link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#new_password")))
	shot(t, ctx, dir, "password-reset-set")
	checkKeyboard(t, ctx, "password-reset-set")
	checkNarrow(t, ctx, dir, link, "password-reset-set")
	run(t, ctx, "the link again", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#new_password")))
	run(t, ctx, "type the new password", chromedp.Focus(chromedp.CSS("#new_password")), chromedp.KeyEvent("a brand new password"),
		chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent("a brand new password"), chromedp.KeyEvent(kb.Enter))
	run(t, ctx, "back to sign in", chromedp.WaitVisible(chromedp.CSS(`form[action="/signin"] #email`)))
	text := get(t, ctx, "done text", chromedp.Evaluate[string](`document.body.innerText`))
	if !strings.Contains(text, "Your password was changed") {
		t.Errorf("after the reset the page says:\n%s", text)
	}
	shot(t, ctx, dir, "password-reset-done")
	run(t, ctx, "sign in", chromedp.Focus(chromedp.CSS("#email")), chromedp.KeyEvent(email), chromedp.KeyEvent(kb.Tab),
		chromedp.KeyEvent("a brand new password"), chromedp.KeyEvent(kb.Enter))
	run(t, ctx, "signed in", chromedp.WaitVisible(chromedp.CSS(`a[href="/servers"][aria-current="page"]`)))
}
