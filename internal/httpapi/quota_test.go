package httpapi_test

// Per-account quotas (issue 12, item 5): what an account may hold bounds every list
// the API does not paginate (docs/api.md, Wire format). Past a quota, a create is 422 on the
// quota's key, in the account's language; below it again, it succeeds.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/testenv"
)

// setQuotas sets quotas of an account (by the kinds' admin flag).
func setQuotas(t testing.TB, env *testenv.Env, a *testenv.Account, set map[string]int) {
	t.Helper()
	if _, err := env.App.Service.SetQuotas(context.Background(), a.ID, set); err != nil {
		t.Fatal(err)
	}
}

// quotaKind is one quota as the API meets it: how to make one more of the kind,
// and how to remove the one made.
type quotaKind struct {
	kind   hosting.QuotaKind
	create func(t testing.TB, c caller) *testenv.Response
	remove func(t testing.TB, c caller, created map[string]any)
}

func apiQuotaKinds() []quotaKind {
	del := func(path string) func(t testing.TB, c caller, created map[string]any) {
		return func(t testing.TB, c caller, created map[string]any) {
			t.Helper()
			c.Do("DELETE", fmt.Sprintf("%s/%v", path, created["id"]), nil).Want(t, http.StatusNoContent)
		}
	}
	return []quotaKind{
		{hosting.QuotaSSHKeys, func(t testing.TB, c caller) *testenv.Response {
			return c.Do("POST", "/ssh-keys", map[string]any{"name": "key", "public_key": testenv.PublicKey(t)})
		}, del("/ssh-keys")},
		{hosting.QuotaProjects, func(t testing.TB, c caller) *testenv.Response {
			return c.Do("POST", "/projects", map[string]any{"name": uniqueName("project")})
		}, del("/projects")},
		{hosting.QuotaZones, func(t testing.TB, c caller) *testenv.Response {
			return c.Do("POST", "/domains", map[string]any{"name": zoneName()})
		}, del("/domains")},
		{hosting.QuotaRecipes, func(t testing.TB, c caller) *testenv.Response {
			return c.Do("POST", "/recipes", map[string]any{"name": "recipe", "script": "#!/bin/sh\n"})
		}, del("/recipes")},
	}
}

// wantQuota checks that r is the 422 of kind's quota at quota, in lang, and nothing
// else.
func wantQuota(t testing.TB, r *testenv.Response, kind hosting.QuotaKind, lang string, quota int) {
	t.Helper()
	e := wantError(t, r, 422, "validation_failed")
	want := msg(lang, kind.Message, "quota", quota)
	if len(e.Errors) != 1 || len(e.Errors[kind.Field]) != 1 || e.Errors[kind.Field][0] != want {
		t.Errorf("past the %s quota: %s, want only %s: %q", kind.Flag, r.Body, kind.Field, want)
	}
}

func TestQuotas(t *testing.T) {
	env := testenv.New(t)
	for _, k := range apiQuotaKinds() {
		t.Run(k.kind.Flag, func(t *testing.T) {
			a := env.NewAccount("de", "", "")
			other := env.NewAccount("en", "", "")
			setQuotas(t, env, a, map[string]int{k.kind.Flag: 2})
			setQuotas(t, env, other, map[string]int{k.kind.Flag: 2})

			// Another account's items do not count.
			data(t, k.create(t, other).Want(t, 201))
			data(t, k.create(t, other).Want(t, 201))

			first := data(t, k.create(t, a).Want(t, 201))
			data(t, k.create(t, a).Want(t, 201))
			wantQuota(t, k.create(t, a), k.kind, "de", 2)
			wantQuota(t, k.create(t, a), k.kind, "de", 2) // repeated: still refused, nothing written

			// One removed, one more may be made.
			k.remove(t, a, first)
			data(t, k.create(t, a).Want(t, 201))
			wantQuota(t, k.create(t, a), k.kind, "de", 2)

			// A quota lowered below what the account holds takes nothing away.
			setQuotas(t, env, a, map[string]int{k.kind.Flag: 1})
			wantQuota(t, k.create(t, a), k.kind, "de", 1)
			if u, err := env.App.Service.Usage(context.Background(), hosting.Principal{Account: hosting.Account{ID: a.ID}}); err != nil {
				t.Fatal(err)
			} else if got := *k.kind.Of(&u); got != 2 {
				t.Errorf("usage after lowering the quota: %d, want 2", got)
			}

			// 0: none may be made.
			setQuotas(t, env, other, map[string]int{k.kind.Flag: 0})
			wantQuota(t, k.create(t, other), k.kind, "en", 0)

			// Parallel creates cannot go past the quota together.
			c := env.NewAccount("en", "", "")
			setQuotas(t, env, c, map[string]int{k.kind.Flag: 3})
			rs := concurrently(8, func() *testenv.Response { return k.create(t, c) })
			if got := statuses(rs); got[201] != 3 || got[422] != 5 {
				t.Errorf("8 parallel creates at a quota of 3: %v, want three 201 and five 422", got)
			}
		})
	}

	t.Run("snapshots", func(t *testing.T) {
		a := env.NewAccount("fr", "", "")
		setQuotas(t, env, a, map[string]int{"snapshots": 1})
		s1 := runningServer(t, a)
		s2 := runningServer(t, a)
		name1, name2 := s1["name"].(string), s2["name"].(string)
		snap, _ := createSnapshot(t, a, name1, map[string]any{"name": "one"})
		// The quota counts the snapshots of all the account's servers.
		wantQuota(t, a.Do("POST", "/servers/"+name2+"/snapshots", map[string]any{"name": "two"}), hosting.QuotaSnapshots, "fr", 1)
		if srv := data(t, a.Do("GET", "/servers/"+name2, nil).Want(t, 200)); srv["operation"] != nil {
			t.Errorf("a refused snapshot left the server busy: %v", srv["operation"])
		}
		// The server is free: the snapshot goes at once.
		a.Do("DELETE", fmt.Sprintf("/servers/%s/snapshots/%v", name1, snap["id"]), nil).Want(t, http.StatusAccepted)
		if l := snapshotList(t, a, name1); len(l) != 0 {
			t.Fatalf("snapshots after the delete: %v", l)
		}
		createSnapshot(t, a, name2, map[string]any{"name": "two"})
	})

	t.Run("servers", func(t *testing.T) {
		a := env.NewAccount("en", "", "")
		setQuotas(t, env, a, map[string]int{"servers": 0})
		wantQuota(t, a.Do("POST", "/servers", baseOrder()), hosting.QuotaServers, "en", 0)
	})
}

// TestRecipeListStreams: the recipe list is written a page at a time; across page
// boundaries it is the whole list, in order, once each.
func TestRecipeListStreams(t *testing.T) {
	env := testenv.New(t)
	a := env.NewAccount("en", "", "")
	if r := a.Do("GET", "/recipes", nil).Want(t, 200); strings.TrimSpace(string(r.Body)) != `{"data":[]}` {
		t.Errorf("empty list: %s", r.Body)
	}
	// 16 is a page: 0, one, a page, a page and one, two pages and more.
	var want []string
	script := "#!/bin/sh\n" + strings.Repeat("# <&> \u00e9\n", 3000)
	for _, n := range []int{1, 15, 1, 16, 4} {
		for range n {
			name := uniqueName("recipe")
			data(t, a.Do("POST", "/recipes", map[string]any{"name": name, "script": script}).Want(t, 201))
			want = append(want, name)
		}
		r := a.Do("GET", "/recipes", nil).Want(t, 200)
		var body struct {
			Data []struct {
				ID     int64  `json:"id"`
				Name   string `json:"name"`
				Script string `json:"script"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatalf("%d recipes: %v", len(want), err)
		}
		var got []string
		for i, rc := range body.Data {
			got = append(got, rc.Name)
			if rc.Script != script {
				t.Errorf("recipe %d of %d: script of %d bytes", i, len(want), len(rc.Script))
			}
			if i > 0 && rc.ID <= body.Data[i-1].ID {
				t.Errorf("recipe ids out of order at %d", i)
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("list of %d: %v, want %v", len(want), got, want)
		}
	}
	// Streamed, not held whole to be measured first.
	if r := a.Do("GET", "/recipes", nil).Want(t, 200); r.Header.Get("Content-Length") != "" {
		t.Errorf("a list of %d recipes of %d bytes answered with Content-Length %s: it was held whole", len(want), len(script), r.Header.Get("Content-Length"))
	}
	// Another account sees none of them.
	if r := env.NewAccount("en", "", "").Do("GET", "/recipes", nil).Want(t, 200); strings.TrimSpace(string(r.Body)) != `{"data":[]}` {
		t.Errorf("another account's list: %.200s", r.Body)
	}
}
