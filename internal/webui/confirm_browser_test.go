package webui_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testenv"
)

// TestBrowserConfirmations: in the browser, each destructive action of the console (a
// forced power-off, a reset, a snapshot's restore, a reinstall, a snapshot's deletion,
// an SSH key's deletion, a recipe's deletion, an API token's revocation) asks first: clicking it and then Cancel changes nothing (no
// operation, the snapshot, key, recipe and token still there), clicking it and confirming does
// it. Powering on, which loses nothing, does not ask.
func TestBrowserConfirmations(t *testing.T) {
	ctx := browserTab(t)
	dir := artifactDir(t)
	env := testenv.New(t, testenv.Options{SimTimeScale: 0.02})
	a, email := newAccount(t, env, "en")
	token, _ := apiToken(t, env, a.ID)
	sid := orderedServer(t, env, token, "web-1", 1)
	id, _ := hosting.ParseID(sid)
	p := hosting.Principal{Account: a}
	bg := context.Background()
	kname, key := "laptop", testenv.PublicKey(t)+" ada@laptop"
	if _, err := env.App.Service.CreateSSHKey(bg, p, &kname, &key); err != nil {
		t.Fatal(err)
	}
	rname, script := "nginx", "#!/bin/sh\napt-get install -y nginx\n"
	recipe, err := env.App.Service.CreateRecipe(bg, p, &rname, &script)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := env.App.Service.CreateToken(bg, a.ID, "ci", "read", 0); err != nil {
		t.Fatal(err)
	}
	sname := "before"
	if _, err := env.App.Service.CreateSnapshot(bg, p, id, &sname, false); err != nil {
		t.Fatal(err)
	}
	idle := func() {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			srv, err := env.App.Service.Server(bg, p, hosting.ServerRef{ID: id})
			if err != nil {
				t.Fatal(err)
			}
			if srv.Operation == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("web-1 is still busy with %s", srv.Operation.Type)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// state is what an action may change: the server's operations, its snapshots,
	// the account's keys.
	state := func() string {
		t.Helper()
		ops, total, err := env.App.Service.Operations(bg, p, store.OperationFilter{ServerID: &id}, 1)
		if err != nil {
			t.Fatal(err)
		}
		snaps, err := env.App.Service.Snapshots(bg, p, hosting.ServerRef{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		keys, err := env.App.Service.SSHKeys(bg, p)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range snaps {
			names = append(names, "snapshot:"+s.Name)
		}
		for _, k := range keys {
			names = append(names, "key:"+k.Name)
		}
		recipes, err := env.App.Service.RecipeNames(bg, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recipes {
			names = append(names, "recipe:"+r.Name)
		}
		tokens, err := env.App.Service.AccountTokens(bg, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range tokens {
			names = append(names, "token:"+tk.Name)
		}
		latest := ""
		if len(ops) > 0 {
			latest = string(ops[0].Type)
		}
		return fmt.Sprint(total, " operations, the latest ", latest, "; ", names)
	}
	idle()
	root := env.Root
	server := root + "/servers/" + sid

	run(t, ctx, "sign in", chromedp.Navigate(root+"/signin"), chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), email), chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Submit(chromedp.CSS("#email")), chromedp.WaitVisible(chromedp.CSS(`a[href="/servers"][aria-current="page"]`)))

	ask := func(what, at, button string, wantStatus hosting.Status) {
		t.Helper()
		before := state()
		run(t, ctx, what+": its page", chromedp.Navigate(at), chromedp.WaitVisible(chromedp.CSS(button)))
		run(t, ctx, what+": click", chromedp.Click(chromedp.CSS(button)), chromedp.WaitVisible(chromedp.CSS("button[data-confirm]")))
		shot(t, ctx, dir, "confirm-"+what)
		run(t, ctx, what+": cancel", chromedp.Click(chromedp.CSS("a[data-cancel]")), chromedp.WaitVisible(chromedp.CSS(button)))
		if loc := get(t, ctx, "location", chromedp.Location()); loc != at {
			t.Errorf("%s: Cancel leads to %s, want %s", what, loc, at)
		}
		time.Sleep(200 * time.Millisecond)
		if after := state(); after != before {
			t.Errorf("%s cancelled: %s, was %s", what, after, before)
		}
		run(t, ctx, what+": click again", chromedp.Click(chromedp.CSS(button)), chromedp.WaitVisible(chromedp.CSS("button[data-confirm]")))
		run(t, ctx, what+": confirm", chromedp.Click(chromedp.CSS("button[data-confirm]")), chromedp.WaitVisible(chromedp.CSS(".notice.ok")))
		idle()
		if after := state(); after == before {
			t.Errorf("%s confirmed: nothing changed (%s)", what, after)
		}
		if wantStatus != "" {
			run(t, ctx, what+": the server's status", chromedp.Navigate(server),
				chromedp.WaitVisible(chromedp.CSS(`#server-live [data-status="`+string(wantStatus)+`"]`)))
		}
	}

	ask("off", server, `button[data-action="off"]`, hosting.StatusStopped)
	before := state()
	run(t, ctx, "power on, without a question", chromedp.Navigate(server),
		chromedp.Click(chromedp.CSS(`button[data-action="on"]`)), chromedp.WaitVisible(chromedp.CSS(".notice.ok")))
	idle()
	if after := state(); after == before {
		t.Error("power on: no operation")
	}
	ask("reset", server, `button[data-action="reset"]`, hosting.StatusRunning)
	ask("restore", server, `tr[data-snapshot="before"] button[data-action="restore"]`, "")
	ask("reinstall", server, `button[data-action="reinstall"]`, hosting.StatusRunning)
	ask("snapshot-delete", server, `tr[data-snapshot="before"] button[data-action="delete"]`, "")
	ask("key-delete", root+"/ssh-keys", `tr[data-key="laptop"] button.danger`, "")
	ask("recipe-delete", root+"/recipes/"+fmt.Sprint(recipe.ID), `button[data-action="delete"]`, "")
	ask("token-revoke", root+"/settings/api", `tr[data-token-name="ci"] button.danger`, "")

	if s := state(); !strings.Contains(s, "the latest reinstall") || strings.Contains(s, "snapshot:before") ||
		strings.Contains(s, "key:laptop") || strings.Contains(s, "recipe:nginx") || strings.Contains(s, "token:ci") {
		t.Errorf("at the end the snapshot or the key is still there: %s", s)
	}
}
