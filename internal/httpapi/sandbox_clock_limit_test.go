package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/testenv"
)

// ledgerRows counts an account's ledger entries.
func ledgerRows(t *testing.T, e *testenv.Env, accountID int64) int {
	t.Helper()
	_, n, err := e.App.DB.Transactions(context.Background(), accountID, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// refusedAdvance asks for an advance that passes the limit and returns the 422's
// message on advance.
func refusedAdvance(t *testing.T, a *testenv.Account, by string) string {
	t.Helper()
	r := a.Sandbox("POST", "/clock", map[string]any{"advance": by}).Want(t, http.StatusUnprocessableEntity)
	body := r.Map(t)
	errs, _ := body["errors"].(map[string]any)
	msgs, _ := errs["advance"].([]any)
	if body["code"] != "validation_failed" || len(msgs) != 1 || len(errs) != 1 {
		t.Fatalf("advance %s past the limit: %s, want one error on advance", by, r.Body)
	}
	return msgs[0].(string)
}

// TestClockAheadLimit: a test clock moves at most 100 years ahead of the real time
// in all. Many advances summing past it (the 293rd advance of a year once wrapped the
// offset and the clock read 1734, and a server ordered then was metered hour by hour
// towards the present) are refused with a 422 on advance saying how much is left, in
// the account's language; the clock never reads earlier than before, and a refused
// advance charges nothing.
func TestClockAheadLimit(t *testing.T) {
	e := clockEnv(t)
	a := e.NewAccount("en", "100", "")
	last, refused := clockNow(t, a), 0
	for i := range 300 {
		r := a.Sandbox("POST", "/clock", map[string]any{"advance": "8760h"})
		switch r.Status {
		case http.StatusOK:
			if refused > 0 {
				t.Fatalf("advance %d moved the clock after one was refused: %s", i+1, r.Body)
			}
		case http.StatusUnprocessableEntity:
			refused++
		default:
			t.Fatalf("advance %d: %d %s", i+1, r.Status, r.Body)
		}
		now := clockNow(t, a)
		if now.Before(last) {
			t.Fatalf("after advance %d the clock reads %s, earlier than %s", i+1, now, last)
		}
		last = now
	}
	if want := clockStart.Add(hosting.MaxClockAhead); !last.Equal(want) || refused != 200 {
		t.Fatalf("after 300 advances of 8760h the clock reads %s with %d refused; want %s (100 years) with 200 refused", last, refused, want)
	}
	if msg, want := refusedAdvance(t, a, "1ms"), "The test clock can move at most 100 years (876000h) ahead of real time in all; 0s is left."; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}

	// Up to the limit exactly, with a server running (there is something to charge).
	b := e.NewAccount("en", "100", "")
	for range hosting.MaxClockAheadYears - 1 {
		advance(t, b, "8760h")
	}
	advance(t, b, "8758h")
	srv := order(t, b, baseOrder())
	waitOp(t, b, opID(t, srv))
	before, rows := clockNow(t, b), ledgerRows(t, e, b.ID)
	for _, tc := range []struct{ lang, by, want string }{
		{"en", "2h1ms", "The test clock can move at most 100 years (876000h) ahead of real time in all; 2h is left."},
		{"de", "3h", "Die Testuhr kann insgesamt höchstens 100 Jahre (876000h) vor der realen Zeit gehen; es bleiben 2h."},
		{"fr", "8760h", "L’horloge de test peut avancer d’au plus 100 ans (876000h) sur l’heure réelle au total ; il reste 2h."},
	} {
		b.Do("PATCH", "/me", map[string]any{"language": tc.lang}).Want(t, http.StatusOK)
		if msg := refusedAdvance(t, b, tc.by); msg != tc.want {
			t.Errorf("%s, %s: message %q, want %q", tc.lang, tc.by, msg, tc.want)
		}
		if now, n := clockNow(t, b), ledgerRows(t, e, b.ID); !now.Equal(before) || n != rows {
			t.Fatalf("a refused advance of %s moved the clock to %s (from %s) or charged (%d ledger rows, %d before)", tc.by, now, before, n, rows)
		}
	}
	b.Do("PATCH", "/me", map[string]any{"language": "en"}).Want(t, http.StatusOK)
	if got, want := advance(t, b, "1h59m59.999s"), before.Add(2*time.Hour-time.Millisecond); !got.Equal(want) {
		t.Fatalf("advance to 1 ms below the limit: %s, want %s", got, want)
	}
	if msg := refusedAdvance(t, b, "2ms"); !strings.Contains(msg, "; 1ms is left.") {
		t.Errorf("1 ms below the limit: %q", msg)
	}
	if got, want := advance(t, b, "1ms"), clockStart.Add(hosting.MaxClockAhead); !got.Equal(want) {
		t.Fatalf("advance to the limit exactly: %s, want %s", got, want)
	}
	_, hours := charges(t, e, b.ID)
	if hours[hosting.ResourceServer] != 3 {
		t.Errorf("server charged %d hours over the 2 hours to the limit, want 3 (its first, and the two started since)", hours[hosting.ResourceServer])
	}
	rows = ledgerRows(t, e, b.ID)
	for _, by := range []string{"1ms", "1h", "8760h"} {
		refusedAdvance(t, b, by)
	}
	if now, n := clockNow(t, b), ledgerRows(t, e, b.ID); !now.Equal(clockStart.Add(hosting.MaxClockAhead)) || n != rows {
		t.Errorf("refused advances at the limit: clock %s, %d ledger rows (%d before)", now, n, rows)
	}
	e.AssertLedger(t)

	// A reset puts the clock back, with all 100 years to go again.
	b.Sandbox("POST", "/reset", map[string]any{}).Want(t, http.StatusOK)
	if got := advance(t, b, "8760h"); !got.Equal(clockStart.Add(8760 * time.Hour)) {
		t.Errorf("first advance after a reset: %s", got)
	}
}
