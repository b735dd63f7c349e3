package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testenv"
)

// Support tickets and attachments (issue 31; api/openapi.yaml, Support), through the API on
// a real Berth (SQLite, or PostgreSQL with BERTH_TEST_STORE=postgres); every answer is
// checked against api/openapi.yaml by the harness.

type headerCaller interface {
	DoWith(method, path string, body any, header http.Header) *testenv.Response
}

// upload sends POST /attachments with data as the body, declared as contentType and
// named filename ("": no Content-Disposition).
func upload(t testing.TB, c caller, filename, contentType string, data []byte) *testenv.Response {
	t.Helper()
	hc, ok := c.(headerCaller)
	if !ok {
		t.Fatalf("%T cannot send headers", c)
	}
	h := http.Header{"Content-Type": {contentType}}
	if filename != "" {
		h.Set("Content-Disposition", `attachment; filename="`+filename+`"`)
	}
	return hc.DoWith("POST", "/attachments", data, h)
}

var ticketStart = time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)

// ticketEnv is a Berth on a fake clock.
func ticketEnv(t *testing.T) (*testenv.Env, *testenv.FakeClock) {
	t.Helper()
	clock := testenv.NewFakeClock(ticketStart)
	return testenv.New(t, testenv.Options{Clock: clock.Now}), clock
}

// makeStaff makes a new account staff and returns it.
func makeStaff(t testing.TB, env *testenv.Env) (*testenv.Account, hosting.Account) {
	t.Helper()
	s := env.NewAccount("en", "1", "")
	if _, err := env.App.Service.SetStaff(context.Background(), "nobody@example.invalid", true); err == nil {
		t.Fatal("SetStaff of an email no account has succeeded")
	}
	a, err := env.App.DB.Account(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a, err = env.App.Service.SetStaff(context.Background(), a.Email, true); err != nil || !a.Staff {
		t.Fatalf("SetStaff: %+v, %v", a, err)
	}
	return s, a
}

func ticketEvents(t testing.TB, c caller) []string {
	t.Helper()
	var out []string
	for _, e := range events(t, c, "?types=ticket.*").Data {
		out = append(out, e.Type)
	}
	return out
}

func messageBodies(t testing.TB, tk map[string]any) []string {
	t.Helper()
	var out []string
	for _, m := range tk["messages"].([]any) {
		mm := m.(map[string]any)
		out = append(out, mm["author"].(string)+":"+mm["body"].(string))
	}
	return out
}

// TestTicketLifecycle: a ticket end to end: opened with a file and a server, the
// customer's second message keeping it open, a staff reply with a file (answered,
// ticket.replied, the file readable by the customer), an internal note never shown
// (nor its file, nor an event, nor a change of status or activity), a customer reply
// (customer_reply), closing, the reopen window on the clock (29 days reopens, 31 days
// is a 422), the list latest first with its status filter, and the events in order,
// those past their retention removed.
func TestTicketLifecycle(t *testing.T) {
	t.Parallel()
	env, clock := ticketEnv(t)
	ctx := context.Background()
	a := env.NewAccount("en", "100", "")
	staffTok, staff := makeStaff(t, env)
	srv := order(t, a, baseOrder())

	shot := data(t, upload(t, a, "shot.png", "image/png", pngFile).Want(t, 201))
	if shot["filename"] != "shot.png" || shot["content_type"] != "image/png" || num(t, shot["size"]) != int64(len(pngFile)) {
		t.Errorf("upload: %v", shot)
	}
	tk := data(t, a.Do("POST", "/tickets", map[string]any{"subject": "Disk full", "body": "It is full.", "priority": "high",
		"server_id": num(t, srv["id"]), "attachment_ids": []int64{num(t, shot["id"])}}).Want(t, 201))
	id := itoa(num(t, tk["id"]))
	if tk["status"] != "open" || tk["priority"] != "high" || num(t, tk["server_id"]) != num(t, srv["id"]) || tk["closed_at"] != nil ||
		tk["created_at"] != "2027-03-01T09:00:00Z" {
		t.Errorf("new ticket: %v", tk)
	}
	msgs := tk["messages"].([]any)
	first := msgs[0].(map[string]any)
	if len(msgs) != 1 || first["author"] != "customer" || first["body"] != "It is full." || len(first["attachments"].([]any)) != 1 {
		t.Errorf("first message: %v", msgs)
	}

	clock.Advance(time.Minute)
	m := data(t, a.Do("POST", "/tickets/"+id+"/messages", map[string]any{"body": "Still full."}).Want(t, 201))
	if m["author"] != "customer" || m["body"] != "Still full." || m["created_at"] != "2027-03-01T09:01:00Z" {
		t.Errorf("second message: %v", m)
	}
	if got := data(t, a.Do("GET", "/tickets/"+id, nil).Want(t, 200)); got["status"] != "open" || got["updated_at"] != "2027-03-01T09:01:00Z" {
		t.Errorf("after a second customer message: %v (open stays open)", got)
	}

	// Staff reply with a file of staff's: answered; the customer reads the file.
	clock.Advance(time.Minute)
	fix := data(t, upload(t, staffTok, "fix.txt", "text/plain; charset=utf-8", []byte("rm -rf /tmp/big\n")).Want(t, 201))
	staffID := staff.ID
	reply, err := env.App.Service.StaffReply(ctx, num(t, tk["id"]), ops.StaffAuthor{AccountID: &staffID}, "Delete the big file.",
		[]int64{num(t, fix["id"])})
	// The staff account was made without a name (named by its email): the customer
	// sees "Support", never staff's address.
	if err != nil || reply.AuthorName != "Support" {
		t.Fatalf("StaffReply: %+v, %v", reply, err)
	}
	secret := data(t, upload(t, staffTok, "secret.txt", "text/plain", []byte("internal only")).Want(t, 201))
	clock.Advance(time.Minute)
	if _, err := env.App.Service.StaffNote(ctx, num(t, tk["id"]), ops.StaffAuthor{Name: "Night shift"}, "Customer deleted prod last week"); err != nil {
		t.Fatal(err)
	}
	raw := a.Do("GET", "/tickets/"+id, nil).Want(t, 200)
	if bytes.Contains(raw.Body, []byte("prod last week")) || bytes.Contains(raw.Body, []byte("Night shift")) ||
		bytes.Contains(raw.Body, []byte(staff.Email)) {
		t.Errorf("the customer sees the internal note: %s", raw.Body)
	}
	got := data(t, raw)
	if want := []string{"customer:It is full.", "customer:Still full.", "staff:Delete the big file."}; !slices.Equal(messageBodies(t, got), want) {
		t.Errorf("messages %v, want %v", messageBodies(t, got), want)
	}
	if got["status"] != "answered" || got["updated_at"] != "2027-03-01T09:02:00Z" {
		t.Errorf("after the reply and the note: %v (answered, the note's time not shown)", got)
	}
	file := a.Do("GET", "/attachments/"+itoa(num(t, fix["id"])), nil).Want(t, 200)
	if string(file.Body) != "rm -rf /tmp/big\n" {
		t.Errorf("staff's file: %q", file.Body)
	}
	wantNotFound(t, a.Do("GET", "/attachments/"+itoa(num(t, secret["id"])), nil))
	if full, err := env.App.Service.StaffTicket(ctx, num(t, tk["id"])); err != nil || len(full.Messages) != 4 || full.Messages[3].Kind != hosting.MessageNote {
		t.Errorf("staff's view: %+v, %v (the note included)", full.Messages, err)
	}

	clock.Advance(time.Minute)
	data(t, a.Do("POST", "/tickets/"+id+"/messages", map[string]any{"body": "Thanks, done."}).Want(t, 201))
	if got := data(t, a.Do("GET", "/tickets/"+id, nil).Want(t, 200)); got["status"] != "customer_reply" {
		t.Errorf("after the customer's answer: %v", got["status"])
	}

	clock.Advance(time.Minute)
	closed := data(t, a.Do("POST", "/tickets/"+id+"/close", nil).Want(t, 200))
	if closed["status"] != "closed" || closed["closed_at"] != "2027-03-01T09:05:00Z" {
		t.Errorf("closed: %v", closed)
	}
	if again := data(t, a.Do("POST", "/tickets/"+id+"/close", nil).Want(t, 200)); again["closed_at"] != "2027-03-01T09:05:00Z" {
		t.Errorf("closed twice: %v (answered as it is)", again)
	}

	// 29 days later a message reopens it; 31 days after its next closing, not.
	clock.Advance(29 * 24 * time.Hour)
	data(t, a.Do("POST", "/tickets/"+id+"/messages", map[string]any{"body": "It is back."}).Want(t, 201))
	if got := data(t, a.Do("GET", "/tickets/"+id, nil).Want(t, 200)); got["status"] != "customer_reply" || got["closed_at"] != nil {
		t.Errorf("reopened: %v", got)
	}
	data(t, a.Do("POST", "/tickets/"+id+"/close", nil).Want(t, 200))
	want := []string{"ticket.created", "ticket.customer_replied", "ticket.replied", "ticket.customer_replied", "ticket.closed",
		"ticket.reopened", "ticket.customer_replied", "ticket.closed"}
	if got := ticketEvents(t, a); !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	clock.Advance(31 * 24 * time.Hour)
	e := wantInvalid(t, a.Do("POST", "/tickets/"+id+"/messages", map[string]any{"body": "And again."}), "body")
	if e.Errors["body"][0] != msg("en", "validation.ticket_closed_long_ago", "days", 30) {
		t.Errorf("31 days after closing: %v", e.Errors)
	}
	if got := data(t, a.Do("GET", "/tickets/"+id, nil).Want(t, 200)); got["status"] != "closed" || len(got["messages"].([]any)) != 5 {
		t.Errorf("after the refused message: %v", got)
	}

	// The list: latest activity first, the status filter, pages.
	other := data(t, a.Do("POST", "/tickets", map[string]any{"subject": "Billing", "body": "?"}).Want(t, 201))
	list := items(t, a.Do("GET", "/tickets", nil).Want(t, 200))
	if len(list) != 2 || num(t, list[0]["id"]) != num(t, other["id"]) || list[0]["messages"] != nil || list[0]["priority"] != "normal" {
		t.Errorf("list: %v", list)
	}
	if l := items(t, a.Do("GET", "/tickets?status=closed", nil).Want(t, 200)); len(l) != 1 || itoa(num(t, l[0]["id"])) != id {
		t.Errorf("closed ones: %v", l)
	}
	if l := items(t, a.Do("GET", "/tickets?status=open&page=2", nil).Want(t, 200)); len(l) != 0 {
		t.Errorf("page 2: %v", l)
	}
	for _, q := range []string{"status=new", "status=", "status=OPEN", "status=open&status=closed"} {
		wantInvalid(t, a.Do("GET", "/tickets?"+q, nil), "status")
	}
	wantInvalid(t, a.Do("GET", "/tickets?page=0", nil), "page")

	// 31 days on, the events before it are past their retention: housekeeping
	// (which may run meanwhile on its own) removes them, and the new ticket's stays.
	if _, err := env.App.Service.PruneEvents(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ticketEvents(t, a); !slices.Equal(got, []string{"ticket.created"}) {
		t.Errorf("events after their retention %v, want [ticket.created]", got)
	}
}

// TestTicketsOfAnotherAccount: another account's ticket and file are 404 on every
// route, and change nothing; a token without `tickets` is 403 on the writes and
// reads with `read`.
func TestTicketsOfAnotherAccount(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	b := env.NewAccount("en", "100", "")
	f := data(t, upload(t, a, "a.txt", "text/plain", []byte("a's")).Want(t, 201))
	tk := data(t, a.Do("POST", "/tickets", map[string]any{"subject": "Mine", "body": "x", "attachment_ids": []int64{num(t, f["id"])}}).Want(t, 201))
	id := itoa(num(t, tk["id"]))
	wantNotFound(t, b.Do("GET", "/tickets/"+id, nil))
	wantNotFound(t, b.Do("POST", "/tickets/"+id+"/messages", map[string]any{"body": "hi"}))
	wantNotFound(t, b.Do("POST", "/tickets/"+id+"/close", nil))
	wantNotFound(t, b.Do("GET", "/attachments/"+itoa(num(t, f["id"])), nil))
	for _, bad := range []string{"0", "-1", "9223372036854775808", "1.5", "x"} {
		wantNotFound(t, a.Do("GET", "/tickets/"+bad, nil))
		wantNotFound(t, a.Do("GET", "/attachments/"+bad, nil))
	}
	if l := items(t, b.Do("GET", "/tickets", nil).Want(t, 200)); len(l) != 0 {
		t.Errorf("b lists %v", l)
	}
	// b cannot attach a's file either.
	wantInvalid(t, b.Do("POST", "/tickets", map[string]any{"subject": "Theirs", "body": "x", "attachment_ids": []int64{num(t, f["id"])}}), "attachment_ids")
	if got := data(t, a.Do("GET", "/tickets/"+id, nil).Want(t, 200)); got["status"] != "open" || len(got["messages"].([]any)) != 1 {
		t.Errorf("a's ticket after b's tries: %v", got)
	}

	read := as(env, a, "read")
	for _, r := range []*testenv.Response{
		read.Do("POST", "/tickets", map[string]any{"subject": "s", "body": "b"}),
		read.Do("POST", "/tickets/"+id+"/messages", map[string]any{"body": "b"}),
		read.Do("POST", "/tickets/"+id+"/close", nil),
		upload(t, read, "x.txt", "text/plain", []byte("x")),
	} {
		wantError(t, r, http.StatusForbidden, "missing_scope")
	}
	read.Do("GET", "/tickets/"+id, nil).Want(t, 200)
	read.Do("GET", "/tickets", nil).Want(t, 200)
	read.Do("GET", "/attachments/"+itoa(num(t, f["id"])), nil).Want(t, 200)
	tickets := as(env, a, "tickets,read")
	data(t, tickets.Do("POST", "/tickets/"+id+"/messages", map[string]any{"body": "with the scope"}).Want(t, 201))
}

// TestTicketBoundaries: every field of POST /tickets and of a message at and past
// its bounds: each refusal a 422 naming the field, and nothing written.
func TestTicketBoundaries(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	b := env.NewAccount("en", "100", "")
	bsrv := order(t, b, baseOrder())
	valid := map[string]any{"subject": "s", "body": "b"}
	free := func() int64 {
		return num(t, data(t, upload(t, a, "f.txt", "text/plain", []byte("f")).Want(t, 201))["id"])
	}
	used := free()
	data(t, a.Do("POST", "/tickets", with(valid, "attachment_ids", []int64{used})).Want(t, 201))
	var eleven []int64
	for range 11 {
		eleven = append(eleven, free())
	}
	f1 := free()
	bFile := num(t, data(t, upload(t, b, "b.txt", "text/plain", []byte("b")).Want(t, 201))["id"])

	for _, c := range []struct {
		name  string
		body  any
		field string
	}{
		{"subject missing", map[string]any{"body": "b"}, "subject"},
		{"subject empty", with(valid, "subject", ""), "subject"},
		{"subject spaces", with(valid, "subject", "   "), "subject"},
		{"subject null", with(valid, "subject", nil), "subject"},
		{"subject 121", with(valid, "subject", strings.Repeat("ü", 121)), "subject"},
		{"subject two lines", with(valid, "subject", "a\nb"), "subject"},
		{"subject a number", with(valid, "subject", 5), "subject"},
		{"body missing", map[string]any{"subject": "s"}, "body"},
		{"body empty", with(valid, "body", ""), "body"},
		{"body whitespace", with(valid, "body", "\n\t "), "body"},
		{"body 20,001", with(valid, "body", strings.Repeat("a", 20001)), "body"},
		{"priority unknown", with(valid, "priority", "critical"), "priority"},
		{"priority empty", with(valid, "priority", ""), "priority"},
		{"priority null", with(valid, "priority", nil), "priority"},
		{"server_id 0", with(valid, "server_id", 0), "server_id"},
		{"server_id -1", with(valid, "server_id", -1), "server_id"},
		{"server_id 2^63", `{"subject": "s", "body": "b", "server_id": 9223372036854775808}`, "server_id"},
		{"server_id a string", with(valid, "server_id", "1"), "server_id"},
		{"server_id another account's", with(valid, "server_id", num(t, bsrv["id"])), "server_id"},
		{"attachment_ids repeated", with(valid, "attachment_ids", []int64{f1, f1}), "attachment_ids"},
		{"attachment_ids 11", with(valid, "attachment_ids", eleven), "attachment_ids"},
		{"attachment_ids used", with(valid, "attachment_ids", []int64{used}), "attachment_ids"},
		{"attachment_ids another account's", with(valid, "attachment_ids", []int64{bFile}), "attachment_ids"},
		{"attachment_ids 0", with(valid, "attachment_ids", []int64{0}), "attachment_ids"},
		{"attachment_ids -1", with(valid, "attachment_ids", []int64{-1}), "attachment_ids"},
		{"attachment_ids null item", with(valid, "attachment_ids", []any{nil}), "attachment_ids"},
		{"attachment_ids 2^63", `{"subject": "s", "body": "b", "attachment_ids": [9223372036854775808]}`, "attachment_ids"},
		{"attachment_ids a string", with(valid, "attachment_ids", "1"), "attachment_ids"},
		{"unknown field", with(valid, "status", "closed"), "status"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantInvalid(t, a.Do("POST", "/tickets", c.body), c.field)
		})
	}
	// At the bounds: accepted.
	big := data(t, a.Do("POST", "/tickets", map[string]any{"subject": strings.Repeat("ü", 120), "body": strings.Repeat("😀", 20000),
		"priority": "urgent", "server_id": nil, "attachment_ids": eleven[:10]}).Want(t, 201))
	if big["server_id"] != nil || len(big["messages"].([]any)[0].(map[string]any)["attachments"].([]any)) != 10 {
		t.Errorf("at the bounds: server_id %v", big["server_id"])
	}
	if l := items(t, a.Do("GET", "/tickets", nil).Want(t, 200)); len(l) != 2 {
		t.Errorf("tickets after the refusals: %d, want 2", len(l))
	}
	// A file once named stays with its message: eleven[10] is still free.
	id := itoa(num(t, big["id"]))
	for _, c := range []struct {
		name  string
		body  any
		field string
	}{
		{"body missing", map[string]any{}, "body"},
		{"body 20,001", map[string]any{"body": strings.Repeat("b", 20001)}, "body"},
		{"attachment used", map[string]any{"body": "b", "attachment_ids": []int64{eleven[0]}}, "attachment_ids"},
		{"attachment repeated", map[string]any{"body": "b", "attachment_ids": []int64{eleven[10], eleven[10]}}, "attachment_ids"},
		{"unknown field", map[string]any{"body": "b", "subject": "x"}, "subject"},
	} {
		t.Run("message "+c.name, func(t *testing.T) {
			wantInvalid(t, a.Do("POST", "/tickets/"+id+"/messages", c.body), c.field)
		})
	}
	data(t, a.Do("POST", "/tickets/"+id+"/messages", map[string]any{"body": "b", "attachment_ids": []int64{eleven[10]}}).Want(t, 201))
}

// TestTicketQuotaAndIdempotency: the account's quota of open tickets (closing one
// frees its place; reopening one takes it back), and an Idempotency-Key opening one
// ticket for two POSTs.
func TestTicketQuotaAndIdempotency(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ctx := context.Background()
	a := env.NewAccount("en", "100", "")
	if _, err := env.App.Service.SetQuotas(ctx, a.ID, map[string]int{"tickets": 1}); err != nil {
		t.Fatal(err)
	}
	first := data(t, a.Do("POST", "/tickets", map[string]any{"subject": "1", "body": "b"}).Want(t, 201))
	e := wantInvalid(t, a.Do("POST", "/tickets", map[string]any{"subject": "2", "body": "b"}), "ticket_quota")
	if e.Errors["ticket_quota"][0] != msg("en", "validation.ticket_quota", "quota", 1) {
		t.Errorf("quota: %v", e.Errors)
	}
	data(t, a.Do("POST", "/tickets/"+itoa(num(t, first["id"]))+"/close", nil).Want(t, 200))
	second := data(t, a.Do("POST", "/tickets", map[string]any{"subject": "2", "body": "b"}).Want(t, 201))
	wantInvalid(t, a.Do("POST", "/tickets/"+itoa(num(t, first["id"]))+"/messages", map[string]any{"body": "reopen"}), "ticket_quota")
	data(t, a.Do("POST", "/tickets/"+itoa(num(t, second["id"]))+"/messages", map[string]any{"body": "open stays open"}).Want(t, 201))

	if _, err := env.App.Service.SetQuotas(ctx, a.ID, map[string]int{"tickets": 20}); err != nil {
		t.Fatal(err)
	}
	key := http.Header{"Idempotency-Key": {"ticket-once"}}
	body := map[string]any{"subject": "Once", "body": "only once"}
	r1 := env.Do(a.Token, "POST", "/tickets", body, key).Want(t, 201)
	r2 := env.Do(a.Token, "POST", "/tickets", body, key).Want(t, 201)
	if num(t, data(t, r1)["id"]) != num(t, data(t, r2)["id"]) || r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %s / %s", r1.Body, r2.Body)
	}
	if l := items(t, a.Do("GET", "/tickets", nil).Want(t, 200)); len(l) != 3 {
		t.Errorf("%d tickets, want 3", len(l))
	}
}

var (
	pngFile  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01")
	jpegFile = []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01")
	pdfFile  = []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n")
)

// TestAttachments: uploads of each type and their download (bytes, type, a
// download's headers), 5 MiB exactly and one byte more, a declared type the content
// is not, HTML and SVG however declared, an empty file, filenames sanitised, the
// account's MiB quota, and an unattached file pruned after a day.
func TestAttachments(t *testing.T) {
	t.Parallel()
	env, clock := ticketEnv(t)
	ctx := context.Background()
	a := env.NewAccount("en", "100", "")

	for _, c := range []struct {
		name, ct, wantCT, serveCT string
		data                      []byte
	}{
		{"png", "image/png", "image/png", "image/png", pngFile},
		{"jpeg", "image/jpeg", "image/jpeg", "image/jpeg", jpegFile},
		{"pdf", "application/pdf", "application/pdf", "application/pdf", pdfFile},
		{"text", "text/plain; charset=utf-8", "text/plain", "text/plain; charset=utf-8", []byte("grüße\n")},
	} {
		f := data(t, upload(t, a, "file."+c.name, c.ct, c.data).Want(t, 201))
		if f["content_type"] != c.wantCT || num(t, f["size"]) != int64(len(c.data)) || f["filename"] != "file."+c.name {
			t.Errorf("%s: %v", c.name, f)
		}
		r := a.Do("GET", "/attachments/"+itoa(num(t, f["id"])), nil).Want(t, 200)
		if !bytes.Equal(r.Body, c.data) || r.Header.Get("Content-Type") != c.serveCT || r.Header.Get("X-Content-Type-Options") != "nosniff" ||
			!strings.HasPrefix(r.Header.Get("Content-Disposition"), `attachment; filename="file.`+c.name+`"`) ||
			!strings.Contains(r.Header.Get("Content-Security-Policy"), "sandbox") {
			t.Errorf("%s served as %v: %q", c.name, r.Header, r.Body)
		}
	}

	// 5 MiB exactly, and one byte more.
	five := bytes.Repeat([]byte("a"), 5<<20)
	data(t, upload(t, a, "five.txt", "text/plain", five).Want(t, 201))
	e := wantInvalid(t, upload(t, a, "more.txt", "text/plain", append(five, 'a')), "body")
	if e.Errors["body"][0] != msg("en", "validation.attachment_too_large", "max", "5 MiB") {
		t.Errorf("5 MiB + 1: %v", e.Errors)
	}

	for _, c := range []struct {
		name, ct string
		data     []byte
		field    string
	}{
		{"empty", "text/plain", nil, "body"},
		{"png declared as jpeg", "image/jpeg", pngFile, "content_type"},
		{"text declared as pdf", "application/pdf", []byte("hello"), "content_type"},
		{"pdf declared as text", "text/plain", pdfFile, "content_type"},
		{"html", "text/html", []byte("<html><script>alert(1)</script></html>"), "content_type"},
		{"html declared as text", "text/plain", []byte("<!DOCTYPE html><script>alert(1)</script>"), "content_type"},
		{"svg", "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), "content_type"},
		{"svg declared as text", "text/plain", []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), "content_type"},
		{"json", "application/json", []byte(`{"a": 1}`), "content_type"},
		{"no type", "", []byte("x"), "content_type"},
		{"latin-1 text", "text/plain; charset=iso-8859-1", []byte("gr\xfc\xdfe"), "content_type"},
	} {
		t.Run(c.name, func(t *testing.T) { wantInvalid(t, upload(t, a, "x", c.ct, c.data), c.field) })
	}

	// Filenames.
	hc := headerCaller(a)
	for cd, want := range map[string]string{
		`attachment; filename="../../etc/passwd.txt"`:                         "passwd.txt",
		`attachment; filename="C:\\Users\\me\\notes.txt"`:                     "notes.txt",
		`attachment; filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%E2%80%AEtxt.exe.txt`: "Grüße txt.exe.txt",
		`attachment; filename="a\"b.txt"`:                                     "ab.txt",
		`attachment; filename=".."`:                                           "attachment",
		`attachment`:                                                          "attachment",
		`not a disposition;;`:                                                 "attachment",
		`attachment; filename="` + strings.Repeat("n", 300) + `.txt"`:         strings.Repeat("n", 96) + ".txt",
	} {
		f := data(t, hc.DoWith("POST", "/attachments", []byte("x"), http.Header{"Content-Type": {"text/plain"}, "Content-Disposition": {cd}}).Want(t, 201))
		if f["filename"] != want {
			t.Errorf("%s: filename %q, want %q", cd, f["filename"], want)
		}
		r := a.Do("GET", "/attachments/"+itoa(num(t, f["id"])), nil).Want(t, 200)
		if d := r.Header.Get("Content-Disposition"); strings.ContainsAny(strings.TrimPrefix(d, "attachment; "), "\r\n/\\") {
			t.Errorf("%s served as %q", cd, d)
		}
	}

	// The quota of MiB: 6 MiB allowed, 5 MiB taken already and then some.
	if _, err := env.App.Service.SetQuotas(ctx, a.ID, map[string]int{"attachment-mb": 6}); err != nil {
		t.Fatal(err)
	}
	e = wantInvalid(t, upload(t, a, "big.txt", "text/plain", bytes.Repeat([]byte("b"), 1<<20)), "body")
	if e.Errors["body"][0] != msg("en", "validation.attachment_quota", "quota", 6) {
		t.Errorf("quota: %v", e.Errors)
	}
	// A staff account has none: it uploads what it attaches to every account's tickets.
	staff, sa := makeStaff(t, env)
	if _, err := env.App.Service.SetQuotas(ctx, sa.ID, map[string]int{"attachment-mb": 1}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		upload(t, staff, fmt.Sprintf("log%d.txt", i), "text/plain", bytes.Repeat([]byte("s"), 1<<20)).Want(t, 201)
	}

	// An unattached file goes a day after its upload; one named by a message stays.
	if _, err := env.App.Service.SetQuotas(ctx, a.ID, map[string]int{"attachment-mb": 100}); err != nil {
		t.Fatal(err)
	}
	loose := data(t, upload(t, a, "loose.txt", "text/plain", []byte("loose")).Want(t, 201))
	kept := data(t, upload(t, a, "kept.txt", "text/plain", []byte("kept")).Want(t, 201))
	data(t, a.Do("POST", "/tickets", map[string]any{"subject": "s", "body": "b", "attachment_ids": []int64{num(t, kept["id"])}}).Want(t, 201))
	clock.Advance(23 * time.Hour)
	if n, err := env.App.Service.PruneAttachments(ctx); err != nil || n != 0 {
		t.Errorf("pruned %d after 23 h, %v", n, err)
	}
	clock.Advance(2 * time.Hour)
	// Every file above but kept is loose; the periodic housekeeping of the test's
	// Berth may prune them first.
	if _, err := env.App.Service.PruneAttachments(ctx); err != nil {
		t.Errorf("pruned after 25 h: %v", err)
	}
	wantNotFound(t, a.Do("GET", "/attachments/"+itoa(num(t, loose["id"])), nil))
	a.Do("GET", "/attachments/"+itoa(num(t, kept["id"])), nil).Want(t, 200)
	if _, err := env.App.DB.Attachment(ctx, 0, num(t, kept["id"])); err != nil {
		t.Errorf("the kept file: %v", err)
	}
}

// TestStaffSide: the staff's queue over every account with its filters, assigning
// (to staff only), a staff reply reopening a closed ticket, closing by staff, and
// replies as a name from the command line; a staff account's customer API sees only
// its own tickets.
func TestStaffSide(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ctx := context.Background()
	svc := env.App.Service
	a := env.NewAccount("en", "100", "")
	b := env.NewAccount("en", "100", "")
	staffTok, staff := makeStaff(t, env)
	ta := data(t, a.Do("POST", "/tickets", map[string]any{"subject": "A", "body": "a", "priority": "urgent"}).Want(t, 201))
	tb := data(t, b.Do("POST", "/tickets", map[string]any{"subject": "B", "body": "b"}).Want(t, 201))
	idA, idB := num(t, ta["id"]), num(t, tb["id"])

	queue := func(f store.TicketFilter) []int64 {
		t.Helper()
		list, _, err := svc.StaffTickets(ctx, f, 1)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, tk := range list {
			out = append(out, tk.ID)
		}
		return out
	}
	if got := queue(store.TicketFilter{}); !slices.Equal(got, []int64{idB, idA}) {
		t.Errorf("queue %v", got)
	}
	if got := queue(store.TicketFilter{Priority: hosting.PriorityUrgent}); !slices.Equal(got, []int64{idA}) {
		t.Errorf("urgent %v", got)
	}
	if got := queue(store.TicketFilter{AccountID: b.ID}); !slices.Equal(got, []int64{idB}) {
		t.Errorf("b's %v", got)
	}
	staffID, notStaff := staff.ID, a.ID
	if _, err := svc.Assign(ctx, idA, &notStaff); hosting.ErrorCode(err) != hosting.CodeValidationFailed {
		t.Errorf("assigned to a customer: %v", err)
	}
	if tk, err := svc.Assign(ctx, idA, &staffID); err != nil || tk.AssigneeID == nil || *tk.AssigneeID != staffID {
		t.Fatalf("Assign: %+v, %v", tk, err)
	}
	if got := queue(store.TicketFilter{Assignee: staffID}); !slices.Equal(got, []int64{idA}) {
		t.Errorf("assigned %v", got)
	}
	if got := queue(store.TicketFilter{Unassigned: true}); !slices.Equal(got, []int64{idB}) {
		t.Errorf("unassigned %v", got)
	}
	if _, err := svc.StaffReply(ctx, idB, ops.StaffAuthor{AccountID: &notStaff}, "I am not staff", nil); hosting.ErrorCode(err) != hosting.CodeValidationFailed {
		t.Errorf("a reply by a customer account: %v", err)
	}
	if _, err := svc.StaffReply(ctx, idB, ops.StaffAuthor{Name: "Support"}, "  ", nil); hosting.ErrorCode(err) != hosting.CodeValidationFailed {
		t.Errorf("an empty reply: %v", err)
	}
	if _, err := svc.StaffReply(ctx, 1<<40, ops.StaffAuthor{}, "x", nil); hosting.ErrorCode(err) != hosting.CodeNotFound {
		t.Errorf("a reply to no ticket: %v", err)
	}
	if tk, err := svc.StaffClose(ctx, idB); err != nil || tk.Status != hosting.TicketClosed || tk.ClosedAt == nil {
		t.Fatalf("StaffClose: %+v, %v", tk, err)
	}
	if m, err := svc.StaffReply(ctx, idB, ops.StaffAuthor{}, "One more thing.", nil); err != nil || m.AuthorName != "Support" || m.AuthorID != nil {
		t.Fatalf("StaffReply from the command line: %+v, %v", m, err)
	}
	got := data(t, b.Do("GET", "/tickets/"+itoa(idB), nil).Want(t, 200))
	if got["status"] != "answered" || got["closed_at"] != nil {
		t.Errorf("after staff's reply to the closed ticket: %v", got)
	}
	if want := []string{"ticket.created", "ticket.closed", "ticket.reopened", "ticket.replied"}; !slices.Equal(ticketEvents(t, b), want) {
		t.Errorf("b's events %v, want %v", ticketEvents(t, b), want)
	}
	// Staff's own token is a customer's: it sees no other account's ticket.
	wantNotFound(t, staffTok.Do("GET", "/tickets/"+itoa(idA), nil))
	if list, err := svc.ListStaff(ctx); err != nil || len(list) != 1 || list[0].ID != staffID {
		t.Errorf("ListStaff: %+v, %v", list, err)
	}
	if _, err := svc.SetStaff(ctx, staff.Email, false); err != nil {
		t.Fatal(err)
	}
	if list, _ := svc.ListStaff(ctx); len(list) != 0 {
		t.Errorf("staff after removal: %+v", list)
	}
}

// TestSandboxTickets: the reopen window runs on the account's sandbox clock (29 days
// on reopens, 31 days on is a 422), and a sandbox reset removes the account's
// tickets and files, another account's staying.
func TestSandboxTickets(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t)
	a := env.NewAccount("en", "50", "")
	b := env.NewAccount("en", "50", "")
	tk := data(t, a.Do("POST", "/tickets", map[string]any{"subject": "Clock", "body": "b"}).Want(t, 201))
	id := itoa(num(t, tk["id"]))
	data(t, a.Do("POST", "/tickets/"+id+"/close", nil).Want(t, 200))
	a.Sandbox("POST", "/clock", map[string]any{"advance": "696h"}).Want(t, 200) // 29 days
	data(t, a.Do("POST", "/tickets/"+id+"/messages", map[string]any{"body": "back"}).Want(t, 201))
	data(t, a.Do("POST", "/tickets/"+id+"/close", nil).Want(t, 200))
	a.Sandbox("POST", "/clock", map[string]any{"advance": "744h"}).Want(t, 200) // 31 days
	wantInvalid(t, a.Do("POST", "/tickets/"+id+"/messages", map[string]any{"body": "too late"}), "body")

	fa := data(t, upload(t, a, "a.txt", "text/plain", []byte("a")).Want(t, 201))
	data(t, a.Do("POST", "/tickets", map[string]any{"subject": "With a file", "body": "b", "attachment_ids": []int64{num(t, fa["id"])}}).Want(t, 201))
	loose := data(t, upload(t, a, "loose.txt", "text/plain", []byte("l")).Want(t, 201))
	fb := data(t, upload(t, b, "b.txt", "text/plain", []byte("b")).Want(t, 201))
	tb := data(t, b.Do("POST", "/tickets", map[string]any{"subject": "B's", "body": "b", "attachment_ids": []int64{num(t, fb["id"])}}).Want(t, 201))

	a.Sandbox("POST", "/reset", nil).Want(t, 200)
	if l := items(t, a.Do("GET", "/tickets", nil).Want(t, 200)); len(l) != 0 {
		t.Errorf("a's tickets after the reset: %v", l)
	}
	wantNotFound(t, a.Do("GET", "/tickets/"+id, nil))
	wantNotFound(t, a.Do("GET", "/attachments/"+itoa(num(t, fa["id"])), nil))
	wantNotFound(t, a.Do("GET", "/attachments/"+itoa(num(t, loose["id"])), nil))
	if got := data(t, b.Do("GET", "/tickets/"+itoa(num(t, tb["id"])), nil).Want(t, 200)); len(got["messages"].([]any)) != 1 {
		t.Errorf("b's ticket after a's reset: %v", got)
	}
	b.Do("GET", "/attachments/"+itoa(num(t, fb["id"])), nil).Want(t, 200)
	// A new ticket after the reset counts from nothing.
	data(t, a.Do("POST", "/tickets", map[string]any{"subject": "Fresh", "body": "b"}).Want(t, 201))
}

// TestAttachmentIdempotency: an upload with an Idempotency-Key stores one file for
// two POSTs; the same key with a file that differs only past 512 KiB (past what the
// other routes' fingerprints cover) is another request: 422.
func TestAttachmentIdempotency(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	file := bytes.Repeat([]byte("a"), 1<<20)
	h := http.Header{"Content-Type": {"text/plain"}, "Idempotency-Key": {"upload-once"}}
	r1 := env.Do(a.Token, "POST", "/attachments", file, h).Want(t, 201)
	r2 := env.Do(a.Token, "POST", "/attachments", file, h).Want(t, 201)
	if num(t, data(t, r1)["id"]) != num(t, data(t, r2)["id"]) || r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %s / %s", r1.Body, r2.Body)
	}
	other := bytes.Clone(file)
	other[len(other)-1] = 'b'
	wantInvalid(t, env.Do(a.Token, "POST", "/attachments", other, h), "idempotency_key")
	if u, err := env.App.Service.Usage(context.Background(), hosting.Principal{Account: hosting.Account{ID: a.ID}}); err != nil || u.AttachmentMB != 1 {
		t.Errorf("usage %+v, %v: one file of 1 MiB", u, err)
	}
}
