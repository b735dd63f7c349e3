package dnszone

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/hosting"
)

// Type is an RRset's type, upper case as in a zone file.
type Type string

// The types a customer may set (docs/api.md, Domains). SOA and the apex NS are the
// operator's: they are shown and exported, never changed.
const (
	TypeA     Type = "A"
	TypeAAAA  Type = "AAAA"
	TypeCAA   Type = "CAA"
	TypeCNAME Type = "CNAME"
	TypeMX    Type = "MX"
	TypeNS    Type = "NS"
	TypeSOA   Type = "SOA"
	TypeSRV   Type = "SRV"
	TypeTXT   Type = "TXT"
)

// Types are the types a customer may set, in the order they sort.
var Types = []Type{TypeA, TypeAAAA, TypeCAA, TypeCNAME, TypeMX, TypeNS, TypeSRV, TypeTXT}

// Limits of an RRset and a zone (docs/api.md, Domains; docs/SECURITY.md).
const (
	MinTTL             = 60
	MaxTTL             = 86400
	MaxRecords         = 100  // records an RRset
	MaxRRsets          = 5000 // RRsets a zone, not counting SOA and the apex NS
	MaxValueBytes      = 4096 // one record's value, as sent
	MaxCommentBytes    = 255  // one record's comment
	MaxZoneFileBytes   = 256 << 10
	MaxZoneFileRecords = 65536 // records a zone file may produce ($GENERATE included)
	MaxLineErrors      = 100   // line errors a zone file reports, then one "and more"
)

// examples are a valid value of each type, as a refusal shows them.
var examples = map[Type]string{
	TypeA:     "192.0.2.1",
	TypeAAAA:  "2001:db8::1",
	TypeCAA:   `0 issue "letsencrypt.org"`,
	TypeCNAME: "host.example.net.",
	TypeMX:    "10 mail",
	TypeNS:    "ns1.example.net.",
	TypeSRV:   "10 5 5060 sip",
	TypeTXT:   `"v=spf1 -all"`,
}

// ParseType returns the Type of s (any case). Errors, on "type": SOA, and NS at the apex
// (apex true), are the operator's (validation.dns_type_operator); any other type but
// Types is not offered (validation.dns_type_unsupported).
func ParseType(s string, apex bool) (Type, error) {
	t, msg := parseType(s, apex)
	if msg != nil {
		return "", invalid("type", *msg)
	}
	return t, nil
}

func parseType(s string, apex bool) (Type, *hosting.Msg) {
	t := Type(strings.ToUpper(strings.TrimSpace(s)))
	switch {
	case t == TypeSOA, t == TypeNS && apex:
		return "", msgp("validation.dns_type_operator", "type", string(t))
	case !isType(t):
		return "", msgp("validation.dns_type_unsupported", "type", s, "types", TypeList())
	}
	return t, nil
}

func isType(t Type) bool {
	for _, x := range Types {
		if x == t {
			return true
		}
	}
	return false
}

// TypeList names the Types, comma-separated, as a refusal lists them.
func TypeList() string {
	s := make([]string, len(Types))
	for i, t := range Types {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// CheckTTL refuses, on "ttl", a TTL that is neither nil (the zone's TTL) nor within
// 60–86400 seconds (validation.dns_ttl).
func CheckTTL(ttl *int) error {
	if ttl != nil && (*ttl < MinTTL || *ttl > MaxTTL) {
		return invalid("ttl", hosting.M("validation.dns_ttl", "min", MinTTL, "max", MaxTTL))
	}
	return nil
}

// Record is one record of an RRset: its value, RDATA in zone-file presentation form,
// and a comment that is the customer's own.
type Record struct {
	Value   string
	Comment string
}

// RRset is the unit of change of a zone: every record of one name and one type.
type RRset struct {
	Name    string // relative to the zone, "@" the apex
	Type    Type
	TTL     *int // nil: the zone's TTL
	Records []Record
}

// CanonicalRRset checks one RRset of zone (a canonical zone name) as a PUT sends it and
// returns it canonical: its name relative (OwnerName), its type upper case, and each
// value as the zone file writes it (CanonicalValue). Every error is reported at once,
// each on its field: "name", "type", "ttl", and "records" for the records, each
// message naming the record by its index (from 1) and value. A set holds 1 to 100
// records (validation.dns_records_empty, dns_records_many). A record whose canonical
// value repeats an earlier one's is refused (validation.dns_record_duplicate) rather
// than collapsed, so that what a client sends is what it reads back, record for
// record. A record's messages are its value's (CanonicalValue) as
// validation.dns_record_* instead of dns_value_*, with its index and value added.
func CanonicalRRset(zone string, in RRset) (RRset, error) {
	var v hosting.Validation
	out := RRset{TTL: in.TTL}
	name, msg := ownerName(zone, in.Name)
	if msg != nil {
		add(&v, "name", *msg)
	}
	out.Name = name
	t, msg := parseType(string(in.Type), name == Apex)
	if msg != nil {
		add(&v, "type", *msg)
	}
	out.Type = t
	if name == Apex && t == TypeCNAME {
		v.Add("name", "validation.dns_cname_apex")
	}
	if in.TTL != nil && (*in.TTL < MinTTL || *in.TTL > MaxTTL) {
		v.Add("ttl", "validation.dns_ttl", "min", MinTTL, "max", MaxTTL)
	}
	switch {
	case len(in.Records) == 0:
		v.Add("records", "validation.dns_records_empty")
	case len(in.Records) > MaxRecords:
		v.Add("records", "validation.dns_records_many", "max", MaxRecords, "count", len(in.Records))
	}
	if !v.Empty() && (v.Has("name") || v.Has("type") || v.Has("records")) {
		return RRset{}, v.Err("name", "type", "ttl", "records")
	}
	seen := map[string]int{}
	for i, r := range in.Records {
		val, msg := canonicalValue(zone, name, t, r.Value)
		comment := canonicalComment(r.Comment)
		if msg == nil {
			msg = checkComment(comment)
		}
		if msg == nil {
			if first, ok := seen[val]; ok {
				msg = msgp("validation.dns_record_duplicate", "first", first)
			}
		}
		if msg != nil {
			// The value's message, as the record's: naming it by place and value.
			msg.ID = strings.Replace(msg.ID, "validation.dns_value_", "validation.dns_record_", 1)
			msg.Args["index"], msg.Args["value"] = i+1, clip(r.Value)
			add(&v, "records", *msg)
			continue
		}
		seen[val] = i + 1
		out.Records = append(out.Records, Record{Value: val, Comment: comment})
	}
	if err := v.Err("name", "type", "ttl", "records"); err != nil {
		return RRset{}, err
	}
	return out, nil
}

// CanonicalValue returns the canonical form of one value of type t at name (a
// canonical relative name) in zone: the RDATA as github.com/miekg/dns writes it, with
// names absolute, in lower case, with a trailing dot (mail → mail.example.com.),
// Unicode labels as A-labels (mail.bücher.de. → mail.xn--bcher-kva.de.), TXT
// as quoted strings of at most 255 bytes each (a longer string is split), CAA's tag in
// lower case. Errors, on "records", naming no record (CanonicalRRset's do): a value that is empty, longer than 4096 bytes in canonical form (8192 as sent)
// or holds a line break or another
// control character (validation.dns_value_empty, dns_value_length,
// dns_value_control); one that is not of the type's syntax (dns_value_syntax, with
// an example of the type); an A that is not IPv4 or an AAAA that is not IPv6
// (dns_value_syntax); a name in it that is not a host name (dns_value_host).
func CanonicalValue(zone, name string, t Type, value string) (string, error) {
	v, msg := canonicalValue(zone, name, t, value)
	if msg != nil {
		return "", invalid("records", *msg)
	}
	return v, nil
}

func canonicalValue(zone, name string, t Type, value string) (string, *hosting.Msg) {
	value = strings.TrimSpace(value)
	switch {
	case value == "":
		return "", msgp("validation.dns_value_empty")
	case len(value) > 2*MaxValueBytes:
		return "", msgp("validation.dns_value_length", "max", MaxValueBytes)
	}
	for _, c := range []byte(value) {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return "", msgp("validation.dns_value_control")
		}
	}
	bad := msgp("validation.dns_value_syntax", "type", string(t), "example", examples[t])
	// One line of a zone file whose $ORIGIN is the zone: the value cannot reach a
	// second line (no line breaks), so it is one record or none.
	line := fmt.Sprintf("%s 3600 IN %s %s\n", AbsoluteName(zone, name), t, value)
	zp := dns.NewZoneParser(strings.NewReader(line), zone+".", "")
	rr, ok := zp.Next()
	if !ok || zp.Err() != nil {
		return "", bad
	}
	if _, more := zp.Next(); more || zp.Err() != nil {
		return "", bad
	}
	if Type(dns.TypeToString[rr.Header().Rrtype]) != t {
		return "", bad
	}
	v, msg := canonicalRR(rr)
	if msg == nil && len(v) > MaxValueBytes {
		return "", msgp("validation.dns_value_length", "max", MaxValueBytes)
	}
	return v, msg
}

// canonicalRR checks what the parser accepts but the rules do not, lower-cases the
// names in rr, and returns its RDATA as text.
func canonicalRR(rr dns.RR) (string, *hosting.Msg) {
	t := Type(dns.TypeToString[rr.Header().Rrtype])
	bad := msgp("validation.dns_value_syntax", "type", string(t), "example", examples[t])
	// strict: a name a mail server, a service or a delegation points to is a host
	// name of RFC 1123 (letters, digits, dashes inside a label), as resolvers and
	// PowerDNS want it; a CNAME may point to any name (_dmarc.example.net.).
	host := func(n *string, root, strict bool) *hosting.Msg {
		*n = dns.CanonicalName(*n)
		if *n == "." && root {
			return nil
		}
		if !isASCII(*n) { // a Unicode name, as the parser keeps it: its A-labels
			if a, msg := ownerLabels(strings.TrimSuffix(*n, ".")); msg == nil {
				*n = a + "."
			}
		}
		if !isHostName(*n, strict) {
			return msgp("validation.dns_value_host", "name", *n)
		}
		return nil
	}
	var msg *hosting.Msg
	switch r := rr.(type) {
	case *dns.A:
		// The parser took an IPv4 address (no ':'); it stays one.
		if r.A.To4() == nil {
			return "", bad
		}
	case *dns.AAAA:
		if _, ok := netip.AddrFromSlice(r.AAAA); !ok || len(r.AAAA) != 16 {
			return "", bad
		}
	case *dns.CNAME:
		msg = host(&r.Target, false, false)
	case *dns.NS:
		msg = host(&r.Ns, false, true)
	case *dns.MX:
		msg = host(&r.Mx, true, true) // "0 ." is a null MX (RFC 7505)
	case *dns.SRV:
		msg = host(&r.Target, true, true) // "." says there is no such service (RFC 2782)
	case *dns.CAA:
		r.Tag = strings.ToLower(r.Tag)
		if r.Tag == "" || !isAlnum(r.Tag) {
			return "", bad
		}
	case *dns.TXT:
		if len(r.Txt) == 0 { // a value of only a comment
			return "", bad
		}
	default:
		return "", bad
	}
	if msg != nil {
		return "", msg
	}
	return strings.TrimPrefix(rr.String(), rr.Header().String()), nil
}

// isHostName reports whether an absolute lower-case name (trailing dot) is one a
// record may point to: labels of letters, digits, dashes and underscores (a CNAME to
// _dmarc.example.net. is common), 1–63 bytes, at most 253 in all. strict is a host
// name of RFC 1123 (no underscore, no dash first or last in a label): what an MX, an
// SRV or an NS points to.
func isHostName(n string, strict bool) bool {
	n = strings.TrimSuffix(n, ".")
	if n == "" || len(n) > MaxNameBytes {
		return false
	}
	for _, l := range strings.Split(n, ".") {
		if l == "" || len(l) > MaxLabelBytes || strict && (l[0] == '-' || l[len(l)-1] == '-') {
			return false
		}
		for _, c := range []byte(l) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' && !strict) {
				return false
			}
		}
	}
	return true
}

func isAlnum(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// checkComment refuses a comment over 255 bytes or with a control character: it is
// written after the record in a zone file, where a line break would end it.
func checkComment(c string) *hosting.Msg {
	if len(c) > MaxCommentBytes {
		return msgp("validation.dns_value_comment", "max", MaxCommentBytes)
	}
	for _, r := range c {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' {
			return msgp("validation.dns_value_comment", "max", MaxCommentBytes)
		}
	}
	return nil
}

// clip shortens a value a message quotes to 100 bytes, so that a 4 KiB value does not
// come back whole in every error.
func clip(s string) string {
	if len(s) <= 100 {
		return strings.ToValidUTF8(s, "?")
	}
	return strings.ToValidUTF8(s[:100], "") + "…"
}

func add(v *hosting.Validation, field string, m hosting.Msg) { v.Add(field, m.ID, kvOf(m)...) }

// CheckZone applies the rules across the canonical RRsets of a zone (docs/api.md,
// Domains): at most 5,000 RRsets (validation.dns_rrsets_many, on "rrsets"); a CNAME
// alone at its name (validation.dns_cname_alone, on "name"); no CNAME at the apex
// (validation.dns_cname_apex, on "name"). The API calls it with the zone's RRsets as
// they would be after a change.
func CheckZone(sets []RRset) error {
	var v hosting.Validation
	for _, p := range zoneProblems(sets) {
		add(&v, p.field, p.msg)
	}
	return v.Err("name", "rrsets")
}

type zoneProblem struct {
	set   int // index in sets, -1 for the zone
	field string
	msg   hosting.Msg
}

func zoneProblems(sets []RRset) []zoneProblem {
	var ps []zoneProblem
	if len(sets) > MaxRRsets {
		ps = append(ps, zoneProblem{-1, "rrsets", hosting.M("validation.dns_rrsets_many", "max", MaxRRsets, "count", len(sets))})
	}
	types := map[string][]Type{}
	for _, s := range sets {
		types[s.Name] = append(types[s.Name], s.Type)
	}
	for i, s := range sets {
		switch {
		case s.Type == TypeCNAME && s.Name == Apex:
			ps = append(ps, zoneProblem{i, "name", hosting.M("validation.dns_cname_apex")})
		case s.Type == TypeCNAME && len(types[s.Name]) > 1:
			var others []string
			for _, t := range types[s.Name] {
				if t != TypeCNAME {
					others = append(others, string(t))
				}
			}
			ps = append(ps, zoneProblem{i, "name", hosting.M("validation.dns_cname_alone", "name", s.Name, "types", strings.Join(others, ", "))})
		}
	}
	return ps
}
