package dnszone

import (
	"errors"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/hosting"
)

// checkRefusal fails t unless err is a validation error whose every key is key(k).
func checkRefusal(t *testing.T, err error, key func(string) bool) {
	t.Helper()
	var e *hosting.Error
	if !errors.As(err, &e) || e.Code != hosting.CodeValidationFailed || len(e.Fields) == 0 || len(e.Order) != len(e.Fields) {
		t.Fatalf("err = %#v, want a validation error", err)
	}
	for f, msgs := range e.Fields {
		if !key(f) || len(msgs) == 0 {
			t.Fatalf("err = %v: key %q", err, f)
		}
		for _, m := range msgs {
			if !strings.HasPrefix(m.ID, "validation.dns_") {
				t.Fatalf("err = %v: message %q", err, m.ID)
			}
		}
	}
}

// FuzzZoneFile: no text makes ParseZoneFile panic; a refusal is keyed by lines (or
// the file); what it accepts is canonical (a PUT of each RRset takes it unchanged,
// the zone's rules hold) and export → parse → export gives the same text.
func FuzzZoneFile(f *testing.F) {
	for _, s := range []string{
		"",
		"www A 192.0.2.1\n",
		"$TTL 300\n@ SOA a. b. 1 2 3 4 5\n@ NS ns1.example.net.\n@ MX 10 mail\nmail A 192.0.2.1 ; the mail\n",
		"$ORIGIN sub.example.com.\n@ TXT ( \"a\" \"b\" )\n*.x CNAME @\n",
		"_sip._tcp SRV 10 5 5060 sip\n@ CAA 0 issue \"letsencrypt.org\"\n@ AAAA 2001:db8::1\nsub NS ns1.sub\n",
		"a TXT \"" + strings.Repeat("x", 300) + "\"\n",
		"bücher 60 AAAA ::ffff:192.0.2.1\n",
		"$GENERATE 1-3 h$ A 192.0.2.$\n",
		"a CNAME b\na A 192.0.2.1\n@ CNAME x.\n",
		"a 59 A 192.0.2.1\nb A x\n\"\n(\n\\\n",
		"$INCLUDE /etc/passwd\n",
		"a TXT \"x\" ; c \"(\" ;\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 16<<10 {
			return // the limit is tested apart; large inputs only slow the search
		}
		sets, err := ParseZoneFile("example.com", 3600, text)
		if err != nil {
			checkRefusal(t, err, func(k string) bool { return strings.HasPrefix(k, "line ") || k == "zone_file" })
			return
		}
		if err := CheckZone(sets); err != nil {
			t.Fatalf("accepted, yet CheckZone: %v", err)
		}
		for _, s := range sets {
			c, err := CanonicalRRset("example.com", s)
			if err != nil {
				t.Fatalf("accepted %+v, yet CanonicalRRset: %v", s, err)
			}
			if !sameRRset(c, s) {
				t.Fatalf("accepted %+v, canonical %+v", s, c)
			}
		}
		first := ExportZoneFile("example.com", testSOA, sets)
		back, err := ParseZoneFile("example.com", 3600, first)
		if err != nil {
			t.Fatalf("the export does not read back: %v\n%s", err, first)
		}
		if second := ExportZoneFile("example.com", testSOA, back); second != first {
			t.Fatalf("export → parse → export:\n%s\nwant\n%s", second, first)
		}
	})
}

// FuzzRecordValue: no value or comment makes CanonicalRRset panic; a refusal is on
// "records"; an accepted value's canonical form is a fixed point, and the record, its
// comment too, comes back the same through a zone file.
func FuzzRecordValue(f *testing.F) {
	for _, s := range []struct {
		name, typ, value, comment string
	}{
		{"@", "A", "192.0.2.1", ""}, {"@", "AAAA", "2001:db8::1", "v6"}, {"www", "CNAME", "host", ""},
		{"@", "MX", "10 mail", "the mail"}, {"@", "MX", "0 .", ""}, {"@", "TXT", `"a" "b" c`, `a "(" \`},
		{"@", "TXT", strings.Repeat("é", 200), "é"}, {"_sip._tcp", "SRV", "10 5 5060 sip", ""},
		{"@", "CAA", `0 issue "letsencrypt.org"`, ""}, {"sub", "NS", "ns1.example.net.", ";"},
		{"*", "A", "192.0.2.1 ; x", "x\\"}, {"a", "TXT", `"\"\\" ( "x" )`, ")"}, {"a", "MX", "10 a\\.b", ""},
	} {
		f.Add(s.name, s.typ, s.value, s.comment)
	}
	f.Fuzz(func(t *testing.T, name, typ, value, comment string) {
		const zone = "example.com"
		rel, err := OwnerName(zone, name)
		if err != nil {
			return
		}
		tp, err := ParseType(typ, rel == Apex)
		if err != nil || tp == TypeCNAME && rel == Apex {
			return
		}
		got, err := CanonicalValue(zone, rel, tp, value)
		if err != nil {
			checkRefusal(t, err, func(k string) bool { return k == "records" })
			return
		}
		again, err := CanonicalValue(zone, rel, tp, got)
		if err != nil || again != got {
			t.Fatalf("CanonicalValue(%q) = %q, then %q, %v", value, got, again, err)
		}
		set, err := CanonicalRRset(zone, RRset{Name: rel, Type: tp, Records: []Record{{Value: value, Comment: comment}}})
		if err != nil {
			checkRefusal(t, err, func(k string) bool { return k == "records" })
			return
		}
		if set.Records[0].Value != got {
			t.Fatalf("CanonicalRRset's value %q, CanonicalValue's %q", set.Records[0].Value, got)
		}
		text := ExportZoneFile(zone, testSOA, []RRset{set})
		back, err := ParseZoneFile(zone, 3600, text)
		if err != nil || len(back) != 1 || !sameRRset(back[0], set) {
			t.Fatalf("through a zone file %+v came back %+v, %v\n%s", set, back, err, text)
		}
	})
}

func sameRRset(a, b RRset) bool {
	if a.Name != b.Name || a.Type != b.Type || !equalTTL(a.TTL, b.TTL) || len(a.Records) != len(b.Records) {
		return false
	}
	for i := range a.Records {
		if a.Records[i] != b.Records[i] {
			return false
		}
	}
	return true
}
