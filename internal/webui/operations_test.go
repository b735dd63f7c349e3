package webui_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/testenv"
)

var opRowRE = regexp.MustCompile(`(?s)<tr data-op="(\d+)">(.*?)</tr>`)

// opRows are the operation rows of a page, as text without tags.
func opRows(p page) [][2]string {
	var rows [][2]string
	for _, m := range opRowRE.FindAllStringSubmatch(p.body, -1) {
		text := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(m[2], " ")
		rows = append(rows, [2]string{m[1], strings.Join(strings.Fields(text), " ")})
	}
	return rows
}

// TestConsoleServerOperations: a server's page shows its operations, newest first —
// the kind in words, the status, when it started and finished, the error — the ten
// newest, with a link to all of them, a page of 50 at a time.
func TestConsoleServerOperations(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	token, _ := apiToken(t, env, a.ID)
	sid := orderedServer(t, env, token, "web-1", 1)
	id, _ := hosting.ParseID(sid)

	p := v.get("/servers/" + sid)
	wantStatus(t, p, http.StatusOK)
	rows := opRows(p)
	if len(rows) != 1 || !strings.HasPrefix(rows[0][1], "setup succeeded ") {
		t.Fatalf("a new server's operations: %q", rows)
	}
	if strings.Contains(p.body, "data-ops-all") {
		t.Error("a server of one operation links to all of them")
	}

	// 58 forced power-offs, then a reinstall that failed, the newest.
	ctx := context.Background()
	start := time.Now().UTC().Add(time.Minute).Truncate(time.Minute)
	err := env.App.DB.InTx(ctx, func(tx store.Tx) error {
		for i := range 59 {
			op := hosting.Operation{AccountID: a.ID, ServerID: id, Type: hosting.OpPower, Action: hosting.PowerOff,
				StartedAt: start.Add(time.Duration(i) * time.Minute)}
			status, text := hosting.OpSuccess, ""
			if i == 58 {
				op.Type, op.Action, status, text = hosting.OpReinstall, "", hosting.OpError, "the host is down"
			}
			opID, err := tx.StartOperation(ctx, op)
			if err != nil {
				return err
			}
			if err := tx.FinishOperation(ctx, opID, status, text, op.StartedAt.Add(30*time.Second)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	last := start.Add(58 * time.Minute)

	p = v.get("/servers/" + sid)
	rows = opRows(p)
	if len(rows) != 10 {
		t.Fatalf("the server's page shows %d operations, want the 10 newest: %q", len(rows), rows)
	}
	want := "reinstall failed " + last.Format("2006-01-02 15:04 UTC") + " " + last.Add(30*time.Second).Format("2006-01-02 15:04 UTC") +
		" the host is down"
	if rows[0][1] != want {
		t.Errorf("the newest operation reads %q, want %q", rows[0][1], want)
	}
	if want := "power action · Power off (forced) succeeded " + last.Add(-time.Minute).Format("2006-01-02 15:04 UTC"); !strings.HasPrefix(rows[1][1], want) {
		t.Errorf("the one before reads %q, want it to start %q", rows[1][1], want)
	}
	wantText(t, p, `<a href="/servers/`+sid+`/operations" data-ops-all>All 60 operations`)

	p = v.get("/servers/" + sid + "/operations")
	wantStatus(t, p, http.StatusOK)
	first := opRows(p)
	if len(first) != 50 || first[0] != rows[0] {
		t.Fatalf("page 1 of all: %d rows, the first %q", len(first), first[0])
	}
	wantText(t, p, "Page 1 of 2", `href="/servers/`+sid+`/operations?page=2" rel="next"`)
	p = v.get("/servers/" + sid + "/operations?page=2")
	second := opRows(p)
	if len(second) != 10 || !strings.HasPrefix(second[9][1], "setup succeeded") {
		t.Fatalf("page 2 of all: %q", second)
	}
	seen := map[string]bool{}
	for _, r := range append(first, second...) {
		if seen[r[0]] {
			t.Errorf("operation %s listed twice", r[0])
		}
		seen[r[0]] = true
	}
	wantStatus(t, v.get("/servers/"+sid+"/operations?page=0"), http.StatusUnprocessableEntity)

	// Another account's server has no operations to show here.
	other, _ := signedIn(t, env, "en")
	wantStatus(t, other.get("/servers/"+sid+"/operations"), http.StatusNotFound)
}
