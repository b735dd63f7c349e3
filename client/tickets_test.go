package client_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/testenv"
)

// pngFile is a small real PNG (a 4×4 red square).
func pngFile(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for i := range 16 {
		img.Set(i%4, i/4, color.RGBA{R: 255, A: 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// everyTicketEndpoint: each ticket and attachment method once with success, the
// answered path through the sandbox's staff reply, for TestEveryEndpoint.
func everyTicketEndpoint(t *testing.T, ctx context.Context, c *client.Client) {
	t.Helper()
	shot := pngFile(t)
	att := must[*api.Attachment](t)(c.UploadAttachment(ctx, bytes.NewReader(shot), "image/png", "screen shot.png"))
	if att.Filename != "screen shot.png" || att.ContentType != "image/png" || att.Size != int64(len(shot)) {
		t.Errorf("UploadAttachment: %+v", att)
	}
	tk := must[*api.Ticket](t)(c.CreateTicket(ctx, api.TicketCreate{Subject: client.Ptr("Disk slow"), Body: client.Ptr("Since noon."),
		Priority: client.Ptr(client.PriorityHigh), AttachmentIDs: []int64{att.ID}}))
	if tk.Status != client.TicketOpen || tk.Priority != client.PriorityHigh || len(tk.Messages) != 1 ||
		len(tk.Messages[0].Attachments) != 1 || tk.Messages[0].Attachments[0].ID != att.ID {
		t.Fatalf("CreateTicket: %+v", tk)
	}
	f := must[*client.AttachmentFile](t)(c.GetAttachment(ctx, att.ID))
	if !bytes.Equal(f.Data, shot) || f.Filename != "screen shot.png" || f.ContentType != "image/png" {
		t.Errorf("GetAttachment: %q %q %d bytes, want the PNG uploaded", f.Filename, f.ContentType, len(f.Data))
	}
	staff := must[*api.TicketMessage](t)(c.ReplySandboxTicket(ctx, tk.ID, api.SandboxTicketReply{Body: client.Ptr("Fixed."), AuthorName: client.Ptr("Ada")}))
	if staff.Author != client.AuthorStaff || staff.AuthorName != "Ada" {
		t.Errorf("ReplySandboxTicket: %+v", staff)
	}
	msg := must[*api.TicketMessage](t)(c.AddTicketMessage(ctx, tk.ID, api.TicketMessageCreate{Body: client.Ptr("Thanks!")}))
	if msg.Author != client.AuthorCustomer || msg.Body != "Thanks!" {
		t.Errorf("AddTicketMessage: %+v", msg)
	}
	got := must[*api.Ticket](t)(c.GetTicket(ctx, tk.ID))
	var thread []string
	for _, m := range got.Messages {
		thread = append(thread, m.Author+":"+m.AuthorName+":"+m.Body)
	}
	if got.Status != client.TicketCustomerReply || len(thread) != 3 || !strings.HasPrefix(thread[1], "staff:Ada:Fixed.") || thread[2] != "customer:"+got.Messages[0].AuthorName+":Thanks!" {
		t.Errorf("GetTicket: %s %q", got.Status, thread)
	}
	p := must[*api.Page[api.Ticket]](t)(c.ListTickets(ctx, client.TicketListOptions{Status: client.TicketCustomerReply}))
	if len(p.Data) != 1 || p.Data[0].ID != tk.ID || p.Data[0].Messages != nil || p.Meta.Total != 1 {
		t.Errorf("ListTickets customer_reply: %+v", p)
	}
	if got = must[*api.Ticket](t)(c.CloseTicket(ctx, tk.ID)); got.Status != client.TicketClosed || got.ClosedAt == nil {
		t.Errorf("CloseTicket: %+v", got)
	}
}

// TestTicketErrors: the errors the doc comments name: another account's ticket and
// file ErrNotFound, a token without tickets ErrMissingScope (and still reading),
// ErrValidation under the field, a file not what its type says refused.
func TestTicketErrors(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 20})
	acct := env.NewAccount("en", "100", "")
	other := env.NewAccount("en", "100", "")
	c, oc := newClient(t, env, acct.Token), newClient(t, env, other.Token)
	ctx := ctxFor(t)

	att := must[*api.Attachment](t)(c.UploadAttachment(ctx, bytes.NewReader(pngFile(t)), "image/png", "a.png"))
	tk := must[*api.Ticket](t)(c.CreateTicket(ctx, api.TicketCreate{Subject: client.Ptr("Mine"), Body: client.Ptr("Mine."), AttachmentIDs: []int64{att.ID}}))
	_, err := oc.GetTicket(ctx, tk.ID)
	wantError(t, err, 404, "not_found", client.ErrNotFound)
	_, err = oc.AddTicketMessage(ctx, tk.ID, api.TicketMessageCreate{Body: client.Ptr("Mine now.")})
	wantError(t, err, 404, "not_found", client.ErrNotFound)
	_, err = oc.CloseTicket(ctx, tk.ID)
	wantError(t, err, 404, "not_found", client.ErrNotFound)
	_, err = oc.GetAttachment(ctx, att.ID)
	wantError(t, err, 404, "not_found", client.ErrNotFound)
	if p := must[*api.Page[api.Ticket]](t)(oc.ListTickets(ctx, client.TicketListOptions{})); len(p.Data) != 0 {
		t.Errorf("ListTickets of another account: %+v", p.Data)
	}
	_, err = oc.CreateTicket(ctx, api.TicketCreate{Subject: client.Ptr("Theirs"), Body: client.Ptr("x"), AttachmentIDs: []int64{att.ID}})
	if e := wantError(t, err, 422, "validation_failed", client.ErrValidation); len(e.Fields["attachment_ids"]) == 0 {
		t.Errorf("another account's file: %v", e.Fields)
	}

	reader := newClient(t, env, acct.NewToken("read"))
	_, err = reader.CreateTicket(ctx, api.TicketCreate{Subject: client.Ptr("S"), Body: client.Ptr("B")})
	wantError(t, err, 403, "missing_scope", client.ErrMissingScope)
	_, err = reader.AddTicketMessage(ctx, tk.ID, api.TicketMessageCreate{Body: client.Ptr("B")})
	wantError(t, err, 403, "missing_scope", client.ErrMissingScope)
	_, err = reader.CloseTicket(ctx, tk.ID)
	wantError(t, err, 403, "missing_scope", client.ErrMissingScope)
	_, err = reader.UploadAttachment(ctx, strings.NewReader("hello\n"), "text/plain", "a.txt")
	wantError(t, err, 403, "missing_scope", client.ErrMissingScope)
	if got := must[*api.Ticket](t)(reader.GetTicket(ctx, tk.ID)); got.ID != tk.ID {
		t.Errorf("GetTicket with read: %+v", got)
	}
	must[*client.AttachmentFile](t)(reader.GetAttachment(ctx, att.ID))

	for _, tc := range []struct {
		name  string
		req   api.TicketCreate
		field string
	}{
		{"no subject", api.TicketCreate{Body: client.Ptr("B")}, "subject"},
		{"long subject", api.TicketCreate{Subject: client.Ptr(strings.Repeat("s", 121)), Body: client.Ptr("B")}, "subject"},
		{"blank body", api.TicketCreate{Subject: client.Ptr("S"), Body: client.Ptr(" \n")}, "body"},
		{"priority", api.TicketCreate{Subject: client.Ptr("S"), Body: client.Ptr("B"), Priority: client.Ptr("asap")}, "priority"},
		{"server", api.TicketCreate{Subject: client.Ptr("S"), Body: client.Ptr("B"), ServerID: api.Some(int64(999999))}, "server_id"},
	} {
		_, err := c.CreateTicket(ctx, tc.req)
		if e := wantError(t, err, 422, "validation_failed", client.ErrValidation); len(e.Fields[tc.field]) == 0 {
			t.Errorf("%s: fields %v, want %s", tc.name, e.Fields, tc.field)
		}
	}
	_, err = c.ListTickets(ctx, client.TicketListOptions{Status: "pending"})
	if e := wantError(t, err, 422, "validation_failed", client.ErrValidation); len(e.Fields["status"]) == 0 {
		t.Errorf("status pending: %v", e.Fields)
	}
	_, err = c.UploadAttachment(ctx, strings.NewReader("<html><script>alert(1)</script>"), "text/plain", "x.txt")
	if e := wantError(t, err, 422, "validation_failed", client.ErrValidation); len(e.Fields["content_type"]) == 0 {
		t.Errorf("HTML as text/plain: %v", e.Fields)
	}
	_, err = c.UploadAttachment(ctx, bytes.NewReader(make([]byte, client.MaxAttachmentSize+10)), "text/plain", "big.txt")
	if e := wantError(t, err, 422, "validation_failed", client.ErrValidation); len(e.Fields["body"]) == 0 {
		t.Errorf("a file over 5 MiB: %v", e.Fields)
	}
	_, err = c.GetAttachment(ctx, 999999)
	wantError(t, err, 404, "not_found", client.ErrNotFound)
	// The sandbox's staff reply: ErrNotFound without --sandbox.
	_, err = c.ReplySandboxTicket(ctx, tk.ID, api.SandboxTicketReply{Body: client.Ptr("x")})
	wantError(t, err, 404, "not_found", client.ErrNotFound)

	// A name that is a path arrives as its base; AllTickets yields each ticket once.
	if a := must[*api.Attachment](t)(c.UploadAttachment(ctx, strings.NewReader("log\n"), "text/plain", "../../etc/passwd")); a.Filename != "passwd" {
		t.Errorf("a path as the name: %q, want passwd", a.Filename)
	}
	for range 2 {
		must[*api.Ticket](t)(c.CreateTicket(ctx, api.TicketCreate{Subject: client.Ptr("More"), Body: client.Ptr("More.")}))
	}
	var ids []int64
	for tk, err := range c.AllTickets(ctx, client.TicketListOptions{Status: client.TicketOpen}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tk.ID)
	}
	if len(ids) != 3 || ids[2] != tk.ID {
		t.Errorf("AllTickets: %v, want 3, latest activity first (%d last)", ids, tk.ID)
	}
}

// TestSandboxTicketReply: ReplySandboxTicket on another account's ticket is
// ErrNotFound, a blank body ErrValidation under body.
func TestSandboxTicketReply(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 20, Sandbox: true})
	c := newClient(t, env, env.NewAccount("en", "100", "").Token)
	oc := newClient(t, env, env.NewAccount("en", "100", "").Token)
	ctx := ctxFor(t)
	tk := must[*api.Ticket](t)(c.CreateTicket(ctx, api.TicketCreate{Subject: client.Ptr("S"), Body: client.Ptr("B")}))
	_, err := oc.ReplySandboxTicket(ctx, tk.ID, api.SandboxTicketReply{Body: client.Ptr("Mine.")})
	wantError(t, err, 404, "not_found", client.ErrNotFound)
	_, err = c.ReplySandboxTicket(ctx, tk.ID, api.SandboxTicketReply{Body: client.Ptr(" ")})
	if e := wantError(t, err, 422, "validation_failed", client.ErrValidation); len(e.Fields["body"]) == 0 {
		t.Errorf("a blank body: %v", e.Fields)
	}
}
