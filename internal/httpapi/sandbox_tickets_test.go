package httpapi_test

import (
	"slices"
	"strings"
	"testing"
)

// TestSandboxTicketReply: POST /sandbox/v1/tickets/{id}/reply answers the account's
// own ticket as staff: 201 with the staff message (signed author_name, Support
// without one), the ticket answered and ticket.replied emitted, a closed ticket
// reopened; another account's ticket and no ticket 404 (before the body's 422); the
// body and author_name judged under their fields, in the account's language; a
// customer's reply then makes it customer_reply, the answered path a client tests.
func TestSandboxTicketReply(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t)
	a := env.NewAccount("en", "50", "")
	b := env.NewAccount("de", "50", "")
	tk := data(t, a.Do("POST", "/tickets", map[string]any{"subject": "Slow", "body": "It is slow."}).Want(t, 201))
	id := itoa(num(t, tk["id"]))

	m := data(t, a.Sandbox("POST", "/tickets/"+id+"/reply", map[string]any{"body": "We moved it.", "author_name": "Ada"}).Want(t, 201))
	if m["author"] != "staff" || m["author_name"] != "Ada" || m["body"] != "We moved it." || len(m["attachments"].([]any)) != 0 {
		t.Errorf("the staff reply: %v", m)
	}
	got := data(t, a.Do("GET", "/tickets/"+id, nil).Want(t, 200))
	if got["status"] != "answered" || !slices.Equal(messageBodies(t, got), []string{"customer:It is slow.", "staff:We moved it."}) {
		t.Errorf("the ticket after the sandbox reply: %v", got)
	}
	if evs := ticketEvents(t, a); !slices.Contains(evs, "ticket.replied") {
		t.Errorf("events %v, want ticket.replied", evs)
	}
	data(t, a.Do("POST", "/tickets/"+id+"/messages", map[string]any{"body": "Thanks."}).Want(t, 201))
	if got := data(t, a.Do("GET", "/tickets/"+id, nil).Want(t, 200)); got["status"] != "customer_reply" {
		t.Errorf("after the customer's answer: %v", got["status"])
	}

	data(t, a.Do("POST", "/tickets/"+id+"/close", nil).Want(t, 200))
	m = data(t, a.Sandbox("POST", "/tickets/"+id+"/reply", map[string]any{"body": "One more thing."}).Want(t, 201))
	if m["author_name"] != "Support" {
		t.Errorf("a reply without author_name is signed %v, want Support", m["author_name"])
	}
	if got := data(t, a.Do("GET", "/tickets/"+id, nil).Want(t, 200)); got["status"] != "answered" || got["closed_at"] != nil {
		t.Errorf("a closed ticket after a staff reply: %v", got)
	}
	if evs := ticketEvents(t, a); !slices.Contains(evs, "ticket.reopened") {
		t.Errorf("events %v, want ticket.reopened", evs)
	}

	// Another account's ticket, and none: 404, even with a body that is wrong.
	wantNotFound(t, b.Sandbox("POST", "/tickets/"+id+"/reply", map[string]any{"body": "Mine now."}))
	wantNotFound(t, b.Sandbox("POST", "/tickets/"+id+"/reply", map[string]any{"nope": 1}))
	wantNotFound(t, a.Sandbox("POST", "/tickets/999999/reply", map[string]any{"body": "x"}))
	if got := data(t, a.Do("GET", "/tickets/"+id, nil).Want(t, 200)); len(got["messages"].([]any)) != 4 {
		t.Errorf("b's attempts changed a's ticket: %v", messageBodies(t, got))
	}

	tb := data(t, b.Do("POST", "/tickets", map[string]any{"subject": "B", "body": "b"}).Want(t, 201))
	idb := itoa(num(t, tb["id"]))
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no body", map[string]any{"author_name": "Ada"}, "body"},
		{"blank body", map[string]any{"body": " \n "}, "body"},
		{"long body", map[string]any{"body": strings.Repeat("x", 20001)}, "body"},
		{"two lines", map[string]any{"body": "b", "author_name": "Ada\nBob"}, "author_name"},
		{"long name", map[string]any{"body": "b", "author_name": strings.Repeat("n", 101)}, "author_name"},
		{"unknown field", map[string]any{"body": "b", "attachment_ids": []int{1}}, "attachment_ids"},
	} {
		e := wantInvalid(t, b.Sandbox("POST", "/tickets/"+idb+"/reply", tc.body), tc.field)
		if tc.field == "author_name" && e.Errors["author_name"][0] != "Der Name ist eine Zeile mit höchstens 100 Zeichen." {
			t.Errorf("%s: %q, want the message in German", tc.name, e.Errors["author_name"])
		}
	}
	if got := data(t, b.Do("GET", "/tickets/"+idb, nil).Want(t, 200)); got["status"] != "open" || len(got["messages"].([]any)) != 1 {
		t.Errorf("b's ticket after refused replies: %v", got)
	}
	data(t, b.Sandbox("POST", "/tickets/"+idb+"/reply", map[string]any{"body": "b", "author_name": strings.Repeat("n", 100)}).Want(t, 201))
}
