package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/apitest"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testenv"
)

// newClient is a client of env with token; every answer it gets passes through
// env.Client's transport, which validates it against api/openapi.yaml.
func newClient(t *testing.T, env *testenv.Env, token string, opts ...client.Option) *client.Client {
	t.Helper()
	return newClientVia(t, env, env.Client.Transport, token, opts...)
}

func newClientVia(t *testing.T, env *testenv.Env, rt http.RoundTripper, token string, opts ...client.Option) *client.Client {
	t.Helper()
	base := []client.Option{client.WithBaseURL(env.URL), client.WithToken(token),
		client.WithHTTPClient(&http.Client{Transport: rt, Timeout: 90 * time.Second})}
	c, err := client.New(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ctxFor bounds a test's calls. Its room is for a loaded CI machine, where TestPages'
// 53 operations took over two minutes.
func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// order is an order of the first location's smallest in-stock plan and first image.
func order(t *testing.T, ctx context.Context, c *client.Client) (api.ServerCreate, api.Location) {
	t.Helper()
	locs := must[[]api.Location](t)(c.ListLocations(ctx))
	loc := locs[0]
	plans := slices.Clone(loc.Plans)
	slices.SortFunc(plans, func(a, b api.Plan) int { return a.DiskGB - b.DiskGB })
	for _, p := range plans {
		if p.InStock {
			return api.ServerCreate{PlanID: &p.ID, LocationID: &loc.ID, ImageID: &loc.Images[0].ID}, loc
		}
	}
	t.Fatalf("location %s has no plan in stock", loc.Name)
	return api.ServerCreate{}, loc
}

// seen records what a client sent and got, passing everything on to base.
type seen struct {
	base http.RoundTripper
	mu   sync.Mutex
	log  []exchange
}

type exchange struct {
	at     time.Time
	req    *http.Request
	status int
	header http.Header
}

func (s *seen) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(req)
	s.mu.Lock()
	defer s.mu.Unlock()
	x := exchange{at: time.Now(), req: req}
	if err == nil {
		x.status, x.header = resp.StatusCode, resp.Header
	}
	s.log = append(s.log, x)
	return resp, err
}

func (s *seen) all() []exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// TestEveryOperationHasAMethod holds the SDK to the document: each operation of
// api/openapi.yaml but OPTIONS has a method of *client.Client named after its
// operationId, taking a context first.
func TestEveryOperationHasAMethod(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[*client.Client]()
	ctxType := reflect.TypeFor[context.Context]()
	for path, item := range apitest.New(t).Doc().Paths.Map() {
		for method, op := range item.Operations() {
			if method == http.MethodOptions {
				continue
			}
			name := string(unicode.ToUpper(rune(op.OperationID[0]))) + op.OperationID[1:]
			m, ok := typ.MethodByName(name)
			if !ok {
				t.Errorf("%s %s (%s): no method %s", method, path, op.OperationID, name)
				continue
			}
			if m.Type.NumIn() < 2 || m.Type.In(1) != ctxType {
				t.Errorf("%s: the first argument is not a context.Context", name)
			}
		}
	}
}

// TestEveryEndpoint calls every operation of the document through the SDK against
// a real Berth and checks each answered with success: the SDK's success path of
// every endpoint, each answer validated against the document on its way.
func TestEveryEndpoint(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 20, Sandbox: true})
	acct := env.NewAccount("en", "500", "")
	rec := &seen{base: env.Client.Transport}
	c := newClientVia(t, env, rec, acct.Token)
	ctx := ctxFor(t)

	doc := must[json.RawMessage](t)(c.GetOpenAPI(ctx))
	if !bytes.Contains(doc, []byte(`"paths"`)) {
		t.Errorf("GetOpenAPI: %.100s", doc)
	}
	me := must[*api.Me](t)(c.GetMe(ctx))
	if me.ID != acct.ID || me.Credit != "500.0000" {
		t.Errorf("GetMe: %+v", me)
	}
	if me = must[*api.Me](t)(c.UpdateMe(ctx, api.MeUpdate{Language: client.Ptr("de")})); me.Language != "de" {
		t.Errorf("UpdateMe: language %q", me.Language)
	}
	must[*api.Me](t)(c.UpdateMe(ctx, api.MeUpdate{Language: client.Ptr("en")}))
	must[[]api.App](t)(c.ListApps(ctx))

	key := must[*api.SSHKey](t)(c.CreateSSHKey(ctx, api.SSHKeyCreate{Name: client.Ptr("laptop"), PublicKey: client.Ptr(testenv.PublicKey(t) + " sdk@berth")}))
	if keys := must[[]api.SSHKey](t)(c.ListSSHKeys(ctx)); len(keys) != 1 || keys[0].ID != key.ID {
		t.Errorf("ListSSHKeys: %+v", keys)
	}
	proj := must[*api.Project](t)(c.CreateProject(ctx, api.ProjectWrite{Name: client.Ptr("web")}))
	if proj = must[*api.Project](t)(c.UpdateProject(ctx, proj.ID, api.ProjectWrite{Name: client.Ptr("www")})); proj.Name != "www" {
		t.Errorf("UpdateProject: %+v", proj)
	}
	rcp := must[*api.Recipe](t)(c.CreateRecipe(ctx, api.RecipeWrite{Name: client.Ptr("hello"), Script: client.Ptr("#!/bin/sh\necho hi\n")}))
	if rcp = must[*api.Recipe](t)(c.UpdateRecipe(ctx, rcp.ID, api.RecipeWrite{Script: client.Ptr("#!/bin/sh\necho hello\n")})); !strings.Contains(rcp.Script, "hello") {
		t.Errorf("UpdateRecipe: %+v", rcp)
	}
	if got := must[*api.Recipe](t)(c.GetRecipe(ctx, rcp.ID)); got.Name != "hello" {
		t.Errorf("GetRecipe: %+v", got)
	}
	if rs := must[[]api.Recipe](t)(c.ListRecipes(ctx)); len(rs) != 1 {
		t.Errorf("ListRecipes: %+v", rs)
	}

	req, loc := order(t, ctx, c)
	req.SSHKeyIDs, req.ProjectID, req.RecipeID, req.DisplayName = []int64{key.ID}, api.Some(proj.ID), &rcp.ID, client.Ptr("web 1")
	srv := must[*api.Server](t)(c.CreateServer(ctx, req))
	if srv.Status != "provisioning" || srv.Operation == nil || srv.ProjectID == nil || *srv.ProjectID != proj.ID {
		t.Fatalf("CreateServer: %+v", srv)
	}
	srv = must[*api.Server](t)(c.WaitServer(ctx, srv.Name, "running"))
	if got := must[*api.Server](t)(c.GetServer(ctx, client.ID(srv.ID))); got.Name != srv.Name {
		t.Errorf("GetServer by id: %+v", got)
	}
	if ps := must[[]api.Project](t)(c.ListProjects(ctx)); len(ps) != 1 || ps[0].ServerCount != 1 {
		t.Errorf("ListProjects: %+v", ps)
	}
	if l := must[[]api.Server](t)(c.ListServers(ctx, client.ServerListOptions{ProjectID: proj.ID, Status: "running"})); len(l) != 1 {
		t.Errorf("ListServers: %+v", l)
	}
	srv = must[*api.Server](t)(c.UpdateServer(ctx, srv.Name, api.ServerUpdate{DisplayName: client.Ptr("web one"), ProjectID: api.Null[int64]()}))
	if srv.DisplayName != "web one" || srv.ProjectID != nil {
		t.Errorf("UpdateServer: %+v", srv)
	}
	if m := must[*api.Metrics](t)(c.GetServerMetrics(ctx, srv.Name, client.Range6h)); m.Range != "6h" {
		t.Errorf("GetServerMetrics: %+v", m)
	}

	// The serial console: a ticket, its WebSocket, the simulated login prompt; the
	// ticket opens one connection only.
	tk := must[*api.ConsoleTicket](t)(c.RequestServerConsole(ctx, srv.Name))
	con := must[*client.ServerConsole](t)(c.ConnectServerConsole(ctx, tk.URL))
	var printed []byte
	for buf := make([]byte, 4096); !bytes.Contains(printed, []byte(srv.Name+" login: ")); {
		n, err := con.Read(buf)
		if err != nil {
			t.Fatalf("console: %v after %q", err, printed)
		}
		printed = append(printed, buf[:n]...)
	}
	if err := con.Close(); err != nil {
		t.Errorf("console Close: %v", err)
	}
	if _, err := c.ConnectServerConsole(ctx, tk.URL); !errors.Is(err, client.ErrUnauthenticated) {
		t.Errorf("ConnectServerConsole on a used ticket: %v, want ErrUnauthenticated", err)
	}

	everyVolumeEndpoint(t, ctx, c, srv)
	everyDomainEndpoint(t, ctx, c, srv)
	everyLicenseEndpoint(t, ctx, c, srv)
	everyTicketEndpoint(t, ctx, c)
	srv = must[*api.Server](t)(c.PowerServer(ctx, srv.Name, client.PowerOff))
	if op := must[*api.Operation](t)(c.WaitOperation(ctx, srv.Operation.ID)); op.Status != "success" || op.Type != "power" {
		t.Errorf("WaitOperation: %+v", op)
	}
	must[*api.Server](t)(c.WaitServer(ctx, srv.Name, "stopped"))
	var target *api.RescaleOption
	for _, o := range must[[]api.RescaleOption](t)(c.ListRescaleOptions(ctx, srv.Name)) {
		if o.DiskOK && o.InStock && o.ID != srv.PlanID {
			target = &o
			break
		}
	}
	if target == nil {
		t.Fatal("ListRescaleOptions: no plan to move to")
	}
	must[*api.Server](t)(c.RescaleServer(ctx, srv.Name, api.RescaleRequest{PlanID: &target.ID}))
	if srv = must[*api.Server](t)(c.WaitServer(ctx, srv.Name, "stopped")); srv.PlanID != target.ID {
		t.Errorf("RescaleServer: plan %d, want %d", srv.PlanID, target.ID)
	}
	must[*api.Server](t)(c.PowerServer(ctx, srv.Name, client.PowerOn))
	must[*api.Server](t)(c.WaitServer(ctx, srv.Name, "running"))
	image := loc.Images[len(loc.Images)-1].ID
	must[*api.Server](t)(c.ReinstallServer(ctx, srv.Name, image))
	if srv = must[*api.Server](t)(c.WaitServer(ctx, srv.Name, "running")); srv.ImageID != image {
		t.Errorf("ReinstallServer: image %d, want %d", srv.ImageID, image)
	}

	snap := must[*api.Snapshot](t)(c.CreateSnapshot(ctx, srv.Name, api.SnapshotCreate{Name: client.Ptr("before")}))
	must[*api.Server](t)(c.WaitServer(ctx, srv.Name, "running"))
	if snaps := must[[]api.Snapshot](t)(c.ListSnapshots(ctx, srv.Name)); len(snaps) != 1 || snaps[0].Status != "available" {
		t.Errorf("ListSnapshots: %+v", snaps)
	}
	if got := must[*api.Server](t)(c.RestoreSnapshot(ctx, srv.Name, snap.ID)); got.Status != "restoring" {
		t.Errorf("RestoreSnapshot: %+v", got)
	}
	must[*api.Server](t)(c.WaitServer(ctx, srv.Name, "running"))
	if del := must[*api.SnapshotDeletion](t)(c.DeleteSnapshot(ctx, srv.Name, snap.ID)); del.Result != "deleted" {
		t.Errorf("DeleteSnapshot: %+v", del)
	}

	ops := must[*api.Page[api.Operation]](t)(c.ListServerOperations(ctx, srv.Name, client.OperationListOptions{Status: "success"}))
	// provision, a volume's attach_volume, resize_volume and detach_volume (they
	// hold the server), off, rescale, on, reinstall, snapshot, restore
	if ops.Meta.Total != 10 {
		t.Errorf("ListServerOperations: %d operations, want 10", ops.Meta.Total)
	}
	all := must[*api.Page[api.Operation]](t)(c.ListOperations(ctx, client.OperationListOptions{ServerID: srv.ID}))
	if all.Meta.Total != 10 {
		t.Errorf("ListOperations: %d operations, want 10", all.Meta.Total)
	}
	if op := must[*api.Operation](t)(c.GetOperation(ctx, all.Data[0].ID)); op.ServerID == nil || *op.ServerID != srv.ID {
		t.Errorf("GetOperation: %+v", op)
	}
	if ev := must[*api.EventList](t)(c.ListEvents(ctx, client.EventListOptions{Resource: "server:" + strconv.FormatInt(srv.ID, 10),
		Types: []string{"server.created"}})); len(ev.Data) != 1 {
		t.Errorf("ListEvents: %+v", ev.Data)
	}
	b := must[*api.Billing](t)(c.GetBilling(ctx))
	if b.Currency != "EUR" || b.HourlyBurn == "0.0000" {
		t.Errorf("GetBilling: %+v", b)
	}
	if tx := must[*api.Page[api.Transaction]](t)(c.ListTransactions(ctx, 1)); tx.Meta.Total < 2 {
		t.Errorf("ListTransactions: %+v", tx.Meta)
	}

	everyWebhookEndpoint(t, ctx, c)
	if err := c.DeleteServer(ctx, srv.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetServer(ctx, srv.Name); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("GetServer after DeleteServer: %v", err)
	}
	for what, err := range map[string]error{"DeleteSSHKey": c.DeleteSSHKey(ctx, key.ID),
		"DeleteProject": c.DeleteProject(ctx, proj.ID), "DeleteRecipe": c.DeleteRecipe(ctx, rcp.ID)} {
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}

	// The sandbox API (the Berth runs with --sandbox).
	fault := must[*api.SandboxFault](t)(c.CreateSandboxFault(ctx, api.SandboxFaultCreate{Operation: client.Ptr("power"), Slow: client.Ptr(2.0), Times: client.Ptr(int64(3))}))
	if fault.Operation == nil || *fault.Operation != "power" || fault.Remaining == nil || *fault.Remaining != 3 {
		t.Errorf("CreateSandboxFault: %+v", fault)
	}
	if fs := must[[]api.SandboxFault](t)(c.ListSandboxFaults(ctx)); len(fs) != 1 || fs[0].ID != fault.ID {
		t.Errorf("ListSandboxFaults: %+v", fs)
	}
	if err := c.DeleteSandboxFault(ctx, fault.ID); err != nil {
		t.Errorf("DeleteSandboxFault: %v", err)
	}
	if err := c.DeleteSandboxFaults(ctx); err != nil {
		t.Errorf("DeleteSandboxFaults: %v", err)
	}
	if reqs := must[[]api.SandboxRequest](t)(c.ListSandboxRequests(ctx, 3)); len(reqs) != 3 || reqs[0].Path != "/v1/recipes/"+strconv.FormatInt(rcp.ID, 10) {
		t.Errorf("ListSandboxRequests: %+v", reqs)
	}
	start := must[*api.Clock](t)(c.GetSandboxClock(ctx))
	if now := must[*api.Clock](t)(c.AdvanceSandboxClock(ctx, 90*time.Minute)); !now.Now.Equal(start.Now.Add(90*time.Minute)) && now.Now.Sub(start.Now) < 90*time.Minute {
		t.Errorf("AdvanceSandboxClock: %s, from %s", now.Now, start.Now)
	}
	seeded := must[*api.SandboxSeeded](t)(c.SeedSandboxAccount(ctx, api.SandboxSeed{Projects: []api.ProjectWrite{{Name: client.Ptr("seeded")}},
		Volumes: []api.SandboxSeedVolume{{Name: client.Ptr("seeded"), SizeGB: client.Ptr(int64(10)), LocationID: client.Ptr(int64(1)), Project: client.Ptr("seeded")}}}))
	if len(seeded.Projects) != 1 || seeded.Projects[0].Name != "seeded" || len(seeded.Volumes) != 1 || seeded.Volumes[0].Status != "available" ||
		seeded.Volumes[0].ProjectID == nil || *seeded.Volumes[0].ProjectID != seeded.Projects[0].ID {
		t.Errorf("SeedSandboxAccount: %+v", seeded)
	}
	if me := must[*api.Me](t)(c.ResetSandboxAccount(ctx, api.SandboxReset{Credit: client.Ptr("50.00")})); me.Credit != "50.0000" {
		t.Errorf("ResetSandboxAccount: %+v", me)
	}

	// Every operation of the document answered 2xx at least once.
	router, err := gorillamux.NewRouter(apitest.New(t).Doc())
	if err != nil {
		t.Fatal(err)
	}
	ok := map[string]bool{}
	for _, x := range rec.all() {
		if route, _, err := router.FindRoute(x.req); err == nil && (x.status >= 200 && x.status < 300 || x.status == http.StatusSwitchingProtocols) {
			ok[route.Operation.OperationID] = true
		}
		if ua := x.req.Header.Get("User-Agent"); !strings.HasPrefix(ua, "berth-go/"+client.Version+" (") {
			t.Errorf("%s %s: User-Agent %q", x.req.Method, x.req.URL.Path, ua)
		}
	}
	for path, item := range apitest.New(t).Doc().Paths.Map() {
		for method, op := range item.Operations() {
			if method != http.MethodOptions && !ok[op.OperationID] {
				t.Errorf("%s %s (%s) never answered with success", method, path, op.OperationID)
			}
		}
	}
}

// TestPages walks lists longer than a page: every item once, newest first, as many
// as the list's total.
func TestPages(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{RateLimit: 1 << 20})
	acct := env.NewAccount("en", "500", "")
	c := newClient(t, env, acct.Token)
	ctx := ctxFor(t)
	req, _ := order(t, ctx, c)
	srv := must[*api.Server](t)(c.CreateServer(ctx, req))
	must[*api.Server](t)(c.WaitServer(ctx, srv.Name, "running"))
	for range 26 { // 52 power operations and the provisioning: two pages of 50
		for _, action := range []string{client.PowerOff, client.PowerOn} {
			s := must[*api.Server](t)(c.PowerServer(ctx, srv.Name, action))
			must[*api.Operation](t)(c.WaitOperation(ctx, s.Operation.ID))
		}
	}
	check := func(name string, seq func(func(api.Operation, error) bool)) {
		var ids []int64
		for op, err := range seq {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			ids = append(ids, op.ID)
		}
		if len(ids) != 53 {
			t.Errorf("%s: %d operations, want 53", name, len(ids))
		}
		if !slices.IsSortedFunc(ids, func(a, b int64) int { return int(b - a) }) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
			t.Errorf("%s: not newest first, each once: %v", name, ids)
		}
	}
	check("AllServerOperations", c.AllServerOperations(ctx, srv.Name, client.OperationListOptions{}))
	check("AllOperations", c.AllOperations(ctx, client.OperationListOptions{ServerID: srv.ID}))

	// Breaking out of the loop stops fetching.
	n := 0
	for range c.AllOperations(ctx, client.OperationListOptions{}) {
		if n++; n == 3 {
			break
		}
	}
	first := must[*api.Page[api.Transaction]](t)(c.ListTransactions(ctx, 1))
	var txs int
	for tx, err := range c.AllTransactions(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if txs == 0 && tx.ID != first.Data[0].ID {
			t.Errorf("AllTransactions starts at %d, want the newest, %d", tx.ID, first.Data[0].ID)
		}
		txs++
	}
	if txs != first.Meta.Total {
		t.Errorf("AllTransactions: %d, want %d", txs, first.Meta.Total)
	}
	// An error ends the sequence with it.
	for _, err := range c.AllServerOperations(ctx, "999999", client.OperationListOptions{}) {
		if !errors.Is(err, client.ErrNotFound) {
			t.Errorf("AllServerOperations of no server: %v", err)
		}
	}
}

// dropFirstAnswer lets the first POST /servers reach Berth and then loses its
// answer, as a connection that breaks after the request was sent.
type dropFirstAnswer struct {
	base    http.RoundTripper
	mu      sync.Mutex
	dropped []byte
	keys    []string
}

func (d *dropFirstAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := d.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/servers") {
		return resp, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.keys = append(d.keys, req.Header.Get("Idempotency-Key"))
	if d.dropped != nil {
		return resp, nil
	}
	d.dropped, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	return nil, errors.New("connection reset by peer (the test dropped the answer)")
}

// A server with as many consoles open as it may (issue 26): ErrBusy without an
// operation, whether the ticket is asked for then or was issued before; not retried.
func TestServerConsoleFull(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Consoles: ops.ConsoleCaps{PerServer: 1}})
	acct := env.NewAccount("en", "100", "")
	c := newClient(t, env, acct.Token)
	ctx := ctxFor(t)
	req, _ := order(t, ctx, c)
	srv := must[*api.Server](t)(c.CreateServer(ctx, req))
	must[*api.Server](t)(c.WaitServer(ctx, srv.Name, "running"))
	late := must[*api.ConsoleTicket](t)(c.RequestServerConsole(ctx, srv.Name))
	tk := must[*api.ConsoleTicket](t)(c.RequestServerConsole(ctx, srv.Name))
	con := must[*client.ServerConsole](t)(c.ConnectServerConsole(ctx, tk.URL))
	defer con.Close()

	_, err := c.RequestServerConsole(ctx, srv.Name)
	_, err2 := c.ConnectServerConsole(ctx, late.URL)
	for _, err := range []error{err, err2} {
		var e *client.Error
		if !errors.Is(err, client.ErrBusy) || !errors.As(err, &e) || e.Operation != nil || e.RetryAfter == 0 ||
			!strings.Contains(e.Message, "1 console session open") {
			t.Errorf("%v, want ErrBusy with no operation, a Retry-After and the message of the cap", err)
		}
	}
}
