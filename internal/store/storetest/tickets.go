package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// tickets checks support tickets (api/openapi.yaml, Support): a ticket and its messages read
// back (oldest first, notes only when asked), attachments named by one message only
// (a second message naming one is a conflict that writes nothing), another account's
// ticket and attachment not found, a staff reply's attachment readable by the
// ticket's account but not a note's, lists latest activity first with the staff
// queue's filters, the quotas' usage, staff accounts, unattached attachments pruned
// by age, and a reset removing the account's tickets and files.
func tickets(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	in := func(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
		t.Helper()
		if err := s.InTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	s, a, b := twoAccounts(t, open, "tick", now)
	var staff int64
	in(t, s, func(tx store.Tx) error {
		var err error
		staff, err = tx.CreateAccount(ctx, hosting.Account{Email: "tick-staff@example.com", Name: "Sam", Language: "en", Currency: "EUR", CreatedAt: now})
		if err != nil {
			return err
		}
		return tx.SetStaff(ctx, staff, true)
	})
	if err := s.InTx(ctx, func(tx store.Tx) error { return tx.SetStaff(ctx, 1<<40, true) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetStaff of no account: %v, want ErrNotFound", err)
	}
	if st, err := s.Staff(ctx); err != nil || len(st) != 1 || st[0].ID != staff || !st[0].Staff {
		t.Fatalf("staff %+v, %v", st, err)
	}
	if acct, err := s.Account(ctx, a); err != nil || acct.Staff {
		t.Errorf("a new account: %+v, %v (not staff)", acct, err)
	}

	upload := func(acct int64, name string, data []byte, at time.Time) int64 {
		t.Helper()
		var id int64
		in(t, s, func(tx store.Tx) error {
			var err error
			id, err = tx.CreateAttachment(ctx, hosting.Attachment{AccountID: acct, Filename: name, ContentType: "text/plain; charset=utf-8",
				Data: data, CreatedAt: at})
			return err
		})
		return id
	}
	f1 := upload(a, "one.txt", []byte("hello"), now)
	f2 := upload(a, "two.txt", bytes.Repeat([]byte{'x'}, 1<<20), now)
	fb := upload(b, "b.txt", []byte("other"), now)

	var tk int64
	var m1 int64
	in(t, s, func(tx store.Tx) error {
		var err error
		tk, err = tx.CreateTicket(ctx, hosting.Ticket{AccountID: a, Subject: "Disk full", Status: hosting.TicketOpen,
			Priority: hosting.PriorityHigh, CreatedAt: now, UpdatedAt: now})
		if err != nil {
			return err
		}
		m1, err = tx.AddTicketMessage(ctx, hosting.TicketMessage{TicketID: tk, Kind: hosting.MessageCustomer, AuthorID: &a, AuthorName: "A",
			Body: "help", CreatedAt: now}, a, []int64{f1, f2})
		return err
	})
	// Naming one taken already, or another account's, writes nothing.
	for _, ids := range [][]int64{{f1}, {fb}, {1 << 40}} {
		err := s.InTx(ctx, func(tx store.Tx) error {
			_, err := tx.AddTicketMessage(ctx, hosting.TicketMessage{TicketID: tk, Kind: hosting.MessageCustomer, AuthorName: "A", Body: "again",
				CreatedAt: now}, a, ids)
			return err
		})
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("a message naming %v: %v, want ErrConflict", ids, err)
		}
	}
	later := now.Add(time.Hour)
	fs := upload(staff, "fix.txt", []byte("do this"), later)
	fn := upload(staff, "secret.txt", []byte("internal"), later)
	in(t, s, func(tx store.Tx) error {
		if _, err := tx.AddTicketMessage(ctx, hosting.TicketMessage{TicketID: tk, Kind: hosting.MessageStaff, AuthorID: &staff, AuthorName: "Sam",
			Body: "try this", CreatedAt: later}, staff, []int64{fs}); err != nil {
			return err
		}
		if _, err := tx.AddTicketMessage(ctx, hosting.TicketMessage{TicketID: tk, Kind: hosting.MessageNote, AuthorName: "Sam",
			Body: "customer is grumpy", CreatedAt: later.Add(time.Second)}, staff, []int64{fn}); err != nil {
			return err
		}
		closed := later
		return tx.UpdateTicket(ctx, hosting.Ticket{ID: tk, Status: hosting.TicketAnswered, Priority: hosting.PriorityUrgent, AssigneeID: &staff,
			UpdatedAt: later, ClosedAt: &closed})
	})

	got, err := s.Ticket(ctx, a, tk)
	if err != nil || got.Subject != "Disk full" || got.Status != hosting.TicketAnswered || got.Priority != hosting.PriorityUrgent ||
		got.AssigneeID == nil || *got.AssigneeID != staff || !got.UpdatedAt.Equal(later) || !got.CreatedAt.Equal(now) ||
		got.ClosedAt == nil || got.ServerID != nil {
		t.Errorf("ticket %+v, %v", got, err)
	}
	if _, err := s.Ticket(ctx, b, tk); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another account's ticket: %v, want ErrNotFound", err)
	}
	if _, err := s.Ticket(ctx, 0, tk); err != nil {
		t.Errorf("a ticket of any account: %v", err)
	}
	msgs, err := s.TicketMessages(ctx, tk, false)
	if err != nil || len(msgs) != 2 || msgs[0].ID != m1 || msgs[0].Kind != hosting.MessageCustomer || msgs[1].Kind != hosting.MessageStaff ||
		len(msgs[0].Attachments) != 2 || len(msgs[1].Attachments) != 1 || msgs[0].AuthorID == nil || *msgs[0].AuthorID != a {
		t.Fatalf("customer's messages %+v, %v", msgs, err)
	}
	if at := msgs[0].Attachments[1]; at.ID != f2 || at.Size != 1<<20 || at.Filename != "two.txt" || at.Data != nil || at.MessageID == nil || *at.MessageID != m1 {
		t.Errorf("attachment %+v", at)
	}
	all, err := s.TicketMessages(ctx, tk, true)
	if err != nil || len(all) != 3 || all[2].Kind != hosting.MessageNote || all[2].AuthorID != nil || len(all[2].Attachments) != 1 {
		t.Errorf("staff's messages %+v, %v", all, err)
	}

	// Who reads an attachment: its uploader; the ticket's account a staff reply's,
	// not a note's; nobody else; staff (0) any.
	for _, c := range []struct {
		acct, id int64
		ok       bool
	}{{a, f1, true}, {b, f1, false}, {a, fs, true}, {a, fn, false}, {b, fb, true}, {a, fb, false}, {0, fn, true}, {staff, fn, true}} {
		att, err := s.Attachment(ctx, c.acct, c.id)
		if c.ok && (err != nil || len(att.Data) != int(att.Size)) {
			t.Errorf("attachment %d for %d: %+v, %v", c.id, c.acct, att, err)
		} else if !c.ok && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("attachment %d for %d: %v, want ErrNotFound", c.id, c.acct, err)
		}
	}
	if att, err := s.Attachment(ctx, a, f1); err != nil || string(att.Data) != "hello" {
		t.Errorf("data %q, %v", att.Data, err)
	}
	if of, err := s.AttachmentsOf(ctx, a, []int64{fb, f2, f1, 1 << 40}); err != nil || len(of) != 2 || of[0].ID != f1 || of[1].ID != f2 {
		t.Errorf("AttachmentsOf %+v, %v", of, err)
	}
	if n, err := s.AttachmentBytes(ctx, a); err != nil || n != 5+1<<20 {
		t.Errorf("attachment bytes %d, %v", n, err)
	}

	// Lists: latest activity first; the queue's filters.
	var tk2, tk3 int64
	in(t, s, func(tx store.Tx) error {
		var err error
		if tk2, err = tx.CreateTicket(ctx, hosting.Ticket{AccountID: a, Subject: "Second", Status: hosting.TicketOpen, Priority: hosting.PriorityLow,
			CreatedAt: now, UpdatedAt: later.Add(time.Minute)}); err != nil {
			return err
		}
		tk3, err = tx.CreateTicket(ctx, hosting.Ticket{AccountID: b, Subject: "Third", Status: hosting.TicketClosed, Priority: hosting.PriorityLow,
			CreatedAt: now, UpdatedAt: now, ClosedAt: &now})
		return err
	})
	ids := func(f store.TicketFilter, limit, offset int) ([]int64, int) {
		t.Helper()
		list, total, err := s.Tickets(ctx, f, limit, offset)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, tk := range list {
			out = append(out, tk.ID)
		}
		return out, total
	}
	for _, c := range []struct {
		f     store.TicketFilter
		want  []int64
		limit int
		total int
	}{
		{store.TicketFilter{AccountID: a}, []int64{tk2, tk}, 0, 2},
		{store.TicketFilter{AccountID: a}, []int64{tk}, 1, 2}, // page 2 of 1 (offset 1 below)
		{store.TicketFilter{}, []int64{tk2, tk, tk3}, 0, 3},
		{store.TicketFilter{Status: hosting.TicketClosed}, []int64{tk3}, 0, 1},
		{store.TicketFilter{Priority: hosting.PriorityLow}, []int64{tk2, tk3}, 0, 2},
		{store.TicketFilter{Assignee: staff}, []int64{tk}, 0, 1},
		{store.TicketFilter{Unassigned: true}, []int64{tk2, tk3}, 0, 2},
		{store.TicketFilter{AccountID: b, Status: hosting.TicketOpen}, nil, 0, 0},
	} {
		offset := 0
		if c.limit == 1 {
			offset = 1
		}
		got, total := ids(c.f, c.limit, offset)
		if !equalIDs(got, c.want) || total != c.total {
			t.Errorf("Tickets(%+v, %d, %d) = %v (%d in all), want %v (%d)", c.f, c.limit, offset, got, total, c.want, c.total)
		}
	}

	// Usage: tickets not closed; attachment MiB rounded up.
	if u, err := s.Usage(ctx, a, now); err != nil || u.Tickets != 2 || u.AttachmentMB != 2 {
		t.Errorf("usage of a: %+v, %v (2 open tickets, 1 MiB + 5 bytes as 2 MiB)", u, err)
	}
	if u, err := s.Usage(ctx, b, now); err != nil || u.Tickets != 0 || u.AttachmentMB != 1 {
		t.Errorf("usage of b: %+v, %v", u, err)
	}
	in(t, s, func(tx store.Tx) error {
		q := hosting.DefaultQuotas
		q.Tickets, q.AttachmentMB = 3, 7
		if err := tx.SetQuotas(ctx, b, q); err != nil {
			return err
		}
		acct, err := tx.LockAccount(ctx, b)
		if err == nil && (acct.Quotas.Tickets != 3 || acct.Quotas.AttachmentMB != 7) {
			t.Errorf("quotas %+v", acct.Quotas)
		}
		return err
	})

	// Unattached ones older than the cut go, the others stay.
	old := upload(a, "old.txt", []byte("old"), now.Add(-25*time.Hour))
	fresh := upload(a, "fresh.txt", []byte("fresh"), now)
	in(t, s, func(tx store.Tx) error {
		n, err := tx.DeleteUnattachedAttachments(ctx, now.Add(-24*time.Hour), 100)
		if err == nil && n != 1 {
			t.Errorf("pruned %d, want 1", n)
		}
		return err
	})
	if _, err := s.Attachment(ctx, a, old); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an old unattached attachment: %v, want gone", err)
	}
	if _, err := s.Attachment(ctx, a, fresh); err != nil {
		t.Errorf("a fresh one: %v", err)
	}

	// A reset takes a's tickets, their messages and every file of them (staff's
	// reply's too), and a's loose uploads; b's stay.
	in(t, s, func(tx store.Tx) error { _, err := tx.ResetAccount(ctx, a, now); return err })
	if got, _ := ids(store.TicketFilter{}, 0, 0); !equalIDs(got, []int64{tk3}) {
		t.Errorf("tickets after a's reset: %v, want [%d]", got, tk3)
	}
	for _, id := range []int64{f1, f2, fs, fn, fresh} {
		if _, err := s.Attachment(ctx, 0, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("attachment %d after the reset: %v, want gone", id, err)
		}
	}
	if _, err := s.Attachment(ctx, b, fb); err != nil {
		t.Errorf("b's attachment after a's reset: %v", err)
	}
	if msgs, err := s.TicketMessages(ctx, tk, true); err != nil || len(msgs) != 0 {
		t.Errorf("messages after the reset: %v, %v", msgs, err)
	}
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
