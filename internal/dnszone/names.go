package dnszone

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"

	"github.com/berthhq/berth/internal/hosting"
)

// Limits of names (RFC 1035 §2.3.4, in presentation form without the trailing dot).
const (
	MaxLabelBytes = 63
	MaxNameBytes  = 253
)

// Apex is the relative name of a zone's apex.
const Apex = "@"

// ZoneName returns the canonical form of a zone name: lower case, no trailing dot,
// Unicode labels as IDNA A-labels (bücher.example → xn--bcher-kva.example). It
// refuses, as a validation error on "name":
//   - an empty name, an empty label (a.., .a), a label over 63 bytes or a name over
//     253 (validation.dns_name_empty, dns_label_length, dns_name_length);
//   - a label that is not a host name's: letters, digits and dashes, no dash first or
//     last, and no all-digit top-level label (validation.dns_zone_chars,
//     dns_zone_numeric_tld), or a Unicode label IDNA refuses (validation.dns_name_idna);
//   - a name of one label, or a public suffix (validation.dns_zone_public_suffix).
//
// Public suffixes are those of both sections of the Public Suffix List: the ICANN
// section (com, co.uk) and the private one (github.io, blogspot.com). Berth refuses a
// name that is held, or a parent or a child of a held one (Related): whoever added
// github.io would block every customer's own zone under it, and only the suffix's
// owner could delegate it anyway. A name under a suffix (example.com, me.github.io) is
// accepted. A top-level domain the list does not know counts as a suffix too.
func ZoneName(s string) (string, error) {
	name, msg := zoneName(s)
	if msg != nil {
		return "", invalid("name", *msg)
	}
	return name, nil
}

func zoneName(s string) (string, *hosting.Msg) {
	s = strings.TrimSuffix(strings.TrimSpace(s), ".")
	if s == "" {
		return "", msgp("validation.dns_name_empty")
	}
	labels := strings.Split(s, ".")
	for i, l := range labels {
		a, msg := labelASCII(l)
		if msg != nil {
			return "", msg
		}
		if !isLDH(a) {
			return "", msgp("validation.dns_zone_chars", "label", a)
		}
		labels[i] = a
	}
	name := strings.Join(labels, ".")
	if len(name) > MaxNameBytes {
		return "", msgp("validation.dns_name_length", "max", MaxNameBytes)
	}
	if len(labels) < 2 {
		return "", msgp("validation.dns_zone_public_suffix", "suffix", name)
	}
	if allDigits(labels[len(labels)-1]) {
		return "", msgp("validation.dns_zone_numeric_tld")
	}
	if suffix, _ := publicsuffix.PublicSuffix(name); suffix == name {
		return "", msgp("validation.dns_zone_public_suffix", "suffix", name)
	}
	return name, nil
}

// labelASCII returns a label in lower case, a Unicode label as its A-label; it refuses
// an empty label, one over 63 bytes, and one IDNA refuses (an A-label, xn--, must
// decode too).
func labelASCII(l string) (string, *hosting.Msg) {
	if l == "" {
		return "", msgp("validation.dns_label_empty")
	}
	a := strings.ToLower(l)
	if !isASCII(a) || strings.HasPrefix(a, "xn--") {
		if !utf8.ValidString(l) {
			return "", msgp("validation.dns_name_idna", "label", strings.ToValidUTF8(l, "?"))
		}
		var err error
		a, err = idna.Lookup.ToASCII(l)
		if err != nil || a == "" || strings.Contains(a, ".") {
			return "", msgp("validation.dns_name_idna", "label", l)
		}
		if _, err := idna.Lookup.ToUnicode(a); err != nil {
			return "", msgp("validation.dns_name_idna", "label", l)
		}
	}
	if len(a) > MaxLabelBytes {
		return "", msgp("validation.dns_label_length", "label", a, "max", MaxLabelBytes)
	}
	return a, nil
}

// IsSubdomain reports whether name is zone or a name under it (both canonical).
func IsSubdomain(name, zone string) bool {
	return name == zone || strings.HasSuffix(name, "."+zone)
}

// Related reports whether two canonical zone names are the same, or one is a parent
// of the other: the names Berth refuses to add beside a held zone (docs/api.md,
// Domains). example.com and www.example.com are related; example.com and
// myexample.com are not.
func Related(a, b string) bool { return IsSubdomain(a, b) || IsSubdomain(b, a) }

// OwnerName returns the canonical relative form of an RRset's name in zone (a
// canonical zone name): "@" for the apex, else the labels under the apex in lower
// case with Unicode labels as A-labels ("www", "_dmarc", "*", "*.sub"). It takes "@",
// "" (the apex too), a relative name ("www", "a.b"), or an absolute name with a
// trailing dot that lies within the zone ("www.example.com.", "example.com."). A
// name without a trailing dot is relative, as in a zone file: "www.example.com" in
// zone example.com is www.example.com.example.com.
//
// Errors, on "name": a name outside the zone (validation.dns_name_outside); an empty
// label, a label over 63 bytes, a whole name over 253 (dns_label_empty,
// dns_label_length, dns_name_length); a label of other than letters, digits, dashes and
// underscores (dns_owner_chars), "*" anywhere but as the whole first label
// (dns_owner_wildcard).
func OwnerName(zone, name string) (string, error) {
	rel, msg := ownerName(zone, name)
	if msg != nil {
		return "", invalid("name", *msg)
	}
	return rel, nil
}

func ownerName(zone, name string) (string, *hosting.Msg) {
	name = strings.TrimSpace(name)
	if name == "" || name == Apex {
		return Apex, nil
	}
	var rel string
	if strings.HasSuffix(name, ".") {
		abs, msg := ownerLabels(strings.TrimSuffix(name, "."))
		if msg != nil {
			return "", msg
		}
		switch {
		case abs == zone:
			return Apex, nil
		case strings.HasSuffix(abs, "."+zone):
			rel = strings.TrimSuffix(abs, "."+zone)
		default:
			return "", msgp("validation.dns_name_outside", "name", abs, "zone", zone)
		}
	} else {
		var msg *hosting.Msg
		if rel, msg = ownerLabels(name); msg != nil {
			return "", msg
		}
	}
	for i, l := range strings.Split(rel, ".") {
		if strings.Contains(l, "*") && (i > 0 || l != "*") {
			return "", msgp("validation.dns_owner_wildcard")
		}
	}
	if len(rel)+1+len(zone) > MaxNameBytes {
		return "", msgp("validation.dns_name_length", "max", MaxNameBytes)
	}
	return rel, nil
}

// ownerLabels canonicalises each label of a dotted name: lower case, A-labels, only
// letters, digits, '-', '_' and '*'.
func ownerLabels(s string) (string, *hosting.Msg) {
	if s == "" {
		return "", msgp("validation.dns_label_empty")
	}
	labels := strings.Split(s, ".")
	for i, l := range labels {
		a, msg := labelASCII(l)
		if msg != nil {
			return "", msg
		}
		for _, c := range []byte(a) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '*') {
				return "", msgp("validation.dns_owner_chars", "label", a)
			}
		}
		labels[i] = a
	}
	name := strings.Join(labels, ".")
	if len(name) > MaxNameBytes {
		return "", msgp("validation.dns_name_length", "max", MaxNameBytes)
	}
	return name, nil
}

// AbsoluteName returns the absolute form, with a trailing dot, of a canonical relative
// name in zone: "www" → "www.example.com.", "@" → "example.com.".
func AbsoluteName(zone, rel string) string {
	if rel == Apex {
		return zone + "."
	}
	return rel + "." + zone + "."
}

// isLDH reports whether a lower-case ASCII label is a host name's: letters, digits and
// dashes, neither first nor last a dash.
func isLDH(l string) bool {
	if l == "" || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for _, c := range []byte(l) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// msgp is a message whose Args can take more (the record's index and value).
func msgp(id string, kv ...any) *hosting.Msg {
	m := hosting.M(id, kv...)
	if m.Args == nil {
		m.Args = map[string]any{}
	}
	return &m
}

func invalid(field string, m hosting.Msg) error {
	var v hosting.Validation
	v.Add(field, m.ID, kvOf(m)...)
	return v.Err()
}

func kvOf(m hosting.Msg) []any {
	kv := make([]any, 0, 2*len(m.Args))
	for k, v := range m.Args {
		kv = append(kv, k, v)
	}
	return kv
}
