package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
	"github.com/berthhq/berth/internal/testpg"
)

// TestClusterSharedState: two berthd on one PostgreSQL share what a client or a
// browser relies on between requests that reach different processes: a write on one
// is read by the very next request on the other, an Idempotency-Key's answer is
// replayed by the other, a console session signed in on one works on the other, and
// failed sign-ins are throttled over both together.
func TestClusterSharedState(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs two daemons")
	}
	testpg.Require(t)
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	db := testpg.NewDatabase(t)
	runJSON(t, bin, "migrate", "--database", db)
	acct := runJSON(t, bin, "admin", "account", "create", "--email", "two@example.com", "--password", "long-enough-pw",
		"--credit", "50", "--database", db)
	token := runJSON(t, bin, "admin", "token", "create", "--account", fmt.Sprint(acct["id"]), "--name", "t",
		"--scopes", "servers", "--database", db)["token"].(string)
	var nodes [2]*daemon
	for i := range nodes {
		addr := testnet.FreeAddr(t)
		nodes[i] = startServeArgs(t, bin, addr, "serve", "--database", db, "--addr", addr, "--sim-time-scale", "0.01")
	}
	a, b := nodes[0], nodes[1]
	send := func(d *daemon, method, path, body, key string) (int, string, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(method, d.base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw), resp.Header
	}

	// Reads: each write on one process is seen by the very next read on the other.
	code, body, _ := send(a, "POST", "/projects", `{"name": "p0"}`, "")
	if code != 201 {
		t.Fatalf("project: %d %s", code, body)
	}
	for i := 1; i <= 20; i++ {
		w, r := a, b
		if i%2 == 0 {
			w, r = b, a
		}
		name := fmt.Sprintf("p%d", i)
		if code, body, _ := send(w, "PATCH", "/projects/1", fmt.Sprintf(`{"name": %q}`, name), ""); code != 200 {
			t.Fatalf("rename: %d %s", code, body)
		}
		if _, body, _ := send(r, "GET", "/projects", "", ""); !strings.Contains(body, `"name":"`+name+`"`) {
			t.Fatalf("after a rename to %s on one process the other shows %s", name, body)
		}
	}

	// The reads each process answers from memory (a server, a token) too: a server
	// ordered on one, renamed on each in turn, read on the other at once; and a ?wait
	// on the other process for an operation ends with it.
	code, body, _ = send(a, "POST", "/servers", `{"plan_id": 1, "location_id": 1, "image_id": 1}`, "")
	if code != 201 {
		t.Fatalf("order: %d %s", code, body)
	}
	var order struct {
		Data struct {
			ID        int64 `json:"id"`
			Operation struct {
				ID int64 `json:"id"`
			} `json:"operation"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &order); err != nil || order.Data.ID == 0 {
		t.Fatalf("order: %s (%v)", body, err)
	}
	srv := fmt.Sprintf("/servers/%d", order.Data.ID)
	for _, d := range nodes {
		if code, body, _ := send(d, "GET", fmt.Sprintf("/operations/%d?wait=60", order.Data.Operation.ID), "", ""); code != 200 || !strings.Contains(body, `"status":"success"`) {
			t.Fatalf("?wait for the order's operation: %d %s", code, body)
		}
	}
	for i := 1; i <= 10; i++ {
		w, r := a, b
		if i%2 == 0 {
			w, r = b, a
		}
		send(r, "GET", srv, "", "") // held in r's memory now
		name := fmt.Sprintf("web-%d", i)
		if code, body, _ := send(w, "PATCH", srv, fmt.Sprintf(`{"display_name": %q}`, name), ""); code != 200 {
			t.Fatalf("rename: %d %s", code, body)
		}
		if _, body, _ := send(r, "GET", srv, "", ""); !strings.Contains(body, `"display_name":"`+name+`"`) {
			t.Fatalf("after a rename to %s on one process the other shows %s", name, body)
		}
	}

	// Idempotency-Key: the answer of one process is the answer of the other.
	code1, first, _ := send(a, "POST", "/projects", `{"name": "once"}`, "key-1")
	code2, again, h := send(b, "POST", "/projects", `{"name": "once"}`, "key-1")
	if code1 != 201 || code2 != 201 || again != first || h.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the same key on the other process: %d %s (replayed %q), first %d %s", code2, again, h.Get("Idempotent-Replayed"), code1, first)
	}
	if code, body, _ := send(b, "POST", "/projects", `{"name": "another"}`, "key-1"); code != 422 || !strings.Contains(strings.ToLower(body), "idempotency") {
		t.Errorf("the key with another body on the other process: %d %s", code, body)
	}

	// A console session signed in on one process works on the other.
	jar := map[string]string{}
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	page := func(d *daemon, method, path string, form url.Values) *http.Response {
		t.Helper()
		root := strings.TrimSuffix(d.base, "/v1")
		var rd io.Reader
		if form != nil {
			rd = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequest(method, root+path, rd)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for k, v := range jar {
			req.AddCookie(&http.Cookie{Name: k, Value: v})
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for _, c := range resp.Cookies() {
			jar[c.Name] = c.Value
		}
		return resp
	}
	signIn := func(d *daemon, password string) int {
		page(d, "GET", "/signin", nil)
		return page(d, "POST", "/signin", url.Values{"email": {"two@example.com"}, "password": {password},
			"csrf": {jar["berth_pre"]}}).StatusCode
	}
	if code := signIn(a, "long-enough-pw"); code != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", code)
	}
	if resp := page(b, "GET", "/servers", nil); resp.StatusCode != 200 {
		t.Errorf("the session of one process on the other: %d (%s)", resp.StatusCode, resp.Header.Get("Location"))
	}

	// Failed sign-ins are throttled over both processes together: five failures
	// (the default), alternating, and the sixth attempt is refused on either.
	delete(jar, "berth_session")
	for i := range 5 {
		d := nodes[i%2]
		if code := signIn(d, "wrong-password"); code != http.StatusUnauthorized {
			t.Fatalf("failed sign-in %d: %d", i+1, code)
		}
	}
	for _, d := range nodes {
		if code := signIn(d, "long-enough-pw"); code != http.StatusTooManyRequests {
			t.Errorf("sign-in after five failures over two processes: %d, want 429", code)
		}
	}

	// A token revoked (here by an admin command, a third process) is refused by the
	// very next request on either, though both have just answered it from memory.
	for _, d := range nodes {
		if code, body, _ := send(d, "GET", "/servers", "", ""); code != 200 {
			t.Fatalf("before the revocation: %d %s", code, body)
		}
	}
	runJSON(t, bin, "admin", "token", "revoke", "1", "--database", db)
	for _, d := range nodes {
		if code, body, _ := send(d, "GET", "/servers", "", ""); code != 401 {
			t.Errorf("a revoked token on a process that held it: %d %s, want 401", code, body)
		}
	}
}
