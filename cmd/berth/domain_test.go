package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// TestDomainCommands: a zone made with a TTL, listed, described by name and by id,
// its TTL changed; RRsets set whole (created, then replaced, as the note says), their
// values answered canonical, listed with the zone's TTL marked where they take it and
// narrowed by name and type, deleted; the zone exported to a file and imported back
// from it and from stdin; a zone made from a zone file; the zone deleted. Each
// command's -o json is the API's data.
func TestDomainCommands(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	d := c.ok("domain", "create", "Example.COM.", "--ttl", "600", "-o", "json")
	if field(t, d, "name") != "example.com" || field(t, d, "ttl") != 600.0 || field(t, d, "rrset_count") != 2.0 {
		t.Errorf("domain create: %s", d)
	}
	id := jsonString(field(t, d, "id"))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"domain", "list", "-o", "columns=id,name,ttl,rrset_count"}, "ID   NAME          TTL   RRSET_COUNT\n" + id + "    example.com   600   2\n"},
		{[]string{"domain", "describe", id, "-o", "columns=name,nameservers"}, "name:         example.com\nnameservers:  ns1.berth.localhost,ns2.berth.localhost\n"},
		{[]string{"domain", "update", "example.com", "--ttl", "900", "-o", "columns=name,ttl"}, "name:  example.com\nttl:   900\n"},
		{[]string{"domain", "list", "-q"}, id + "\n"},
	} {
		if got := c.ok(tt.args...); got != tt.want {
			t.Errorf("berth %q:\n%s\nwant:\n%s", tt.args, got, tt.want)
		}
	}
	rrsetSetAndList(t, c)
	domainExportImport(t, c)
	for _, tt := range []struct {
		args []string
		path string
	}{
		{[]string{"domain", "list"}, "/domains"},
		{[]string{"domain", "describe", "example.com"}, "/domains/example.com"},
		{[]string{"domain", "update", "example.com", "--ttl", "900"}, "/domains/example.com"},
		{[]string{"rrset", "list", "example.com"}, "/domains/example.com/rrsets"},
		{[]string{"rrset", "list", "example.com", "--name", "www", "--type", "a"}, "/domains/example.com/rrsets?name=www&type=A"},
		{[]string{"rrset", "set", "example.com", "www", "A", "192.0.2.9"}, "/domains/example.com/rrsets/www/A"},
	} {
		got := decode(t, c.ok(append(tt.args, "-o", "json")...))
		if want := apiData(t, env, acct.Token, tt.path); !reflect.DeepEqual(got, want) {
			t.Errorf("berth %q -o json:\n%v\nwant GET %s's data:\n%v", tt.args, got, tt.path, want)
		}
	}
	for _, zone := range []string{"example.com", "example.org"} {
		if r := c.run("domain", "delete", zone); r.code != 0 || r.stdout != "" || r.stderr != "Domain "+zone+" deleted\n" {
			t.Errorf("domain delete %s: exit %d, %q, %q", zone, r.code, r.stdout, r.stderr)
		}
	}
	if got := c.ok("domain", "list", "-o", "json"); got != "[]\n" {
		t.Errorf("zones after the deletion: %s", got)
	}
}

// rrsetSetAndList sets, lists and deletes RRsets of example.com (TTL 900).
func rrsetSetAndList(t *testing.T, c *cli) {
	t.Helper()
	r := c.run("rrset", "set", "example.com", "www", "a", "192.0.2.1", "192.0.2.2", "--comment", "web 1")
	if want := "name:      www\ntype:      A\nttl:       900 (zone)\nrecords:   192.0.2.1, 192.0.2.2\ncomments:  web 1, -\n"; r.code != 0 ||
		r.stdout != want || r.stderr != "RRset www A of example.com created\n" {
		t.Errorf("rrset set (new): exit %d\n%s[stderr]\n%s\nwant:\n%s", r.code, r.stdout, r.stderr, want)
	}
	r = c.run("rrset", "set", "example.com", "www", "A", "192.0.2.3", "--ttl", "300", "-o", "json")
	if r.code != 0 || r.stderr != "RRset www A of example.com replaced\n" || field(t, r.stdout, "ttl") != 300.0 {
		t.Errorf("rrset set (replacing): exit %d\n%s[stderr]\n%s", r.code, r.stdout, r.stderr)
	}
	mx := c.ok("rrset", "set", "example.com", "@", "MX", "10 mail", "20 mx.example.net.", "-o", "columns=records")
	if mx != "records:  10 mail.example.com., 20 mx.example.net.\n" {
		t.Errorf("rrset set MX: values not canonical: %q", mx)
	}
	// Unquoted, "; p=none" would be a comment, dropped (docs/api.md, Domains).
	c.ok("rrset", "set", "example.com", "_dmarc", "TXT", `"v=DMARC1; p=none"`)
	got := tableRows(c.ok("rrset", "list", "example.com"))
	if want := [][]string{
		{"@", "SOA", "900", "(zone)", "ns1.berth.localhost.", "hostmaster.example.com."},
		{"@", "NS", "900", "(zone)", "ns1.berth.localhost.,", "ns2.berth.localhost."},
		{"@", "MX", "900", "(zone)", "10", "mail.example.com.,", "20", "mx.example.net."},
		{"_dmarc", "TXT", "900", "(zone)", `"v=DMARC1;`, `p=none"`},
		{"www", "A", "300", "192.0.2.3"},
	}; len(got) != len(want) || len(got[0]) < 6 || !equalRows(append([][]string{got[0][:6]}, got[1:]...), want) {
		t.Errorf("rrset list:\n%q\nwant rows %q", got, want)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"rrset", "list", "example.com", "-q"}, "@ SOA\n@ NS\n@ MX\n_dmarc TXT\nwww A\n"},
		{[]string{"rrset", "list", "example.com", "--type", "mx", "-q"}, "@ MX\n"},
		{[]string{"rrset", "list", "example.com", "--name", "www", "-o", "columns=name,ttl"}, "NAME   TTL\nwww    300\n"},
		{[]string{"rrset", "list", "example.com", "--name", "_dmarc", "-o", "columns=ttl"}, "TTL\n900 (zone)\n"},
	} {
		if got := c.ok(tt.args...); got != tt.want {
			t.Errorf("berth %q:\n%s\nwant:\n%s", tt.args, got, tt.want)
		}
	}
	if r := c.run("rrset", "delete", "example.com", "_dmarc", "txt"); r.code != 0 || r.stderr != "RRset _dmarc TXT of example.com deleted\n" {
		t.Errorf("rrset delete: exit %d, %q", r.code, r.stderr)
	}
}

// domainExportImport exports example.com to a file, imports it back changed, and
// from stdin.
func domainExportImport(t *testing.T, c *cli) {
	t.Helper()
	zone := c.ok("domain", "export", "example.com")
	for _, want := range []string{"$ORIGIN example.com.\n", "$TTL 900\n", "MX\t10 mail.example.com.\n", "www\t300\tIN\tA\t192.0.2.3\n"} {
		if !strings.Contains(strings.ReplaceAll(zone, " ", "\t"), strings.ReplaceAll(want, " ", "\t")) && !strings.Contains(zone, want) {
			t.Errorf("domain export lacks %q:\n%s", want, zone)
		}
	}
	if got := c.ok("domain", "export", "example.com", "-o", "json"); decode(t, got) != zone {
		t.Errorf("domain export -o json: %s, want the zone file as a string", got)
	}
	file := filepath.Join(t.TempDir(), "example.com.zone")
	if err := os.WriteFile(file, []byte(zone+"ftp 600 IN CNAME www\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := c.ok("domain", "import", "example.com", file, "-o", "columns=name,rrset_count"); got != "name:         example.com\nrrset_count:  5\n" {
		t.Errorf("domain import FILE: %q", got)
	}
	if got := c.ok("rrset", "list", "example.com", "--name", "ftp", "-o", "columns=type,ttl,records"); got != "TYPE    TTL   RECORDS\nCNAME   600   www.example.com.\n" {
		t.Errorf("the imported CNAME: %q", got)
	}
	r := c.runIn(zone, "domain", "import", "example.com", "-", "-o", "json")
	if r.code != 0 || field(t, r.stdout, "rrset_count") != 4.0 {
		t.Errorf("domain import -: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := c.ok("domain", "export", "example.com"); got != zone[:strings.Index(zone, "SOA")]+got[strings.Index(got, "SOA"):] || !strings.Contains(got, "www") {
		t.Errorf("exported after importing the export:\n%s\nwant, but for the serial:\n%s", got, zone)
	}
	// The file's $TTL is its records', not the zone's.
	r = c.runIn("$TTL 120\n@ IN A 192.0.2.7\n", "domain", "create", "example.org", "--zone-file", "-", "-o", "columns=name,ttl,rrset_count")
	if r.code != 0 || r.stdout != "name:         example.org\nttl:          3600\nrrset_count:  3\n" {
		t.Errorf("domain create --zone-file -: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestDomainErrors: what a user meets: a 422 naming each field (exit 4), a zone
// file's problems one a line in the file's order, another account's zone not found
// (exit 3) by each command, and nothing read where a file is missing (exit 1).
func TestDomainErrors(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	other := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+env.NewAccount("en", "", "").Token)
	other.ok("domain", "create", "theirs.org")
	c.ok("domain", "create", "example.com")
	// Twelve lines, problems on lines 2, 10 and 11: "line 10" sorts before "line 2" as text.
	bad := "www A 192.0.2.1\nbad A 999.0.0.1\n" + strings.Repeat("ok TXT fine\n", 7) + "x MX nonsense\n@ CNAME www\nend A 192.0.2.2\n"
	for _, tt := range []struct {
		args   []string
		stdin  string
		code   int
		stderr []string
	}{
		{[]string{"domain", "create", "com"}, "", 4, []string{"(422 validation_failed)", "\n  name: "}},
		{[]string{"domain", "create", "example.net", "--ttl", "30"}, "", 4, []string{"\n  ttl: "}},
		{[]string{"domain", "create", "example.com"}, "", 4, []string{"\n  name: "}},
		{[]string{"domain", "update", "example.com", "--ttl", "100000"}, "", 4, []string{"\n  ttl: "}},
		{[]string{"domain", "update", "example.com"}, "", 1, []string{`required flag(s) "ttl" not set`}},
		{[]string{"domain", "import", "example.com", "-"}, bad, 4, []string{"\n  line 2: ", "\n  line 10: ", "\n  line 11: "}},
		{[]string{"domain", "import", "example.com", "/nonexistent"}, "", 1, []string{"/nonexistent"}},
		{[]string{"domain", "create", "example.net", "--zone-file", "-"}, "$INCLUDE other\n", 4, []string{"\n  line 1: "}},
		{[]string{"rrset", "set", "example.com", "www", "A", "not-an-address"}, "", 4, []string{"\n  records: "}},
		{[]string{"rrset", "set", "example.com", "@", "CNAME", "www"}, "", 4, []string{"\n  name: "}},
		{[]string{"rrset", "set", "example.com", "www", "A", "192.0.2.1", "--ttl", "5"}, "", 4, []string{"\n  ttl: "}},
		{[]string{"rrset", "set", "example.com", "www", "A", "192.0.2.1", "--comment", "a", "--comment", "b"}, "", 1, []string{"2 --comment for 1 values"}},
		{[]string{"rrset", "set", "example.com", "www", "A"}, "", 1, []string{"requires at least 4 arg(s)"}},
		{[]string{"rrset", "delete", "example.com", "@", "SOA"}, "", 4, []string{"\n  type: "}},
		{[]string{"rrset", "delete", "example.com", "www", "A"}, "", 3, []string{"(404 not_found)"}},
		{[]string{"rrset", "list", "example.com", "--type", "BOGUS"}, "", 4, []string{"\n  type: "}},
		{[]string{"domain", "describe", "theirs.org"}, "", 3, []string{"(404 not_found)"}},
		{[]string{"domain", "update", "theirs.org", "--ttl", "600"}, "", 3, []string{"(404 not_found)"}},
		{[]string{"domain", "delete", "theirs.org"}, "", 3, []string{"(404 not_found)"}},
		{[]string{"domain", "export", "theirs.org"}, "", 3, []string{"(404 not_found)"}},
		{[]string{"domain", "import", "theirs.org", "-"}, "www A 192.0.2.1\n", 3, []string{"(404 not_found)"}},
		{[]string{"rrset", "list", "theirs.org"}, "", 3, []string{"(404 not_found)"}},
		{[]string{"rrset", "set", "theirs.org", "www", "A", "192.0.2.1"}, "", 3, []string{"(404 not_found)"}},
		{[]string{"rrset", "delete", "theirs.org", "@", "NS"}, "", 3, []string{"(404 not_found)"}},
		{[]string{"domain", "create", "sub.theirs.org"}, "", 4, []string{"\n  name: "}},
	} {
		wantRefused(t, c, tt.stdin, tt.args, tt.code, tt.stderr)
	}
	if got := c.ok("rrset", "list", "example.com", "-q"); got != "@ SOA\n@ NS\n" {
		t.Errorf("example.com after the refusals: %q", got)
	}
	if got := other.ok("domain", "list", "-o", "columns=name,rrset_count"); got != "NAME         RRSET_COUNT\ntheirs.org   2\n" {
		t.Errorf("the other account's zone after the refusals: %q", got)
	}
}

// wantRefused runs berth with args and stdin and wants it to exit with code, nothing
// on stdout, and each of stderr on its stderr, in their order.
func wantRefused(t *testing.T, c *cli, stdin string, args []string, code int, stderr []string) {
	t.Helper()
	r := c.runIn(stdin, args...)
	if r.code != code || r.stdout != "" {
		t.Errorf("berth %q: exit %d, want %d\n%s[stderr]\n%s", args, r.code, code, r.stdout, r.stderr)
	}
	last := -1
	for _, s := range stderr {
		i := strings.Index(r.stderr, s)
		if i < 0 {
			t.Errorf("berth %q: stderr %q lacks %q", args, r.stderr, s)
		} else if i < last {
			t.Errorf("berth %q: %q out of order in stderr:\n%s", args, s, r.stderr)
		}
		last = i
	}
}

// TestServerRDNS: a server's PTRs listed by its display name, the IPv4 address's set
// and reset to the default, one of its IPv6 /64 set; an address not the server's and
// a PTR that is no host name are 422 on their fields, another account's server not
// found. Each command's -o json is the API's data.
func TestServerRDNS(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	srv := c.ok("server", "create", "--plan", "s1-1c-1g", "--location", "fsn1", "--image", "ubuntu-24.04", "--display-name", "web-1", "-o", "json")
	name, v4, v6 := field(t, srv, "name").(string), field(t, srv, "ipv4").(string), field(t, srv, "ipv6").(string)
	other6 := strings.TrimSuffix(v6, "::1") + "::beef"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"server", "rdns", "list", "web-1"}, "IP   PTR\n" + v4 + "   " + name + ".berth.localhost\n"},
		{[]string{"server", "rdns", "set", name, v4, "Mail.Example.COM."}, "IP   PTR\n" + v4 + "   mail.example.com\n"},
		{[]string{"server", "rdns", "set", "web-1", other6, "www.example.com", "-q"}, v4 + "\n" + other6 + "\n"},
		{[]string{"server", "rdns", "reset", "web-1", other6, "-o", "columns=ptr"}, "PTR\nmail.example.com\n"},
		{[]string{"server", "rdns", "reset", "web-1", v4, "-o", "columns=ptr"}, "PTR\n" + name + ".berth.localhost\n"},
	} {
		got := strings.ReplaceAll(c.ok(tt.args...), strings.Repeat(" ", len(v4)), "")
		want := strings.ReplaceAll(tt.want, strings.Repeat(" ", len(v4)), "")
		if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(want), " ") {
			t.Errorf("berth %q:\n%s\nwant:\n%s", tt.args, got, tt.want)
		}
	}
	got := decode(t, c.ok("server", "rdns", "set", "web-1", v4, "a.example.com", "-o", "json"))
	if want := apiData(t, env, acct.Token, "/servers/"+name+"/rdns"); !reflect.DeepEqual(got, want) {
		t.Errorf("rdns set -o json: %v, want %v", got, want)
	}
	if got, want := decode(t, c.ok("server", "rdns", "list", "web-1", "-o", "json")), apiData(t, env, acct.Token, "/servers/"+name+"/rdns"); !reflect.DeepEqual(got, want) {
		t.Errorf("rdns list -o json: %v, want %v", got, want)
	}
	other := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+env.NewAccount("en", "", "").Token)
	for _, tt := range []struct {
		c      *cli
		args   []string
		code   int
		stderr string
	}{
		{c, []string{"server", "rdns", "set", "web-1", "192.0.2.254", "x.example.com"}, 4, "\n  ip: "},
		{c, []string{"server", "rdns", "set", "web-1", v4, "bad name!"}, 4, "\n  ptr: "},
		{c, []string{"server", "rdns", "reset", "web-1", "not-an-address"}, 4, "\n  ip: "},
		{c, []string{"server", "rdns", "list", "nope"}, 3, "(404 not_found)"},
		{other, []string{"server", "rdns", "list", name}, 3, "(404 not_found)"},
		{other, []string{"server", "rdns", "set", name, v4, "x.example.com"}, 3, "(404 not_found)"},
	} {
		r := tt.c.run(tt.args...)
		if r.code != tt.code || r.stdout != "" || !strings.Contains(r.stderr, tt.stderr) {
			t.Errorf("berth %q: exit %d, want %d\n%s[stderr]\n%s(want %q)", tt.args, r.code, tt.code, r.stdout, r.stderr, tt.stderr)
		}
	}
}

// TestDomainCompletion: a DOMAIN argument completes with the account's zones (each
// described by its number of RRsets), only as the first argument of rrset's commands;
// import's FILE with files.
func TestDomainCompletion(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acct := env.NewAccount("en", "", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	c.ok("domain", "create", "example.com")
	c.ok("domain", "create", "example.org")
	c.ok("rrset", "set", "example.org", "www", "A", "192.0.2.1")
	for _, tt := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"domain", "describe", ""}, []string{"example.com\t2 RRsets\n", "example.org\t3 RRsets\n"}, nil},
		{[]string{"domain", "export", "example.o"}, []string{"example.org\t"}, []string{"example.com"}},
		{[]string{"rrset", "list", ""}, []string{"example.com\t", "example.org\t"}, nil},
		{[]string{"rrset", "set", "example.com", ""}, nil, []string{"example.com", "example.org"}},
		{[]string{"domain", "import", "example.com", ""}, []string{"ShellCompDirectiveDefault"}, []string{"example.org"}},
		{[]string{"domain", "describe", "example.com", ""}, []string{"ShellCompDirectiveNoFileComp"}, []string{"example.org"}},
	} {
		r := c.run(append([]string{"__complete"}, tt.args...)...)
		got := r.stdout + r.stderr // the directive's name is on stderr
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
