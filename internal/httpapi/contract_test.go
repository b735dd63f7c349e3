package httpapi_test

// The contract of every route of the /v1 table: its success path and every 4xx that
// docs/api.md gives it. The helpers at the top are shared by the other
// test files of the package (scopes_test.go, crossaccount_test.go, errors_test.go).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/berthhq/berth/internal/catalog"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/httpapi"
	"github.com/berthhq/berth/internal/i18n"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testenv"
)

// ---- helpers shared by the package's API tests ----

// caller sends requests with one token (*testenv.Account is one).
type caller interface {
	Do(method, path string, body any) *testenv.Response
}

// tokenCaller is a caller for a token that is not an Account's first.
type tokenCaller struct {
	env   *testenv.Env
	token string
}

func (c tokenCaller) Do(method, path string, body any) *testenv.Response {
	return c.env.Do(c.token, method, path, body, nil)
}

func (c tokenCaller) DoWith(method, path string, body any, header http.Header) *testenv.Response {
	return c.env.Do(c.token, method, path, body, header)
}

// as returns a caller using another token of a's account (scopes "" = all).
func as(env *testenv.Env, a *testenv.Account, scopes string) tokenCaller {
	return tokenCaller{env: env, token: a.NewToken(scopes)}
}

// newToken issues a token directly, returning its id too (for revocation).
func newToken(t testing.TB, env *testenv.Env, accountID int64, scopes string, expiresIn time.Duration) (int64, string) {
	t.Helper()
	tok, secret, err := env.App.Service.CreateToken(context.Background(), accountID, "test", scopes, expiresIn)
	if err != nil {
		t.Fatal(err)
	}
	return tok.ID, secret
}

// allScopesBut lists every scope except skip, comma-separated.
func allScopesBut(skip string) string {
	var out []string
	for _, s := range hosting.AllScopes {
		if string(s) != skip {
			out = append(out, string(s))
		}
	}
	return strings.Join(out, ",")
}

// messages renders the expected text of messages, as the server does.
var messages = i18n.MustLoad()

func msg(lang, id string, kv ...any) string {
	args := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		args[kv[i].(string)] = kv[i+1]
	}
	return messages.T(lang, id, args)
}

// apiError is the error body (docs/api.md, Errors).
type apiError struct {
	Message   string              `json:"message"`
	Code      string              `json:"code"`
	Errors    map[string][]string `json:"errors"`
	Operation *struct {
		ID        int64  `json:"id"`
		Type      string `json:"type"`
		StartedAt string `json:"started_at"`
	} `json:"operation"`
}

// wantError checks an error answer: its status, its code, a message, and `errors`
// present exactly on 422.
func wantError(t testing.TB, r *testenv.Response, status int, code string) apiError {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body: %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var raw map[string]json.RawMessage
	r.JSON(t, &raw)
	var e apiError
	r.JSON(t, &e)
	if e.Code != code {
		t.Fatalf("code %q, want %q; body: %s", e.Code, code, r.Body)
	}
	if e.Message == "" {
		t.Errorf("no message: %s", r.Body)
	}
	if _, has := raw["errors"]; has != (status == http.StatusUnprocessableEntity) {
		t.Errorf("errors present: %v on a %d; body: %s", has, status, r.Body)
	}
	return e
}

// wantInvalid checks a 422 validation_failed with an error on field.
func wantInvalid(t testing.TB, r *testenv.Response, field string) apiError {
	t.Helper()
	e := wantError(t, r, http.StatusUnprocessableEntity, "validation_failed")
	if len(e.Errors[field]) == 0 {
		t.Fatalf("no error on %q: %s", field, r.Body)
	}
	return e
}

// wantNotFound checks a 404 not_found.
func wantNotFound(t testing.TB, r *testenv.Response) {
	t.Helper()
	wantError(t, r, http.StatusNotFound, "not_found")
}

func data(t testing.TB, r *testenv.Response) map[string]any {
	t.Helper()
	d, ok := r.Map(t)["data"].(map[string]any)
	if !ok {
		t.Fatalf("no data object: %s", r.Body)
	}
	return d
}

func items(t testing.TB, r *testenv.Response) []map[string]any {
	t.Helper()
	var body struct {
		Data []map[string]any `json:"data"`
	}
	r.JSON(t, &body)
	if body.Data == nil {
		t.Fatalf("no data list: %s", r.Body)
	}
	return body.Data
}

// num reads a JSON number as an id.
func num(t testing.TB, v any) int64 {
	t.Helper()
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	return int64(f)
}

func ids(t testing.TB, list []map[string]any) []int64 {
	t.Helper()
	out := []int64{}
	for _, m := range list {
		out = append(out, num(t, m["id"]))
	}
	return out
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// baseOrder is a valid order in the default catalog.
func baseOrder() map[string]any { return map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1} }

// with returns a copy of m with kv set; the value drop removes a key.
func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == drop {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

type dropT struct{}

var drop = dropT{}

// order orders a server and checks the 201.
func order(t testing.TB, c caller, body any) map[string]any {
	t.Helper()
	srv := data(t, c.Do("POST", "/servers", body).Want(t, http.StatusCreated))
	if srv["status"] != "provisioning" {
		t.Fatalf("ordered server status %v, want provisioning", srv["status"])
	}
	return srv
}

// opID is the id of the operation a server record names.
func opID(t testing.TB, srv map[string]any) int64 {
	t.Helper()
	op, ok := srv["operation"].(map[string]any)
	if !ok {
		t.Fatalf("no operation on %v", srv)
	}
	return num(t, op["id"])
}

// waitOp waits for an operation with ?wait (one request against the rate limit) and
// checks that it succeeded.
func waitOp(t testing.TB, c caller, id int64) map[string]any {
	t.Helper()
	for range 3 {
		op := data(t, c.Do("GET", fmt.Sprintf("/operations/%d?wait=20", id), nil).Want(t, 200))
		if op["status"] == "running" {
			continue
		}
		if op["status"] != "success" {
			t.Fatalf("operation %d ended %v: %v", id, op["status"], op["error"])
		}
		return op
	}
	t.Fatalf("operation %d still running after 60 s", id)
	return nil
}

// serverAfter waits for the operation a server record names, then returns the server.
func serverAfter(t testing.TB, c caller, srv map[string]any) map[string]any {
	t.Helper()
	waitOp(t, c, opID(t, srv))
	return data(t, c.Do("GET", "/servers/"+srv["name"].(string), nil).Want(t, 200))
}

// runningServer orders a server (baseOrder with kv changes) and waits until it runs.
func runningServer(t testing.TB, c caller, kv ...any) map[string]any {
	t.Helper()
	srv := serverAfter(t, c, order(t, c, with(baseOrder(), kv...)))
	if srv["status"] != "running" || srv["operation"] != nil {
		t.Fatalf("server after provisioning: status %v operation %v", srv["status"], srv["operation"])
	}
	return srv
}

func createKey(t testing.TB, c caller) map[string]any {
	t.Helper()
	return data(t, c.Do("POST", "/ssh-keys", map[string]any{"name": "key", "public_key": testenv.PublicKey(t)}).Want(t, 201))
}

var nameSeq atomic.Int64

// uniqueName returns a fresh name (unique in the process).
func uniqueName(prefix string) string { return fmt.Sprintf("%s-%d", prefix, nameSeq.Add(1)) }

func createProject(t testing.TB, c caller) map[string]any {
	t.Helper()
	return data(t, c.Do("POST", "/projects", map[string]any{"name": uniqueName("project")}).Want(t, 201))
}

func createRecipe(t testing.TB, c caller) map[string]any {
	t.Helper()
	return data(t, c.Do("POST", "/recipes", map[string]any{"name": "recipe", "script": "#!/bin/sh\necho hi\n"}).Want(t, 201))
}

// fixture is one of every resource of an account, so that every {id} of the route
// table can be filled with something real.
type fixture struct {
	server                  map[string]any
	key, project, recipe    map[string]any
	serverID, serverName    string
	keyID, projectID, recID string
	opID                    string
	snapshot                map[string]any // an available snapshot of server
	snapshotID              string
	// webhook's delivery is of its own webhook.created event (to an address that
	// never resolves under testenv).
	webhookID, deliveryID string
	// volume is available and detached, in the server's location.
	volume             map[string]any
	volumeID, volumeNm string
	// domain is a zone with an RRset "www A".
	domainID, domainNm string
	// licenseID is a license of the server when the test added one (a month of one
	// costs more than most tests' credit), else an id of none.
	licenseID string
	// ticketID is a ticket of the account (the fixtures of one account share its
	// first: the quota of open tickets is 20); attachmentID a file it uploaded.
	ticketID, attachmentID string
}

// newFixture creates a running server (in a project) with an available snapshot, a
// key, a project and a recipe.
func newFixture(t testing.TB, c caller) *fixture {
	t.Helper()
	f := &fixture{key: createKey(t, c), project: createProject(t, c), recipe: createRecipe(t, c)}
	ordered := order(t, c, with(baseOrder(), "project_id", num(t, f.project["id"])))
	f.opID = itoa(opID(t, ordered))
	f.server = serverAfter(t, c, ordered)
	f.serverID, f.serverName = itoa(num(t, f.server["id"])), f.server["name"].(string)
	f.snapshot, f.server = createSnapshot(t, c, f.serverName, map[string]any{"name": "fixture"})
	f.snapshotID = itoa(num(t, f.snapshot["id"]))
	f.keyID, f.projectID, f.recID = itoa(num(t, f.key["id"])), itoa(num(t, f.project["id"])), itoa(num(t, f.recipe["id"]))
	f.volume = createVolume(t, c, map[string]any{"location_id": 1})
	f.volumeID, f.volumeNm = itoa(num(t, f.volume["id"])), f.volume["name"].(string)
	dom := createDomain(t, c, map[string]any{"name": zoneName()})
	f.domainID, f.domainNm = itoa(num(t, dom["id"])), dom["name"].(string)
	c.Do("PUT", "/domains/"+f.domainID+"/rrsets/www/A", map[string]any{"records": []map[string]any{{"value": "192.0.2.1"}}}).Want(t, 201)
	// An account holds at most hosting.MaxWebhooks: the fixtures of one account make
	// their own until one is left for POST /webhooks, then share its newest.
	hooks := items(t, c.Do("GET", "/webhooks", nil).Want(t, 200))
	if len(hooks) < hosting.MaxWebhooks-1 {
		// Only the webhooks' own events: every other change of the tests on this
		// account would otherwise be sent to each fixture's webhook, and retried.
		hooks = append(hooks, data(t, c.Do("POST", "/webhooks", map[string]any{"url": "https://hooks.example.com/berth",
			"event_types": []string{"webhook.*"}}).Want(t, 201)))
	}
	f.webhookID = itoa(num(t, hooks[len(hooks)-1]["id"]))
	ds := items(t, c.Do("GET", "/webhooks/"+f.webhookID+"/deliveries", nil).Want(t, 200))
	if len(ds) == 0 {
		t.Fatal("the fixture's webhook has no delivery, not even of its webhook.created")
	}
	f.deliveryID = itoa(num(t, ds[len(ds)-1]["id"]))
	f.licenseID = "999999"
	if ts := items(t, c.Do("GET", "/tickets", nil).Want(t, 200)); len(ts) > 0 {
		f.ticketID = itoa(num(t, ts[len(ts)-1]["id"]))
	} else {
		f.ticketID = itoa(num(t, data(t, c.Do("POST", "/tickets", map[string]any{"subject": "Fixture", "body": "A ticket of the fixture."}).
			Want(t, 201))["id"]))
	}
	f.attachmentID = itoa(num(t, data(t, upload(t, c, "fixture.txt", "text/plain", []byte("fixture\n")).Want(t, 201))["id"]))
	return f
}

// params maps "collection/{param}" to the value that fills it. byName fills a server
// {id} with the server's name instead of its id.
func (f *fixture) params(byName bool) map[string]string {
	srv, vol, dom := f.serverID, f.volumeID, f.domainID
	if byName {
		srv, vol, dom = f.serverName, f.volumeNm, f.domainNm
	}
	return map[string]string{
		"servers/{id}":          srv,
		"ssh-keys/{id}":         f.keyID,
		"projects/{id}":         f.projectID,
		"recipes/{id}":          f.recID,
		"operations/{id}":       f.opID,
		"snapshots/{snapshot}":  f.snapshotID,
		"webhooks/{id}":         f.webhookID,
		"deliveries/{delivery}": f.deliveryID,
		"volumes/{id}":          vol,
		"domains/{id}":          dom,
		"licenses/{license}":    f.licenseID,
		"tickets/{id}":          f.ticketID,
		"attachments/{id}":      f.attachmentID,
		"rrsets/{name}":         "www",
		"{name}/{type}":         "A",
	}
}

// fillPath turns a route path of the table ("/v1/servers/{id}/power") into a request
// path relative to the base ("/servers/42/power"). A parameter without a fixture fails
// the test: a new route needs its fixture here.
func fillPath(t testing.TB, path string, params map[string]string) string {
	t.Helper()
	route := strings.Split(strings.TrimPrefix(path, "/v1/"), "/")
	segs := slices.Clone(route)
	for i, s := range route {
		if !strings.HasPrefix(s, "{") {
			continue
		}
		if i == 0 {
			t.Fatalf("route %s: a parameter as first segment; extend fillPath", path)
		}
		v, ok := params[route[i-1]+"/"+s]
		if !ok {
			t.Fatalf("route %s: no fixture for %s/%s; extend fixture.params", path, route[i-1], s)
		}
		segs[i] = v
	}
	return "/" + strings.Join(segs, "/")
}

// validBody is a body that the route accepts for fixture resources (nil: no body).
func validBody(t testing.TB, method, path string) any {
	t.Helper()
	switch method + " " + path {
	case "POST /v1/servers":
		return baseOrder()
	case "PATCH /v1/me":
		return map[string]any{"language": "en"}
	case "PATCH /v1/servers/{id}":
		return map[string]any{"display_name": "renamed"}
	case "POST /v1/servers/{id}/power":
		return map[string]any{"action": "off"}
	case "POST /v1/servers/{id}/reinstall":
		return map[string]any{"image_id": 2}
	case "POST /v1/servers/{id}/rescale":
		return map[string]any{"plan_id": 2}
	case "POST /v1/servers/{id}/snapshots":
		return map[string]any{"name": uniqueName("snap")}
	case "POST /v1/ssh-keys":
		return map[string]any{"name": "key", "public_key": testenv.PublicKey(t)}
	case "POST /v1/projects", "PATCH /v1/projects/{id}":
		return map[string]any{"name": uniqueName("project")}
	case "POST /v1/recipes":
		return map[string]any{"name": "recipe", "script": "#!/bin/sh\ntrue\n"}
	case "PATCH /v1/recipes/{id}":
		return map[string]any{"name": "renamed"}
	case "POST /v1/webhooks":
		return map[string]any{"url": "https://hooks.example.com/" + uniqueName("hook")}
	case "PATCH /v1/webhooks/{id}":
		return map[string]any{"event_types": []string{"server.*"}}
	case "POST /v1/servers/{id}/licenses":
		return map[string]any{"license_id": licPlesk}
	case "POST /v1/tickets":
		return map[string]any{"subject": "Help", "body": "Please."}
	case "POST /v1/tickets/{id}/messages":
		return map[string]any{"body": "More."}
	case "POST /v1/attachments":
		// Sent as JSON by the generic callers: refused under content_type (422), an
		// answer of the route too.
		return "text"
	case "POST /v1/volumes":
		return map[string]any{"name": uniqueName("vol"), "size_gb": 10, "location_id": 1}
	case "PATCH /v1/volumes/{id}":
		return map[string]any{"project_id": nil}
	case "POST /v1/volumes/{id}/resize":
		return map[string]any{"size_gb": 11 + nameSeq.Add(1)}
	case "POST /v1/domains":
		return map[string]any{"name": zoneName()}
	case "PATCH /v1/domains/{id}":
		return map[string]any{"ttl": 600}
	case "PUT /v1/domains/{id}/rrsets/{name}/{type}":
		return map[string]any{"records": []map[string]any{{"value": "192.0.2.2"}}}
	case "PUT /v1/domains/{id}/zone-file":
		return "www 600 IN A 192.0.2.3\n"
	case "PUT /v1/servers/{id}/rdns":
		// The fixture's server's IPv4 address is not known here: a 422 on ip is an
		// answer of the route too (the scope tests want no 403 and no 5xx).
		return map[string]any{"ip": "192.0.2.1", "ptr": "mail.example.com"}
	}
	return nil
}

type route = struct{ Method, Path, Scope string }

// routes is the route table of the server the env serves.
func routes(t testing.TB, env *testenv.Env) []route {
	t.Helper()
	var h *httpapi.Server
	h, err := env.App.Handler()
	if err != nil {
		t.Fatal(err)
	}
	rs := h.Routes()
	if len(rs) == 0 {
		t.Fatal("no routes")
	}
	return rs
}

func money(t testing.TB, s string) hosting.Money {
	t.Helper()
	m, err := hosting.ParseMoney(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// concurrently sends n copies of a request at once and returns the answers.
func concurrently(n int, do func() *testenv.Response) []*testenv.Response {
	out := make([]*testenv.Response, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = do()
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// statuses counts the answers by status.
func statuses(rs []*testenv.Response) map[int]int {
	m := map[int]int{}
	for _, r := range rs {
		m[r.Status]++
	}
	return m
}

var serverNameRE = regexp.MustCompile(`^server-[a-z0-9]{6}$`)

// ---- the contract ----

func TestContractOpenAPIAndCatalog(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "servers,power")

	t.Run("openapi.json without token", func(t *testing.T) {
		r := env.Do("", "GET", "/openapi.json", nil, nil).Want(t, 200)
		doc := r.Map(t)
		if !strings.HasPrefix(fmt.Sprint(doc["openapi"]), "3.") || doc["paths"] == nil {
			t.Fatalf("not an OpenAPI document: %.200s", r.Body)
		}
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Errorf("Content-Type %q", r.Header.Get("Content-Type"))
		}
	})

	t.Run("me", func(t *testing.T) {
		me := data(t, a.Do("GET", "/me", nil).Want(t, 200))
		if num(t, me["id"]) != a.ID || me["blocked"] != false || me["language"] != "en" || me["currency"] != "EUR" || me["credit"] != "100.0000" {
			t.Fatalf("me: %v", me)
		}
		scopes := fmt.Sprint(me["scopes"])
		if scopes != "[read power servers]" {
			t.Errorf("scopes %s, want [read power servers]", scopes)
		}
		tok := me["token"].(map[string]any)
		if num(t, tok["id"]) <= 0 || tok["name"] != "test" || tok["expires_at"] != nil {
			t.Errorf("token %v", tok)
		}
	})

	t.Run("locations", func(t *testing.T) {
		locs := items(t, a.Do("GET", "/locations", nil).Want(t, 200))
		if len(locs) != 3 {
			t.Fatalf("%d locations, want 3", len(locs))
		}
		for _, l := range locs {
			imgs := l["images"].([]any)
			ubuntu := false
			for _, i := range imgs {
				ubuntu = ubuntu || i.(map[string]any)["os"] == "ubuntu"
			}
			disks := map[any]bool{}
			for _, p := range l["plans"].([]any) {
				disks[p.(map[string]any)["disk_gb"]] = true
			}
			if !ubuntu || len(imgs) < 2 || len(disks) < 2 {
				t.Errorf("location %v: needs an Ubuntu image, two images and plans of two disk sizes", l["name"])
			}
			for _, p := range l["plans"].([]any) {
				if p.(map[string]any)["in_stock"] != true {
					t.Errorf("location %v plan %v not in stock in a fresh catalog", l["name"], p.(map[string]any)["name"])
				}
			}
		}
	})

	t.Run("unknown paths and methods", func(t *testing.T) { testUnknownPathsAndMethods(t, env, a) })

	t.Run("apps", func(t *testing.T) {
		apps := items(t, a.Do("GET", "/apps", nil).Want(t, 200))
		if len(apps) == 0 || apps[0]["name"] == "" {
			t.Fatalf("apps: %v", apps)
		}
	})
}

func TestContractAuthentication(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")

	want401 := func(t *testing.T, r *testenv.Response) {
		t.Helper()
		e := wantError(t, r, 401, "unauthenticated")
		if e.Message != msg("en", "error.unauthenticated") {
			t.Errorf("message %q", e.Message)
		}
		if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("WWW-Authenticate %q", r.Header.Get("WWW-Authenticate"))
		}
	}

	t.Run("every route but openapi.json needs a token", func(t *testing.T) {
		// A Berth of its own: every route once without a token is more failed
		// authentications than one address may make a minute, which the cases
		// below would then meet (docs/SECURITY.md).
		env := testenv.New(t)
		for i, rt := range routes(t, env) {
			if i > 0 && i%50 == 0 {
				env = testenv.New(t) // a fresh budget for the next 50
			}
			path := fillPath(t, rt.Path, map[string]string{"servers/{id}": "1", "ssh-keys/{id}": "1",
				"projects/{id}": "1", "recipes/{id}": "1", "operations/{id}": "1", "snapshots/{snapshot}": "1",
				"webhooks/{id}": "1", "deliveries/{delivery}": "1", "volumes/{id}": "1", "domains/{id}": "1",
				"rrsets/{name}": "www", "{name}/{type}": "A", "licenses/{license}": "1",
				"tickets/{id}": "1", "attachments/{id}": "1"})
			r := env.Do("", rt.Method, path, validBody(t, rt.Method, rt.Path), nil)
			if rt.Scope == "" {
				if r.Status != 200 {
					t.Errorf("%s %s without token: %d", rt.Method, rt.Path, r.Status)
				}
				continue
			}
			want401(t, r)
		}
	})

	for _, tc := range []struct {
		name   string
		header []string
	}{
		{"malformed Basic", []string{"Basic x"}},
		{"Bearer without token", []string{"Bearer"}},
		{"Bearer with two words", []string{"Bearer " + a.Token + " x"}},
		{"unknown token", []string{"Bearer berth_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}},
		{"not a berth token", []string{"Bearer 0123456789abcdef"}},
		{"bare token", []string{a.Token}},
		// Sent twice, a proxy before Berth may have looked at the other one.
		{"header twice, the token first", []string{"Bearer " + a.Token, "Bearer x"}},
		{"header twice, the token second", []string{"Basic x", "Bearer " + a.Token}},
		{"header twice, the same token", []string{"Bearer " + a.Token, "Bearer " + a.Token}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want401(t, env.Do("", "GET", "/me", nil, http.Header{"Authorization": tc.header}))
			want401(t, env.Do("", "GET", "/no-such-endpoint", nil, http.Header{"Authorization": tc.header}))
		})
	}

	t.Run("revoked", func(t *testing.T) {
		id, tok := newToken(t, env, a.ID, "servers", 0)
		env.Do(tok, "GET", "/me", nil, nil).Want(t, 200)
		if _, err := env.App.Service.RevokeToken(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		want401(t, env.Do(tok, "GET", "/me", nil, nil))
		want401(t, env.Do(tok, "GET", "/servers", nil, nil))
	})

	t.Run("expired", func(t *testing.T) {
		_, tok := newToken(t, env, a.ID, "", time.Millisecond)
		time.Sleep(20 * time.Millisecond)
		want401(t, env.Do(tok, "GET", "/me", nil, nil))
	})

	t.Run("expiring token shows expires_at and works until then", func(t *testing.T) {
		_, tok := newToken(t, env, a.ID, "", time.Hour)
		me := data(t, env.Do(tok, "GET", "/me", nil, nil).Want(t, 200))
		exp, err := time.Parse(time.RFC3339, me["token"].(map[string]any)["expires_at"].(string))
		if err != nil || time.Until(exp) < 59*time.Minute {
			t.Errorf("expires_at %v (%v)", me["token"], err)
		}
	})

	t.Run("missing scope is 403", func(t *testing.T) {
		ro := as(env, a, "read")
		e := wantError(t, ro.Do("POST", "/servers", baseOrder()), 403, "missing_scope")
		if e.Message != msg("en", "error.missing_scope", "scope", "servers") {
			t.Errorf("message %q", e.Message)
		}
		me := data(t, ro.Do("GET", "/me", nil).Want(t, 200))
		if fmt.Sprint(me["scopes"]) != "[read]" {
			t.Errorf("read-only token scopes %v", me["scopes"])
		}
	})
}

func TestContractServerLifecycle(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")

	ordered := order(t, a, baseOrder())
	name := ordered["name"].(string)
	id := num(t, ordered["id"])
	t.Run("order answer", func(t *testing.T) {
		if !serverNameRE.MatchString(name) {
			t.Errorf("name %q", name)
		}
		if ordered["display_name"] != name || ordered["project_id"] != nil || ordered["app_id"] != nil || ordered["recipe_id"] != nil {
			t.Errorf("defaults: %v", ordered)
		}
		op := ordered["operation"].(map[string]any)
		if op["type"] != "provision" || op["started_at"] == "" {
			t.Errorf("operation %v", op)
		}
		for _, ts := range []any{ordered["created_at"], op["started_at"]} {
			if tm, err := time.Parse(time.RFC3339, fmt.Sprint(ts)); err != nil || !strings.HasSuffix(fmt.Sprint(ts), "Z") || time.Since(tm) > time.Minute {
				t.Errorf("timestamp %v: want RFC 3339 in UTC, now", ts)
			}
		}
		if num(t, ordered["plan_id"]) != 1 || num(t, ordered["location_id"]) != 1 || num(t, ordered["image_id"]) != 1 ||
			num(t, ordered["vcpus"]) != 1 || num(t, ordered["memory_mb"]) != 1024 || num(t, ordered["disk_gb"]) != 25 {
			t.Errorf("plan and image fields: %v", ordered)
		}
	})

	srv := serverAfter(t, a, ordered)
	t.Run("provisioning ends running with addresses", func(t *testing.T) {
		if srv["status"] != "running" || srv["operation"] != nil {
			t.Fatalf("status %v operation %v", srv["status"], srv["operation"])
		}
		if s, _ := srv["ipv4"].(string); s == "" {
			t.Errorf("ipv4 %v", srv["ipv4"])
		}
		if s, _ := srv["ipv6"].(string); !strings.Contains(s, ":") {
			t.Errorf("ipv6 %v", srv["ipv6"])
		}
	})

	t.Run("operation of the order", func(t *testing.T) {
		op := data(t, a.Do("GET", fmt.Sprintf("/operations/%d", opID(t, ordered)), nil).Want(t, 200))
		if op["type"] != "provision" || op["status"] != "success" || num(t, op["server_id"]) != id || op["finished_at"] == nil || op["error"] != nil {
			t.Errorf("operation %v", op)
		}
	})

	t.Run("addressed by id and by name", func(t *testing.T) {
		byID := data(t, a.Do("GET", "/servers/"+itoa(id), nil).Want(t, 200))
		byName := data(t, a.Do("GET", "/servers/"+name, nil).Want(t, 200))
		if num(t, byID["id"]) != id || num(t, byName["id"]) != id || byName["name"] != name {
			t.Errorf("by id %v, by name %v", byID["id"], byName["id"])
		}
	})

	t.Run("unknown ids and names are 404", func(t *testing.T) {
		for _, ref := range []string{"999999", "server-zzzzzz", "server-ABCDEF", "server-abc", "0", "-1", "01", "abc", "1.5"} {
			wantNotFound(t, a.Do("GET", "/servers/"+ref, nil))
			wantNotFound(t, a.Do("PATCH", "/servers/"+ref, map[string]any{"display_name": "x"}))
			wantNotFound(t, a.Do("DELETE", "/servers/"+ref, nil))
			wantNotFound(t, a.Do("POST", "/servers/"+ref+"/power", map[string]any{"action": "off"}))
		}
	})

	t.Run("listed", func(t *testing.T) {
		if got := ids(t, items(t, a.Do("GET", "/servers", nil).Want(t, 200))); !slices.Equal(got, []int64{id}) {
			t.Errorf("list %v, want [%d]", got, id)
		}
	})

	t.Run("rename, move to a project and back", func(t *testing.T) {
		p := createProject(t, a)
		pid := num(t, p["id"])
		got := data(t, a.Do("PATCH", "/servers/"+name, map[string]any{"display_name": "web 1"}).Want(t, 200))
		if got["display_name"] != "web 1" || got["project_id"] != nil {
			t.Errorf("after rename: %v", got)
		}
		got = data(t, a.Do("PATCH", "/servers/"+itoa(id), map[string]any{"project_id": pid}).Want(t, 200))
		if got["project_id"] == nil || num(t, got["project_id"]) != pid || got["display_name"] != "web 1" {
			t.Errorf("after move: %v", got)
		}
		projects := items(t, a.Do("GET", "/projects", nil).Want(t, 200))
		if len(projects) != 1 || num(t, projects[0]["server_count"]) != 1 {
			t.Errorf("projects %v", projects)
		}
		got = data(t, a.Do("PATCH", "/servers/"+name, map[string]any{}).Want(t, 200))
		if got["project_id"] == nil || got["display_name"] != "web 1" {
			t.Errorf("an empty PATCH changed the server: %v", got)
		}
		got = data(t, a.Do("PATCH", "/servers/"+name, map[string]any{"project_id": nil}).Want(t, 200))
		if got["project_id"] != nil {
			t.Errorf("after project_id null: %v", got)
		}
		got = data(t, a.Do("GET", "/servers/"+name, nil).Want(t, 200))
		if got["project_id"] != nil || got["display_name"] != "web 1" {
			t.Errorf("stored: %v", got)
		}
		got = data(t, a.Do("PATCH", "/servers/"+name, map[string]any{"display_name": strings.Repeat("é", 64)}).Want(t, 200))
		if got["display_name"] != strings.Repeat("é", 64) {
			t.Errorf("64-character display name: %v", got["display_name"])
		}
	})

	t.Run("PATCH 422", func(t *testing.T) {
		wantInvalid(t, a.Do("PATCH", "/servers/"+name, map[string]any{"status": "stopped"}), "status")
		wantInvalid(t, a.Do("PATCH", "/servers/"+name, map[string]any{"display_name": strings.Repeat("x", 65)}), "display_name")
		wantInvalid(t, a.Do("PATCH", "/servers/"+name, map[string]any{"display_name": "   "}), "display_name")
		wantInvalid(t, a.Do("PATCH", "/servers/"+name, map[string]any{"display_name": 5}), "display_name")
		wantInvalid(t, a.Do("PATCH", "/servers/"+name, map[string]any{"project_id": 999999}), "project_id")
		wantInvalid(t, a.Do("PATCH", "/servers/"+name, map[string]any{"project_id": "1"}), "project_id")
		wantInvalid(t, a.Do("PATCH", "/servers/"+name, "{"), "body")
		wantInvalid(t, a.Do("PATCH", "/servers/"+name, "[]"), "body")
		got := data(t, a.Do("GET", "/servers/"+name, nil).Want(t, 200))
		if got["display_name"] != strings.Repeat("é", 64) || got["status"] != "running" {
			t.Errorf("a refused PATCH changed the server: %v", got)
		}
	})

	t.Run("power", func(t *testing.T) {
		steps := []struct{ action, transient, end string }{
			{"off", "stopping", "stopped"},
			{"on", "starting", "running"},
			{"shutdown", "stopping", "stopped"},
			{"on", "starting", "running"},
			{"reboot", "stopping", "running"},
			{"reset", "starting", "running"},
		}
		for _, st := range steps {
			got := data(t, a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": st.action}).Want(t, 200))
			op, _ := got["operation"].(map[string]any)
			if got["status"] != st.transient || op == nil || op["type"] != "power" {
				t.Fatalf("%s: status %v operation %v, want %s with a power operation", st.action, got["status"], got["operation"], st.transient)
			}
			after := serverAfter(t, a, got)
			if after["status"] != st.end || after["operation"] != nil {
				t.Fatalf("%s: ended %v (operation %v), want %s", st.action, after["status"], after["operation"], st.end)
			}
		}
	})

	t.Run("power 422", func(t *testing.T) {
		e := wantInvalid(t, a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "on"}), "action")
		if e.Message != msg("en", "validation.action_state", "action", "on", "status", "running") {
			t.Errorf("message %q", e.Message)
		}
		wantInvalid(t, a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "dance"}), "action")
		wantInvalid(t, a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "OFF"}), "action")
		wantInvalid(t, a.Do("POST", "/servers/"+name+"/power", map[string]any{}), "action")
		wantInvalid(t, a.Do("POST", "/servers/"+name+"/power", nil), "action")
		wantInvalid(t, a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": 1}), "action")
		wantInvalid(t, a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "off", "force": true}), "force")
		if got := data(t, a.Do("GET", "/servers/"+name, nil).Want(t, 200)); got["status"] != "running" || got["operation"] != nil {
			t.Errorf("a refused power request changed the server: %v", got)
		}
	})

	t.Run("operations", func(t *testing.T) {
		got := data(t, a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "off"}).Want(t, 200))
		op := data(t, a.Do("GET", fmt.Sprintf("/operations/%d?wait=5", opID(t, got)), nil).Want(t, 200))
		if op["status"] != "success" || op["type"] != "power" || num(t, op["server_id"]) != id || op["finished_at"] == nil {
			t.Errorf("waited operation %v", op)
		}
		wantNotFound(t, a.Do("GET", "/operations/999999", nil))
		wantNotFound(t, a.Do("GET", "/operations/abc", nil))
		wantNotFound(t, a.Do("GET", "/operations/999999?wait=1", nil))
		for _, w := range []string{"0", "61", "x", "-1", "1.5", ""} {
			e := wantInvalid(t, a.Do("GET", fmt.Sprintf("/operations/%d?wait=%s", opID(t, got), w), nil), "wait")
			if e.Message != msg("en", "validation.wait_range") {
				t.Errorf("wait=%s: message %q", w, e.Message)
			}
		}
		a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "on"}).Want(t, 200)
	})

	t.Run("delete", func(t *testing.T) {
		if srv := data(t, a.Do("GET", "/servers/"+name, nil).Want(t, 200)); srv["operation"] != nil {
			waitOp(t, a, opID(t, srv))
		}
		other := runningServer(t, a)
		r := a.Do("DELETE", "/servers/"+name, nil).Want(t, 204)
		if len(r.Body) != 0 {
			t.Errorf("204 with a body: %q", r.Body)
		}
		wantNotFound(t, a.Do("GET", "/servers/"+name, nil))
		wantNotFound(t, a.Do("GET", "/servers/"+itoa(id), nil))
		wantNotFound(t, a.Do("DELETE", "/servers/"+name, nil))
		wantNotFound(t, a.Do("PATCH", "/servers/"+name, map[string]any{"display_name": "x"}))
		wantNotFound(t, a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "on"}))
		if got := ids(t, items(t, a.Do("GET", "/servers", nil).Want(t, 200))); !slices.Equal(got, []int64{num(t, other["id"])}) {
			t.Errorf("list after delete %v, want only %v", got, other["id"])
		}
		// The machine is destroyed in the background.
		deadline := time.Now().Add(10 * time.Second)
		for {
			m, err := env.App.Driver().Machine(context.Background(), name)
			if err != nil || m.State == "absent" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("machine of a deleted server still %v", m.State)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

func TestContractListFilters(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	p := createProject(t, a)
	pid := num(t, p["id"])
	s1 := runningServer(t, a, "project_id", pid)
	s2 := runningServer(t, a)
	s3 := runningServer(t, a, "project_id", nil)
	id1, id2, id3 := num(t, s1["id"]), num(t, s2["id"]), num(t, s3["id"])
	if s3["project_id"] != nil {
		t.Errorf("ordered with project_id null: %v", s3["project_id"])
	}
	serverAfter(t, a, data(t, a.Do("POST", "/servers/"+itoa(id2)+"/power", map[string]any{"action": "off"}).Want(t, 200)))

	for _, tc := range []struct {
		query string
		want  []int64
	}{
		{"", []int64{id1, id2, id3}},
		{"?project_id=" + itoa(pid), []int64{id1}},
		{"?project_id=999999", []int64{}},
		{"?status=running", []int64{id1, id3}},
		{"?status=stopped", []int64{id2}},
		{"?status=provisioning", []int64{}},
		{"?status=running&project_id=" + itoa(pid), []int64{id1}},
		{"?status=stopped&project_id=" + itoa(pid), []int64{}},
	} {
		if got := ids(t, items(t, a.Do("GET", "/servers"+tc.query, nil).Want(t, 200))); !slices.Equal(got, tc.want) {
			t.Errorf("GET /servers%s: %v, want %v", tc.query, got, tc.want)
		}
	}
	for _, q := range []string{"bogus", "RUNNING", ""} {
		e := wantInvalid(t, a.Do("GET", "/servers?status="+q, nil), "status")
		if !strings.Contains(e.Errors["status"][0], "provisioning") {
			t.Errorf("status=%s: message %q does not list the statuses", q, e.Errors["status"][0])
		}
	}
	for _, q := range []string{"abc", "0", "-3", ""} {
		wantInvalid(t, a.Do("GET", "/servers?project_id="+q, nil), "project_id")
	}
	e := wantError(t, a.Do("GET", "/servers?status=bogus&project_id=x", nil), 422, "validation_failed")
	if len(e.Errors) != 2 || e.Message != e.Errors["project_id"][0]+msg("en", "error.more_errors", "count", 1) {
		t.Errorf("two bad filters: %+v", e)
	}
}

func TestContractOrderOptions(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	key := createKey(t, a)
	key2 := createKey(t, a)
	p := createProject(t, a)
	rc := createRecipe(t, a)

	t.Run("every option", func(t *testing.T) {
		srv := order(t, a, map[string]any{"plan_id": 2, "location_id": 2, "image_id": 2,
			"ssh_key_ids": []int64{num(t, key2["id"]), num(t, key["id"])}, "display_name": "db",
			"project_id": num(t, p["id"]), "recipe_id": num(t, rc["id"]), "root_password": strings.Repeat("p", 72)})
		if srv["display_name"] != "db" || num(t, srv["project_id"]) != num(t, p["id"]) || num(t, srv["recipe_id"]) != num(t, rc["id"]) ||
			num(t, srv["plan_id"]) != 2 || num(t, srv["location_id"]) != 2 || num(t, srv["image_id"]) != 2 || srv["app_id"] != nil {
			t.Errorf("ordered: %v", srv)
		}
		if fmt.Sprint(srv["ssh_key_ids"]) != fmt.Sprintf("[%v %v]", key2["id"], key["id"]) {
			t.Errorf("ssh_key_ids %v", srv["ssh_key_ids"])
		}
		if _, leaked := srv["root_password"]; leaked {
			t.Error("root_password returned")
		}
		got := serverAfter(t, a, srv)
		if got["status"] != "running" || fmt.Sprint(got["ssh_key_ids"]) != fmt.Sprint(srv["ssh_key_ids"]) || got["recipe_id"] == nil {
			t.Errorf("after provisioning: %v", got)
		}
	})

	t.Run("display_name of 64 characters", func(t *testing.T) {
		srv := order(t, a, with(baseOrder(), "display_name", strings.Repeat("d", 64)))
		if srv["display_name"] != strings.Repeat("d", 64) {
			t.Errorf("display_name %v", srv["display_name"])
		}
	})

	t.Run("app on the location's Ubuntu image", func(t *testing.T) {
		apps := items(t, a.Do("GET", "/apps", nil).Want(t, 200))
		appID := num(t, apps[0]["id"])
		for _, l := range items(t, a.Do("GET", "/locations", nil).Want(t, 200)) {
			var ubuntu int64
			for _, i := range l["images"].([]any) {
				if im := i.(map[string]any); im["os"] == "ubuntu" {
					ubuntu = num(t, im["id"])
				}
			}
			plan := num(t, l["plans"].([]any)[0].(map[string]any)["id"])
			body := map[string]any{"plan_id": plan, "location_id": l["id"], "app_id": appID}
			if num(t, l["id"]) == 1 {
				body["root_password"] = "12345678" // the shortest allowed
			}
			srv := order(t, a, body)
			if num(t, srv["image_id"]) != ubuntu || srv["app_id"] == nil || num(t, srv["app_id"]) != appID {
				t.Errorf("location %v: image_id %v app_id %v, want image %d app %d", l["name"], srv["image_id"], srv["app_id"], ubuntu, appID)
			}
		}
	})

	t.Run("servers keep a deleted key", func(t *testing.T) {
		k := createKey(t, a)
		srv := runningServer(t, a, "ssh_key_ids", []int64{num(t, k["id"])})
		a.Do("DELETE", "/ssh-keys/"+itoa(num(t, k["id"])), nil).Want(t, 204)
		got := data(t, a.Do("GET", "/servers/"+srv["name"].(string), nil).Want(t, 200))
		if fmt.Sprint(got["ssh_key_ids"]) != fmt.Sprintf("[%v]", k["id"]) || got["status"] != "running" {
			t.Errorf("after the key's deletion: %v", got)
		}
	})
}

func TestContractOrderValidation(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	b := env.NewAccount("en", "100", "")
	key := createKey(t, a)
	bKey, bProject, bRecipe := createKey(t, b), createProject(t, b), createRecipe(t, b)
	keyID := num(t, key["id"])

	bKeyID := num(t, bKey["id"])
	pw := msg("en", "validation.between_chars", "min", 8, "max", 72)
	cases := []struct {
		name  string
		body  any
		field string
		want  string // the message on field
	}{
		{"plan_id missing", with(baseOrder(), "plan_id", drop), "plan_id", msg("en", "validation.required")},
		{"plan_id unknown", with(baseOrder(), "plan_id", 999), "plan_id", msg("en", "validation.plan_unknown")},
		{"plan_id not offered at the location", with(baseOrder(), "location_id", 3, "plan_id", 5), "plan_id", msg("en", "validation.plan_not_offered")},
		{"plan_id wrong type", with(baseOrder(), "plan_id", "1"), "plan_id", msg("en", "validation.type_integer")},
		{"plan_id not whole", with(baseOrder(), "plan_id", 1.5), "plan_id", msg("en", "validation.type_integer")},
		{"location_id missing", with(baseOrder(), "location_id", drop), "location_id", msg("en", "validation.required")},
		{"location_id unknown", with(baseOrder(), "location_id", 999), "location_id", msg("en", "validation.location_unknown")},
		{"image_id unknown", with(baseOrder(), "image_id", 999), "image_id", msg("en", "validation.image_unknown")},
		{"image_id not offered at the location", with(baseOrder(), "location_id", 3, "image_id", 3), "image_id", msg("en", "validation.image_not_offered")},
		{"image_id and app_id", with(baseOrder(), "app_id", 1), "image_id", msg("en", "validation.image_app_both")},
		{"neither image_id nor app_id", with(baseOrder(), "image_id", drop), "image_id", msg("en", "validation.image_app_none")},
		{"app_id unknown", with(baseOrder(), "image_id", drop, "app_id", 999), "app_id", msg("en", "validation.app_unknown")},
		{"ssh key unknown", with(baseOrder(), "ssh_key_ids", []int64{keyID, 999999}), "ssh_key_ids", msg("en", "validation.ssh_key_unknown", "id", 999999)},
		{"ssh key of another account", with(baseOrder(), "ssh_key_ids", []int64{bKeyID}), "ssh_key_ids", msg("en", "validation.ssh_key_unknown", "id", bKeyID)},
		{"ssh key twice", with(baseOrder(), "ssh_key_ids", []int64{keyID, keyID}), "ssh_key_ids", msg("en", "validation.ssh_key_repeated", "id", keyID)},
		{"ssh_key_ids not a list", with(baseOrder(), "ssh_key_ids", "1"), "ssh_key_ids", msg("en", "validation.integer_list")},
		{"project unknown", with(baseOrder(), "project_id", 999999), "project_id", msg("en", "validation.project_unknown")},
		{"project of another account", with(baseOrder(), "project_id", num(t, bProject["id"])), "project_id", msg("en", "validation.project_unknown")},
		{"project_id wrong type", with(baseOrder(), "project_id", "1"), "project_id", msg("en", "validation.type_integer")},
		{"recipe unknown", with(baseOrder(), "recipe_id", 999999), "recipe_id", msg("en", "validation.recipe_unknown")},
		{"recipe of another account", with(baseOrder(), "recipe_id", num(t, bRecipe["id"])), "recipe_id", msg("en", "validation.recipe_unknown")},
		{"root_password 7 characters", with(baseOrder(), "root_password", "1234567"), "root_password", pw},
		{"root_password 73 characters", with(baseOrder(), "root_password", strings.Repeat("p", 73)), "root_password", pw},
		{"display_name 65 characters", with(baseOrder(), "display_name", strings.Repeat("d", 65)), "display_name", msg("en", "validation.max_chars", "max", 64)},
		{"display_name empty", with(baseOrder(), "display_name", ""), "display_name", msg("en", "validation.required")},
		{"display_name with a newline", with(baseOrder(), "display_name", "a\nb"), "display_name", msg("en", "validation.no_control_chars")},
		{"unknown field ssh_keys", with(baseOrder(), "ssh_keys", []int64{keyID}), "ssh_keys", msg("en", "validation.unknown_field")},
		{"read-only field status", with(baseOrder(), "status", "running"), "status", msg("en", "validation.unknown_field")},
		{"invalid JSON", `{"plan_id": 1,`, "body", msg("en", "validation.invalid_json")},
		{"two JSON values", `{"plan_id": 1}{}`, "body", msg("en", "validation.invalid_json")},
		{"JSON array", `[{"plan_id": 1}]`, "body", msg("en", "validation.body_shape")},
		{"JSON string", `"x"`, "body", msg("en", "validation.body_shape")},
		{"JSON null", `null`, "body", msg("en", "validation.body_shape")},
		{"body over 64 KiB", `{"display_name": "` + strings.Repeat("x", 70<<10) + `"}`, "body", msg("en", "validation.body_too_large", "max", 65536)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := wantInvalid(t, a.Do("POST", "/servers", c.body), c.field)
			if !slices.Equal(e.Errors[c.field], []string{c.want}) || len(e.Errors) != 1 || e.Message != c.want {
				t.Errorf("got %+v, want only errors.%s = [%q]", e, c.field, c.want)
			}
		})
	}
	if n := len(items(t, a.Do("GET", "/servers", nil).Want(t, 200))); n != 0 {
		t.Fatalf("refused orders created %d servers", n)
	}

	t.Run("out of stock", func(t *testing.T) {
		cat := catalog.Default()
		one := 1
		for i, l := range cat.Locations {
			if l.ID != 3 {
				continue
			}
			for j, o := range l.Offers {
				if o.PlanID == 3 {
					cat.Locations[i].Offers[j].Capacity = &one
				}
			}
		}
		if err := env.App.Service.ApplyCatalog(context.Background(), cat); err != nil {
			t.Fatal(err)
		}
		inStock := func() any {
			for _, l := range items(t, a.Do("GET", "/locations", nil).Want(t, 200)) {
				if num(t, l["id"]) == 3 {
					for _, p := range l["plans"].([]any) {
						if pm := p.(map[string]any); num(t, pm["id"]) == 3 {
							return pm["in_stock"]
						}
					}
				}
			}
			t.Fatal("plan 3 not at location 3")
			return nil
		}
		if inStock() != true {
			t.Fatal("plan 3 at location 3 out of stock before any order")
		}
		srv := order(t, b, map[string]any{"plan_id": 3, "location_id": 3, "image_id": 1})
		if inStock() != false {
			t.Error("plan 3 at location 3 still in stock with its capacity used")
		}
		e := wantInvalid(t, a.Do("POST", "/servers", map[string]any{"plan_id": 3, "location_id": 3, "image_id": 1}), "plan_id")
		if e.Errors["plan_id"][0] != msg("en", "validation.plan_out_of_stock") {
			t.Errorf("message %q", e.Errors["plan_id"][0])
		}
		// Deleting the server frees the capacity.
		waitOp(t, b, opID(t, srv))
		b.Do("DELETE", "/servers/"+srv["name"].(string), nil).Want(t, 204)
		if inStock() != true {
			t.Error("capacity not freed by deleting the server")
		}
		// Concurrent orders for the one free unit: exactly one wins.
		rs := concurrently(4, func() *testenv.Response {
			return b.Do("POST", "/servers", map[string]any{"plan_id": 3, "location_id": 3, "image_id": 1})
		})
		if got := statuses(rs); got[201] != 1 || got[422] != 3 {
			t.Errorf("4 concurrent orders for 1 unit: %v, want one 201 and three 422", got)
		}
	})

	t.Run("credit and quota", func(t *testing.T) {
		acct, err := env.App.Service.CreateAccount(context.Background(), ops.NewAccount{Email: "quota@example.com",
			Password: "correct horse battery", Language: "en", Credit: money(t, "0.0100"), Quotas: map[string]int{"servers": 1}})
		if err != nil {
			t.Fatal(err)
		}
		_, tok := newToken(t, env, acct.ID, "servers", 0)
		q := tokenCaller{env, tok}

		// Plan 2 costs 0.0110 an hour: more than the credit.
		r := q.Do("POST", "/servers", map[string]any{"plan_id": 2, "location_id": 1, "image_id": 1})
		if r.Status != 422 {
			t.Fatalf("order above the credit: %d %s", r.Status, r.Body)
		}
		var e apiError
		r.JSON(t, &e)
		if len(e.Errors["plan_id"]) != 1 || !strings.Contains(e.Errors["plan_id"][0], "credit is too low") ||
			e.Errors["plan_id"][0] != msg("en", "validation.credit_too_low", "amount", "0.0110", "currency", "EUR") || len(e.Errors) != 1 {
			t.Errorf("credit too low: %s", r.Body)
		}
		if e.Code != "insufficient_credit" {
			t.Errorf("code %q", e.Code)
		}

		// Plan 1 costs 0.0070: the credit covers one hour, which the order charges.
		order(t, q, map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1})
		if _, err := env.App.Service.AddCredit(context.Background(), acct.ID, money(t, "0.0100"), ""); err != nil {
			t.Fatal(err)
		}
		r = q.Do("POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1})
		e = wantError(t, r, 422, "validation_failed")
		quota := false
		for _, msgs := range e.Errors {
			for _, m := range msgs {
				quota = quota || m == msg("en", "validation.quota_exceeded", "quota", 1)
			}
		}
		if !quota {
			t.Errorf("quota exceeded: %s", r.Body)
		}
		// A deleted server no longer counts.
		list := items(t, q.Do("GET", "/servers", nil).Want(t, 200))
		if list[0]["operation"] != nil {
			waitOp(t, q, opID(t, list[0]))
		}
		q.Do("DELETE", "/servers/"+list[0]["name"].(string), nil).Want(t, 204)
		order(t, q, map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1})
	})

	t.Run("credit too low has code insufficient_credit", func(t *testing.T) {
		low := env.NewAccount("en", "0.0050", "")
		wantError(t, low.Do("POST", "/servers", baseOrder()), 422, "insufficient_credit")
	})
}

// TestContractAccountItems covers SSH keys, projects and recipes, on one account.
func TestContractAccountItems(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	t.Run("ssh-keys", func(t *testing.T) { testSSHKeys(t, env, a) })
	t.Run("projects", func(t *testing.T) { testProjects(t, env, a) })
	t.Run("recipes", func(t *testing.T) { testRecipes(t, env, a) })
}

func testSSHKeys(t *testing.T, env *testenv.Env, a *testenv.Account) {
	pub := testenv.PublicKey(t) + " test@berth" // a comment, kept as given

	r := a.Do("POST", "/ssh-keys", map[string]any{"name": "laptop", "public_key": pub + "\n"}).Want(t, 201)
	k := data(t, r)
	pk, _, _, _, err := ssh.ParseAuthorizedKey([]byte(pub))
	if err != nil {
		t.Fatal(err)
	}
	if k["name"] != "laptop" || k["public_key"] != pub || k["fingerprint"] != ssh.FingerprintSHA256(pk) ||
		!strings.HasPrefix(k["fingerprint"].(string), "SHA256:") || k["created_at"] == "" {
		t.Errorf("key %v, want fingerprint %s", k, ssh.FingerprintSHA256(pk))
	}
	kid := itoa(num(t, k["id"]))

	t.Run("listed", func(t *testing.T) {
		list := items(t, a.Do("GET", "/ssh-keys", nil).Want(t, 200))
		if len(list) != 1 || list[0]["fingerprint"] != k["fingerprint"] {
			t.Errorf("list %v", list)
		}
	})

	t.Run("422", func(t *testing.T) {
		e := wantInvalid(t, a.Do("POST", "/ssh-keys", map[string]any{"name": "again", "public_key": pub}), "public_key")
		if e.Errors["public_key"][0] != msg("en", "validation.ssh_key_duplicate") {
			t.Errorf("duplicate: %v", e.Errors)
		}
		// The same key with another comment is the same key.
		fields := strings.Fields(pub)
		wantInvalid(t, a.Do("POST", "/ssh-keys", map[string]any{"name": "again", "public_key": fields[0] + " " + fields[1] + " other"}), "public_key")
		wantInvalid(t, a.Do("POST", "/ssh-keys", map[string]any{"name": "bad", "public_key": "ssh-ed25519 AAAAnotakey"}), "public_key")
		wantInvalid(t, a.Do("POST", "/ssh-keys", map[string]any{"name": "bad", "public_key": testenv.PublicKey(t) + "\n" + testenv.PublicKey(t)}), "public_key")
		wantInvalid(t, a.Do("POST", "/ssh-keys", map[string]any{"name": "bad"}), "public_key")
		wantInvalid(t, a.Do("POST", "/ssh-keys", map[string]any{"public_key": testenv.PublicKey(t)}), "name")
		wantInvalid(t, a.Do("POST", "/ssh-keys", map[string]any{"name": strings.Repeat("n", 65), "public_key": testenv.PublicKey(t)}), "name")
		wantInvalid(t, a.Do("POST", "/ssh-keys", map[string]any{"name": "k", "public_key": testenv.PublicKey(t), "fingerprint": "x"}), "fingerprint")
		wantInvalid(t, a.Do("POST", "/ssh-keys", "[]"), "body")
		e = wantError(t, a.Do("POST", "/ssh-keys", map[string]any{}), 422, "validation_failed")
		if len(e.Errors["name"]) == 0 || len(e.Errors["public_key"]) == 0 || e.Message != e.Errors["name"][0]+msg("en", "error.more_errors", "count", 1) {
			t.Errorf("empty body: %+v", e)
		}
		if n := len(items(t, a.Do("GET", "/ssh-keys", nil).Want(t, 200))); n != 1 {
			t.Errorf("refused keys stored: %d keys", n)
		}
	})

	t.Run("concurrent creates of one key", func(t *testing.T) {
		pub := testenv.PublicKey(t)
		rs := concurrently(4, func() *testenv.Response {
			return a.Do("POST", "/ssh-keys", map[string]any{"name": "k", "public_key": pub})
		})
		onlyOneCreated(t, a, rs, "/ssh-keys", "public_key")
	})

	t.Run("delete", func(t *testing.T) {
		r := a.Do("DELETE", "/ssh-keys/"+kid, nil).Want(t, 204)
		if len(r.Body) != 0 {
			t.Errorf("204 with a body %q", r.Body)
		}
		wantNotFound(t, a.Do("DELETE", "/ssh-keys/"+kid, nil))
		wantNotFound(t, a.Do("DELETE", "/ssh-keys/abc", nil))
		wantNotFound(t, a.Do("DELETE", "/ssh-keys/0", nil))
		if n := len(items(t, a.Do("GET", "/ssh-keys", nil).Want(t, 200))); n != 0 {
			t.Errorf("%d keys after delete", n)
		}
		// Once deleted, the key can be stored again.
		a.Do("POST", "/ssh-keys", map[string]any{"name": "laptop", "public_key": pub}).Want(t, 201)
	})
}

// onlyOneCreated checks that of concurrent creates of one thing exactly one answered
// 201 and every other 422 on field, then deletes what was created.
func onlyOneCreated(t *testing.T, a *testenv.Account, rs []*testenv.Response, path, field string) {
	t.Helper()
	if got := statuses(rs); got[201] != 1 || got[422] != len(rs)-1 {
		t.Errorf("%d concurrent creates of one %s: %v, want one 201 and the rest 422", len(rs), field, got)
	}
	for _, r := range rs {
		if r.Status == 201 {
			a.Do("DELETE", path+"/"+itoa(num(t, data(t, r)["id"])), nil).Want(t, 204)
		} else {
			wantInvalid(t, r, field)
		}
	}
}

func testProjects(t *testing.T, env *testenv.Env, a *testenv.Account) {

	p := data(t, a.Do("POST", "/projects", map[string]any{"name": "web"}).Want(t, 201))
	if p["name"] != "web" || num(t, p["server_count"]) != 0 {
		t.Errorf("created %v", p)
	}
	pid := itoa(num(t, p["id"]))
	other := data(t, a.Do("POST", "/projects", map[string]any{"name": "db"}).Want(t, 201))

	t.Run("422", func(t *testing.T) {
		e := wantInvalid(t, a.Do("POST", "/projects", map[string]any{"name": "web"}), "name")
		if e.Errors["name"][0] != msg("en", "validation.name_taken") {
			t.Errorf("duplicate: %v", e.Errors)
		}
		wantInvalid(t, a.Do("POST", "/projects", map[string]any{}), "name")
		wantInvalid(t, a.Do("POST", "/projects", map[string]any{"name": ""}), "name")
		wantInvalid(t, a.Do("POST", "/projects", map[string]any{"name": strings.Repeat("n", 65)}), "name")
		wantInvalid(t, a.Do("POST", "/projects", map[string]any{"name": "x", "server_count": 3}), "server_count")
		wantInvalid(t, a.Do("PATCH", "/projects/"+pid, map[string]any{"name": "db"}), "name")
		wantInvalid(t, a.Do("PATCH", "/projects/"+pid, map[string]any{"name": 7}), "name")
		wantInvalid(t, a.Do("PATCH", "/projects/"+pid, map[string]any{}), "name")
	})

	t.Run("concurrent creates of one name", func(t *testing.T) {
		rs := concurrently(4, func() *testenv.Response { return a.Do("POST", "/projects", map[string]any{"name": "dup"}) })
		onlyOneCreated(t, a, rs, "/projects", "name")
	})

	t.Run("rename", func(t *testing.T) {
		got := data(t, a.Do("PATCH", "/projects/"+pid, map[string]any{"name": "frontend"}).Want(t, 200))
		if got["name"] != "frontend" || itoa(num(t, got["id"])) != pid {
			t.Errorf("renamed %v", got)
		}
		// Renaming to its own name is no conflict.
		a.Do("PATCH", "/projects/"+pid, map[string]any{"name": "frontend"}).Want(t, 200)
		wantNotFound(t, a.Do("PATCH", "/projects/999999", map[string]any{"name": "x"}))
		wantNotFound(t, a.Do("PATCH", "/projects/abc", map[string]any{"name": "x"}))
	})

	t.Run("server_count and delete unassigns", func(t *testing.T) {
		s1 := runningServer(t, a, "project_id", num(t, p["id"]))
		s2 := runningServer(t, a, "project_id", num(t, p["id"]))
		list := items(t, a.Do("GET", "/projects", nil).Want(t, 200))
		if len(list) != 2 || itoa(num(t, list[0]["id"])) != pid || num(t, list[0]["server_count"]) != 2 || num(t, list[1]["server_count"]) != 0 {
			t.Fatalf("projects %v", list)
		}
		a.Do("DELETE", "/projects/"+pid, nil).Want(t, 204)
		for _, s := range []map[string]any{s1, s2} {
			got := data(t, a.Do("GET", "/servers/"+s["name"].(string), nil).Want(t, 200))
			if got["project_id"] != nil || got["status"] != "running" || got["operation"] != nil {
				t.Errorf("server after its project's deletion: %v", got)
			}
		}
		if got := ids(t, items(t, a.Do("GET", "/projects", nil).Want(t, 200))); !slices.Equal(got, []int64{num(t, other["id"])}) {
			t.Errorf("projects after delete %v", got)
		}
		if n := len(items(t, a.Do("GET", "/servers?project_id="+pid, nil).Want(t, 200))); n != 0 {
			t.Errorf("%d servers in a deleted project", n)
		}
		wantNotFound(t, a.Do("DELETE", "/projects/"+pid, nil))
		wantNotFound(t, a.Do("PATCH", "/projects/"+pid, map[string]any{"name": "x"}))
		wantNotFound(t, a.Do("DELETE", "/projects/abc", nil))
		// Ordering into the deleted project is refused.
		wantInvalid(t, a.Do("POST", "/servers", with(baseOrder(), "project_id", num(t, p["id"]))), "project_id")
		// The name is free again.
		a.Do("POST", "/projects", map[string]any{"name": "frontend"}).Want(t, 201)
		// Deleting a server takes it out of its project's count.
		oid := itoa(num(t, other["id"]))
		s3 := runningServer(t, a, "project_id", num(t, other["id"]))
		count := func() int64 {
			for _, p := range items(t, a.Do("GET", "/projects", nil).Want(t, 200)) {
				if itoa(num(t, p["id"])) == oid {
					return num(t, p["server_count"])
				}
			}
			t.Fatal("project gone")
			return 0
		}
		if n := count(); n != 1 {
			t.Errorf("server_count %d, want 1", n)
		}
		a.Do("DELETE", "/servers/"+s3["name"].(string), nil).Want(t, 204)
		if n := count(); n != 0 {
			t.Errorf("server_count %d after the server's deletion, want 0", n)
		}
	})
}

func testRecipes(t *testing.T, env *testenv.Env, a *testenv.Account) {

	rc := data(t, a.Do("POST", "/recipes", map[string]any{"name": "setup", "script": "#!/bin/sh\napt-get update\n"}).Want(t, 201))
	if rc["name"] != "setup" || rc["script"] != "#!/bin/sh\napt-get update\n" {
		t.Errorf("created %v", rc)
	}
	rid := itoa(num(t, rc["id"]))

	t.Run("get and list", func(t *testing.T) {
		got := data(t, a.Do("GET", "/recipes/"+rid, nil).Want(t, 200))
		if got["script"] != rc["script"] {
			t.Errorf("got %v", got)
		}
		if list := items(t, a.Do("GET", "/recipes", nil).Want(t, 200)); len(list) != 1 || list[0]["name"] != "setup" {
			t.Errorf("list %v", list)
		}
		wantNotFound(t, a.Do("GET", "/recipes/999999", nil))
		wantNotFound(t, a.Do("GET", "/recipes/x", nil))
	})

	t.Run("update", func(t *testing.T) {
		got := data(t, a.Do("PATCH", "/recipes/"+rid, map[string]any{"name": "base"}).Want(t, 200))
		if got["name"] != "base" || got["script"] != rc["script"] {
			t.Errorf("after name change %v", got)
		}
		got = data(t, a.Do("PATCH", "/recipes/"+rid, map[string]any{"script": "echo 2"}).Want(t, 200))
		if got["name"] != "base" || got["script"] != "echo 2" {
			t.Errorf("after script change %v", got)
		}
		if got = data(t, a.Do("GET", "/recipes/"+rid, nil).Want(t, 200)); got["name"] != "base" || got["script"] != "echo 2" {
			t.Errorf("stored %v", got)
		}
		wantNotFound(t, a.Do("PATCH", "/recipes/999999", map[string]any{"name": "x"}))
	})

	t.Run("422", func(t *testing.T) {
		wantInvalid(t, a.Do("POST", "/recipes", map[string]any{"name": "x"}), "script")
		wantInvalid(t, a.Do("POST", "/recipes", map[string]any{"script": "echo"}), "name")
		wantInvalid(t, a.Do("POST", "/recipes", map[string]any{"name": "x", "script": "  \n"}), "script")
		wantInvalid(t, a.Do("POST", "/recipes", map[string]any{"name": strings.Repeat("n", 65), "script": "echo"}), "name")
		wantInvalid(t, a.Do("POST", "/recipes", map[string]any{"name": "x", "script": "echo", "shell": "bash"}), "shell")
		wantInvalid(t, a.Do("PATCH", "/recipes/"+rid, map[string]any{"script": ""}), "script")
		wantInvalid(t, a.Do("PATCH", "/recipes/"+rid, map[string]any{"name": ""}), "name")
		wantInvalid(t, a.Do("POST", "/recipes", map[string]any{"name": "x", "script": strings.Repeat("#", 64<<10+1)}), "script")
		wantInvalid(t, a.Do("POST", "/recipes", map[string]any{"name": "x", "script": strings.Repeat("\x01", 100<<10)}), "body")
		wantInvalid(t, a.Do("POST", "/projects", map[string]any{"name": strings.Repeat("#", 65<<10)}), "body")
	})

	t.Run("a 64 KiB script fits", func(t *testing.T) {
		// Control characters take six bytes each in JSON: the body is far over 64 KiB.
		script := "#!/bin/sh\n" + strings.Repeat("\x01", 64<<10-10)
		got := data(t, a.Do("POST", "/recipes", map[string]any{"name": "big", "script": script}).Want(t, 201))
		if got["script"] != script {
			t.Error("the script came back changed")
		}
	})

	t.Run("ordered with recipe_id", func(t *testing.T) {
		srv := runningServer(t, a, "recipe_id", num(t, rc["id"]))
		if num(t, srv["recipe_id"]) != num(t, rc["id"]) {
			t.Errorf("recipe_id %v", srv["recipe_id"])
		}
	})

	t.Run("delete", func(t *testing.T) {
		r2 := createRecipe(t, a)
		srv := order(t, a, with(baseOrder(), "recipe_id", num(t, r2["id"])))
		a.Do("DELETE", "/recipes/"+rid, nil).Want(t, 204)
		wantNotFound(t, a.Do("GET", "/recipes/"+rid, nil))
		wantNotFound(t, a.Do("DELETE", "/recipes/"+rid, nil))
		wantNotFound(t, a.Do("PATCH", "/recipes/"+rid, map[string]any{"name": "x"}))
		wantInvalid(t, a.Do("POST", "/servers", with(baseOrder(), "recipe_id", num(t, rc["id"]))), "recipe_id")
		// A server ordered with a recipe keeps being built when the recipe goes away.
		a.Do("DELETE", "/recipes/"+itoa(num(t, r2["id"])), nil).Want(t, 204)
		if got := serverAfter(t, a, srv); got["status"] != "running" {
			t.Errorf("server status %v", got["status"])
		}
	})
}

func TestContractBlockedAccount(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	f := newFixture(t, a)
	ctx := context.Background()
	if _, err := env.App.Service.SetAccountBlocked(ctx, a.ID, true); err != nil {
		t.Fatal(err)
	}

	me := data(t, a.Do("GET", "/me", nil).Want(t, 200))
	if me["blocked"] != true {
		t.Errorf("GET /me of a blocked account: blocked %v", me["blocked"])
	}
	for _, rt := range routes(t, env) {
		if rt.Scope == "" || (rt.Method == "GET" && rt.Path == "/v1/me") {
			continue
		}
		r := a.Do(rt.Method, fillPath(t, rt.Path, f.params(false)), validBody(t, rt.Method, rt.Path))
		if r.Status != 403 {
			t.Errorf("%s %s of a blocked account: %d %s", rt.Method, rt.Path, r.Status, r.Body)
			continue
		}
		e := wantError(t, r, 403, "account_blocked")
		if e.Message != msg("en", "error.account_blocked") {
			t.Errorf("message %q", e.Message)
		}
	}
	// Blocked comes before 404, also for a path no route has, and before 405.
	wantError(t, a.Do("GET", "/servers/999999", nil), 403, "account_blocked")
	wantError(t, a.Do("GET", "/no-such-path", nil), 403, "account_blocked")
	wantError(t, a.Do("DELETE", "/me", nil), 403, "account_blocked")

	if _, err := env.App.Service.SetAccountBlocked(ctx, a.ID, false); err != nil {
		t.Fatal(err)
	}
	if me := data(t, a.Do("GET", "/me", nil).Want(t, 200)); me["blocked"] != false {
		t.Errorf("unblocked: %v", me["blocked"])
	}
	got := data(t, a.Do("GET", "/servers/"+f.serverName, nil).Want(t, 200))
	if got["status"] != "running" || got["display_name"] != f.server["display_name"] {
		t.Errorf("server changed while the account was blocked: %v", got)
	}
}

func TestContractSuspendedServer(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "100", "")
	srv := runningServer(t, a)
	other := runningServer(t, a)
	name, id := srv["name"].(string), num(t, srv["id"])
	ctx := context.Background()
	if _, err := env.App.Service.SetServerSuspended(ctx, id, true); err != nil {
		t.Fatal(err)
	}

	got := data(t, a.Do("GET", "/servers/"+name, nil).Want(t, 200))
	if got["status"] != "suspended" {
		t.Fatalf("status %v, want suspended at once", got["status"])
	}
	for _, req := range []struct {
		method, path string
		body         any
	}{
		{"PATCH", "/servers/" + name, map[string]any{"display_name": "x"}},
		{"PATCH", "/servers/" + itoa(id), map[string]any{}},
		{"DELETE", "/servers/" + name, nil},
		{"POST", "/servers/" + name + "/power", map[string]any{"action": "on"}},
		{"POST", "/servers/" + name + "/power", map[string]any{"action": "off"}},
		{"POST", "/servers/" + name + "/power", map[string]any{"action": "reboot"}},
	} {
		e := wantError(t, a.Do(req.method, req.path, req.body), 403, "server_suspended")
		if e.Message != msg("en", "error.server_suspended") {
			t.Errorf("message %q", e.Message)
		}
	}
	// The machine is powered off in the background; GETs keep answering.
	if op, ok := got["operation"].(map[string]any); ok {
		waitOp(t, a, num(t, op["id"]))
	}
	got = data(t, a.Do("GET", "/servers/"+itoa(id), nil).Want(t, 200))
	if got["status"] != "suspended" || got["operation"] != nil {
		t.Errorf("after the power-off: %v", got)
	}
	if m, err := env.App.Driver().Machine(ctx, name); err != nil || m.State != "stopped" {
		t.Errorf("machine of a suspended server: %v %v, want stopped", m.State, err)
	}
	if got := ids(t, items(t, a.Do("GET", "/servers?status=suspended", nil).Want(t, 200))); !slices.Equal(got, []int64{id}) {
		t.Errorf("status=suspended: %v", got)
	}
	if got := ids(t, items(t, a.Do("GET", "/servers?status=stopped", nil).Want(t, 200))); len(got) != 0 {
		t.Errorf("status=stopped lists a suspended server: %v", got)
	}
	// The other server is untouched.
	if got := data(t, a.Do("GET", "/servers/"+other["name"].(string), nil).Want(t, 200)); got["status"] != "running" {
		t.Errorf("other server %v", got["status"])
	}

	// Lifting the suspension leaves the machine off; its owner powers it on.
	if _, err := env.App.Service.SetServerSuspended(ctx, id, false); err != nil {
		t.Fatal(err)
	}
	if got := data(t, a.Do("GET", "/servers/"+name, nil).Want(t, 200)); got["status"] != "stopped" {
		t.Errorf("after the suspension: %v", got["status"])
	}
	on := data(t, a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "on"}).Want(t, 200))
	if got := serverAfter(t, a, on); got["status"] != "running" {
		t.Errorf("powered on: %v", got["status"])
	}
}

func TestContractBusy(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{SimTimeScale: 0.3}) // provisioning lasts ~9 s: time for its requests under load
	a := env.NewAccount("en", "100", "")
	srv := order(t, a, baseOrder())
	name := srv["name"].(string)
	prov := srv["operation"].(map[string]any)
	provID := num(t, prov["id"])

	wantBusy := func(t *testing.T, r *testenv.Response) {
		t.Helper()
		e := wantError(t, r, 409, "busy")
		if e.Operation == nil || e.Operation.ID != provID || e.Operation.Type != "provision" || e.Operation.StartedAt != prov["started_at"] {
			t.Errorf("operation %+v, want %v", e.Operation, prov)
		}
		if e.Message != msg("en", "error.busy", "operation", "provision") {
			t.Errorf("message %q", e.Message)
		}
		if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 {
			t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
		}
	}
	wantBusy(t, a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "off"}))
	wantBusy(t, a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "on"}))
	wantBusy(t, a.Do("DELETE", "/servers/"+name, nil))

	// PATCH and GETs are always allowed.
	got := data(t, a.Do("PATCH", "/servers/"+name, map[string]any{"display_name": "busy one"}).Want(t, 200))
	if got["display_name"] != "busy one" || got["status"] != "provisioning" || got["operation"] == nil {
		t.Errorf("PATCH while busy: %v", got)
	}
	op := data(t, a.Do("GET", "/operations/"+itoa(provID), nil).Want(t, 200))
	if op["status"] != "running" || op["finished_at"] != nil || op["error"] != nil {
		t.Errorf("running operation %v", op)
	}

	start := time.Now()
	op = data(t, a.Do("GET", "/operations/"+itoa(provID)+"?wait=30", nil).Want(t, 200))
	if op["status"] != "success" || op["finished_at"] == nil {
		t.Fatalf("after ?wait=30: %v (%v)", op, time.Since(start))
	}
	got = data(t, a.Do("GET", "/servers/"+name, nil).Want(t, 200))
	if got["status"] != "running" || got["operation"] != nil || got["display_name"] != "busy one" {
		t.Errorf("after provisioning: %v", got)
	}
	// Suspension during an operation: shown at once; the machine is powered off once
	// the operation ends. Meanwhile, a wait that runs out answers the operation still
	// running.
	susp := order(t, a, baseOrder())
	suspName := susp["name"].(string)
	if _, err := env.App.Service.SetServerSuspended(context.Background(), num(t, susp["id"]), true); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	op = data(t, a.Do("GET", "/operations/"+itoa(opID(t, susp))+"?wait=1", nil).Want(t, 200))
	if waited := time.Since(start); op["status"] != "running" || op["finished_at"] != nil || waited < 900*time.Millisecond {
		t.Errorf("after ?wait=1 on a 9 s provisioning (%v): %v", waited, op)
	}
	got = data(t, a.Do("GET", "/servers/"+suspName, nil).Want(t, 200))
	if got["status"] != "suspended" || got["operation"] == nil {
		t.Errorf("suspended while provisioning: %v", got)
	}

	// Concurrent power actions: exactly one is accepted, the others find it busy.
	rs := concurrently(6, func() *testenv.Response {
		return a.Do("POST", "/servers/"+name+"/power", map[string]any{"action": "reboot"})
	})
	if got := statuses(rs); got[200] != 1 || got[409] != 5 {
		t.Errorf("6 concurrent reboots: %v, want one 200 and five 409", got)
	}
	for _, r := range rs {
		if r.Status == 200 {
			waitOp(t, a, opID(t, data(t, r)))
		}
	}

	waitOp(t, a, opID(t, susp))
	deadline := time.Now().Add(20 * time.Second)
	for {
		got = data(t, a.Do("GET", "/servers/"+suspName, nil).Want(t, 200))
		m, err := env.App.Driver().Machine(context.Background(), suspName)
		if got["operation"] == nil && err == nil && m.State == "stopped" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("suspended server after provisioning: %v, machine %v %v; want it powered off", got, m.State, err)
		}
		if op, ok := got["operation"].(map[string]any); ok {
			waitOp(t, a, num(t, op["id"]))
		} else {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if got["status"] != "suspended" {
		t.Errorf("status %v", got["status"])
	}
}

func testUnknownPathsAndMethods(t *testing.T, env *testenv.Env, a *testenv.Account) {
	for _, tc := range []struct {
		method, path string
		allow        []string
	}{
		{"PUT", "/servers", []string{"GET", "POST"}},
		{"DELETE", "/servers", []string{"GET", "POST"}},
		{"PUT", "/servers/1", []string{"GET", "PATCH", "DELETE"}},
		{"GET", "/servers/1/power", []string{"POST"}},
		{"POST", "/me", []string{"GET"}},
		{"DELETE", "/operations/1", []string{"GET"}},
	} {
		r := a.Do(tc.method, tc.path, nil)
		wantError(t, r, 405, "method_not_allowed")
		allow := strings.Split(strings.ReplaceAll(r.Header.Get("Allow"), " ", ""), ",")
		for _, m := range tc.allow {
			if !slices.Contains(allow, m) {
				t.Errorf("%s %s: Allow %q lacks %s", tc.method, tc.path, r.Header.Get("Allow"), m)
			}
		}
	}
	for _, p := range []string{"/nope", "/servers/1/nope", "/"} {
		wantNotFound(t, a.Do("GET", p, nil))
		wantNotFound(t, env.Do("", "GET", p, nil, nil))
	}
}
