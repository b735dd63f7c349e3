package dnszone

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/hosting"
)

func TestParseType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		apex bool
		want Type
		msg  string
	}{
		{"A", false, TypeA, ""},
		{"aaaa", true, TypeAAAA, ""},
		{" mx ", true, TypeMX, ""},
		{"NS", false, TypeNS, ""},
		{"NS", true, "", "validation.dns_type_operator"},
		{"ns", true, "", "validation.dns_type_operator"},
		{"SOA", false, "", "validation.dns_type_operator"},
		{"SOA", true, "", "validation.dns_type_operator"},
		{"PTR", false, "", "validation.dns_type_unsupported"},
		{"", false, "", "validation.dns_type_unsupported"},
		{"TYPE1", false, "", "validation.dns_type_unsupported"},
	}
	for _, tc := range tests {
		got, err := ParseType(tc.in, tc.apex)
		if msg := fieldMsg(t, err, "type"); msg != tc.msg || got != tc.want {
			t.Errorf("ParseType(%q, %v) = %q, %q; want %q, %q", tc.in, tc.apex, got, msg, tc.want, tc.msg)
		}
	}
}

func TestCheckTTL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ttl *int
		ok  bool
	}{
		{nil, true}, {ptr(60), true}, {ptr(3600), true}, {ptr(86400), true},
		{ptr(-1), false}, {ptr(0), false}, {ptr(59), false}, {ptr(86401), false},
	} {
		err := CheckTTL(tc.ttl)
		if msg := fieldMsg(t, err, "ttl"); (msg == "") != tc.ok || !tc.ok && msg != "validation.dns_ttl" {
			t.Errorf("CheckTTL(%v) = %q, want ok %v", show(tc.ttl), msg, tc.ok)
		}
	}
}

func ptr(n int) *int { return &n }

func show(p *int) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

func TestCanonicalValue(t *testing.T) {
	t.Parallel()
	const zone = "example.com"
	s255, s256 := strings.Repeat("x", 255), strings.Repeat("y", 256)
	tests := []struct {
		name string
		t    Type
		in   string
		want string
		msg  string
	}{
		{"@", TypeA, "192.0.2.1", "192.0.2.1", ""},
		{"@", TypeA, " 192.0.2.1 ", "192.0.2.1", ""},
		{"@", TypeA, "2001:db8::1", "", "validation.dns_value_syntax"},
		{"@", TypeA, "::ffff:192.0.2.1", "", "validation.dns_value_syntax"},
		{"@", TypeA, "192.0.2", "", "validation.dns_value_syntax"},
		{"@", TypeA, "192.0.2.256", "", "validation.dns_value_syntax"},
		{"@", TypeA, "192.0.2.1 192.0.2.2", "", "validation.dns_value_syntax"},
		{"@", TypeA, "", "", "validation.dns_value_empty"},
		{"@", TypeA, "192.0.2.1\n@ A 192.0.2.2", "", "validation.dns_value_control"},
		{"@", TypeA, "192.0.2.1\x00", "", "validation.dns_value_control"},
		{"@", TypeAAAA, "2001:DB8::1", "2001:db8::1", ""},
		{"@", TypeAAAA, "::ffff:192.0.2.1", "::ffff:192.0.2.1", ""},
		{"@", TypeAAAA, "192.0.2.1", "", "validation.dns_value_syntax"},
		{"@", TypeAAAA, "2001:db8::g", "", "validation.dns_value_syntax"},
		{"www", TypeCNAME, "host", "host.example.com.", ""},
		{"www", TypeCNAME, "Host.Example.NET.", "host.example.net.", ""},
		{"www", TypeCNAME, "@", "example.com.", ""},
		{"_dmarc", TypeCNAME, "_dmarc.example.net.", "_dmarc.example.net.", ""},
		{"www", TypeCNAME, ".", "", "validation.dns_value_host"},
		{"www", TypeCNAME, "a b", "", "validation.dns_value_syntax"},
		{"www", TypeCNAME, `a\032b.net.`, "", "validation.dns_value_host"},
		{"@", TypeMX, "10 mail", "10 mail.example.com.", ""},
		{"@", TypeMX, "10 mail.example.com.", "10 mail.example.com.", ""},
		{"@", TypeMX, "0 .", "0 .", ""},
		{"@", TypeMX, "10 mail.Bücher.de.", "10 mail.xn--bcher-kva.de.", ""},
		{"@", TypeMX, "10 bücher", "10 xn--bcher-kva.example.com.", ""},
		{"@", TypeMX, "10 a\xff.de.", "", "validation.dns_value_host"},
		{"@", TypeMX, "10 _mx.example.net.", "", "validation.dns_value_host"},
		{"@", TypeMX, "10 -mail.example.net.", "", "validation.dns_value_host"},
		{"@", TypeMX, "10 mail-.example.net.", "", "validation.dns_value_host"},
		{"@", TypeMX, "10 mail-1.example.net.", "10 mail-1.example.net.", ""},
		{"_sip._tcp", TypeSRV, "0 0 5060 a_b.example.net.", "", "validation.dns_value_host"},
		{"_sip._tcp", TypeSRV, "0 0 5060 sip.example.net.", "0 0 5060 sip.example.net.", ""},
		{"dev", TypeNS, "-ns.example.net.", "", "validation.dns_value_host"},
		{"dev", TypeNS, "ns_1.example.net.", "", "validation.dns_value_host"},
		{"www", TypeCNAME, "-x.example.net.", "-x.example.net.", ""},
		{"@", TypeMX, "mail", "", "validation.dns_value_syntax"},
		{"@", TypeMX, "65536 mail", "", "validation.dns_value_syntax"},
		{"@", TypeMX, "-1 mail", "", "validation.dns_value_syntax"},
		{"@", TypeTXT, "hello", `"hello"`, ""},
		{"@", TypeTXT, `"hello world"`, `"hello world"`, ""},
		{"@", TypeTXT, `"a" "b"`, `"a" "b"`, ""},
		{"@", TypeTXT, `""`, `""`, ""},
		{"@", TypeTXT, `"say \"hi\""`, `"say \"hi\""`, ""},
		{"@", TypeTXT, s255, `"` + s255 + `"`, ""},
		{"@", TypeTXT, `"` + s255 + `"`, `"` + s255 + `"`, ""},
		{"@", TypeTXT, s256, `"` + s256[:255] + `" "y"`, ""},
		{"@", TypeTXT, `"` + s256 + `"`, `"` + s256[:255] + `" "y"`, ""},
		{"@", TypeTXT, `"unclosed`, "", "validation.dns_value_syntax"},
		{"@", TypeTXT, ";", "", "validation.dns_value_syntax"},
		{"@", TypeTXT, "; a comment", "", "validation.dns_value_syntax"},
		{"@", TypeA, "192.0.2.1 ; a comment", "192.0.2.1", ""},
		{"@", TypeTXT, strings.Repeat("z", 4096), "", "validation.dns_value_length"},
		{"@", TypeTXT, strings.Repeat("z", 8193), "", "validation.dns_value_length"},
		{"_sip._tcp", TypeSRV, "10 5 5060 sip", "10 5 5060 sip.example.com.", ""},
		{"_sip._tcp", TypeSRV, "0 0 0 .", "0 0 0 .", ""},
		{"_sip._tcp", TypeSRV, "10 5 sip", "", "validation.dns_value_syntax"},
		{"_sip._tcp", TypeSRV, "10 5 65536 sip", "", "validation.dns_value_syntax"},
		{"@", TypeCAA, `0 issue "letsencrypt.org"`, `0 issue "letsencrypt.org"`, ""},
		{"@", TypeCAA, `0 ISSUE "letsencrypt.org"`, `0 issue "letsencrypt.org"`, ""},
		{"@", TypeCAA, `128 iodef "mailto:a@example.com"`, `128 iodef "mailto:a@example.com"`, ""},
		{"@", TypeCAA, `0 issue`, "", "validation.dns_value_syntax"},
		{"@", TypeCAA, `256 issue "x"`, "", "validation.dns_value_syntax"},
		{"@", TypeCAA, `0 is-sue "x"`, "", "validation.dns_value_syntax"},
		{"sub", TypeNS, "ns1.example.net.", "ns1.example.net.", ""},
		{"sub", TypeNS, "ns1", "ns1.example.com.", ""},
		{"sub", TypeNS, "1.2.3.4 x", "", "validation.dns_value_syntax"},
	}
	for _, tc := range tests {
		got, err := CanonicalValue(zone, tc.name, tc.t, tc.in)
		if msg := fieldMsg(t, err, "records"); msg != tc.msg || got != tc.want {
			t.Errorf("CanonicalValue(%s %s %q) = %q, %q; want %q, %q", tc.name, tc.t, clip(tc.in), got, msg, tc.want, tc.msg)
		}
		if err == nil {
			if again, err := CanonicalValue(zone, tc.name, tc.t, got); err != nil || again != got {
				t.Errorf("CanonicalValue(%q) = %q, %v: not a fixed point", got, again, err)
			}
		}
	}
}

func TestCanonicalRRset(t *testing.T) {
	t.Parallel()
	const zone = "example.com"
	recs := func(n int) []Record {
		r := make([]Record, n)
		for i := range r {
			r[i].Value = fmt.Sprintf("10.0.%d.%d", i/256, i%256)
		}
		return r
	}
	got, err := CanonicalRRset(zone, RRset{Name: "Mail.Example.com.", Type: "mx", TTL: ptr(300),
		Records: []Record{{Value: "10 mx1", Comment: "  primary "}, {Value: "20 MX2.example.net."}}})
	if err != nil {
		t.Fatal(err)
	}
	want := RRset{Name: "mail", Type: TypeMX, TTL: ptr(300),
		Records: []Record{{"10 mx1.example.com.", "primary"}, {"20 mx2.example.net.", ""}}}
	if fmt.Sprint(got.Name, got.Type, *got.TTL, got.Records) != fmt.Sprint(want.Name, want.Type, *want.TTL, want.Records) {
		t.Errorf("CanonicalRRset = %+v, want %+v", got, want)
	}

	tests := []struct {
		desc string
		in   RRset
		// field → the message ids on it
		want map[string][]string
	}{
		{"100 records", RRset{Name: "a", Type: TypeA, Records: recs(100)}, nil},
		{"101 records", RRset{Name: "a", Type: TypeA, Records: recs(101)},
			map[string][]string{"records": {"validation.dns_records_many"}}},
		{"no records", RRset{Name: "a", Type: TypeA},
			map[string][]string{"records": {"validation.dns_records_empty"}}},
		{"ttl 59", RRset{Name: "a", Type: TypeA, TTL: ptr(59), Records: recs(1)},
			map[string][]string{"ttl": {"validation.dns_ttl"}}},
		{"ttl 86401 and a bad record", RRset{Name: "a", Type: TypeA, TTL: ptr(86401), Records: []Record{{Value: "x"}}},
			map[string][]string{"ttl": {"validation.dns_ttl"}, "records": {"validation.dns_record_syntax"}}},
		{"duplicates", RRset{Name: "a", Type: TypeA, Records: []Record{{Value: "192.0.2.1"}, {Value: " 192.0.2.1"}, {Value: "bad"}}},
			map[string][]string{"records": {"validation.dns_record_duplicate", "validation.dns_record_syntax"}}},
		{"duplicate names", RRset{Name: "a", Type: TypeCNAME, Records: []Record{{Value: "b"}, {Value: "B.example.com."}}},
			map[string][]string{"records": {"validation.dns_record_duplicate"}}},
		{"apex CNAME", RRset{Name: "@", Type: TypeCNAME, Records: []Record{{Value: "b"}}},
			map[string][]string{"name": {"validation.dns_cname_apex"}}},
		{"apex NS", RRset{Name: "example.com.", Type: TypeNS, Records: []Record{{Value: "ns1"}}},
			map[string][]string{"type": {"validation.dns_type_operator"}}},
		{"SOA", RRset{Name: "@", Type: TypeSOA, Records: []Record{{Value: "ns1 h 1 2 3 4 5"}}},
			map[string][]string{"type": {"validation.dns_type_operator"}}},
		{"outside and unknown type", RRset{Name: "www.example.org.", Type: "PTR", Records: recs(1)},
			map[string][]string{"name": {"validation.dns_name_outside"}, "type": {"validation.dns_type_unsupported"}}},
		{"long comment", RRset{Name: "a", Type: TypeA, Records: []Record{{Value: "192.0.2.1", Comment: label(256)}}},
			map[string][]string{"records": {"validation.dns_record_comment"}}},
		{"comment with semicolons", RRset{Name: "a", Type: TypeA, Records: []Record{{Value: "192.0.2.1", Comment: ";a;b ;"}}}, nil},
		{"comment of 255", RRset{Name: "a", Type: TypeA, Records: []Record{{Value: "192.0.2.1", Comment: label(255)}}}, nil},
		{"comment with a line break (kept as a space)", RRset{Name: "a", Type: TypeA, Records: []Record{{Value: "192.0.2.1", Comment: "a\nb"}}}, nil},
		{"comment with a control character", RRset{Name: "a", Type: TypeA, Records: []Record{{Value: "192.0.2.1", Comment: "a\x00b"}}},
			map[string][]string{"records": {"validation.dns_record_comment"}}},
	}
	for _, tc := range tests {
		_, err := CanonicalRRset(zone, tc.in)
		got := map[string][]string{}
		var e *hosting.Error
		if err != nil {
			if !errors.As(err, &e) {
				t.Fatalf("%s: %v", tc.desc, err)
			}
			for f, ms := range e.Fields {
				for _, m := range ms {
					got[f] = append(got[f], m.ID)
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(map[string][]string(tc.want)) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("%s: errors %v, want %v", tc.desc, got, tc.want)
		}
	}
}

// TestRecordErrorNamesTheRecord: a bad record's message carries its index (from 1)
// and its value, so the API's message says which record and why.
func TestRecordErrorNamesTheRecord(t *testing.T) {
	t.Parallel()
	_, err := CanonicalRRset("example.com", RRset{Name: "@", Type: TypeA,
		Records: []Record{{Value: "192.0.2.1"}, {Value: "192.0.2.300"}, {Value: "192.0.2.1"}}})
	var e *hosting.Error
	if !errors.As(err, &e) || len(e.Fields["records"]) != 2 {
		t.Fatalf("err = %v", err)
	}
	m := e.Fields["records"]
	if m[0].ID != "validation.dns_record_syntax" || m[0].Args["index"] != 2 || m[0].Args["value"] != "192.0.2.300" ||
		m[0].Args["type"] != "A" || m[0].Args["example"] != "192.0.2.1" {
		t.Errorf("first = %+v", m[0])
	}
	if m[1].ID != "validation.dns_record_duplicate" || m[1].Args["index"] != 3 || m[1].Args["first"] != 1 {
		t.Errorf("second = %+v", m[1])
	}
}

func TestCheckZone(t *testing.T) {
	t.Parallel()
	set := func(name string, t Type) RRset { return RRset{Name: name, Type: t, Records: []Record{{Value: "x"}}} }
	many := func(n int) []RRset {
		s := make([]RRset, n)
		for i := range s {
			s[i] = set(fmt.Sprintf("n%d", i), TypeA)
		}
		return s
	}
	tests := []struct {
		desc  string
		sets  []RRset
		field string
		msg   string
	}{
		{"empty", nil, "", ""},
		{"CNAME alone", []RRset{set("www", TypeCNAME), set("@", TypeA), set("x.www", TypeA)}, "", ""},
		{"CNAME and A", []RRset{set("www", TypeA), set("www", TypeCNAME)}, "name", "validation.dns_cname_alone"},
		{"CNAME and TXT", []RRset{set("www", TypeCNAME), set("www", TypeTXT)}, "name", "validation.dns_cname_alone"},
		{"CNAME at the apex", []RRset{set("@", TypeCNAME)}, "name", "validation.dns_cname_apex"},
		{"5000 RRsets", many(5000), "", ""},
		{"5001 RRsets", many(5001), "rrsets", "validation.dns_rrsets_many"},
	}
	for _, tc := range tests {
		err := CheckZone(tc.sets)
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.desc, err)
			}
			continue
		}
		if msg := fieldMsg(t, err, tc.field); msg != tc.msg {
			t.Errorf("%s: %q, want %q", tc.desc, msg, tc.msg)
		}
	}
}
