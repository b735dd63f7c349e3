package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/testenv"
)

// holdings is what an account holds that a reset empties, as its routes show it.
type holdings struct {
	servers, keys, projects, recipes, volumes, operations, transactions, faults int
	credit                                                                      string
}

func holdingsOf(t testing.TB, a *testenv.Account) holdings {
	t.Helper()
	var h holdings
	h.servers = len(items(t, a.Do("GET", "/servers", nil).Want(t, 200)))
	h.keys = len(items(t, a.Do("GET", "/ssh-keys", nil).Want(t, 200)))
	h.projects = len(items(t, a.Do("GET", "/projects", nil).Want(t, 200)))
	h.recipes = len(items(t, a.Do("GET", "/recipes", nil).Want(t, 200)))
	h.volumes = len(items(t, a.Do("GET", "/volumes", nil).Want(t, 200)))
	h.operations = int(num(t, a.Do("GET", "/operations", nil).Want(t, 200).Map(t)["meta"].(map[string]any)["total"]))
	h.transactions = int(num(t, a.Do("GET", "/billing/transactions", nil).Want(t, 200).Map(t)["meta"].(map[string]any)["total"]))
	h.faults = len(items(t, a.Sandbox("GET", "/faults", nil).Want(t, 200)))
	h.credit = data(t, a.Do("GET", "/me", nil).Want(t, 200))["credit"].(string)
	return h
}

// fillAccount gives an account one of everything a reset empties: an SSH key, a
// project, a recipe, a running server built with them and holding a snapshot, a
// deleted server, a request with an Idempotency-Key, a fault, a second top-up and a
// metric sample of its server. It returns the servers' names and ids and the
// Idempotency-Key's request.
func fillAccount(t testing.TB, env *testenv.Env, a *testenv.Account) (names []string, serverIDs []int64, idem func() *testenv.Response) {
	t.Helper()
	ctx := context.Background()
	key, project, recipe := createKey(t, a), createProject(t, a), createRecipe(t, a)
	srv := runningServer(t, a, "ssh_key_ids", []int64{num(t, key["id"])}, "project_id", num(t, project["id"]),
		"recipe_id", num(t, recipe["id"]))
	a.Do("POST", "/servers/"+srv["name"].(string)+"/snapshots", map[string]any{"name": "before"}).Want(t, 201)
	a.WaitStatus(t, srv["name"].(string), "running", 20*time.Second)
	if s := items(t, a.Do("GET", "/servers/"+srv["name"].(string)+"/snapshots", nil).Want(t, 200)); len(s) != 1 || s[0]["status"] != "available" {
		t.Fatalf("snapshots %v", s)
	}
	gone := runningServer(t, a)
	a.Do("DELETE", "/servers/"+gone["name"].(string), nil).Want(t, http.StatusNoContent)
	body := map[string]any{"name": uniqueName("idem")}
	idem = func() *testenv.Response {
		return env.Do(a.Token, "POST", "/projects", body, http.Header{"Idempotency-Key": {fmt.Sprintf("reset-%d", a.ID)}})
	}
	idem().Want(t, 201)
	addFault(t, a, map[string]any{"method": "GET", "path": "/billing", "status": 503, "probability": 0, "times": 0})
	if _, err := env.App.Service.AddCredit(ctx, a.ID, 10*hosting.MoneyScale, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := env.App.DB.WriteDB().ExecContext(ctx, env.App.DB.Rebind(`INSERT INTO metric_samples (server_id, at, cpu, net_in, net_out,
		disk_read, disk_write) VALUES (?, 1000, 1, 1, 1, 1, 1)`), num(t, srv["id"])); err != nil {
		t.Fatal(err)
	}
	return []string{srv["name"].(string), gone["name"].(string)}, []int64{num(t, srv["id"]), num(t, gone["id"])}, idem
}

// TestSandboxReset: POST /sandbox/v1/reset leaves the token working and nothing else:
// every kind of record of the account is gone at once (its machines too), the ledger
// is one top-up of the opening credit, GET /me is as before but for the credit; the
// audit log keeps its entries and records the reset; another account is untouched.
func TestSandboxReset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := sandboxEnv(t)
	a := env.NewAccount("de", "50", "")
	b := env.NewAccount("en", "70", "")
	names, serverIDs, idem := fillAccount(t, env, a)
	fillAccount(t, env, b)
	other := a.NewToken("read")
	meBefore := data(t, a.Do("GET", "/me", nil).Want(t, 200))
	bBefore := holdingsOf(t, b)
	if h := holdingsOf(t, a); h.servers != 1 || h.keys != 1 || h.projects != 2 || h.recipes != 1 || h.operations < 4 ||
		h.transactions < 4 || h.faults != 1 {
		t.Fatalf("the account before the reset holds %+v", h)
	}
	auditBefore, err := env.App.Service.AuditLog(ctx, a.ID, 0, 1000)
	if err != nil || len(auditBefore) == 0 {
		t.Fatalf("audit log before the reset: %d entries, %v", len(auditBefore), err)
	}

	me := data(t, a.Sandbox("POST", "/reset", nil).Want(t, http.StatusOK))
	if me["credit"] != "50.0000" {
		t.Errorf("credit after the reset: %v, want the opening 50.0000", me["credit"])
	}
	delete(me, "credit")
	delete(meBefore, "credit")
	if !maps.EqualFunc(me, meBefore, func(x, y any) bool { return fmt.Sprint(x) == fmt.Sprint(y) }) {
		t.Errorf("GET /me after the reset %v, want as before %v (but the credit)", me, meBefore)
	}
	if got, want := holdingsOf(t, a), (holdings{transactions: 1, credit: "50.0000"}); got != want {
		t.Errorf("the account after the reset holds %+v, want %+v", got, want)
	}
	tx := items(t, a.Do("GET", "/billing/transactions", nil).Want(t, 200))[0]
	if tx["type"] != "topup" || tx["amount"] != "50.0000" || tx["balance_after"] != "50.0000" {
		t.Errorf("the ledger after the reset: %v, want one top-up of 50", tx)
	}
	for _, id := range serverIDs {
		wantNotFound(t, a.Do("GET", fmt.Sprintf("/servers/%d", id), nil))
		wantNotFound(t, a.Do("GET", fmt.Sprintf("/servers/%d/snapshots", id), nil))
		wantNotFound(t, a.Do("GET", fmt.Sprintf("/servers/%d/metrics", id), nil))
	}
	for _, name := range names {
		if m, err := env.App.Driver().Machine(ctx, name); !errors.Is(err, compute.ErrNotFound) {
			t.Errorf("machine of %s after the reset: %+v %v, want none at once", name, m, err)
		}
	}
	var samples int
	if err := env.App.DB.WriteDB().QueryRowContext(ctx, env.App.DB.Rebind(`SELECT COUNT(*) FROM metric_samples WHERE server_id = ? AND at <= 1000`),
		serverIDs[0]).Scan(&samples); err != nil || samples != 0 {
		t.Errorf("metric samples of a reset server: %d %v", samples, err)
	}
	// The Idempotency-Key is forgotten: the same request is done again, not replayed.
	if r := idem().Want(t, 201); r.Header.Get("Idempotent-Replayed") != "" {
		t.Error("an Idempotency-Key of before the reset was replayed")
	}
	// Its tokens work; the other account is as it was.
	env.Do(other, "GET", "/me", nil, nil).Want(t, 200)
	if got := holdingsOf(t, b); got != bBefore {
		t.Errorf("the other account after the reset holds %+v, want %+v as before", got, bBefore)
	}
	env.AssertLedger(t)
	// The audit log keeps what was, and records the reset.
	deadline := time.Now().Add(5 * time.Second)
	for {
		after, err := env.App.Service.AuditLog(ctx, a.ID, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) > len(auditBefore) && slices.ContainsFunc(after, func(e hosting.AuditEntry) bool {
			return e.Action == "POST /sandbox/v1/reset" && e.Status == 200
		}) {
			if !slices.ContainsFunc(after, func(e hosting.AuditEntry) bool { return e.ID == auditBefore[len(auditBefore)-1].ID }) {
				t.Error("the reset removed audit entries")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit entry of the reset in %d entries", len(after))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSandboxResetCredit: the credit given, or the first top-up when left out (after a
// reset, the credit that reset gave); 0 leaves the ledger empty; anything but an
// amount of at least 0 is 422 on credit in the account's language, changing nothing.
func TestSandboxResetCredit(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t)
	a := env.NewAccount("fr", "25", "")
	createProject(t, a)
	for _, bad := range []any{"-1", "abc", "1.23456", "", " 5", "1e3", "+5", "5.", ".5", "123456789012345", 5, true} {
		r := a.Sandbox("POST", "/reset", map[string]any{"credit": bad})
		e := wantInvalid(t, r, "credit")
		if want := msg("fr", "validation.sandbox_credit"); fmt.Sprint(bad) != "5" && fmt.Sprint(bad) != "true" && e.Errors["credit"][0] != want {
			t.Errorf("credit %q: %v, want %q", bad, e.Errors["credit"], want)
		}
	}
	wantInvalid(t, a.Sandbox("POST", "/reset", map[string]any{"credits": "5"}), "credits")
	wantInvalid(t, a.Sandbox("POST", "/reset", map[string]any{"credit": nil}), "credit")
	if h := holdingsOf(t, a); h.projects != 1 || h.credit != "25.0000" {
		t.Fatalf("a refused reset changed the account: %+v", h)
	}
	for _, step := range []struct {
		body        any
		credit      string
		topups      int
		description string
	}{
		{map[string]any{"credit": "12.5"}, "12.5000", 1, "given"},
		{nil, "12.5000", 1, "left out: the last reset's"},
		{map[string]any{}, "12.5000", 1, "an empty body"},
		{map[string]any{"credit": "100.0000"}, "100.0000", 1, "as the API writes money"},
		{map[string]any{"credit": "0"}, "0.0000", 0, "zero"},
		{nil, "0.0000", 0, "left out after zero"},
		{map[string]any{"credit": "99999999999999.9999"}, "99999999999999.9999", 1, "the largest"},
	} {
		me := data(t, a.Sandbox("POST", "/reset", step.body).Want(t, http.StatusOK))
		h := holdingsOf(t, a)
		if me["credit"] != step.credit || h.credit != step.credit || h.transactions != step.topups {
			t.Errorf("%s: credit %v (GET /me %s) with %d transactions, want %s with %d", step.description, me["credit"], h.credit,
				h.transactions, step.credit, step.topups)
		}
	}
	env.AssertLedger(t)
}

// TestSandboxResetBlocked: a blocked account cannot reset (403 as on /v1), and stays
// blocked after an operator's unblock and a reset: the flag is the operator's.
func TestSandboxResetBlocked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := sandboxEnv(t)
	a := env.NewAccount("en", "10", "")
	if _, err := env.App.Service.SetAccountBlocked(ctx, a.ID, true); err != nil {
		t.Fatal(err)
	}
	wantError(t, a.Sandbox("POST", "/reset", nil), http.StatusForbidden, "account_blocked")
	if _, err := env.App.Service.SetAccountBlocked(ctx, a.ID, false); err != nil {
		t.Fatal(err)
	}
	if me := data(t, a.Sandbox("POST", "/reset", nil).Want(t, http.StatusOK)); me["blocked"] != false {
		t.Errorf("after the reset: %v", me)
	}
	if _, err := env.App.Service.SetAccountBlocked(ctx, a.ID, true); err != nil {
		t.Fatal(err)
	}
	if me := data(t, a.Do("GET", "/me", nil).Want(t, http.StatusOK)); me["blocked"] != true {
		t.Errorf("blocked account: %v", me)
	}
}

// operationJobs lists the states of the job queue's jobs of an operation.
func operationJobs(t testing.TB, env *testenv.Env, opID int64) []string {
	t.Helper()
	rows, err := env.App.DB.WriteDB().QueryContext(context.Background(), `SELECT state, args FROM river_job WHERE kind = 'berth.operation'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var states []string
	for rows.Next() {
		var state string
		var args []byte
		if err := rows.Scan(&state, &args); err != nil {
			t.Fatal(err)
		}
		var a struct {
			OperationID int64 `json:"operation_id"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			t.Fatal(err)
		}
		if a.OperationID == opID {
			states = append(states, state)
		}
	}
	return states
}

// TestSandboxResetDuringOperations: a reset while operations are under way: the job
// of one waiting for its next attempt is gone with it, and one running when the
// reset comes ends harmlessly (its worker finds the operation gone and cancels the
// job): no machine, record or charge comes back.
func TestSandboxResetDuringOperations(t *testing.T) {
	t.Parallel()
	flaky := &failingCreate{err: fmt.Errorf("%w: the hypervisor does not answer", compute.ErrUnavailable)}
	env := sandboxEnv(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver { flaky.Driver = d; return flaky }})
	a := env.NewAccount("en", "50", "")

	flaky.on.Store(true)
	waiting := order(t, a, baseOrder())
	deadline := time.Now().Add(20 * time.Second)
	for !slices.Contains(operationJobs(t, env, opID(t, waiting)), "retryable") {
		if time.Now().After(deadline) {
			t.Fatalf("the provisioning's job never waited for a retry: %v", operationJobs(t, env, opID(t, waiting)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	flaky.on.Store(false)
	// A provisioning that runs for a while (the sim driver's create, ten times slower).
	addFault(t, a, map[string]any{"operation": "provision", "slow": 10})
	running := order(t, a, baseOrder())
	time.Sleep(20 * time.Millisecond)

	a.Sandbox("POST", "/reset", nil).Want(t, http.StatusOK)
	if jobs := operationJobs(t, env, opID(t, waiting)); len(jobs) != 0 {
		t.Errorf("the job of a reset operation waiting for a retry: %v, want it gone", jobs)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		jobs := operationJobs(t, env, opID(t, running))
		if len(jobs) == 0 || jobs[0] == "cancelled" || jobs[0] == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job of a reset operation that was running: %v", jobs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, srv := range []map[string]any{waiting, running} {
		if m, err := env.App.Driver().Machine(context.Background(), srv["name"].(string)); !errors.Is(err, compute.ErrNotFound) {
			t.Errorf("machine of %s: %+v %v, want none", srv["name"], m, err)
		}
	}
	if got, want := holdingsOf(t, a), (holdings{transactions: 1, credit: "50.0000"}); got != want {
		t.Errorf("the account after the reset and its operations' ends: %+v, want %+v", got, want)
	}
	env.AssertLedger(t)
}

// TestSandboxResetRightAfterOperations: a reset right after an operation ended, while
// the job queue may still be recording its job's end, leaves that job alone (the
// queue's completer fails on a job row that is gone).
func TestSandboxResetRightAfterOperations(t *testing.T) {
	t.Parallel()
	env := sandboxEnv(t)
	a := env.NewAccount("en", "1000", "")
	for range 20 {
		srv := order(t, a, baseOrder())
		for data(t, a.Do("GET", fmt.Sprintf("/operations/%d?wait=1", opID(t, srv)), nil).Want(t, 200))["status"] == "running" {
		}
		a.Sandbox("POST", "/reset", nil).Want(t, http.StatusOK)
	}
	env.AssertLedger(t)
}

// TestSandboxResetBeforeAMachineIsMade: a provisioning whose machine comes into being
// only after a reset removed the account's machines (its worker was already past
// its last look at the operation) removes that machine once it finds its operation
// gone: no machine outlives its reset server.
func TestSandboxResetBeforeAMachineIsMade(t *testing.T) {
	t.Parallel()
	g := &gatedCreate{entered: make(chan struct{}), release: make(chan struct{})}
	env := sandboxEnv(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver { g.Driver = d; return g }})
	a := env.NewAccount("en", "50", "")
	srv := order(t, a, baseOrder())
	select {
	case <-g.entered:
	case <-time.After(60 * time.Second):
		t.Fatal("the provisioning never reached the driver")
	}
	a.Sandbox("POST", "/reset", nil).Want(t, http.StatusOK)
	close(g.release)
	name := srv["name"].(string)
	deadline := time.Now().Add(60 * time.Second)
	for {
		jobs := operationJobs(t, env, opID(t, srv))
		_, err := env.App.Driver().Machine(context.Background(), name)
		if errors.Is(err, compute.ErrNotFound) && (len(jobs) == 0 || jobs[0] == "cancelled") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the reset: machine %v, job %v; want no machine and the job cancelled", err, jobs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got, want := holdingsOf(t, a), (holdings{transactions: 1, credit: "50.0000"}); got != want {
		t.Errorf("the account after the reset: %+v, want %+v", got, want)
	}
	env.AssertLedger(t)
}
