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
