package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/berthhq/berth/api"
)

// hostile is what anyone with a token can name a server, a key or a project, or a
// server can say in an error: it retitles the terminal (OSC 0, ended by BEL), clears
// it (CSI 2J), colours it with the one-byte C1 CSI, turns the line around (RLO),
// and holds DEL and a carriage return.
const hostile = "a\x1b]0;owned\x07\x1b[2Jb\u009b31mc\u202ed\x7fe\rf"

// fakeBerth is an HTTP server answering each "METHOD /v1/path" of routes with its
// status and the JSON of its body.
func fakeBerth(t *testing.T, routes map[string]func() (int, any)) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	for pattern, answer := range routes {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			status, body := answer()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(body)
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func ok(data any) func() (int, any) { return func() (int, any) { return http.StatusOK, data } }

// TestHostileAnswers: names, statuses and error messages from the API reach the
// terminal with every control character escaped (as \x1b in tables and messages, in
// JSON's and YAML's own escapes in -o json and -o yaml), never raw.
func TestHostileAnswers(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	srv := api.Server{ID: 1, Name: "server-abcdef", DisplayName: hostile, Status: hostile, LocationID: 1, PlanID: 1, ImageID: 1,
		IPv4: &[]string{hostile}[0], CreatedAt: at}
	op := api.Operation{ID: 5, Type: hostile, ServerID: &[]int64{1}[0], Status: "running", StartedAt: at}
	failed := op
	failed.Status, failed.Error, failed.FinishedAt = "error", &[]string{hostile}[0], &at
	tk := api.Ticket{ID: 1, Subject: hostile, Status: hostile, Priority: "normal", CreatedAt: at, UpdatedAt: at,
		Messages: []api.TicketMessage{{ID: 1, Author: "staff", AuthorName: hostile, Body: hostile + "\n" + hostile, CreatedAt: at,
			Attachments: []api.Attachment{{ID: 1, Filename: hostile, ContentType: hostile, Size: 1}}}}}
	b := fakeBerth(t, map[string]func() (int, any){
		"GET /v1/tickets":   ok(api.Page[api.Ticket]{Data: []api.Ticket{tk}, Meta: api.PageMeta{CurrentPage: 1, LastPage: 1, PerPage: 50, Total: 1}}),
		"GET /v1/tickets/1": ok(api.One[api.Ticket]{Data: tk}),
		"GET /v1/me": func() (int, any) {
			return http.StatusUnauthorized, api.Error{Message: hostile, Code: "unauthenticated"}
		},
		"POST /v1/projects": func() (int, any) {
			return http.StatusUnprocessableEntity, api.Error{Message: hostile, Code: "validation_failed", Errors: map[string][]string{"name" + hostile: {hostile}}}
		},
		"GET /v1/projects": ok(api.List[api.Project]{Data: []api.Project{{ID: 1, Name: hostile, CreatedAt: at}}}),
		"GET /v1/ssh-keys": ok(api.List[api.SSHKey]{Data: []api.SSHKey{{ID: 1, Name: hostile, PublicKey: hostile, Fingerprint: hostile, CreatedAt: at}}}),
		"GET /v1/locations": ok(api.List[api.Location]{Data: []api.Location{{ID: 1, Name: hostile, City: hostile, Country: hostile,
			Plans: []api.Plan{{ID: 1, Name: hostile}}, Images: []api.Image{{ID: 1, Name: hostile, OS: hostile}}}}}),
		"GET /v1/servers":               ok(api.List[api.Server]{Data: []api.Server{srv}}),
		"GET /v1/servers/server-abcdef": ok(api.One[api.Server]{Data: srv}),
		"GET /v1/billing":               ok(api.One[api.Billing]{Data: api.Billing{Credit: hostile, Currency: hostile}}),
		"GET /v1/operations/5": func() func() (int, any) {
			n := 0
			return func() (int, any) { // running when first asked, then failed
				n++
				if n == 1 {
					return http.StatusOK, api.One[api.Operation]{Data: op}
				}
				return http.StatusOK, api.One[api.Operation]{Data: failed}
			}
		}(),
	})
	c := newCLI(t, "BERTH_URL="+b.URL+"/v1", "BERTH_TOKEN=berth_x")
	const (
		text  = `a\x1b]0;owned\x07\x1b[2Jb\u009b31mc\u202ed\x7fe\x0df`
		jsonE = `a\u001b]0;owned\u0007\u001b[2Jb\u009b31mc\u202ed\u007fe\rf`
		yamlE = `a\e]0;owned\a\e[2Jb\x9B31mc` // then RLO as it is (YAML has no escape it must use for it)
	)
	for _, tt := range []struct {
		args []string
		want string // in stdout and stderr together
		bidi bool   // U+202E may be shown as it is
	}{
		{args: []string{"me"}, want: "berth: " + text + " (401 unauthenticated)"},
		{args: []string{"project", "create", "web"}, want: "  name" + text + ": " + text},
		{args: []string{"project", "list"}, want: text},
		{args: []string{"project", "list", "-o", "json"}, want: jsonE},
		{args: []string{"project", "list", "-o", "yaml"}, want: yamlE, bidi: true},
		{args: []string{"ssh-key", "list", "-o", "wide"}, want: text},
		{args: []string{"ssh-key", "describe", hostile}, want: "name:         " + text},
		{args: []string{"project", "describe", "1", "-o", "yaml"}, want: yamlE, bidi: true},
		{args: []string{"project", "describe", "nope" + hostile}, want: `no project "nope`}, // %q escapes it
		{args: []string{"location", "list", "-o", "wide"}, want: text},
		{args: []string{"plan", "list"}, want: text},
		{args: []string{"image", "list"}, want: text},
		{args: []string{"server", "list", "-o", "wide"}, want: text},
		{args: []string{"server", "describe", "server-abcdef"}, want: "display_name:  " + text},
		{args: []string{"server", "list", "-o", "json"}, want: jsonE},
		{args: []string{"server", "describe", "server-abcdef", "-o", "yaml"}, want: yamlE, bidi: true},
		{args: []string{"billing", "show", "-q"}, want: text},
		{args: []string{"operation", "wait", "5"}, want: "ended in error: " + text},
		{args: []string{"server", "ssh", "server-abcdef"}, want: "not an IP address: " + text},
		{args: []string{"__complete", "server", "describe", ""}, want: text},
		{args: []string{"ticket", "list"}, want: text},
		{args: []string{"ticket", "describe", "1"}, want: "--- staff (" + text + "), "},
		{args: []string{"ticket", "describe", "1"}, want: "\n" + text + "\n" + text + "\nattachment 1:  " + text},
		{args: []string{"ticket", "describe", "1", "-o", "json"}, want: jsonE},
	} {
		r := c.run(tt.args...)
		out := r.stdout + r.stderr
		if !strings.Contains(out, tt.want) {
			t.Errorf("berth %q: lacks %q:\n%q", tt.args, tt.want, out)
		}
		for i, ch := range out {
			if ch < 0x20 && ch != '\n' && ch != '\t' || ch >= 0x7f && ch <= 0x9f || ch == 0x202e && !tt.bidi || ch == utf8.RuneError {
				t.Errorf("berth %q: raw %U at byte %d:\n%q", tt.args, ch, i, out)
				break
			}
		}
	}

	// -o json says exactly what the API said, escaped in JSON's own way.
	var got []api.Project
	if err := json.Unmarshal([]byte(c.ok("project", "list", "-o", "json")), &got); err != nil || len(got) != 1 || got[0].Name != hostile {
		t.Errorf("project list -o json: %+v, %v; want the name as the API gave it", got, err)
	}
}
