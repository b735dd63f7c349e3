package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// TestAdminCommands runs every operator command against one data directory (on
// PostgreSQL, one database: storeFlags) and checks the one JSON object each prints,
// flags before and after arguments.
func TestAdminCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	store := storeFlags(t, data)
	run := func(args ...string) map[string]any { return runJSON(t, bin, append(args, store...)...) }

	run("migrate") // admin never creates a database
	acct := run("admin", "account", "create", "--email", "ada@example.com", "--password", "s3cret-password",
		"--name", "Ada", "--language", "de", "--credit", "25.00")
	if acct["id"].(float64) != 1 || acct["credit"] != "25.0000" || acct["language"] != "de" || acct["blocked"] != false {
		t.Fatalf("account create: %v", acct)
	}
	if got := run("admin", "account", "block", "1"); got["blocked"] != true {
		t.Fatalf("block: %v", got)
	}
	if got := runJSON(t, bin, append(append([]string{"admin", "account", "unblock"}, store...), "1")...); got["blocked"] != false {
		t.Fatalf("unblock (flag before argument): %v", got)
	}
	tok := run("admin", "token", "create", "--account", "1", "--name", "ci", "--scopes", "power,servers", "--expires-in", "24h")
	if !strings.HasPrefix(tok["token"].(string), "berth_") || tok["expires_at"] == nil {
		t.Fatalf("token create: %v", tok)
	}
	if sc := tok["scopes"].([]any); len(sc) != 3 || sc[0] != "read" {
		t.Fatalf("token scopes %v: read must always be added", sc)
	}
	if got := run("admin", "token", "revoke", "1"); got["revoked_at"] == nil {
		t.Fatalf("revoke: %v", got)
	}
	if got := run("admin", "credit", "add", "--account", "1", "--amount", "10.5", "--description", "bank transfer"); got["credit"] != "35.5000" || got["amount"] != "10.5000" {
		t.Fatalf("credit add: %v", got)
	}
	if got := run("admin", "billing", "budget", "--account", "1", "--amount", "50"); got["budget"] != "50.0000" || got["currency"] != "EUR" {
		t.Fatalf("budget: %v", got)
	}
	if got := run("admin", "billing", "budget", "--account", "1", "--none"); got["budget"] != nil {
		t.Fatalf("budget --none: %v", got)
	}
	if got := run("admin", "billing", "meter"); got["hours"].(float64) != 0 || got["charged"] != "0.0000" {
		t.Fatalf("a metering pass with nothing billed: %v", got)
	}
	cat := filepath.Join(t.TempDir(), "catalog.yaml")
	src, err := os.ReadFile("../../internal/catalog/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cat, src, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := run("admin", "catalog", "apply", cat); got["locations"].(float64) != 3 {
		t.Fatalf("catalog apply: %v", got)
	}
	if got := run("migrate"); got["migrated"] != true {
		t.Fatalf("migrate: %v", got)
	}

	// Every state-changing command is in the audit log, without secrets; reading it is not.
	audit := run("admin", "audit", "list", "--limit", "50")
	entries := audit["entries"].([]any)
	var actions []string
	for _, e := range entries {
		m := e.(map[string]any)
		actions = append(actions, m["action"].(string)+" "+m["target"].(string))
		if m["actor"] != "operator" || strings.Contains(m["target"].(string), "s3cret") {
			t.Errorf("audit entry %v", m)
		}
		// A token revoked by its id is filed under the token's account.
		if m["action"] == "admin token revoke" && m["account_id"] != float64(1) {
			t.Errorf("token revocation audited without its account: %v", m)
		}
	}
	for _, want := range []string{"admin credit add account=1 amount=10.5 description=bank transfer", "admin account block 1",
		"admin account create credit=25.00 email=ada@example.com language=de name=Ada"} {
		if !slices.Contains(actions, want) {
			t.Errorf("audit log lacks %q: %q", want, actions)
		}
	}
	if got := run("admin", "audit", "list", "--account", "1", "--limit", "1")["entries"].([]any); len(got) != 1 {
		t.Errorf("one entry of account 1: %v", got)
	}

	// Failures: exit 1 and one JSON object with "error" on stdout.
	for _, args := range [][]string{
		{"admin", "account", "block", "99"},
		{"admin", "token", "create", "--account", "1", "--name", "x", "--scopes", "read,root"},
		{"admin", "credit", "add", "--account", "1", "--amount", "1.23456"},
		{"admin", "account", "create", "--email", "ada@example.com", "--password", "s3cret-password"},
		{"admin", "server", "suspend", "5"},
		{"admin", "billing", "budget", "--account", "1"},
		{"admin", "billing", "budget", "--account", "1", "--amount", "-5"},
		{"admin", "billing", "budget", "--account", "99", "--amount", "5"},
		{"admin", "catalog", "apply", "/nonexistent.yaml"},
	} {
		cmd := exec.Command(bin, append(args, store...)...)
		out, err := cmd.Output()
		var ee *exec.ExitError
		if err == nil || !errorsAs(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("%v: err %v, want exit 1", args, err)
		}
		var m map[string]string
		if json.Unmarshal(out, &m) != nil || m["error"] == "" {
			t.Errorf("%v printed %q, want {\"error\": ...}", args, out)
		}
	}
}

func errorsAs(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	if ok {
		*target = e
	}
	return ok
}

// TestAdminMistypedCommands: a word a command group does not know is an error (exit 1,
// one JSON object on stdout), not the group's help with exit 0 that a script would
// take for success (issue 13, item 5). A group run bare prints its help, exit 0.
func TestAdminMistypedCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	store := storeFlags(t, data)
	runJSON(t, bin, append([]string{"migrate"}, store...)...)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"admin", "acount", "block", "2"}, `unknown command "acount" for "berthd admin"; did you mean "account"?`},
		{[]string{"admin", "account", "blok", "2"}, `unknown command "blok" for "berthd admin account"; did you mean "block"?`},
		{[]string{"admin", "tokne", "list"}, `unknown command "tokne" for "berthd admin"; did you mean "token"?`},
		{[]string{"admin", "account", "list", "extra"}, `unknown command "extra" for "berthd admin account list"`},
		{[]string{"admin", "credit", "2"}, `unknown command "2" for "berthd admin credit"`},
		{[]string{"admin", "server", "suspend-now", "5"}, `unknown command "suspend-now" for "berthd admin server"`},
		{[]string{"admin", "account", "u", "2"}, `unknown command "u" for "berthd admin account"; did you mean "unblock" or "update"?`},
		{[]string{"admin", "host", "lst"}, `unknown command "lst" for "berthd admin host"; did you mean "list"?`},
		{[]string{"admin", ""}, `unknown command "" for "berthd admin"`},
		{[]string{"amdin", "account", "list"}, `unknown command "amdin" for "berthd"`},
		{[]string{"admin", "account", "list", "--bogus"}, `unknown flag: --bogus`},
		{[]string{"admin", "account", "list", "--limit", "0"}, `--limit must be 1 to 10000`},
		{[]string{"admin", "account", "list", "--limit", "10001"}, `--limit must be 1 to 10000`},
		{[]string{"admin", "account", "list", "--after", "-1"}, `--after must be an account id`},
	} {
		if got := runError(t, bin, append(tt.args, store...)...); !strings.HasPrefix(got, tt.want) {
			t.Errorf("berthd %q: error %q, want %q", tt.args, got, tt.want)
		}
	}
	if got := run(t, bin, append([]string{"admin", "audit", "list"}, store...)...); got != `{"entries":[]}`+"\n" {
		t.Errorf("a mistyped command reached the audit log: %s", got)
	}

	// Bare, a group prints its help (what its subcommands are), exit 0.
	for _, tt := range []struct {
		args []string
		sub  string // one of the subcommands the help lists
	}{
		{[]string{"admin"}, "account"},
		{[]string{"admin", "account"}, "list"},
		{append([]string{"admin", "token"}, store...), "list"},
	} {
		out := run(t, bin, tt.args...)
		if !strings.Contains(out, "Available Commands:") || !strings.Contains(out, "\n  "+tt.sub+" ") {
			t.Errorf("berthd %q printed %q, want its help", tt.args, out)
		}
	}
}

// run runs berthd, wants exit 0 and returns its stdout.
func run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("berthd %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestAdminLists: account list and token list print what an operator audits, in a
// stable order, and never a token's secret or hash; reading is not audited.
func TestAdminLists(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	store := storeFlags(t, data)
	do := func(args ...string) map[string]any { return runJSON(t, bin, append(args, store...)...) }

	do("migrate")
	if got := do("admin", "account", "list")["accounts"].([]any); len(got) != 0 {
		t.Fatalf("accounts of a new Berth: %v", got)
	}
	do("admin", "account", "create", "--email", "ada@example.com", "--password", "s3cret-password", "--credit", "5")
	do("admin", "account", "create", "--email", "bob@example.com", "--password", "s3cret-password", "--name", "Bob", "--quota-servers", "3")
	do("admin", "account", "block", "2")
	old := do("admin", "token", "create", "--account", "1", "--name", "old", "--scopes", "power")
	do("admin", "token", "revoke", "1")
	cur := do("admin", "token", "create", "--account", "1", "--name", "deploy", "--scopes", "servers", "--expires-in", "24h")
	do("admin", "token", "create", "--account", "2", "--name", "bobs")

	accounts := do("admin", "account", "list")["accounts"].([]any)
	if len(accounts) != 2 {
		t.Fatalf("accounts: %v", accounts)
	}
	a, b := accounts[0].(map[string]any), accounts[1].(map[string]any)
	if a["id"] != 1.0 || a["email"] != "ada@example.com" || a["credit"] != "5.0000" || a["blocked"] != false || a["created_at"] == nil {
		t.Errorf("first account %v", a)
	}
	if b["id"] != 2.0 || b["name"] != "Bob" || b["blocked"] != true || b["quotas"].(map[string]any)["servers"] != 3.0 {
		t.Errorf("second account %v", b)
	}
	if _, ok := a["password_hash"]; ok {
		t.Errorf("account list shows the password hash: %v", a)
	}
	// A page at a time: a full page names the next one's --after; the last does not.
	first := do("admin", "account", "list", "--limit", "1")
	if got := first["accounts"].([]any); len(got) != 1 || got[0].(map[string]any)["id"] != 1.0 || first["next_after"] != 1.0 {
		t.Errorf("account list --limit 1: %v", first)
	}
	last := do("admin", "account", "list", "--limit", "1", "--after", "1")
	if got := last["accounts"].([]any); len(got) != 1 || got[0].(map[string]any)["id"] != 2.0 || last["next_after"] != 2.0 {
		t.Errorf("account list --limit 1 --after 1: %v", last)
	}
	if end := do("admin", "account", "list", "--after", "2"); len(end["accounts"].([]any)) != 0 || end["next_after"] != nil {
		t.Errorf("account list after the last: %v", end)
	}

	tokens := do("admin", "token", "list", "--account", "1")["tokens"].([]any)
	if len(tokens) != 2 {
		t.Fatalf("tokens of account 1 (the revoked one too): %v", tokens)
	}
	first, second := tokens[0].(map[string]any), tokens[1].(map[string]any)
	keys := func(m map[string]any) string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return strings.Join(ks, ",")
	}
	for _, tok := range []map[string]any{first, second} {
		if got, want := keys(tok), "created_at,expires_at,id,last_used_at,name,revoked_at,scopes"; got != want {
			t.Errorf("token keys %s, want %s (never the secret or its hash)", got, want)
		}
	}
	if first["id"] != cur["id"] || first["name"] != "deploy" || first["revoked_at"] != nil || first["expires_at"] != cur["expires_at"] ||
		!slices.Equal(first["scopes"].([]any), []any{"read", "servers"}) {
		t.Errorf("newest token %v, want %v not revoked", first, cur)
	}
	if second["id"] != old["id"] || second["revoked_at"] == nil || second["expires_at"] != nil {
		t.Errorf("oldest token %v, want %v revoked", second, old)
	}
	if got := do("admin", "token", "list", "--account", "2")["tokens"].([]any); len(got) != 1 || got[0].(map[string]any)["name"] != "bobs" {
		t.Errorf("tokens of account 2: %v", got)
	}

	if msg := runError(t, bin, append([]string{"admin", "token", "list", "--account", "99"}, store...)...); !strings.Contains(msg, "99") {
		t.Errorf("tokens of no account: %q, want an error naming 99", msg)
	}
	runError(t, bin, append([]string{"admin", "token", "list"}, store...)...) // --account is required

	for _, e := range do("admin", "audit", "list")["entries"].([]any) {
		if action := e.(map[string]any)["action"].(string); strings.HasSuffix(action, " list") {
			t.Errorf("a read is in the audit log: %v", e)
		}
	}
}
