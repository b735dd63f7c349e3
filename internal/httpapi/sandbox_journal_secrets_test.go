package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestSandboxJournalKeepsNoTicket: a read-only token is refused a console ticket
// (the console needs power), so the journal, which any token of the account reads,
// must not hand it the ticket a full token was given: the url's ticket is redacted
// there, and the ticket still opens the console for the one it was given to.
func TestSandboxJournalKeepsNoTicket(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t)
	full := env.NewAccount("en", "", "")
	readOnly := env.As(full)
	readOnly.Token = full.NewToken("read")
	srv := runningServer(t, full)
	name := srv["name"].(string)
	readOnly.Do("POST", "/servers/"+name+"/console", nil).Want(t, http.StatusForbidden)

	u, _ := ticket(t, full, name)
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	secret := parsed.Query().Get("ticket")
	random := strings.TrimPrefix(secret, "berthc_")
	check := func(when string) {
		t.Helper()
		r := readOnly.Sandbox("GET", "/requests?limit=1000", nil).Want(t, http.StatusOK)
		for _, s := range []string{secret, random, url.QueryEscape(secret)} {
			if strings.Contains(string(r.Body), s) {
				t.Fatalf("%s, the journal read with a read-only token holds the console ticket: %s", when, r.Body)
			}
		}
		var found bool
		for _, e := range items(t, r) {
			if e["path"] == "/v1/servers/"+name+"/console" && e["method"] == "POST" && e["status"] == 201.0 {
				found = true
				d, _ := e["response_body"].(map[string]any)["data"].(map[string]any)
				if want := strings.TrimSuffix(u, secret) + "[redacted]"; d["url"] != want {
					t.Errorf("%s, the journal's url %v, want %s", when, d["url"], want)
				}
			}
		}
		if !found {
			t.Fatalf("%s, the journal has no entry of the ticket's request: %s", when, r.Body)
		}
	}
	check("before the ticket is used")
	// The ticket opens the console: the redaction is the journal's only.
	con, refused := dialConsole(t, u, nil)
	if refused != nil {
		t.Fatalf("the ticket was refused: %d %s", refused.Status, refused.Body)
	}
	con.out.Wait(t, 0, name+" login: ", 30*time.Second)
	check("after the ticket was used")
}
