package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/berthhq/berth/internal/testenv"
)

// terminalTextJS is what the terminal shows, its rows joined by newlines (xterm.js
// draws spaces as no-break spaces).
const terminalTextJS = `(() => {
  const rows = document.querySelector('#terminal .xterm-rows');
  return rows ? [...rows.children].map(r => r.textContent.replace(/\u00a0/g, ' ').trimEnd()).join('\n') : '';
})()`

// TestBrowserServerConsole: the console page shows the simulated server's login
// prompt in its terminal and echoes the keys typed there (issue 17).
func TestBrowserServerConsole(t *testing.T) {
	ctx := browserTab(t)
	dir := artifactDir(t)
	env := testenv.New(t, testenv.Options{SimTimeScale: 0.02})
	a, email := newAccount(t, env, "en")
	root := env.Root
	id, name := runningServer(t, env, a.ID)

	run(t, ctx, "sign in", chromedp.Navigate(root+"/signin"), chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), email), chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Submit(chromedp.CSS("#email")), chromedp.WaitVisible(chromedp.CSS(`a[href="/servers"][aria-current="page"]`)))
	run(t, ctx, "the server page links its console", chromedp.Navigate(root+"/servers/"+id),
		chromedp.WaitVisible(chromedp.CSS(`#server-live [data-status="running"]`)), chromedp.Click(chromedp.CSS(`a[data-console]`)),
		chromedp.WaitVisible(chromedp.CSS(`#terminal[data-connected="true"] .xterm-rows`)))

	// waitTerminal waits until the terminal shows want after what it showed before.
	waitTerminal := func(what, want string) string {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			text := get(t, ctx, what, chromedp.Evaluate[string](terminalTextJS))
			if strings.Contains(text, want) {
				return text
			}
			if time.Now().After(deadline) {
				t.Logf("terminal:\n%s", text)
				failed(t, ctx, what, context.DeadlineExceeded)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	text := waitTerminal("the login prompt", name+" login:")
	if !strings.Contains(text, "Linux version") {
		t.Errorf("the terminal shows no boot lines:\n%s", text)
	}
	if state := get(t, ctx, "state", chromedp.Text(chromedp.CSS("#console-state"))); state != "Connected." {
		t.Errorf("state %q", state)
	}

	// Keys typed in the terminal go to the server, which echoes them.
	run(t, ctx, "type", chromedp.Click(chromedp.CSS("#terminal .xterm-screen")), chromedp.KeyEvent("root", rawKeyDown))
	waitTerminal("the echo", name+" login: root")
	run(t, ctx, "enter", chromedp.KeyEvent(kb.Enter))
	waitTerminal("the password prompt", "Password:")
	shot(t, ctx, dir, "server-console")
	checkNarrow(t, ctx, dir, root+"/servers/"+id+"/console", "server-console")
	// xterm.js sizes its cells with <style> elements it adds: the page's CSP lets them apply.
	if styled := get(t, ctx, "terminal styles", chromedp.Evaluate[bool](`[...document.querySelectorAll('style')].some(s => s.sheet && s.sheet.cssRules.length > 0)`)); !styled {
		t.Errorf("no style element of xterm.js applies: the page's CSP blocks them")
	}
}

// rawKeyDown has a key press start as a keyboard's does, with a raw key-down before
// the character. (chromedp.KeyEvent's key-down carries the key, which Chromium makes
// a character of too: a terminal, which reads both, would get every key twice.)
func rawKeyDown(p *input.DispatchKeyEventParams) {
	if p.Type == input.DispatchKeyEventTypeKeyDown {
		p.Type = input.DispatchKeyEventTypeRawKeyDown
	}
}
