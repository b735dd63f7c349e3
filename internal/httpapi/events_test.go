package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/testenv"
)

func events(t testing.TB, c caller, query string) api.EventList {
	t.Helper()
	var l api.EventList
	c.Do("GET", "/events"+query, nil).Want(t, http.StatusOK).JSON(t, &l)
	return l
}

func eventTypes(l api.EventList) []string {
	out := []string{}
	for _, e := range l.Data {
		out = append(out, e.Type)
	}
	return out
}

// TestEventsOfAccountItems: each change of an SSH key, a project or a recipe writes
// its event, with the request's id, and a change refused writes none; the list pages
// on its cursor, narrows by type and resource, and another account sees none of them.
func TestEventsOfAccountItems(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1000})
	a := env.NewAccount("en", "100", "")
	b := env.NewAccount("en", "100", "")

	hdr := http.Header{"X-Request-Id": {"client-req-1"}}
	pub := testenv.PublicKey(t)
	key := env.Do(a.Token, "POST", "/ssh-keys", map[string]any{"name": "laptop", "public_key": pub}, hdr).Want(t, 201)
	keyID := num(t, data(t, key)["id"])
	a.Do("POST", "/ssh-keys", map[string]any{"name": "dup", "public_key": pub}).Want(t, 422) // refused: no event
	createKey(t, a)
	proj := data(t, a.Do("POST", "/projects", map[string]any{"name": "web"}).Want(t, 201))
	projID := itoa(num(t, proj["id"]))
	a.Do("POST", "/projects", map[string]any{"name": "web"}).Want(t, 422) // refused: no event
	a.Do("PATCH", "/projects/"+projID, map[string]any{"name": "www"}).Want(t, 200)
	rec := data(t, a.Do("POST", "/recipes", map[string]any{"name": "r", "script": "#!/bin/sh\necho hi\n"}).Want(t, 201))
	recID := itoa(num(t, rec["id"]))
	a.Do("PATCH", "/recipes/"+recID, map[string]any{"script": "#!/bin/sh\necho ho\n"}).Want(t, 200)
	a.Do("DELETE", "/recipes/"+recID, nil).Want(t, 204)
	a.Do("DELETE", "/projects/"+projID, nil).Want(t, 204)
	a.Do("DELETE", fmt.Sprintf("/ssh-keys/%d", keyID), nil).Want(t, 204)
	a.Do("DELETE", fmt.Sprintf("/ssh-keys/%d", keyID), nil).Want(t, 404) // refused: no event

	all := events(t, as(env, a, "read"), "")
	want := []string{"billing.topped_up", "ssh_key.created", "ssh_key.created", "project.created", "project.updated", "recipe.created",
		"recipe.updated", "recipe.deleted", "project.deleted", "ssh_key.deleted"}
	if got := eventTypes(all); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	first := all.Data[1]
	var k struct {
		ID          int64  `json:"id"`
		Name        string `json:"name"`
		Fingerprint string `json:"fingerprint"`
	}
	if err := json.Unmarshal(first.Data, &k); err != nil || k.ID != keyID || k.Name != "laptop" || !strings.HasPrefix(k.Fingerprint, "SHA256:") {
		t.Errorf("ssh_key.created data %s (%v)", first.Data, err)
	}
	if first.RequestID == nil || *first.RequestID != "client-req-1" || first.Resource != (api.EventResource{Type: "ssh_key", ID: keyID}) {
		t.Errorf("ssh_key.created: request %v, resource %+v", first.RequestID, first.Resource)
	}
	if all.Data[3].RequestID == nil || len(*all.Data[3].RequestID) != 32 {
		t.Errorf("project.created names request %v, want the id Berth gave the request", all.Data[3].RequestID)
	}
	if all.Data[0].RequestID != nil {
		t.Errorf("the opening credit (no API request) names request %q", *all.Data[0].RequestID)
	}
	for i := 1; i < len(all.Data); i++ {
		if all.Data[i].ID <= all.Data[i-1].ID {
			t.Fatalf("ids not growing: %d after %d", all.Data[i].ID, all.Data[i-1].ID)
		}
	}
	if all.Meta.NextAfter != all.Data[len(all.Data)-1].ID || all.Meta.HasMore {
		t.Errorf("meta %+v", all.Meta)
	}

	t.Run("cursor and limit", func(t *testing.T) {
		var seen []int64
		after := int64(0)
		for range 10 {
			page := events(t, a, fmt.Sprintf("?after=%d&limit=4", after))
			for _, e := range page.Data {
				seen = append(seen, e.ID)
			}
			after = page.Meta.NextAfter
			if !page.Meta.HasMore {
				break
			}
		}
		var ids []int64
		for _, e := range all.Data {
			ids = append(ids, e.ID)
		}
		if !slices.Equal(seen, ids) {
			t.Errorf("paged %v, want %v", seen, ids)
		}
		if last := events(t, a, fmt.Sprintf("?after=%d", after)); len(last.Data) != 0 || last.Meta.NextAfter != after || last.Meta.HasMore {
			t.Errorf("after the last: %+v", last)
		}
	})
	t.Run("filters", func(t *testing.T) {
		for q, want := range map[string][]string{
			"?types=project.*":                      {"project.created", "project.updated", "project.deleted"},
			"?types=recipe.deleted,ssh_key.deleted": {"recipe.deleted", "ssh_key.deleted"},
			"?types=*":                              want,
			"?types=server.*":                       {},
			"?resource=project:" + projID:           {"project.created", "project.updated", "project.deleted"},
			"?resource=project:" + projID + "&types=project.deleted": {"project.deleted"},
		} {
			if got := eventTypes(events(t, a, q)); !slices.Equal(got, want) {
				t.Errorf("%s: %v, want %v", q, got, want)
			}
		}
	})
	t.Run("another account's", func(t *testing.T) {
		if l := events(t, b, ""); !slices.Equal(eventTypes(l), []string{"billing.topped_up"}) {
			t.Errorf("account b sees %v, want only its own opening credit", eventTypes(l))
		}
		if l := events(t, b, "?resource=project:"+projID); len(l.Data) != 0 {
			t.Errorf("account b sees a's project's events: %v", eventTypes(l))
		}
	})
}

// TestEventsQueryRules: every parameter's boundaries; a bad one is 422 on its name.
func TestEventsQueryRules(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1000})
	a := env.NewAccount("de", "100", "")
	for _, c := range []struct {
		query, field string
	}{
		{"after=-1", "after"}, {"after=x", "after"}, {"after=9223372036854775808", "after"}, {"after=", "after"},
		{"after=1&after=2", "after"},
		{"limit=0", "limit"}, {"limit=1001", "limit"}, {"limit=-1", "limit"}, {"limit=1.5", "limit"},
		{"wait=0", "wait"}, {"wait=61", "wait"}, {"wait=", "wait"}, {"wait=9223372036854775807", "wait"},
		{"types=", "types"}, {"types=server.created,", "types"}, {"types=server", "types"}, {"types=servers.*", "types"},
		{"types=server.created.extra", "types"}, {"types=ser*", "types"}, {"types=**", "types"}, {"types=nothing.*", "types"},
		{"resource=server", "resource"}, {"resource=server:0", "resource"}, {"resource=server:-1", "resource"},
		{"resource=planet:1", "resource"}, {"resource=server:9223372036854775808", "resource"}, {"resource=:1", "resource"},
		{"resource=volume:0", "resource"}, {"resource=volume:9223372036854775808", "resource"}, {"resource=volumes:1", "resource"},
		{"types=volume", "types"}, {"types=volumes.*", "types"},
	} {
		e := wantInvalid(t, a.Do("GET", "/events?"+c.query, nil), c.field)
		if len(e.Errors) != 1 {
			t.Errorf("%s: errors on %v, want only %s", c.query, e.Errors, c.field)
		}
	}
	for _, q := range []string{"after=0", "after=9223372036854775807", "limit=1", "limit=1000", "wait=1", "types=*",
		"types=server.*,operation.failed", "resource=server:9223372036854775807", "resource=account:1",
		"types=volume.*", "types=volume.attached,volume.detached", "resource=volume:9223372036854775807"} {
		a.Do("GET", "/events?"+q, nil).Want(t, 200)
	}
}

// TestEventsWait: a held GET /events answers as soon as an event comes, and an empty
// list when wait runs out.
func TestEventsWait(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1000})
	a := env.NewAccount("en", "100", "")
	after := fmt.Sprint(events(t, a, "").Meta.NextAfter) // past its opening credit
	start := time.Now()
	if l := events(t, a, "?wait=1&after="+after); len(l.Data) != 0 || time.Since(start) < 900*time.Millisecond {
		t.Errorf("an empty wait=1: %d events after %v", len(l.Data), time.Since(start))
	}
	got := make(chan api.EventList, 1)
	go func() {
		var l api.EventList
		if r := a.Do("GET", "/events?wait=60&after="+after, nil); r.Status == 200 {
			_ = json.Unmarshal(r.Body, &l)
		}
		got <- l
	}()
	time.Sleep(300 * time.Millisecond)
	start = time.Now()
	a.Do("POST", "/projects", map[string]any{"name": "p"}).Want(t, 201)
	select {
	case l := <-got:
		if !slices.Equal(eventTypes(l), []string{"project.created"}) {
			t.Errorf("the held request answered %v", eventTypes(l))
		}
		t.Logf("answered %v after the change", time.Since(start))
	case <-time.After(30 * time.Second):
		t.Fatal("the held request did not answer within 30 s of the change")
	}
}

// eventLog is the account's events as "type data" lines, for a failure message.
func eventLog(l api.EventList) string {
	var b strings.Builder
	for _, e := range l.Data {
		fmt.Fprintf(&b, "\n  %s %s %s", e.Type, e.Resource.Type, e.Data)
	}
	return b.String()
}

// TestEventsOfServersAndBilling: a server's life, its operations and snapshots, the
// credit and its suspension each write their events, in order, with the data the
// document gives them.
func TestEventsOfServersAndBilling(t *testing.T) {
	t.Parallel()
	env, clock := billingEnv(t, testenv.Options{RateLimit: 1000})
	a := env.NewAccount("en", "1.1830", "") // 169 hours of plan 1: 7 days after its first
	srv := runningServer(t, a)
	name, id := srv["name"].(string), itoa(num(t, srv["id"]))

	clock.Set(billingStart.Add(time.Hour)) // 1.1760 → 1.1690: below 7 days of 0.0070 an hour
	meter(t, env)
	clock.Set(billingStart.Add(2 * time.Hour))
	meter(t, env) // already below: no second event

	off := data(t, a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "off"}).Want(t, 200))
	waitOp(t, a, opID(t, off))
	a.Do("POST", "/servers/"+name+"/snapshots", map[string]any{"name": "s1"}).Want(t, 201)
	if op, ok := data(t, a.Do("GET", "/servers/"+name, nil).Want(t, 200))["operation"].(map[string]any); ok {
		waitOp(t, a, num(t, op["id"]))
	}
	a.Do("PATCH", "/servers/"+name, map[string]any{"display_name": "renamed"}).Want(t, 200)
	a.Do("PATCH", "/servers/"+name, map[string]any{"display_name": "renamed"}).Want(t, 200) // no change: no event
	a.Do("DELETE", "/servers/"+name, nil).Want(t, 204)

	all := events(t, a, "?limit=1000")
	got := func(q string) []string { return eventTypes(events(t, a, q)) }
	for q, want := range map[string][]string{
		"?types=billing.*,account.*":                          {"billing.topped_up", "billing.credit_low"},
		"?types=server.created,server.updated,server.deleted": {"server.created", "server.updated", "server.deleted"},
		"?types=snapshot.*":                                   {"snapshot.created", "snapshot.updated", "snapshot.deleted"},
		"?types=operation.failed":                             {},
	} {
		if g := got(q); !slices.Equal(g, want) {
			t.Errorf("%s: %v, want %v%s", q, g, want, eventLog(all))
		}
	}
	// Every operation started and succeeded; each status change names both ends.
	started, succeeded := got("?types=operation.started"), got("?types=operation.succeeded")
	if len(started) != 4 || len(succeeded) < 3 { // the deletion may still run
		t.Errorf("%d started, %d succeeded%s", len(started), len(succeeded), eventLog(all))
	}
	var prev string
	for _, e := range events(t, a, "?resource=server:"+id+"&types=server.status_changed").Data {
		var d struct {
			Status   string `json:"status"`
			Previous string `json:"previous_status"`
		}
		_ = json.Unmarshal(e.Data, &d)
		if d.Previous == "" || d.Previous == d.Status || (prev != "" && d.Previous != prev) {
			t.Errorf("status change %s after %q%s", e.Data, prev, eventLog(all))
		}
		prev = d.Status
	}
	if prev != "stopped" {
		t.Errorf("last status change to %q%s", prev, eventLog(all))
	}
	var low struct{ Credit string }
	for _, e := range all.Data {
		if e.Type == "billing.credit_low" {
			_ = json.Unmarshal(e.Data, &low)
		}
	}
	if low.Credit != "1.1690" {
		t.Errorf("credit_low's credit %q, want 1.1690", low.Credit)
	}
}

// TestEventsOfTheAccount: PATCH /me writes account.updated naming what changed, and
// nothing when nothing did.
func TestEventsOfTheAccount(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1000})
	a := env.NewAccount("en", "100", "")
	a.Do("PATCH", "/me", map[string]any{"language": "de"}).Want(t, 200)
	as(env, a, "").Do("PATCH", "/me", map[string]any{"language": "de"}).Want(t, 200) // unchanged
	l := events(t, a, "?types=account.*")
	if !slices.Equal(eventTypes(l), []string{"account.updated"}) || string(l.Data[0].Data) != `{"changes":["language"]}` {
		t.Errorf("events %v%s", eventTypes(l), eventLog(l))
	}
}
