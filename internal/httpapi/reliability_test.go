package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testenv"
)

func withKey(key string) http.Header { return http.Header{"Idempotency-Key": {key}} }

// TestIdempotencyKey: docs/api.md, Idempotency and operations — the same key and body within 24 h answer the
// first response again without doing the work twice; another body is 422.
func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	clock := testenv.NewFakeClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	env := testenv.New(t, testenv.Options{Clock: clock.Now})
	t.Cleanup(func() { env.AssertLedger(t) })
	a := env.NewAccount("en", "10", "")
	order := `{"plan_id": 1, "location_id": 1, "image_id": 1}`

	t.Run("replay", func(t *testing.T) {
		first := env.Do(a.Token, "POST", "/servers", order, withKey("order-1")).Want(t, http.StatusCreated)
		if first.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("first answer marked as a replay")
		}
		again := env.Do(a.Token, "POST", "/servers", order, withKey("order-1")).Want(t, http.StatusCreated)
		if string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" ||
			again.Header.Get("Content-Type") != first.Header.Get("Content-Type") {
			t.Errorf("replay: %s %v, first %s", again.Body, again.Header, first.Body)
		}
		if n := len(items(t, a.Do("GET", "/servers", nil).Want(t, 200))); n != 1 {
			t.Errorf("%d servers after a replayed order, want 1", n)
		}
		if c := credit(t, a); c != money(t, "10")-70 {
			t.Errorf("credit %s: the order was charged more than once", c)
		}
		// Another body, or another route, with the same key: refused.
		e := wantInvalid(t, env.Do(a.Token, "POST", "/servers", `{"plan_id": 2, "location_id": 1, "image_id": 1}`, withKey("order-1")), "idempotency_key")
		if e.Message != msg("en", "validation.idempotency_key_reused") {
			t.Errorf("reused key: %q", e.Message)
		}
		wantInvalid(t, env.Do(a.Token, "POST", "/projects", `{"name": "x"}`, withKey("order-1")), "idempotency_key")
		// Another account has keys of its own.
		b := env.NewAccount("en", "10", "")
		env.Do(b.Token, "POST", "/servers", order, withKey("order-1")).Want(t, http.StatusCreated)
		if n := len(items(t, b.Do("GET", "/servers", nil).Want(t, 200))); n != 1 {
			t.Errorf("the other account's order with the same key: %d servers", n)
		}
	})

	t.Run("concurrent", func(t *testing.T) {
		rs := concurrently(12, func() *testenv.Response {
			return env.Do(a.Token, "POST", "/projects", `{"name": "same-key"}`, withKey("project-1"))
		})
		for _, r := range rs {
			if r.Status != http.StatusCreated || string(r.Body) != string(rs[0].Body) {
				t.Errorf("concurrent request with one key: %d %s (first %s)", r.Status, r.Body, rs[0].Body)
			}
		}
		n := 0
		for _, p := range items(t, a.Do("GET", "/projects", nil).Want(t, 200)) {
			if p["name"] == "same-key" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d projects made by 12 requests with one key, want 1", n)
		}
	})

	t.Run("final answers only", func(t *testing.T) {
		// A validation failure is the request's answer: replayed.
		first := env.Do(a.Token, "POST", "/projects", `{"name": ""}`, withKey("bad-project"))
		wantInvalid(t, first, "name")
		again := env.Do(a.Token, "POST", "/projects", `{"name": ""}`, withKey("bad-project"))
		if again.Status != 422 || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("422 not replayed: %d %v", again.Status, again.Header)
		}
		// A 409 is not: once the server is free, the same key runs afresh.
		srv := runningServer(t, a)
		name := srv["name"].(string)
		a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "off"}).Want(t, http.StatusOK)
		busy := env.Do(a.Token, "POST", "/servers/"+name+"/power", `{"action": "off"}`, withKey("power-1"))
		if busy.Status != http.StatusConflict {
			t.Skipf("the power-off ended before the test could see the server busy (%d)", busy.Status)
		}
		a.WaitStatus(t, name, "stopped", 10*time.Second)
		r := env.Do(a.Token, "POST", "/servers/"+name+"/power", `{"action": "on"}`, withKey("power-1"))
		if r.Status != http.StatusOK || r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("after a 409, the same key: %d %s", r.Status, r.Body)
		}
	})

	t.Run("malformed keys", func(t *testing.T) {
		for _, h := range []http.Header{
			withKey(""), withKey(strings.Repeat("k", 256)), withKey("with space"), withKey("tab\tkey"), withKey("ключ"),
			{"Idempotency-Key": {"a", "b"}},
		} {
			e := wantInvalid(t, env.Do(a.Token, "POST", "/projects", `{"name": "never"}`, h), "idempotency_key")
			if e.Message != msg("en", "validation.idempotency_key") {
				t.Errorf("%q: %q", h.Values("Idempotency-Key"), e.Message)
			}
		}
		env.Do(a.Token, "POST", "/projects", `{"name": "max-key"}`, withKey(strings.Repeat("k", 255))).Want(t, http.StatusCreated)
	})

	t.Run("the answer commits with the change", func(t *testing.T) {
		// The answer of a request is stored in the transaction of its change: when it
		// cannot be stored (here a trigger refuses it, as a crash or a full disk would),
		// the change is undone too and the client is not told it happened; a retry
		// then runs afresh at once. Before, the change committed first and the key was
		// marked "applied": the client got 201, and every retry 422 "answer lost".
		ctx := context.Background()
		db := env.App.DB.WriteDB()
		triggers := []string{
			`CREATE TRIGGER doomed_insert BEFORE INSERT ON idempotency_keys WHEN NEW.key = 'doomed' AND NEW.state = 'done'
				BEGIN SELECT RAISE(ABORT, 'injected: the answer cannot be stored'); END`,
			`CREATE TRIGGER doomed_update BEFORE UPDATE ON idempotency_keys WHEN NEW.key = 'doomed' AND NEW.state = 'done'
				BEGIN SELECT RAISE(ABORT, 'injected: the answer cannot be stored'); END`,
		}
		dropTrigger := "DROP TRIGGER "
		if testenv.Postgres() {
			triggers = []string{
				`CREATE FUNCTION doomed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
					RAISE EXCEPTION 'injected: the answer cannot be stored'; END $$`,
				`CREATE TRIGGER doomed_insert BEFORE INSERT ON idempotency_keys FOR EACH ROW
					WHEN (NEW.key = 'doomed' AND NEW.state = 'done') EXECUTE FUNCTION doomed()`,
				`CREATE TRIGGER doomed_update BEFORE UPDATE ON idempotency_keys FOR EACH ROW
					WHEN (NEW.key = 'doomed' AND NEW.state = 'done') EXECUTE FUNCTION doomed()`,
			}
			dropTrigger = "DROP TRIGGER %s ON idempotency_keys"
		}
		for _, trig := range triggers {
			if _, err := db.ExecContext(ctx, trig); err != nil {
				t.Fatal(err)
			}
		}
		body := `{"plan_id": 1, "location_id": 1, "image_id": 1, "display_name": "doomed"}`
		before := len(items(t, a.Do("GET", "/servers", nil).Want(t, 200)))
		creditBefore := credit(t, a)
		r := env.Do(a.Token, "POST", "/servers", body, withKey("doomed"))
		if r.Status != http.StatusInternalServerError {
			t.Fatalf("an order whose answer could not be stored: %d %s, want 500 (and nothing done)", r.Status, r.Body)
		}
		if n := len(items(t, a.Do("GET", "/servers", nil).Want(t, 200))); n != before || credit(t, a) != creditBefore {
			t.Fatalf("the order's change committed without its answer: %d servers (had %d), credit %s (had %s)", n, before, credit(t, a), creditBefore)
		}
		for _, trig := range []string{"doomed_insert", "doomed_update"} {
			drop := dropTrigger + trig
			if strings.Contains(dropTrigger, "%s") {
				drop = fmt.Sprintf(dropTrigger, trig)
			}
			if _, err := db.ExecContext(ctx, drop); err != nil {
				t.Fatal(err)
			}
		}
		first := env.Do(a.Token, "POST", "/servers", body, withKey("doomed")).Want(t, http.StatusCreated)
		if first.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("the retry was answered as a replay: %v", first.Header)
		}
		again := env.Do(a.Token, "POST", "/servers", body, withKey("doomed")).Want(t, http.StatusCreated)
		if string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay after the retry: %s, first %s", again.Body, first.Body)
		}
		if n := len(items(t, a.Do("GET", "/servers", nil).Want(t, 200))); n != before+1 {
			t.Errorf("%d servers after the retries, want %d", n, before+1)
		}
	})

	t.Run("a record of an older Berth whose answer was lost", func(t *testing.T) {
		// Berth before 2026-11-25 left "applied" records when it crashed between a
		// change and its answer: the change happened, so the key never runs again.
		body := `{"name": "after-crash"}`
		_, err := env.App.DB.WriteDB().Exec(env.App.DB.Rebind(`INSERT INTO idempotency_keys (account_id, key, request_hash, state, created_at)
			VALUES (?, 'crash-applied', ?, 'applied', ?)`), a.ID, ops.RequestHash("POST", "/v1/projects", []byte(body)),
			clock.Now().Add(-5*time.Minute).UnixMilli())
		if err != nil {
			t.Fatal(err)
		}
		e := wantInvalid(t, env.Do(a.Token, "POST", "/projects", body, withKey("crash-applied")), "idempotency_key")
		if e.Message != msg("en", "validation.idempotency_key_lost") {
			t.Errorf("applied, answer lost: %q", e.Message)
		}
	})

	t.Run("24 hours", func(t *testing.T) {
		env.Do(a.Token, "POST", "/projects", `{"name": "day-1"}`, withKey("daily")).Want(t, http.StatusCreated)
		clock.Advance(23 * time.Hour)
		if r := env.Do(a.Token, "POST", "/projects", `{"name": "day-1"}`, withKey("daily")); r.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("after 23 h: %d %s", r.Status, r.Body)
		}
		clock.Advance(2 * time.Hour)
		// After 24 h the key is free again: the request runs (and fails: the name exists).
		r := env.Do(a.Token, "POST", "/projects", `{"name": "day-1"}`, withKey("daily"))
		if r.Header.Get("Idempotent-Replayed") != "" || r.Status != 422 {
			t.Errorf("after 25 h: %d %s", r.Status, r.Body)
		}
	})
}

// TestAuditLog: every state-changing request is in the audit log with who, what, on
// what and how it ended.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "10", "")
	srv := runningServer(t, a)
	name := srv["name"].(string)
	a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "on"}) // 422: running
	env.Do(a.Token, "POST", "/projects", `{"name": "audited"}`, withKey("audit-key")).Want(t, http.StatusCreated)
	env.Do(a.Token, "POST", "/projects", `{"name": "audited"}`, withKey("audit-key")).Want(t, http.StatusCreated)
	env.Do("berth_not-a-token", "DELETE", "/servers/"+name, nil, nil).Want(t, http.StatusUnauthorized)
	a.Do("GET", "/servers", nil).Want(t, http.StatusOK) // reads are not audited
	a.Do("DELETE", "/servers/"+name, nil).Want(t, http.StatusNoContent)

	ctx := context.Background()
	all, err := env.App.Service.AuditLog(ctx, 0, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		action, target, code string
		status               int
		account              bool
		key                  string
		replayed             bool
	}
	var got []row
	for i := len(all) - 1; i >= 0; i-- {
		e := all[i]
		if e.Actor != "api" || e.Client == "" || e.At.IsZero() {
			t.Errorf("entry %+v", e)
		}
		if e.AccountID != nil && (*e.AccountID != a.ID || e.TokenID == nil) {
			t.Errorf("entry of another account or without its token: %+v", e)
		}
		got = append(got, row{e.Action, e.Target, e.Code, e.Status, e.AccountID != nil, e.IdempotencyKey, e.Replayed})
	}
	id := itoa(num(t, srv["id"]))
	want := []row{
		{"POST /v1/servers", "created=" + id, "", 201, true, "", false},
		{"POST /v1/servers/{id}/power", "id=" + name, "validation_failed", 422, true, "", false},
		{"POST /v1/projects", "", "", 201, true, "audit-key", false},
		{"POST /v1/projects", "", "", 201, true, "audit-key", true},
		{"DELETE /v1/servers/{id}", "id=" + name, "unauthenticated", 401, false, "", false},
		{"DELETE /v1/servers/{id}", "id=" + name, "", 204, true, "", false},
	}
	if len(got) != len(want) {
		t.Fatalf("audit log:\n%+v\nwant\n%+v", got, want)
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.action == "POST /v1/projects" {
			if !strings.HasPrefix(g.target, "created=") {
				t.Errorf("entry %d target %q", i, g.target)
			}
			g.target = ""
		}
		if g != w {
			t.Errorf("entry %d: %+v, want %+v", i, g, w)
		}
	}
	mine, err := env.App.Service.AuditLog(ctx, a.ID, 0, 2)
	if err != nil || len(mine) != 2 || mine[0].Action != "DELETE /v1/servers/{id}" || mine[0].Status != 204 {
		t.Errorf("one account's newest two: %+v, %v", mine, err)
	}
	older, err := env.App.Service.AuditLog(ctx, a.ID, mine[1].ID, 100)
	if err != nil || len(older) != 3 {
		t.Errorf("the page before: %d entries, %v", len(older), err)
	}
}

// TestAuditLogOddTargets: a write whose path names an id that is not UTF-8 text
// (%00, %ff) is in the audit log, its target with U+FFFD for each such byte, on
// both stores (PostgreSQL's text refuses both bytes: the entry was lost there).
func TestAuditLogOddTargets(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "10", "")
	a.Do("PATCH", "/servers/%00", map[string]any{"display_name": "x"}).Want(t, http.StatusNotFound)
	a.Do("POST", "/volumes/a%ffb/detach", nil).Want(t, http.StatusNotFound)
	log, err := env.App.Service.AuditLog(context.Background(), a.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]string
	for i := len(log) - 1; i >= 0; i-- {
		got = append(got, [2]string{log[i].Action, log[i].Target})
	}
	want := [][2]string{{"PATCH /v1/servers/{id}", "id=\uFFFD"}, {"POST /v1/volumes/{id}/detach", "id=a\uFFFDb"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("audit log %q, want %q", got, want)
	}
}
