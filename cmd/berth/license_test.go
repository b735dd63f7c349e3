package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// TestServerLicenseCommands: server create --license holds a license from the order
// (by name); server license add by name or id, list as a table naming each product
// (-o json the API's data, -q the ids) and remove by the product's name (the one held,
// not the cancelled one of the same product) or by the id list shows; the server by
// its display name throughout. Then the errors a user meets: a name of no license
// (exit 3, before any request that changes something), an id of none and a license
// held already or out of stock (422 on license_id, exit 4), a name the server holds
// none of (exit 3), and the license an image requires, whose removal the API refuses
// (422, exit 4).
func TestServerLicenseCommands(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	c.ok("server", "create", "--plan", "s1-1c-1g", "--location", "fsn1", "--image", "ubuntu-24.04", "--display-name", "web-1",
		"--license", "plesk-web-admin")

	rows := func() [][]string {
		return tableRows(c.ok("server", "license", "list", "web-1", "-o", "columns=id,license,status,key"))
	}
	if got, want := rows(), [][]string{{"1", "plesk-web-admin", "active", "-"}}; !equalRows(got, want) {
		t.Fatalf("licenses after server create --license: %q, want %q", got, want)
	}
	table := c.ok("server", "license", "list", "web-1")
	if !regexp.MustCompile(`^ID +LICENSE +STATUS +KEY +STARTED_AT +PAID_THROUGH\n1 +plesk-web-admin +active +- +\d{4}-\d\d-\d\dT[0-9:]+Z +\d{4}-\d\d-\d\dT[0-9:]+Z\n$`).MatchString(table) {
		t.Errorf("server license list:\n%s", table)
	}
	if _, err := env.App.Service.AddLicenseKeys(context.Background(), 2, []string{"CP-CLI-1"}); err != nil { // 2: cpanel-solo
		t.Fatal(err)
	}
	added := c.ok("server", "license", "add", "web-1", "cpanel-solo", "-o", "columns=license,status,key,license_id")
	if want := "license:     cpanel-solo\nstatus:      active\nkey:         CP-CLI-1\nlicense_id:  2\n"; added != want {
		t.Errorf("server license add cpanel-solo:\n%s\nwant:\n%s", added, want)
	}
	js := c.ok("server", "license", "list", "web-1", "-o", "json")
	list, ok := decode(t, js).([]any)
	if !ok || len(list) != 2 || list[1].(map[string]any)["key"] != "CP-CLI-1" || list[1].(map[string]any)["license_id"] != float64(2) ||
		list[0].(map[string]any)["license"] != nil {
		t.Errorf("server license list -o json (the API's data): %s", js)
	}
	if got := c.ok("server", "license", "list", "web-1", "-q"); got != "1\n2\n" {
		t.Errorf("server license list -q: %q", got)
	}
	if r := c.run("server", "license", "remove", "web-1", "plesk-web-admin"); r.code != 0 || r.stdout != "" ||
		!strings.HasPrefix(r.stderr, "License plesk-web-admin of server ") || !strings.HasSuffix(r.stderr, " cancelled\n") {
		t.Errorf("server license remove plesk-web-admin: exit %d\n%s[stderr]\n%s", r.code, r.stdout, r.stderr)
	}
	// Held again: the name names the one held, not the cancelled one.
	c.ok("server", "license", "add", "web-1", "3") // 3: plesk-web-admin
	if got, want := rows(), [][]string{{"1", "plesk-web-admin", "cancelled", "-"}, {"2", "cpanel-solo", "active", "CP-CLI-1"},
		{"3", "plesk-web-admin", "active", "-"}}; !equalRows(got, want) {
		t.Errorf("licenses: %q, want %q", got, want)
	}
	c.ok("server", "license", "remove", "web-1", "plesk-web-admin")
	c.ok("server", "license", "remove", "web-1", "2")
	// The cancelled cpanel-solo gave its key back to the pool.
	if got, want := rows(), [][]string{{"1", "plesk-web-admin", "cancelled", "-"}, {"2", "cpanel-solo", "cancelled", "-"},
		{"3", "plesk-web-admin", "cancelled", "-"}}; !equalRows(got, want) {
		t.Errorf("licenses after the removals: %q, want %q", got, want)
	}
	win := c.ok("server", "create", "--plan", "s2-2c-4g", "--location", "fsn1", "--image", "windows-server-2022", "--display-name", "win-1",
		"-o", "columns=name")
	win = strings.TrimSpace(strings.TrimPrefix(win, "name:"))
	if got, want := tableRows(c.ok("server", "license", "list", win, "-o", "columns=license,status")), [][]string{{"windows-server-standard", "active"}}; !equalRows(got, want) {
		t.Errorf("licenses of the Windows server: %q, want %q", got, want)
	}
	c.ok("server", "license", "add", "win-1", "cpanel-solo") // the pool's one key: cpanel-solo is out of stock
	servers := c.ok("server", "list", "-q")
	for _, tt := range []struct {
		args   []string
		code   int
		stderr []string
	}{
		{[]string{"server", "license", "add", "web-1", "nope"}, 3, []string{`no license "nope" (berth license list)`}},
		{[]string{"server", "create", "--plan", "s1-1c-1g", "--location", "fsn1", "--image", "ubuntu-24.04", "--license", "nope"}, 3,
			[]string{`no license "nope" (berth license list)`}},
		{[]string{"server", "license", "add", "web-1", "999"}, 4, []string{"(422 validation_failed)", "  license_id: No license with id 999 is sold."}},
		{[]string{"server", "license", "add", "web-1", "cpanel-solo"}, 4, []string{"  license_id: License cpanel-solo is out of stock."}},
		{[]string{"server", "create", "--plan", "s1-1c-1g", "--location", "fsn1", "--image", "ubuntu-24.04", "--license", "cpanel-solo",
			"--license", "999"}, 4, []string{"  license_ids: "}},
		{[]string{"server", "license", "remove", "web-1", "plesk-web-admin"}, 3,
			[]string{`holds no license "plesk-web-admin" (berth server license list `}},
		{[]string{"server", "license", "remove", "web-1", "nope"}, 3, []string{`no license "nope" (berth license list)`}},
		{[]string{"server", "license", "remove", "web-1", "999"}, 3, []string{"(404 not_found)"}},
		{[]string{"server", "license", "add", "nope", "plesk-web-admin"}, 3, []string{"(404 not_found)"}},
		{[]string{"server", "license", "remove", "win-1", "windows-server-standard"}, 4,
			[]string{"(422 validation_failed)", "  license_id: The server's image requires this license"}},
		{[]string{"server", "license", "add", "web-1"}, 1, []string{"accepts 2 arg(s), received 1"}},
	} {
		r := c.run(tt.args...)
		if r.code != tt.code || r.stdout != "" {
			t.Errorf("berth %q: exit %d, want %d\n%s[stderr]\n%s", tt.args, r.code, tt.code, r.stdout, r.stderr)
		}
		for _, s := range tt.stderr {
			if !strings.Contains(r.stderr, s) {
				t.Errorf("berth %q: stderr %q lacks %q", tt.args, r.stderr, s)
			}
		}
	}
	if got := c.ok("server", "list", "-q"); got != servers {
		t.Errorf("servers after the refused orders: %q, want %q", got, servers)
	}
	c.ok("server", "license", "add", "web-1", "plesk-web-admin")
	if r := c.run("server", "license", "add", "web-1", "plesk-web-admin"); r.code != 4 || !strings.Contains(r.stderr, "  license_id: ") {
		t.Errorf("a license held already: exit %d, %q", r.code, r.stderr)
	}
}

// TestServerLicenseCompletion: server license add completes the catalog's licenses
// after the server (each described), remove the names of those the server holds,
// server create --license the catalog's; the server itself completes first.
func TestServerLicenseCompletion(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	name, _ := serverInFsn1(t, c)
	c.ok("server", "license", "add", name, "plesk-web-admin")
	for _, tt := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"server", "license", "add", ""}, []string{name + "\t"}, []string{"plesk"}},
		{[]string{"server", "license", "add", name, ""}, []string{"plesk-web-admin\tPlesk, 11.4900 a server a month",
			"cpanel-solo\tcPanel, 19.9900 a server a month, out of stock", "windows-server-standard\tMicrosoft, 4.2000 a vcpu a month"}, nil},
		{[]string{"server", "license", "add", name, "c"}, []string{"cpanel-solo\t"}, []string{"plesk", "windows"}},
		{[]string{"server", "license", "remove", name, ""}, []string{"plesk-web-admin\tlicense 1, active"}, []string{"cpanel", "windows"}},
		{[]string{"server", "license", "remove", name, "plesk-web-admin", ""}, nil, []string{"plesk", name}},
		{[]string{"server", "license", "list", ""}, []string{name + "\t"}, nil},
		{[]string{"server", "create", "--license", "p"}, []string{"plesk-web-admin\t"}, []string{"cpanel"}},
	} {
		got := c.ok(append([]string{"__complete"}, tt.args...)...)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("berth __complete %q: %q lacks %q", tt.args, got, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(got, n) {
				t.Errorf("berth __complete %q: %q offers %q", tt.args, got, n)
			}
		}
	}
}
