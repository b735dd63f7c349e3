package webui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/testenv"
)

// runningServer orders a server through the API for an account and waits until it
// runs; it returns its id and name.
func runningServer(t *testing.T, env *testenv.Env, accountID int64) (string, string) {
	t.Helper()
	token, _ := apiToken(t, env, accountID)
	srv := env.Do(token, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}, nil).
		Want(t, http.StatusCreated).Map(t)["data"].(map[string]any)
	id, name := fmt.Sprint(srv["id"]), srv["name"].(string)
	env.As(&testenv.Account{ID: accountID, Token: token}).WaitStatusEvery(t, name, "running", 30*time.Second, 20*time.Millisecond)
	return id, name
}

// The console page and its ticket, without a browser: the session (and its CSRF
// token) gets the ticket, no API token.
func TestServerConsoleTicket(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	id, name := runningServer(t, env, a.ID)

	p := v.get("/servers/" + id)
	wantStatus(t, p, http.StatusOK)
	if !strings.Contains(p.body, `href="/servers/`+id+`/console" data-console`) {
		t.Errorf("the server page does not link its console")
	}
	req, _ := http.NewRequest("GET", env.Root+"/servers/"+id+"/console", nil)
	resp, err := v.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	if want := "connect-src 'self' ws://" + strings.TrimPrefix(env.Root, "http://") + ";"; !strings.Contains(csp, want) ||
		!strings.Contains(csp, "script-src 'self';") {
		t.Errorf("console page CSP %q: want %q and scripts from 'self' only", csp, want)
	}
	p = v.get("/servers/" + id + "/console")
	wantStatus(t, p, http.StatusOK)
	if !strings.Contains(p.body, `data-ticket="/servers/`+id+`/console/ticket"`) || !strings.Contains(p.body, `src="/static/terminal.js"`) {
		t.Errorf("console page: %.600s", p.body)
	}

	ticket := func(path string, form url.Values) (int, map[string]any) {
		t.Helper()
		p := v.post(path, form)
		var m map[string]any
		if err := json.Unmarshal([]byte(p.body), &m); err != nil {
			t.Fatalf("POST %s: %d %q is not JSON", path, p.status, p.body)
		}
		return p.status, m
	}
	status, m := ticket("/servers/"+id+"/console/ticket", nil)
	if status != http.StatusCreated || !strings.HasPrefix(fmt.Sprint(m["url"]), "ws://"+strings.TrimPrefix(env.Root, "http://")+"/v1/servers/"+id+"/console?ticket=berthc_") {
		t.Fatalf("ticket: %d %v", status, m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, m["url"].(string), nil)
	if err != nil {
		t.Fatalf("dial the console's ticket: %v", err)
	}
	defer ws.CloseNow()
	var got strings.Builder
	for !strings.Contains(got.String(), name+" login: ") {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v; got %q", err, got.String())
		}
		got.Write(b)
	}

	// Without the CSRF token: refused, no ticket.
	if p := v.post("/servers/"+id+"/console/ticket", url.Values{"csrf": {"wrong"}}); p.status != http.StatusForbidden {
		t.Errorf("ticket without the CSRF token: %d", p.status)
	}
	// Another account's server: 404, page and ticket alike.
	b := env.NewAccount("en", "100", "")
	otherID, _ := runningServer(t, env, b.ID)
	wantStatus(t, v.get("/servers/"+otherID+"/console"), http.StatusNotFound)
	v.get("/servers/" + id) // a fresh CSRF token
	if status, m := ticket("/servers/"+otherID+"/console/ticket", nil); status != http.StatusNotFound || m["code"] != "not_found" {
		t.Errorf("ticket of another account's server: %d %v", status, m)
	}
	// A stopped server: the API's 422, its message for the page to show.
	token, _ := apiToken(t, env, a.ID)
	env.Do(token, "POST", "/servers/"+id+"/power", map[string]any{"action": "off"}, nil).Want(t, http.StatusOK)
	deadline := time.Now().Add(30 * time.Second)
	for env.Do(token, "GET", "/servers/"+id, nil, nil).Map(t)["data"].(map[string]any)["status"] != "stopped" {
		if time.Now().After(deadline) {
			t.Fatal("the server did not stop")
		}
		time.Sleep(20 * time.Millisecond)
	}
	status, m = ticket("/servers/"+id+"/console/ticket", nil)
	if status != http.StatusUnprocessableEntity || m["code"] != string(hosting.CodeValidationFailed) || !strings.Contains(fmt.Sprint(m["message"]), "running") {
		t.Errorf("ticket of a stopped server: %d %v", status, m)
	}
	if p := v.get("/servers/" + id); strings.Contains(p.body, "data-console") {
		t.Errorf("a stopped server's page links a console")
	}
}
