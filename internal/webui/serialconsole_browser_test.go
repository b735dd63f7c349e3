package webui_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/coder/websocket"

	"github.com/berthhq/berth/internal/i18n"
	"github.com/berthhq/berth/internal/ops"
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

// TestBrowserServerConsoleFull: past the cap on open consoles (issue 26) the console
// page says so, in the account's language, also when the cap was reached between its
// ticket and its connection: a browser's WebSocket shows nothing of the refusal, so
// the page asks for a ticket again, and shows why that is refused.
func TestBrowserServerConsoleFull(t *testing.T) {
	ctx := browserTab(t)
	env := testenv.New(t, testenv.Options{SimTimeScale: 0.02, Consoles: ops.ConsoleCaps{PerServer: 1}})
	a, email := newAccount(t, env, "de")
	root := env.Root
	id, _ := runningServer(t, env, a.ID)
	token, _ := apiToken(t, env, a.ID)
	full := i18n.MustLoad().T("de", "error.console_server_full", map[string]any{"count": 1})

	run(t, ctx, "sign in", chromedp.Navigate(root+"/signin"), chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), email), chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Submit(chromedp.CSS("#email")), chromedp.WaitVisible(chromedp.CSS(`a[href="/servers"][aria-current="page"]`)))

	// The page's ticket is held on its way to the page; meanwhile an API client takes
	// the one place; then the page gets its ticket and connects.
	ectx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	paused := chromedp.Events(ectx, fetch.RequestPaused)
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{
		{URLPattern: "*/console/ticket", RequestStage: fetch.RequestStageResponse}}}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "open the console page", chromedp.Navigate(root+"/servers/"+id+"/console"))
	var api *websocket.Conn
	statuses := []int64{}
	for ev, err := range paused {
		if err != nil {
			t.Fatalf("the page's tickets answered %v, then: %v (want a second one after its refused connection)", statuses, err)
		}
		statuses = append(statuses, ev.ResponseStatusCode)
		if api == nil {
			u := env.Do(token, "POST", "/servers/"+id+"/console", nil, nil).Want(t, http.StatusCreated).Map(t)["data"].(map[string]any)["url"].(string)
			var err error
			if api, _, err = websocket.Dial(ctx, u, nil); err != nil {
				t.Fatalf("the API client's console: %v", err)
			}
			defer api.CloseNow()
		}
		if _, err := chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID}); err != nil {
			t.Fatal(err)
		}
		if len(statuses) == 2 {
			break
		}
	}
	if _, err := chromedp.Call(ctx, fetch.Disable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if want := []int64{http.StatusCreated, http.StatusConflict}; !slices.Equal(statuses, want) {
		t.Errorf("the page's tickets answered %v, want %v (one before the place was taken, one after its refused connection)", statuses, want)
	}
	run(t, ctx, "the page says the console is full", chromedp.WaitVisible(chromedp.CSS(`#console-state.error`)))
	if state := get(t, ctx, "state", chromedp.Text(chromedp.CSS("#console-state"))); state != full {
		t.Errorf("state %q, want %q", state, full)
	}

	// Once the API client leaves, Connect again connects.
	_ = api.Close(websocket.StatusNormalClosure, "")
	// The place frees once the server has seen the close: until then a click may be
	// refused again. A click that connects disables the button, so each round looks
	// first whether the page is connected, and clicks only an enabled button.
	deadline := time.Now().Add(30 * time.Second)
	for !get(t, ctx, "connected", chromedp.Evaluate[bool](`document.getElementById("terminal").dataset.connected === "true"`)) {
		if time.Now().After(deadline) {
			failed(t, ctx, "connect once the place is free", context.DeadlineExceeded)
		}
		if get(t, ctx, "connect enabled", chromedp.Evaluate[bool](`!document.getElementById("console-connect").disabled`)) {
			run(t, ctx, "connect again", chromedp.Click(chromedp.CSS("#console-connect")))
		}
		time.Sleep(300 * time.Millisecond)
	}
}
