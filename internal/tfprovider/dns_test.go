package tfprovider

import (
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/api"
)

func rec(value, comment string) recordModel {
	return recordModel{Value: types.StringValue(value), Comment: types.StringValue(comment)}
}

// TestSameRecords: records the configuration writes otherwise than Berth (a relative
// name, an IPv6 address in capitals, a comment's spaces) are the state's, record for
// record; another value, another comment, another count or order, or a value not yet
// known are not.
func TestSameRecords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, owner, typ string
		planned, state   []recordModel
		want             bool
	}{
		{"relative name", "@", "MX", []recordModel{rec("10 mail", "")}, []recordModel{rec("10 mail.example.com.", "")}, true},
		{"ipv6 case", "www", "AAAA", []recordModel{rec("2001:DB8::1", "")}, []recordModel{rec("2001:db8::1", "")}, true},
		{"cname", "www", "CNAME", []recordModel{rec("web", "")}, []recordModel{rec("web.example.com.", "")}, true},
		{"txt quoting", "@", "TXT", []recordModel{rec("v=spf1", "")}, []recordModel{rec(`"v=spf1"`, "")}, true},
		{"txt words", "@", "TXT", []recordModel{rec("v=spf1 -all", "")}, []recordModel{rec(`"v=spf1 -all"`, "")}, false},
		{"comment spaces", "www", "A", []recordModel{rec("192.0.2.1", "  web  one ")}, []recordModel{rec("192.0.2.1", "web one")}, true},
		{"another value", "www", "A", []recordModel{rec("192.0.2.2", "")}, []recordModel{rec("192.0.2.1", "")}, false},
		{"another name", "@", "MX", []recordModel{rec("10 mx", "")}, []recordModel{rec("10 mail.example.com.", "")}, false},
		{"another zone's name", "@", "MX", []recordModel{rec("10 mail.example.org.", "")}, []recordModel{rec("10 mail.example.com.", "")}, false},
		{"another comment", "www", "A", []recordModel{rec("192.0.2.1", "a")}, []recordModel{rec("192.0.2.1", "b")}, false},
		{"one more", "www", "A", []recordModel{rec("192.0.2.1", ""), rec("192.0.2.2", "")}, []recordModel{rec("192.0.2.1", "")}, false},
		{"another order", "www", "A", []recordModel{rec("192.0.2.2", ""), rec("192.0.2.1", "")},
			[]recordModel{rec("192.0.2.1", ""), rec("192.0.2.2", "")}, false},
		{"unknown value", "www", "A", []recordModel{{Value: types.StringUnknown(), Comment: types.StringValue("")}},
			[]recordModel{rec("192.0.2.1", "")}, false},
		{"invalid alike", "www", "A", []recordModel{rec("not an address", "")}, []recordModel{rec("not an address", "")}, true},
		{"invalid otherwise", "www", "A", []recordModel{rec("not an address ", "")}, []recordModel{rec("not an address", "")}, false},
	} {
		if got := sameRecords("example.com", tc.owner, tc.typ, tc.planned, tc.state); got != tc.want {
			t.Errorf("%s: sameRecords = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSpelledRecords: what Berth answers is kept as the configuration or state writes
// it where that is the same record, and taken as Berth writes it elsewhere (a change
// made outside OpenTofu, a record more).
func TestSpelledRecords(t *testing.T) {
	t.Parallel()
	mine := []recordModel{rec("10 mail", "main"), rec("20 backup", "")}
	got := []api.DNSRecord{{Value: "10 mail.example.com.", Comment: "main"}, {Value: "20 other.example.com."},
		{Value: "30 third.example.com.", Comment: "new"}}
	var values, comments []string
	for _, r := range spelledRecords("example.com", "@", "MX", mine, got) {
		values, comments = append(values, r.Value.ValueString()), append(comments, r.Comment.ValueString())
	}
	if want := []string{"10 mail", "20 other.example.com.", "30 third.example.com."}; !slices.Equal(values, want) {
		t.Errorf("values %q, want %q", values, want)
	}
	if want := []string{"main", "", "new"}; !slices.Equal(comments, want) {
		t.Errorf("comments %q, want %q", comments, want)
	}
}

// TestParseImportIDs: zone/name/type and server/ip, each part required; an IPv6
// address with its colons; the type in any case.
func TestParseImportIDs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id, zone, name, typ string
	}{
		{"example.com/www/A", "example.com", "www", "A"},
		{"example.com/@/mx", "example.com", "@", "MX"},
		{"7/_dmarc/TXT", "7", "_dmarc", "TXT"},
		{"example.com/www.example.com./AAAA", "example.com", "www.example.com.", "AAAA"},
		{"example.com/www", "", "", ""},
		{"example.com/www/A/x", "", "", ""},
		{"/www/A", "", "", ""},
		{"example.com//A", "", "", ""},
		{"example.com/www/", "", "", ""},
		{"", "", "", ""},
	} {
		zone, name, typ, err := parseRRsetID(tc.id)
		if tc.zone == "" && err == nil || tc.zone != "" && (err != nil || zone != tc.zone || name != tc.name || typ != tc.typ) {
			t.Errorf("parseRRsetID(%q) = %q, %q, %q, %v; want %q, %q, %q", tc.id, zone, name, typ, err, tc.zone, tc.name, tc.typ)
		}
	}
	for _, tc := range []struct{ id, server, ip string }{
		{"42/203.0.113.10", "42", "203.0.113.10"},
		{"web-1/2001:DB8::1", "web-1", "2001:DB8::1"},
		{"42", "", ""},
		{"/203.0.113.10", "", ""},
		{"42/", "", ""},
		{"42/mail.example.com", "", ""},
		{"42/2001:db8::/64", "", ""},
	} {
		server, ip, err := parseRDNSID(tc.id)
		if tc.server == "" && err == nil || tc.server != "" && (err != nil || server != tc.server || ip != tc.ip) {
			t.Errorf("parseRDNSID(%q) = %q, %q, %v; want %q, %q", tc.id, server, ip, err, tc.server, tc.ip)
		}
	}
}

// TestSameSpellings: names, host names and addresses Berth writes alike.
func TestSameSpellings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		what string
		same bool
		want bool
	}{
		{"owner relative and absolute", sameOwner("example.com", "www", "www.example.com."), true},
		{"owner case", sameOwner("example.com", "WWW", "www"), true},
		{"apex", sameOwner("example.com", "@", "example.com."), true},
		{"owner relative written absolute without its dot", sameOwner("example.com", "www.example.com", "www"), false},
		{"another owner", sameOwner("example.com", "www", "web"), false},
		{"host case and dot", sameHost("Mail.Example.com.", "mail.example.com"), true},
		{"another host", sameHost("mail.example.com", "mx.example.com"), false},
		{"ipv6 case", sameAddr("2001:DB8::1", "2001:db8::1"), true},
		{"ipv6 zeros", sameAddr("2001:db8:0:0::1", "2001:db8::1"), true},
		{"another address", sameAddr("192.0.2.1", "192.0.2.2"), false},
		{"comment ;", sameComment("a;b", "a ;b"), true},
		{"comment", sameComment("a", "b"), false},
	} {
		if tc.same != tc.want {
			t.Errorf("%s: %v, want %v", tc.what, tc.same, tc.want)
		}
	}
}
