package ops_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testenv"
)

func strp(s string) *string { return &s }

// TestStaffTickets: the staff side through the core: a note changes nothing the
// customer sees (no event, status and activity time as they were) while staff read
// it; a reply by a staff account carries its uploads, answers the ticket and tells
// the customer (ticket.replied, the message's id); assigning takes staff accounts
// only; the queue filters; SetStaff of an unknown email fails.
func TestStaffTickets(t *testing.T) {
	t.Parallel()
	clock := testenv.NewFakeClock(time.Date(2027, 1, 10, 8, 0, 0, 0, time.UTC))
	env := testenv.New(t, testenv.Options{Clock: clock.Now})
	svc, ctx := env.App.Service, context.Background()
	cust := newHolder(t, svc, "cust@example.com")
	staffAcct := newHolder(t, svc, "staff@example.com")
	if _, err := svc.SetStaff(ctx, "nobody@example.com", true); err == nil {
		t.Error("SetStaff of no account succeeded")
	}
	staffAcct, err := svc.SetStaff(ctx, staffAcct.Email, true)
	if err != nil {
		t.Fatal(err)
	}
	p := hosting.Principal{Account: cust}
	tk, err := svc.CreateTicket(ctx, p, ops.TicketCreate{Subject: strp("Slow"), Body: strp("It is slow.")})
	if err != nil {
		t.Fatal(err)
	}
	created := tk.UpdatedAt

	clock.Advance(time.Hour)
	note, err := svc.StaffNote(ctx, tk.ID, ops.StaffAuthor{AccountID: &staffAcct.ID}, "Check the host first.")
	if err != nil || note.Kind != hosting.MessageNote {
		t.Fatalf("StaffNote: %+v, %v", note, err)
	}
	seen, err := svc.Ticket(ctx, p, tk.ID)
	if err != nil || len(seen.Messages) != 1 || seen.Status != hosting.TicketOpen || !seen.UpdatedAt.Equal(created) {
		t.Errorf("the customer's view after a note: %+v, %v", seen, err)
	}
	full, err := svc.StaffTicket(ctx, tk.ID)
	if err != nil || len(full.Messages) != 2 || full.Messages[1].Body != "Check the host first." {
		t.Errorf("staff's view: %+v, %v", full.Messages, err)
	}
	evs, err := svc.Events(ctx, p, hosting.EventFilter{Limit: 100, Types: []hosting.EventPattern{"ticket.*"}}, 0)
	if err != nil || len(evs) != 1 || evs[0].Type != hosting.EventTicketCreated {
		t.Fatalf("events after the note: %+v, %v (the creation's only)", evs, err)
	}

	clock.Advance(time.Hour)
	sp := hosting.Principal{Account: staffAcct}
	f, err := svc.UploadAttachment(ctx, sp, "steps.txt", "text/plain", []byte("1. reboot\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.StaffReply(ctx, tk.ID, ops.StaffAuthor{Name: "CLI"}, "x", []int64{f.ID}); hosting.ErrorCode(err) != hosting.CodeValidationFailed {
		t.Errorf("a reply without an account naming staff's file: %v", err)
	}
	reply, err := svc.StaffReply(ctx, tk.ID, ops.StaffAuthor{AccountID: &staffAcct.ID, Name: "Ada from support"}, "Reboot it.", []int64{f.ID})
	if err != nil || reply.AuthorName != "Ada from support" {
		t.Fatalf("StaffReply: %+v, %v", reply, err)
	}
	seen, _ = svc.Ticket(ctx, p, tk.ID)
	if seen.Status != hosting.TicketAnswered || !seen.UpdatedAt.Equal(clock.Now()) || len(seen.Messages) != 2 ||
		len(seen.Messages[1].Attachments) != 1 || seen.Messages[1].Kind != hosting.MessageStaff {
		t.Errorf("after the reply: %+v", seen)
	}
	if _, err := svc.Attachment(ctx, p, f.ID); err != nil {
		t.Errorf("the customer reads staff's file: %v", err)
	}
	evs, _ = svc.Events(ctx, p, hosting.EventFilter{Limit: 100, Types: []hosting.EventPattern{"ticket.*"}}, 0)
	if len(evs) != 2 || evs[1].Type != hosting.EventTicketReplied || evs[1].Resource != (hosting.EventResource{Type: "ticket", ID: tk.ID}) {
		t.Fatalf("events after the reply: %+v", evs)
	}

	if _, err := svc.Assign(ctx, tk.ID, &cust.ID); hosting.ErrorCode(err) != hosting.CodeValidationFailed {
		t.Errorf("assigned to a customer: %v", err)
	}
	if _, err := svc.Assign(ctx, 1<<40, nil); hosting.ErrorCode(err) != hosting.CodeNotFound {
		t.Errorf("assigning no ticket: %v", err)
	}
	if got, err := svc.Assign(ctx, tk.ID, &staffAcct.ID); err != nil || *got.AssigneeID != staffAcct.ID {
		t.Fatalf("Assign: %+v, %v", got, err)
	}
	if list, total, err := svc.StaffTickets(ctx, store.TicketFilter{Assignee: staffAcct.ID, Status: hosting.TicketAnswered}, 1); err != nil ||
		total != 1 || list[0].ID != tk.ID {
		t.Errorf("the queue: %+v (%d), %v", list, total, err)
	}
	if got, err := svc.Assign(ctx, tk.ID, nil); err != nil || got.AssigneeID != nil {
		t.Errorf("unassigned: %+v, %v", got, err)
	}
	if got, err := svc.StaffClose(ctx, tk.ID); err != nil || got.Status != hosting.TicketClosed || len(got.Messages) != 3 {
		t.Errorf("StaffClose: %+v, %v (staff's view, the note included)", got, err)
	}
}

// TestAttachmentRace: two messages naming one file at once: one takes it, the other
// is a 422 on attachment_ids and writes nothing.
func TestAttachmentRace(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	svc, ctx := env.App.Service, context.Background()
	p := hosting.Principal{Account: newHolder(t, svc, "race@example.com")}
	var ids []int64
	for range 2 {
		tk, err := svc.CreateTicket(ctx, p, ops.TicketCreate{Subject: strp("s"), Body: strp("b")})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tk.ID)
	}
	for range 5 {
		f, err := svc.UploadAttachment(ctx, p, "f.txt", "text/plain", []byte("f"))
		if err != nil {
			t.Fatal(err)
		}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() {
				_, errs[i] = svc.AddTicketMessage(ctx, p, ids[i], ops.TicketReply{Body: strp("mine"), AttachmentIDs: []int64{f.ID}})
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else if hosting.ErrorCode(err) != hosting.CodeValidationFailed {
				t.Fatalf("the loser: %v", err)
			}
		}
		if ok != 1 {
			t.Fatalf("%d of 2 messages took the file: %v", ok, errs)
		}
	}
	total := 0
	for _, id := range ids {
		tk, err := svc.Ticket(ctx, p, id)
		if err != nil {
			t.Fatal(err)
		}
		total += len(tk.Messages) - 1
	}
	if total != 5 {
		t.Errorf("%d messages written, want 5 (the losers' none)", total)
	}
}
