package webui_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/testenv"
)

// The browser tier (ARCHITECTURE.md, tier 5): the console in headless Debian
// chromium through chromedp. It needs `chromium` on PATH (apt-get install chromium
// chromium-driver; .ci/run does); without it the test skips loudly.

// browserTimeout bounds the whole browser test.
var browserTimeout = 4 * time.Minute

// findChromium returns the browser to drive, or "".
func findChromium() string {
	if p := os.Getenv("BERTH_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// artifactDir is where the screenshots go: $BERTH_ARTIFACTS/console, else
// artifacts/console at the repository's root (gitignored).
func artifactDir(t *testing.T) string {
	dir := os.Getenv("BERTH_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "..", "artifacts")
	}
	dir, err := filepath.Abs(filepath.Join(dir, "console"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// freshArtifactDir is artifactDir without the pictures of an earlier run.
func freshArtifactDir(t *testing.T) string {
	dir := artifactDir(t)
	old, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	for _, f := range old {
		_ = os.Remove(f)
	}
	return dir
}

// browserTab starts a headless chromium for the test and returns a tab's context.
func browserTab(t *testing.T) context.Context {
	t.Helper()
	path := findChromium()
	if path == "" {
		t.Skip("\n" + strings.Repeat("!", 78) + "\n!! SKIPPED: the console's browser tests need chromium (apt-get install chromium chromium-driver).\n" +
			"!! .ci/run installs it; without it keyboard, 375 px and the Done-when flows are NOT checked.\n" + strings.Repeat("!", 78))
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless,
		chromedp.DisableGPU, chromedp.WindowSize(1280, 900), chromedp.Flag("lang", "en-US"))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancel2)
	// The first call starts the browser and must not carry a timeout (it would stop
	// the browser); the steps after it do.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancel3 := context.WithTimeout(ctx, browserTimeout)
	t.Cleanup(cancel3)
	return ctx
}

func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if testing.Verbose() {
		defer func(start time.Time) { t.Logf("%s: %v", what, time.Since(start)) }(time.Now())
	}
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		failed(t, ctx, what, err)
	}
}

// stepTimeout bounds one step of a browser test.
const stepTimeout = 10 * time.Second

// failed ends the test with where the browser was and a screenshot of it.
func failed(t *testing.T, ctx context.Context, what string, err error) {
	t.Helper()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		_ = os.WriteFile(filepath.Join(artifactDir(t), "failed.png"), buf, 0o644)
	}
	body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 600) : ''`))
	t.Fatalf("%s (at %s): %v\npage text: %s", what, loc, err, body)
}

// get runs one action that answers a value.
func get[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		failed(t, ctx, what, err)
	}
	return v
}

// shot keeps a full-page screenshot of the current page as name.png.
func shot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	buf := get(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// kbCheckJS marks every visible interactive element of the page and returns how
// many there are; kbFocusJS describes the focused one.
const kbCheckJS = `(() => {
  const sel = 'a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), select:not([disabled]), textarea:not([disabled]), summary';
  const els = [...document.querySelectorAll(sel)].filter(e => {
    if (e.closest('[hidden]')) return false;
    const cs = getComputedStyle(e);
    if (cs.display === 'none' || cs.visibility === 'hidden') return false;
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  });
  els.forEach((e, i) => { e.dataset.kb = String(i); });
  return els.map(e => (e.type === 'radio' ? 'radio:' + e.name : '') + '|' + e.tagName + '|' + (e.id || e.name || e.textContent.trim().slice(0, 30)));
})()`

const kbFocusJS = `(() => {
  const e = document.activeElement;
  if (!e || e === document.body) return ['', '', ''];
  const cs = getComputedStyle(e);
  return [e.dataset.kb || '', cs.outlineStyle, cs.outlineWidth];
})()`

// checkKeyboard walks the page with Tab and fails unless every interactive element
// is reached (one radio per group is enough: arrows move within a group) and shows
// a visible focus outline.
func checkKeyboard(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	els := get(t, ctx, "mark "+page, chromedp.Evaluate[[]string](kbCheckJS))
	get(t, ctx, "blur "+page, chromedp.Evaluate[any](`document.activeElement && document.activeElement.blur(); window.scrollTo(0,0); 0`))
	reached := map[string]bool{}
	radioReached := map[string]bool{}
	for range len(els) + 5 {
		run(t, ctx, "tab "+page, chromedp.KeyEvent(kb.Tab))
		got := get(t, ctx, "focus "+page, chromedp.Evaluate[[]string](kbFocusJS))
		if got[0] == "" {
			continue
		}
		if got[1] == "none" || got[2] == "0px" {
			t.Errorf("%s: %s has no visible focus style (outline %s %s)", page, elOf(els, got[0]), got[1], got[2])
		}
		reached[got[0]] = true
		if e := elOf(els, got[0]); strings.HasPrefix(e, "radio:") {
			radioReached[strings.SplitN(e, "|", 2)[0]] = true
		}
	}
	for i, e := range els {
		if reached[fmt.Sprint(i)] {
			continue
		}
		if strings.HasPrefix(e, "radio:") && radioReached[strings.SplitN(e, "|", 2)[0]] {
			continue
		}
		t.Errorf("%s: %s is not reachable by Tab", page, e)
	}
	if len(els) < 3 {
		t.Errorf("%s: only %d interactive elements found; the check is not looking", page, len(els))
	}
	t.Logf("keyboard: %s: %d interactive elements, %d reached by Tab", page, len(els), len(reached))
}

func elOf(els []string, idx string) string {
	var i int
	fmt.Sscan(idx, &i)
	if i < 0 || i >= len(els) {
		return idx
	}
	return els[i]
}

// checkNarrow loads path 375 px wide and fails when anything overflows sideways.
func checkNarrow(t *testing.T, ctx context.Context, dir, path, name string) {
	t.Helper()
	run(t, ctx, "narrow "+name, chromedp.EmulateViewport(375, 812), chromedp.Navigate(path), chromedp.WaitReady(chromedp.CSS("body")))
	width := get(t, ctx, "width "+name, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if width > 375 {
		culprits, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 376).slice(0, 5).map(e => e.tagName + '.' + e.className + '#' + e.id)`))
		t.Errorf("%s is %d px wide at a 375 px viewport: %v", name, width, culprits)
	}
	shot(t, ctx, dir, "375px-"+name)
	run(t, ctx, "wide again", chromedp.EmulateViewport(1280, 900))
}

// TestBrowser is the Done-when list in a real browser.
func TestBrowser(t *testing.T) {
	ctx := browserTab(t)
	dir := freshArtifactDir(t)
	env := testenv.New(t, testenv.Options{SimTimeScale: 0.02})
	a, email := newAccount(t, env, "en")
	root := env.Root

	// Sign in by keyboard alone: type, Tab, type, Enter.
	run(t, ctx, "sign-in page", chromedp.Navigate(root+"/"), chromedp.WaitVisible(chromedp.CSS("#email")))
	shot(t, ctx, dir, "signin")
	checkKeyboard(t, ctx, "signin")
	checkNarrow(t, ctx, dir, root+"/signin", "signin")
	run(t, ctx, "sign-in page again", chromedp.Navigate(root+"/signin"), chromedp.WaitVisible(chromedp.CSS("#email")))
	run(t, ctx, "focus email", chromedp.Focus(chromedp.CSS("#email")))
	run(t, ctx, "type email", chromedp.KeyEvent(email))
	run(t, ctx, "tab", chromedp.KeyEvent(kb.Tab))
	run(t, ctx, "type password", chromedp.KeyEvent(password))
	run(t, ctx, "enter", chromedp.KeyEvent(kb.Enter))
	run(t, ctx, "signed in", chromedp.WaitVisible(chromedp.CSS(`a[href="/servers"][aria-current="page"]`)))

	// A sign-in link whose next leads off-site (what browsers made of the redirects an
	// outside test found: "/<TAB>/host" and "/\host") keeps the browser here.
	for _, next := range []string{"/%09/evil.example", "/./%5Cevil.example"} {
		run(t, ctx, "sign-in link with next="+next, chromedp.Navigate(root+"/signin?next="+next),
			chromedp.WaitVisible(chromedp.CSS(`a[href="/servers"][aria-current="page"]`)))
		if loc := get(t, ctx, "location", chromedp.Location()); loc != root+"/servers" {
			t.Errorf("after /signin?next=%s the browser is at %q, want %s/servers", next, loc, root)
		}
	}

	// Settings → API: a token with read + servers, shown once.
	run(t, ctx, "create token", chromedp.Navigate(root+"/settings/api"), chromedp.WaitVisible(chromedp.CSS("#token_name")),
		chromedp.SendKeys(chromedp.CSS("#token_name"), "deploy"),
		chromedp.Click(chromedp.CSS(`input[name=scopes][value=servers]`)),
		chromedp.Submit(chromedp.CSS("#token_name")),
		chromedp.WaitVisible(chromedp.CSS("#new-token")))
	// Read by script, not by node: a node id found while the answer's document was
	// still loading may be gone by the next call ("No node with given id found").
	secret := get(t, ctx, "the new token", chromedp.Evaluate[string](`document.getElementById("new-token").value`))
	if !strings.HasPrefix(secret, "berth_") {
		t.Fatalf("token %q", secret)
	}
	shot(t, ctx, dir, "settings-api-new-token")
	me := env.Do(secret, "GET", "/me", nil, nil).Want(t, 200).Map(t)["data"].(map[string]any)
	if got := fmt.Sprint(me["scopes"]); got != "[read servers]" {
		t.Fatalf("the token's scopes: %s", got)
	}

	// Things to show on the other pages.
	env.Do(secret, "POST", "/projects", map[string]any{"name": "shop"}, nil).Want(t, 201)
	p := hosting.Principal{Account: a}
	name, key := "laptop", testenv.PublicKey(t)+" ada@laptop"
	if _, err := env.App.Service.CreateSSHKey(context.Background(), p, &name, &key); err != nil {
		t.Fatal(err)
	}
	rname, script := "nginx", "#!/bin/sh\napt-get install -y nginx\n"
	if _, err := env.App.Service.CreateRecipe(context.Background(), p, &rname, &script); err != nil {
		t.Fatal(err)
	}

	// The test orders a server through the API with that token…
	srv := env.Do(secret, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1, "display_name": "web-1",
		"project_id": 1}, nil).Want(t, 201).Map(t)["data"].(map[string]any)
	sname, sid := srv["name"].(string), fmt.Sprint(srv["id"])
	// …and the console's list shows it reaching running (htmx polls while it is busy).
	run(t, ctx, "list shows running", chromedp.Navigate(root+"/servers"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-server="`+sname+`"] [data-status="running"]`)))
	shot(t, ctx, dir, "servers")

	// Power it off from its page.
	run(t, ctx, "server page", chromedp.Navigate(root+"/servers/"+sid), chromedp.WaitVisible(chromedp.CSS(`#server-live [data-status="running"]`)))
	shot(t, ctx, dir, "server-running")
	run(t, ctx, "power off", chromedp.Click(chromedp.CSS(`button[data-action="off"]`)),
		chromedp.WaitVisible(chromedp.CSS("button[data-confirm]")), chromedp.Click(chromedp.CSS("button[data-confirm]")),
		chromedp.WaitVisible(chromedp.CSS(`#server-live [data-status="stopped"]`)))

	// Its CPU chart renders (samples come every 1.2 s at this time scale).
	deadline := time.Now().Add(30 * time.Second)
	for {
		run(t, ctx, "cpu chart", chromedp.Navigate(root+"/servers/"+sid), chromedp.WaitVisible(chromedp.CSS(`svg[data-chart="cpu"]`)))
		n := get(t, ctx, "cpu lines", chromedp.Evaluate[int](`document.querySelectorAll('svg[data-chart="cpu"] polyline').length`))
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the CPU chart shows no line after 30 s")
		}
		time.Sleep(500 * time.Millisecond)
	}
	points := get(t, ctx, "cpu points", chromedp.AttributeValue(chromedp.CSS(`svg[data-chart="cpu"] polyline`), "points")).Value
	if strings.Count(points, ",") < 2 {
		t.Errorf("CPU polyline points %q", points)
	}
	// The rescale options show in_stock and disk_ok.
	if flags := get(t, ctx, "rescale flags", chromedp.Nodes(chromedp.CSSAll(`[data-flag="disk_ok"]`), chromedp.AtLeast(1))); len(flags) == 0 {
		t.Error("no rescale options with in_stock and disk_ok")
	}
	shot(t, ctx, dir, "server-stopped")

	// Every page: a screenshot, keyboard alone, 375 px.
	pages := []struct{ path, name string }{
		{"/servers", "servers"}, {"/servers/new", "order"}, {"/servers/" + sid, "server"},
		{"/servers/" + sid + "/delete", "server-delete"}, {"/ssh-keys", "ssh-keys"}, {"/projects", "projects"},
		{"/recipes", "recipes"}, {"/recipes/1", "recipe"}, {"/billing", "billing"}, {"/settings", "settings"},
		{"/settings/api", "settings-api"},
	}
	for _, pg := range pages {
		run(t, ctx, pg.name, chromedp.Navigate(root+pg.path))
		run(t, ctx, pg.name+" main", chromedp.WaitVisible(chromedp.CSS("main")))
		shot(t, ctx, dir, pg.name)
		checkKeyboard(t, ctx, pg.name)
		checkNarrow(t, ctx, dir, root+pg.path, pg.name)
	}

	// A form submits by Enter: a project.
	run(t, ctx, "project by Enter", chromedp.Navigate(root+"/projects"), chromedp.WaitVisible(chromedp.CSS("#project_name")),
		chromedp.Focus(chromedp.CSS("#project_name")), chromedp.KeyEvent("web"), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`.notice.ok`)))

	// Revoke the token and the API answers 401.
	run(t, ctx, "revoke", chromedp.Navigate(root+"/settings/api"),
		chromedp.Click(chromedp.CSS(`tr[data-token] button.danger`)), chromedp.WaitVisible(chromedp.CSS("button[data-confirm]")),
		chromedp.Click(chromedp.CSS("button[data-confirm]")), chromedp.WaitVisible(chromedp.CSS(`.notice.ok`)))
	env.Do(secret, "GET", "/me", nil, nil).Want(t, 401)

	// A German account sees German pages and German API messages.
	token, _ := apiToken(t, env, a.ID)
	run(t, ctx, "German", chromedp.Navigate(root+"/settings"), chromedp.WaitVisible(chromedp.CSS("#language")),
		chromedp.SetValue(chromedp.CSS("#language"), "de"), chromedp.Submit(chromedp.CSS("#language")),
		chromedp.WaitVisible(chromedp.CSS(`html[lang="de"]`)))
	run(t, ctx, "German billing", chromedp.Navigate(root+"/billing"), chromedp.WaitVisible(chromedp.CSS("main")))
	nav := get(t, ctx, "German nav", chromedp.Text(chromedp.CSS(`header nav`)))
	if !strings.Contains(nav, "Abrechnung") || !strings.Contains(nav, "Einstellungen") {
		t.Errorf("German navigation: %q", nav)
	}
	shot(t, ctx, dir, "de-billing")
	r := env.Do(token, "POST", "/servers", map[string]any{"plan_id": 1}, nil).Want(t, 422)
	if msg := fmt.Sprint(r.Map(t)["message"]); !strings.Contains(msg, "Dieses Feld ist erforderlich.") {
		t.Errorf("German API message: %q", msg)
	}
	t.Logf("screenshots in %s", dir)
}
