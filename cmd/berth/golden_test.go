package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testenv"
)

// fixedKey is a public key of the golden files (its fingerprint is in them).
const fixedKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq1ZK5ZlLGm6uQJmJ6m2Yc4tJQ0nV6mJ7l9hYQ3p1Xk golden@berth"

// TestGoldenAccountLists: the tables and JSON of the account's lists, on a fake clock;
// the server's random name is replaced by server-XXXXXX before the comparison.
func TestGoldenAccountLists(t *testing.T) {
	t.Parallel()
	clock := testenv.NewFakeClock(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC))
	env := testenv.New(t, testenv.Options{Clock: clock.Now})
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	c.ok("project", "create", "web")
	c.ok("recipe", "create", "--name", "hello", "--script", "echo hi")
	c.ok("ssh-key", "create", "--name", "laptop", "--public-key", fixedKey)
	name := strings.TrimSpace(c.ok("server", "create", "--plan", "s1-1c-1g", "--location", "fsn1", "--image", "ubuntu-24.04",
		"--ssh-key", "laptop", "--project", "web", "--display-name", "www", "-o", "columns=name"))
	name = strings.TrimSpace(strings.TrimPrefix(name, "name:"))
	c.ok("volume", "create", "--name", "data", "--size", "10", "--server", name, "--format", "ext4", "--automount", "--project", "web")
	c.ok("volume", "create", "--name", "spare", "--size", "20", "--location", "fsn1")
	c.ok("domain", "create", "example.com")
	c.ok("rrset", "set", "example.com", "www", "A", "192.0.2.1", "192.0.2.2", "--ttl", "300", "--comment", "web")
	if _, err := env.App.Service.AddLicenseKeys(context.Background(), 2, []string{"CP-GOLDEN-1"}); err != nil { // 2: cpanel-solo
		t.Fatal(err)
	}
	c.ok("server", "license", "add", name, "plesk-web-admin")
	c.ok("server", "license", "add", name, "cpanel-solo")
	owner, err := env.App.DB.Account(context.Background(), acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	email := owner.Email
	c.ok("ticket", "create", "--subject", "Disk slow", "--body", "Since noon.\nOn www.", "--priority", "high", "--server", name)
	if _, err := env.App.Service.StaffReply(context.Background(), 1, ops.StaffAuthor{Name: "Ada"}, "Replaced the disk.", nil); err != nil {
		t.Fatal(err)
	}
	c.ok("ticket", "create", "--subject", "Invoice", "--body", "Please send it again.")
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"project-list.table", []string{"project", "list"}},
		{"project-list.json", []string{"project", "list", "-o", "json"}},
		{"recipe-list.table", []string{"recipe", "list"}},
		{"recipe-list.json", []string{"recipe", "list", "-o", "json"}},
		{"ssh-key-list.table", []string{"ssh-key", "list"}},
		{"ssh-key-list.json", []string{"ssh-key", "list", "-o", "json"}},
		{"server-list.table", []string{"server", "list"}},
		{"server-list.wide", []string{"server", "list", "-o", "wide"}},
		{"server-list.columns", []string{"server", "list", "-o", "columns=name,image,location_id,plan"}},
		{"server-list.json", []string{"server", "list", "-o", "json"}},
		{"server-describe.table", []string{"server", "describe", name}},
		{"rescale-options.table", []string{"server", "rescale-options", name}},
		{"volume-list.table", []string{"volume", "list"}},
		{"volume-list.wide", []string{"volume", "list", "-o", "wide"}},
		{"volume-list.json", []string{"volume", "list", "-o", "json"}},
		{"volume-describe.table", []string{"volume", "describe", "data"}},
		{"domain-list.table", []string{"domain", "list"}},
		{"domain-list.json", []string{"domain", "list", "-o", "json"}},
		{"rrset-list.table", []string{"rrset", "list", "example.com"}},
		{"rrset-list.wide", []string{"rrset", "list", "example.com", "-o", "wide"}},
		{"domain-export.zone", []string{"domain", "export", "example.com"}},
		{"server-license-list.table", []string{"server", "license", "list", "www"}},
		{"server-license-list.wide", []string{"server", "license", "list", "www", "-o", "wide"}},
		{"server-license-list.json", []string{"server", "license", "list", "www", "-o", "json"}},
		{"ticket-list.table", []string{"ticket", "list"}},
		{"ticket-list.wide", []string{"ticket", "list", "-o", "wide"}},
		{"ticket-list.json", []string{"ticket", "list", "-o", "json"}},
		{"ticket-describe.table", []string{"ticket", "describe", "1"}},
		{"ticket-describe.json", []string{"ticket", "describe", "1", "-o", "json"}},
	} {
		got := strings.ReplaceAll(c.ok(tt.args...), name, "server-"+strings.Repeat("X", len(name)-len("server-")))
		got = strings.ReplaceAll(got, email, "user@example.com") // a ticket's author, numbered by the test process
		path := filepath.Join("testdata", tt.golden+".golden")
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("berth %q:\n%s\nwant (%s):\n%s", tt.args, got, path, want)
		}
	}
}
