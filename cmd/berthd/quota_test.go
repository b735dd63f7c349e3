package main

import (
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// TestAdminQuotas: `account create` and `account update` set quotas by flag, the
// others keep theirs; a negative quota or no flag at all is refused; past its token
// quota an account gets no token, with the reason in plain English.
func TestAdminQuotas(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	data := t.TempDir()
	store := storeFlags(t, data)
	run := func(args ...string) map[string]any { return runJSON(t, bin, append(args, store...)...) }
	fail := func(args ...string) string { return runError(t, bin, append(args, store...)...) }
	run("migrate")

	quotas := func(a map[string]any) map[string]any { return a["quotas"].(map[string]any) }
	acct := run("admin", "account", "create", "--email", "q@example.com", "--password", "correct horse battery",
		"--quota-tokens", "1", "--quota-recipes", "0")
	want := map[string]float64{"servers": 50, "ssh_keys": 100, "projects": 100, "recipes": 0, "snapshots": 100, "tokens": 1}
	for k, n := range want {
		if quotas(acct)[k] != n {
			t.Errorf("created with quotas %v, want %v", quotas(acct), want)
			break
		}
	}
	if got := run("admin", "account", "create", "--email", "old@example.com", "--password", "correct horse battery",
		"--server-quota", "3"); quotas(got)["servers"] != 3.0 {
		t.Errorf("--server-quota 3: %v", quotas(got))
	}
	got := run("admin", "account", "update", "1", "--quota-servers", "7", "--quota-snapshots", "0")
	if q := quotas(got); q["servers"] != 7.0 || q["snapshots"] != 0.0 || q["tokens"] != 1.0 || q["recipes"] != 0.0 {
		t.Errorf("after update: %v", q)
	}
	for _, bad := range [][]string{
		{"admin", "account", "update", "1", "--quota-servers", "-1"},
		{"admin", "account", "update", "1"},
		{"admin", "account", "update", "99", "--quota-servers", "1"},
		{"admin", "account", "update", "1", "--quota-servers", "9223372036854775808"},
		{"admin", "account", "create", "--email", "n@example.com", "--password", "correct horse battery", "--quota-tokens", "-1"},
	} {
		fail(bad...)
	}

	run("admin", "token", "create", "--account", "1", "--name", "one")
	msg := fail("admin", "token", "create", "--account", "1", "--name", "two")
	if msg != "token_quota: The account holds its quota of tokens (1): revoke one first." {
		t.Errorf("past the token quota: %q", msg)
	}
}
