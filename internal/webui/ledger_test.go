package webui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/testenv"
)

// TestConsoleLedgerNames: the billing page names a server by its display name and a
// volume by its name as they are now; an entry of a server deleted since keeps the
// name it was written with, the machine name.
func TestConsoleLedgerNames(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	token, _ := apiToken(t, env, a.ID)
	sid := orderedServer(t, env, token, "web-1", 1)
	gid := orderedServer(t, env, token, "gone-1", 1)
	p := hosting.Principal{Account: a}
	machine := func(id string) string {
		n, _ := hosting.ParseID(id)
		srv, err := env.App.Service.Server(context.Background(), p, hosting.ServerRef{ID: n})
		if err != nil {
			t.Fatal(err)
		}
		return srv.Name
	}
	web, gone := machine(sid), machine(gid)
	vol := createVolume(t, v, url.Values{"name": {"pgdata"}, "size_gb": {"10"}, "place": {"location:1"}})
	v.get(vol)
	wantStatus(t, v.post(vol+"/rename", url.Values{"name": {"pg-main"}}), http.StatusSeeOther)
	env.Do(token, "DELETE", "/servers/"+gid, nil, nil).Want(t, http.StatusNoContent)
	n, _ := hosting.ParseID(gid)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := env.App.Service.Server(context.Background(), p, hosting.ServerRef{ID: n}); hosting.IsCode(err, hosting.CodeNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("gone-1 is not deleted after 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}

	page := v.get("/billing")
	wantStatus(t, page, http.StatusOK)
	wantText(t, page, "Server web-1: the hour from", "Volume pg-main: the hour from", fmt.Sprintf("Server %s: the hour from", gone))
	for _, not := range []string{"Server " + web + ":", "Volume pgdata:"} {
		if strings.Contains(page.body, not) {
			t.Errorf("the ledger still reads %q", not)
		}
	}
}

// TestConsoleLedgerPages: the billing page shows 50 transactions a page, newest
// first, with links to the pages beside it (none at all while there is one page).
func TestConsoleLedgerPages(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	ctx := context.Background()
	if _, total, err := env.App.Service.Transactions(ctx, hosting.Principal{Account: a}, 1); err != nil || total > 1 {
		t.Fatalf("a new account's ledger: %d transactions, %v", total, err)
	}
	if one := v.get("/billing"); strings.Contains(one.body, `class="pager"`) {
		t.Error("a ledger of one page has a pager")
	}
	// Its first top-up, if any, and 59 more: 60, the newest 50 on page 1.
	_, total, _ := env.App.Service.Transactions(ctx, hosting.Principal{Account: a}, 1)
	for i := total; i < 60; i++ {
		if _, err := env.App.Service.AddCredit(ctx, a.ID, hosting.Money(10000), fmt.Sprintf("Top-up %02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	first := v.get("/billing")
	wantText(t, first, "Page 1 of 2", "Top-up 59", "Top-up 10", `<a href="/billing?page=2" rel="next">Older →</a>`)
	if strings.Contains(first.body, "Top-up 09") || strings.Contains(first.body, `rel="prev"`) {
		t.Error("page 1 shows a 51st entry or a link to a page before it")
	}
	second := v.get("/billing?page=2")
	wantText(t, second, "Page 2 of 2", "Top-up 09", `<a href="/billing?page=1" rel="prev">← Newer</a>`)
	if strings.Contains(second.body, "Top-up 10") || strings.Contains(second.body, `rel="next"`) {
		t.Error("page 2 shows an entry of page 1 or a link to a page after it")
	}
}
