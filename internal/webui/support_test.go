package webui_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testenv"
)

// The Support pages and the staff console (support.go, staff.go) through the real
// console, without a browser.

var (
	pngFile = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01")
	// ticketStart is the fake clock's start in the tests that move it.
	ticketStart = time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
)

// file is a file of a multipart form: its name, declared type and content.
type file struct {
	name, ct string
	data     []byte
}

// postFiles sends a multipart form (as a browser sends a form with a file input):
// fields, then each file as "attachments"; the last CSRF token seen unless fields
// set csrf.
func (v *visitor) postFiles(path string, fields url.Values, files ...file) page {
	v.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if _, ok := fields["csrf"]; !ok {
		_ = mw.WriteField("csrf", v.csrf)
	}
	for k, vs := range fields {
		for _, val := range vs {
			_ = mw.WriteField(k, val)
		}
	}
	if len(files) == 0 { // an empty file input, as browsers send it
		files = []file{{name: "", ct: "application/octet-stream"}}
	}
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="attachments"; filename="%s"`, f.name))
		h.Set("Content-Type", f.ct)
		w, _ := mw.CreatePart(h)
		_, _ = w.Write(f.data)
	}
	_ = mw.Close()
	req, _ := http.NewRequest("POST", v.env.Root+path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return v.do(req)
}

// download GETs a file: its status, headers and bytes.
func (v *visitor) download(path string) (*http.Response, []byte) {
	v.t.Helper()
	resp, err := v.c.Get(v.env.Root + path)
	if err != nil {
		v.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

var ticketPathRE = regexp.MustCompile(`^/support/(\d+)$`)

// openTicket opens a ticket through the form and answers its page's path.
func openTicket(t *testing.T, v *visitor, fields url.Values, files ...file) string {
	t.Helper()
	v.get("/support/new")
	p := v.postFiles("/support", fields, files...)
	if p.status != http.StatusSeeOther || !ticketPathRE.MatchString(p.location) {
		t.Fatalf("open a ticket: %d → %q; body: %.1500s", p.status, p.location, p.body)
	}
	return p.location
}

var attachmentRE = regexp.MustCompile(`href="(/(?:staff/)?attachments/\d+)"`)

// signedInStaff is a signed-in staff account named name.
func signedInStaff(t *testing.T, env *testenv.Env, name string) (*visitor, hosting.Account) {
	t.Helper()
	email := fmt.Sprintf("staff%d@example.com", seq.Add(1))
	a, err := env.App.Service.CreateAccount(context.Background(), ops.NewAccount{Email: email, Password: password, Name: name, Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if a, err = env.App.Service.SetStaff(context.Background(), email, true); err != nil {
		t.Fatal(err)
	}
	v := newVisitor(t, env)
	if p := v.signIn(email, password); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.status)
	}
	return v, a
}

// TestSupportTicket: a ticket is opened from the form with a server and a file, is
// listed, shows its thread with the file as a download served as the API serves it
// (attachment, nosniff, sandboxed), takes a reply with another file, and closes
// after the confirmation page.
func TestSupportTicket(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	token, _ := apiToken(t, env, a.ID)
	sid := orderedServer(t, env, token, "web-1", 1)

	p := v.get("/support")
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, "No tickets yet.", `<a href="/support" aria-current="page">Support</a>`)
	if strings.Contains(p.body, "data-staff-nav") {
		t.Error("a customer's nav links to the staff pages")
	}
	p = v.get("/support/new")
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, "web-1", `enctype="multipart/form-data"`)

	path := openTicket(t, v, url.Values{"subject": {"Disk is slow"}, "body": {"Since this morning <b>IO</b> waits."},
		"priority": {"high"}, "server_id": {sid}}, file{"iostat.png", "image/png", pngFile})
	p = v.get(path)
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, "The ticket is open: we will answer here.", "Disk is slow", "Since this morning <b>IO</b> waits.", "High", "web-1", "iostat.png", "Open")
	if strings.Contains(p.body, "<b>IO</b>") {
		t.Error("a message's body is not escaped")
	}
	files := attachmentRE.FindAllStringSubmatch(p.body, -1)
	if len(files) != 1 {
		t.Fatalf("attachments linked: %v", files)
	}
	resp, body := v.download(files[0][1])
	if resp.StatusCode != 200 || !bytes.Equal(body, pngFile) || resp.Header.Get("Content-Type") != "image/png" ||
		resp.Header.Get("Content-Disposition") != `attachment; filename="iostat.png"; filename*=UTF-8''iostat.png` ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(resp.Header.Get("Content-Security-Policy"), "sandbox") {
		t.Errorf("download: %d %v %q", resp.StatusCode, resp.Header, body)
	}

	p = v.get("/support")
	wantText(t, p, "Disk is slow", "High")
	p = v.get("/support?status=closed")
	wantText(t, p, "No tickets in this status.")
	wantStatus(t, v.get("/support?status=pending"), http.StatusUnprocessableEntity)
	wantStatus(t, v.get("/support?page=0"), http.StatusUnprocessableEntity)

	v.get(path)
	p = v.postFiles(path+"/messages", url.Values{"body": {"Here is the log."}}, file{"io.log.txt", "text/plain", []byte("await 900ms\n")})
	wantStatus(t, p, http.StatusSeeOther)
	p = v.follow(p)
	wantText(t, p, "Your message was sent.", "Here is the log.", "io.log.txt")
	if n := len(attachmentRE.FindAllString(p.body, -1)); n != 2 {
		t.Errorf("%d files linked, want 2", n)
	}

	p = v.get(path + "/close")
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, "Close the ticket “Disk is slow”? A message within 30 days reopens it.")
	p = v.follow(v.post(path+"/close", nil))
	wantText(t, p, "The ticket is closed.", "This ticket is closed: a message reopens it")
	if !strings.Contains(p.body, `data-ticket-status="closed"`) {
		t.Error("the ticket is not shown closed")
	}
	// A message reopens it (within 30 days).
	p = v.follow(v.postFiles(path+"/messages", url.Values{"body": {"It is back."}}))
	if !strings.Contains(p.body, `data-ticket-status="customer_reply"`) {
		t.Errorf("after a message on the closed ticket: %.2000s", p.body)
	}
}

var elevenFiles = func() []file {
	var out []file
	for i := range 11 {
		out = append(out, file{fmt.Sprintf("f%d.txt", i), "text/plain", []byte("x")})
	}
	return out
}()

// TestSupportFormErrors: what the core refuses of a form is said on the form in the
// account's language (422), with what was entered; a file that was accepted is kept
// on the form and named by the ticket opened next.
func TestSupportFormErrors(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ok := url.Values{"subject": {"Hilfe"}, "body": {"Bitte."}, "priority": {"normal"}}
	with := func(k, val string) url.Values {
		f := url.Values{}
		for key, vs := range ok {
			f[key] = vs
		}
		f.Set(k, val)
		return f
	}
	for _, tt := range []struct {
		name   string
		lang   string
		fields url.Values
		files  []file
		want   string
	}{
		{"no subject", "de", with("subject", ""), nil, "Dieses Feld ist erforderlich."},
		{"long subject", "en", with("subject", strings.Repeat("x", 121)), nil, "A subject has at most 120 characters."},
		{"no body", "fr", with("body", ""), nil, "Ce champ est obligatoire."},
		{"bad priority", "en", with("priority", "asap"), nil, "The priority is low, normal, high or urgent."},
		{"unknown server", "en", with("server_id", "999999"), nil, "No such server."},
		{"html file", "de", ok, []file{{"x.html", "text/html", []byte("<script>alert(1)</script>")}}, "x.html: Ein Anhang ist einer von image/png"},
		{"svg file", "en", ok, []file{{"x.svg", "image/svg+xml", []byte("<svg/>")}}, "x.svg: An attachment is one of image/png, image/jpeg, application/pdf, text/plain"},
		{"declared png, is text", "en", ok, []file{{"x.png", "image/png", []byte("hello")}}, "x.png: The file's content is not image/png"},
		{"empty file", "fr", ok, []file{{"vide.txt", "text/plain", nil}}, "vide.txt: Le fichier est vide."},
		{"eleven files", "en", ok, elevenFiles, "A message names at most 10 attachments."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, _ := signedIn(t, env, tt.lang)
			v.get("/support/new")
			p := v.postFiles("/support", tt.fields, tt.files...)
			wantStatus(t, p, http.StatusUnprocessableEntity)
			wantText(t, p, tt.want)
			if tt.fields.Get("subject") != "" && !strings.Contains(p.body, `value="`+tt.fields.Get("subject")+`"`) {
				t.Error("the subject entered is not kept")
			}
			if p := v.get("/support"); strings.Contains(p.body, "data-ticket=") {
				t.Error("a ticket was opened")
			}
		})
	}

	t.Run("a file is kept", func(t *testing.T) {
		t.Parallel()
		v, _ := signedIn(t, env, "en")
		v.get("/support/new")
		p := v.postFiles("/support", with("subject", ""), file{"shot.png", "image/png", pngFile})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		m := regexp.MustCompile(`name="attachment_ids" value="(\d+)"`).FindStringSubmatch(p.body)
		if m == nil {
			t.Fatalf("the uploaded file is not kept: %.2000s", p.body)
		}
		path := openTicket(t, v, url.Values{"subject": {"Again"}, "body": {"With the file."}, "attachment_ids": {m[1]},
			"attachment_names": {"shot.png"}})
		p = v.get(path)
		if !strings.Contains(p.body, `/attachments/`+m[1]+`"`) {
			t.Errorf("the ticket lacks the kept file %s", m[1])
		}
		// Named by a message, it cannot be named again.
		v.get("/support/new")
		p = v.postFiles("/support", url.Values{"subject": {"Third"}, "body": {"x"}, "attachment_ids": {m[1]}})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantText(t, p, "belongs to another message already")
	})
}

// TestSupportCSRFAndOtherAccounts: a form without the session's CSRF token is
// refused (403) and changes nothing; another account's ticket, its close, its reply
// and its file are not found, as is a path id that is not one.
func TestSupportCSRFAndOtherAccounts(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, _ := signedIn(t, env, "en")
	path := openTicket(t, v, url.Values{"subject": {"Mine"}, "body": {"x"}}, file{"a.txt", "text/plain", []byte("secret")})
	file := attachmentRE.FindStringSubmatch(v.get(path).body)[1]

	p := v.postFiles("/support", url.Values{"subject": {"Forged"}, "body": {"x"}, "csrf": {csrfOfAnotherSession(t, env)}})
	wantStatus(t, p, http.StatusForbidden)
	p = v.postFiles(path+"/messages", url.Values{"body": {"Forged"}, "csrf": {""}})
	wantStatus(t, p, http.StatusForbidden)
	wantStatus(t, v.post(path+"/close", url.Values{"csrf": {"x"}}), http.StatusForbidden)
	p = v.get(path)
	if strings.Contains(p.body, "Forged") || !strings.Contains(p.body, `data-ticket-status="open"`) {
		t.Error("a form without the CSRF token changed the ticket")
	}
	if strings.Contains(v.get("/support").body, "Forged") {
		t.Error("a form without the CSRF token opened a ticket")
	}

	w, _ := signedIn(t, env, "en")
	w.get("/support")
	for _, pth := range []string{path, path + "/close", file, "/support/abc", "/attachments/0"} {
		if p := w.get(pth); p.status != http.StatusNotFound {
			t.Errorf("GET %s by another account: %d, want 404", pth, p.status)
		}
	}
	wantStatus(t, w.postFiles(path+"/messages", url.Values{"body": {"x"}}), http.StatusNotFound)
	wantStatus(t, w.post(path+"/close", nil), http.StatusNotFound)
	if !strings.Contains(v.get(path).body, `data-ticket-status="open"`) {
		t.Error("another account closed the ticket")
	}
}

// TestSupportReopenWindow: a message reopens a ticket closed 29 days ago; one closed
// 30 days ago is not reopened, and the form says to open a new ticket.
func TestSupportReopenWindow(t *testing.T) {
	t.Parallel()
	clock := testenv.NewFakeClock(ticketStart)
	env := testenv.New(t, testenv.Options{Clock: clock.Now})
	v, a := signedIn(t, env, "de")
	path := openTicket(t, v, url.Values{"subject": {"Alt"}, "body": {"x"}})
	v.follow(v.post(path+"/close", nil))
	clock.Advance(29 * 24 * time.Hour)
	v.signIn(a.Email, password) // the session has expired meanwhile
	v.get(path)
	p := v.follow(v.postFiles(path+"/messages", url.Values{"body": {"Noch da?"}}))
	if !strings.Contains(p.body, `data-ticket-status="customer_reply"`) {
		t.Fatal("a message 29 days after the close did not reopen the ticket")
	}
	v.follow(v.post(path+"/close", nil))
	clock.Advance(30 * 24 * time.Hour)
	v.signIn(a.Email, password)
	v.get(path)
	p = v.postFiles(path+"/messages", url.Values{"body": {"Und jetzt?"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	wantText(t, p, "vor mehr als 30 Tagen", "Und jetzt?")
	if !strings.Contains(v.get(path).body, `data-ticket-status="closed"`) {
		t.Error("the ticket was reopened after 30 days")
	}
}

// TestStaffPagesHidden: an account without the staff flag gets 404 for every
// /staff/ path, GET or POST (with its own valid CSRF token), and no staff link.
func TestStaffPagesHidden(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, _ := signedIn(t, env, "en")
	path := openTicket(t, v, url.Values{"subject": {"Mine"}, "body": {"x"}}, file{"a.txt", "text/plain", []byte("x")})
	id := strings.TrimPrefix(path, "/support/")
	file := strings.TrimPrefix(attachmentRE.FindStringSubmatch(v.get(path).body)[1], "/attachments/")
	for _, pth := range []string{"/staff", "/staff/", "/staff/tickets", "/staff/tickets/" + id, "/staff/tickets/" + id + "/close",
		"/staff/attachments/" + file, "/staff/nothing"} {
		if p := v.get(pth); p.status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", pth, p.status)
		}
	}
	for _, a := range []string{"reply", "note", "assign", "close"} {
		if p := v.post("/staff/tickets/"+id+"/"+a, url.Values{"body": {"x"}}); p.status != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", a, p.status)
		}
	}
	if p := v.get(path); !strings.Contains(p.body, `data-ticket-status="open"`) || strings.Contains(p.body, "data-staff-nav") {
		t.Errorf("the ticket after the refused staff forms: %.2000s", p.body)
	}
}

// TestStaffConsole: a staff member sees every account's tickets in the queue with
// its filters, a ticket with the account's servers and billing, adds a note that the
// customer's page never shows, replies with a file under their name (the customer
// sees it and can download the file), assigns and closes it; each action is in the
// audit log with actor "staff" and the staff account. Their own Support page lists
// only their own tickets.
func TestStaffConsole(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	cust, ca := signedIn(t, env, "en")
	token, _ := apiToken(t, env, ca.ID)
	orderedServer(t, env, token, "db-7", 1)
	path := openTicket(t, cust, url.Values{"subject": {"Database down"}, "body": {"Help!"}, "priority": {"urgent"}})
	id := strings.TrimPrefix(path, "/support/")
	other, oa := signedIn(t, env, "en")
	openTicket(t, other, url.Values{"subject": {"Invoice question"}, "body": {"?"}, "priority": {"low"}})

	s, sa := signedInStaff(t, env, "Sam Support")
	p := s.get("/support")
	wantText(t, p, "No tickets yet.")
	if !strings.Contains(p.body, "data-staff-nav") {
		t.Error("a staff member's nav lacks the staff link")
	}
	p = s.get("/staff/tickets")
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, "Database down", "Invoice question", ca.Email, oa.Email)
	for _, tt := range []struct {
		query      string
		want, lack []string
	}{
		{"priority=urgent", []string{"Database down"}, []string{"Invoice question"}},
		{"status=open&email=" + url.QueryEscape(oa.Email), []string{"Invoice question"}, []string{"Database down"}},
		{"assignee=unassigned", []string{"Database down", "Invoice question"}, nil},
		{"assignee=mine", []string{"No tickets match."}, []string{"Database down"}},
		{"status=closed", []string{"No tickets match."}, []string{"Database down"}},
		{"email=nobody%40example.com", []string{"No account has the email nobody@example.com."}, []string{"Database down"}},
	} {
		p := s.get("/staff/tickets?" + tt.query)
		wantStatus(t, p, http.StatusOK)
		wantText(t, p, tt.want...)
		for _, l := range tt.lack {
			if strings.Contains(p.body, l) {
				t.Errorf("%s: the queue shows %q", tt.query, l)
			}
		}
	}
	for _, q := range []string{"status=pending", "priority=asap", "assignee=someone", "page=-1"} {
		wantStatus(t, s.get("/staff/tickets?"+q), http.StatusUnprocessableEntity)
	}

	staffPath := "/staff/tickets/" + id
	p = s.get(staffPath)
	wantStatus(t, p, http.StatusOK)
	wantText(t, p, "Database down", "Help!", ca.Email, "db-7", "s1-1c-1g", "Unassigned", ">running<")
	if !regexp.MustCompile(`data-figure="credit">9\d\.\d+ EUR<`).MatchString(p.body) {
		t.Error("the account's credit is not shown")
	}

	const note = "Customer is on the old kernel; do not tell them yet."
	p = s.post(staffPath+"/note", url.Values{"body": {note}})
	wantStatus(t, p, http.StatusSeeOther)
	p = s.follow(p)
	wantText(t, p, "The note was added.", note, "Internal note")
	if !regexp.MustCompile(`class="message note"[^>]*data-kind="note"`).MatchString(p.body) {
		t.Error("the note is not marked internal")
	}
	wantStatus(t, s.post(staffPath+"/note", url.Values{"body": {""}}), http.StatusUnprocessableEntity)

	p = s.postFiles(staffPath+"/reply", url.Values{"body": {"We restarted it."}}, file{"fix.txt", "text/plain", []byte("restarted\n")})
	wantStatus(t, p, http.StatusSeeOther)
	p = s.postFiles(staffPath+"/reply", url.Values{"body": {""}}, file{"x.html", "text/html", []byte("<p>")})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	wantText(t, p, "x.html: An attachment is one of")

	p = s.follow(s.post(staffPath+"/assign", url.Values{"assignee_id": {fmt.Sprint(sa.ID)}}))
	wantText(t, p, "The ticket's assignee was changed.", "Sam Support ("+sa.Email+")")
	wantText(t, s.get("/staff/tickets?assignee=mine"), "Database down")
	p = s.follow(s.post(staffPath+"/assign", url.Values{"assignee_id": {fmt.Sprint(ca.ID)}}))
	wantText(t, p, "Not a staff account.")
	wantText(t, s.follow(s.post(staffPath+"/assign", url.Values{"assignee_id": {""}})), "Unassigned")
	wantStatus(t, s.post(staffPath+"/assign", url.Values{"assignee_id": {""}, "csrf": {"wrong"}}), http.StatusForbidden)

	// The customer sees the reply under the staff member's name, never the note.
	p = cust.get(path)
	wantText(t, p, "We restarted it.", "Sam Support", "fix.txt", "Answered")
	for _, leak := range []string{note, "old kernel", "Internal note", sa.Email, "/staff/"} {
		if strings.Contains(p.body, leak) {
			t.Errorf("the customer's page shows %q", leak)
		}
	}
	files := attachmentRE.FindAllStringSubmatch(p.body, -1)
	if len(files) != 1 {
		t.Fatalf("the customer's files: %v", files)
	}
	if resp, body := cust.download(files[0][1]); resp.StatusCode != 200 || string(body) != "restarted\n" {
		t.Errorf("the customer downloads the staff's file: %d %q", resp.StatusCode, body)
	}
	if resp, _ := other.download(files[0][1]); resp.StatusCode != 404 {
		t.Errorf("another account downloads the staff's file: %d", resp.StatusCode)
	}
	if resp, body := s.download("/staff" + files[0][1]); resp.StatusCode != 200 ||
		string(body) != "restarted\n" || resp.Header.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment;") {
		t.Errorf("staff download: %d %v", resp.StatusCode, resp.Header)
	}
	// A staff member's customer pages are their own account's.
	wantStatus(t, s.get(path), http.StatusNotFound)

	wantText(t, s.get(staffPath+"/close"), "Close the ticket “Database down” of "+ca.Email+"?")
	p = s.follow(s.post(staffPath+"/close", nil))
	wantText(t, p, "The ticket is closed.")
	if !strings.Contains(cust.get(path).body, `data-ticket-status="closed"`) {
		t.Error("the customer does not see the ticket closed")
	}

	log, err := env.App.Service.AuditLog(context.Background(), sa.ID, 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range log {
		if e.Actor != "staff" {
			t.Errorf("entry %+v: actor %q, want staff", e, e.Actor)
		}
		got = append(got, fmt.Sprintf("%s %d %s %s", e.Action, e.Status, e.Code, e.Target))
	}
	acct := fmt.Sprint(ca.ID)
	for _, want := range []string{
		"POST /staff/tickets/{id}/note 303  id=" + id + " account=" + acct,
		"POST /staff/tickets/{id}/note 422 validation_failed id=" + id + " account=" + acct,
		"POST /staff/tickets/{id}/reply 303  id=" + id + " account=" + acct,
		"POST /staff/tickets/{id}/reply 422 validation_failed id=" + id + " account=" + acct,
		"POST /staff/tickets/{id}/assign 303  id=" + id + " account=" + acct,
		"POST /staff/tickets/{id}/assign 303 validation_failed id=" + id + " account=" + acct,
		"POST /staff/tickets/{id}/assign 403 csrf_failed id=" + id,
		"POST /staff/tickets/{id}/close 303  id=" + id + " account=" + acct,
		"GET /staff/tickets/{id} 200  id=" + id + " account=" + acct,
	} {
		if !containsString(got, want) {
			t.Errorf("the audit log lacks %q; it has:\n%s", want, strings.Join(got, "\n"))
		}
	}
	// The customer's own log has none of the staff's actions.
	clog, _ := env.App.Service.AuditLog(context.Background(), ca.ID, 0, 50)
	for _, e := range clog {
		if strings.Contains(e.Action, "/staff/") {
			t.Errorf("the customer's audit log has %+v", e)
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestTicketListsPaged: the Support page and the staff queue show 50 tickets a page,
// latest activity first, with links to the other page that keep the filters.
func TestTicketListsPaged(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	bg := context.Background()
	p := hosting.Principal{Account: a}
	for i := range 51 {
		subject, body := fmt.Sprintf("Ticket %02d", i), "x"
		tk, err := env.App.Service.CreateTicket(bg, p, ops.TicketCreate{Subject: &subject, Body: &body})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.App.Service.CloseTicket(bg, p, tk.ID); err != nil { // within the open-ticket quota
			t.Fatal(err)
		}
	}
	rows := regexp.MustCompile(`<tr data-ticket="\d+"`)
	first := v.get("/support?status=closed")
	if n := len(rows.FindAllString(first.body, -1)); n != 50 {
		t.Errorf("page 1 has %d tickets, want 50", n)
	}
	wantText(t, first, "Page 1 of 2", `href="/support?page=2&status=closed"`, "Ticket 50")
	second := v.get("/support?status=closed&page=2")
	if n := len(rows.FindAllString(second.body, -1)); n != 1 {
		t.Errorf("page 2 has %d tickets, want 1", n)
	}
	wantText(t, second, "Page 2 of 2", "Ticket 00")
	if strings.Contains(second.body, "Ticket 01") {
		t.Error("page 2 repeats page 1's ticket")
	}

	s, _ := signedInStaff(t, env, "Pat")
	q := s.get("/staff/tickets?status=closed&email=" + url.QueryEscape(a.Email))
	if n := len(rows.FindAllString(q.body, -1)); n != 50 {
		t.Errorf("the queue's page 1 has %d tickets, want 50", n)
	}
	wantText(t, q, "Page 1 of 2", "Ticket 50", `href="/staff/tickets?email=`+url.QueryEscape(a.Email)+`&page=2&status=closed"`)
	q = s.get("/staff/tickets?email=" + url.QueryEscape(a.Email) + "&status=closed&page=2")
	wantText(t, q, "Page 2 of 2", "Ticket 00")
}
