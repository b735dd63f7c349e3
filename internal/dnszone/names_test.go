package dnszone

import (
	"errors"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/hosting"
)

// fieldMsg returns the first message id of field in err, a validation *hosting.Error,
// or "" when err is nil; it fails t on any other error.
func fieldMsg(t *testing.T, err error, field string) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var e *hosting.Error
	if !errors.As(err, &e) || e.Code != hosting.CodeValidationFailed {
		t.Fatalf("err = %v, want a validation error", err)
	}
	msgs := e.Fields[field]
	if len(msgs) == 0 {
		t.Fatalf("err = %v, want an error on %q", err, field)
	}
	return msgs[0].ID
}

// label returns a label of n bytes.
func label(n int) string { return strings.Repeat("a", n) }

// nameOf returns a zone name of exactly n bytes ending in .com, from labels of 63.
func nameOf(n int) string {
	var labels []string
	left := n - len(".com")
	for left > 0 {
		l := min(63, left)
		if left-l == 1 { // a label of 0 bytes cannot be: shorten this one
			l--
		}
		labels = append(labels, label(l))
		left -= l + 1
	}
	return strings.Join(labels, ".") + ".com"
}

func TestZoneName(t *testing.T) {
	t.Parallel()
	if n := len(nameOf(253)); n != 253 {
		t.Fatalf("nameOf(253) is %d bytes", n)
	}
	tests := []struct {
		in, want, msg string
	}{
		{"example.com", "example.com", ""},
		{"Example.COM.", "example.com", ""},
		{"  example.com  ", "example.com", ""},
		{"bücher.example", "xn--bcher-kva.example", ""},
		{"BÜCHER.de", "xn--bcher-kva.de", ""},
		{"xn--bcher-kva.de", "xn--bcher-kva.de", ""},
		{"XN--BCHER-KVA.de", "xn--bcher-kva.de", ""},
		{"例え.jp", "xn--r8jz45g.jp", ""},
		{"a-b.example.com", "a-b.example.com", ""},
		{"me.github.io", "me.github.io", ""},
		{"example.co.uk", "example.co.uk", ""},
		{"3com.com", "3com.com", ""},
		{label(63) + ".com", label(63) + ".com", ""},
		{nameOf(253), nameOf(253), ""},
		{"", "", "validation.dns_name_empty"},
		{".", "", "validation.dns_name_empty"},
		{"  ", "", "validation.dns_name_empty"},
		{label(64) + ".com", "", "validation.dns_label_length"},
		{nameOf(254), "", "validation.dns_name_length"},
		{"a..com", "", "validation.dns_label_empty"},
		{".example.com", "", "validation.dns_label_empty"},
		{"example.com..", "", "validation.dns_label_empty"},
		{"-a.com", "", "validation.dns_zone_chars"},
		{"a-.com", "", "validation.dns_zone_chars"},
		{"a_b.com", "", "validation.dns_zone_chars"},
		{"*.example.com", "", "validation.dns_zone_chars"},
		{"a b.com", "", "validation.dns_zone_chars"},
		{"xn--zz.com", "", "validation.dns_name_idna"},
		{"a\xff.com", "", "validation.dns_name_idna"},
		{"com", "", "validation.dns_zone_public_suffix"},
		{"COM.", "", "validation.dns_zone_public_suffix"},
		{"co.uk", "", "validation.dns_zone_public_suffix"},
		{"github.io", "", "validation.dns_zone_public_suffix"}, // the private section
		{"blogspot.com", "", "validation.dns_zone_public_suffix"},
		{"localhost", "", "validation.dns_zone_public_suffix"},
		{"1.2.3.4", "", "validation.dns_zone_numeric_tld"},
		{"example.123", "", "validation.dns_zone_numeric_tld"},
	}
	for _, tc := range tests {
		got, err := ZoneName(tc.in)
		if msg := fieldMsg(t, err, "name"); msg != tc.msg || got != tc.want {
			t.Errorf("ZoneName(%q) = %q, %q; want %q, %q", tc.in, got, msg, tc.want, tc.msg)
		}
		if err == nil {
			if again, err := ZoneName(got); err != nil || again != got {
				t.Errorf("ZoneName(%q) = %q, %v: not a fixed point", got, again, err)
			}
		}
	}
}

func TestRelated(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want bool
	}{
		{"example.com", "example.com", true},
		{"www.example.com", "example.com", true},
		{"example.com", "a.b.example.com", true},
		{"myexample.com", "example.com", false},
		{"example.com", "example.org", false},
		{"example.com", "com.example", false},
	}
	for _, tc := range tests {
		if got := Related(tc.a, tc.b); got != tc.want {
			t.Errorf("Related(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestOwnerName(t *testing.T) {
	t.Parallel()
	const zone = "example.com"
	// A relative name of n bytes whose absolute form is n+1+len(zone).
	rel := func(n int) string { return nameOf(n + len(".com"))[:n] }
	if got := len(rel(241)) + 1 + len(zone); got != 253 {
		t.Fatalf("rel(241) gives %d", got)
	}
	tests := []struct {
		in, want, msg string
	}{
		{"@", "@", ""},
		{"", "@", ""},
		{"example.com.", "@", ""},
		{"EXAMPLE.com.", "@", ""},
		{"www", "www", ""},
		{"WWW", "www", ""},
		{"www.example.com.", "www", ""},
		{"a.b.example.com.", "a.b", ""},
		{"www.example.com", "www.example.com", ""}, // relative, as in a zone file
		{"_dmarc", "_dmarc", ""},
		{"_sip._tcp", "_sip._tcp", ""},
		{"*", "*", ""},
		{"*.sub", "*.sub", ""},
		{"*.example.com.", "*", ""},
		{"bücher", "xn--bcher-kva", ""},
		{label(63), label(63), ""},
		{rel(241), rel(241), ""},
		{label(64), "", "validation.dns_label_length"},
		{rel(242), "", "validation.dns_name_length"},
		{"www.example.org.", "", "validation.dns_name_outside"},
		{"myexample.com.", "", "validation.dns_name_outside"},
		{"com.", "", "validation.dns_name_outside"},
		{".", "", "validation.dns_label_empty"},
		{"a..b", "", "validation.dns_label_empty"},
		{"a.", "", "validation.dns_name_outside"},
		{"a*", "", "validation.dns_owner_wildcard"},
		{"a.*", "", "validation.dns_owner_wildcard"},
		{"*.*", "", "validation.dns_owner_wildcard"},
		{"a b", "", "validation.dns_owner_chars"},
		{"a/b", "", "validation.dns_owner_chars"},
		{`a\046b`, "", "validation.dns_owner_chars"},
	}
	for _, tc := range tests {
		got, err := OwnerName(zone, tc.in)
		if msg := fieldMsg(t, err, "name"); msg != tc.msg || got != tc.want {
			t.Errorf("OwnerName(%q) = %q, %q; want %q, %q", tc.in, got, msg, tc.want, tc.msg)
		}
		if err == nil {
			abs := AbsoluteName(zone, got)
			if again, err := OwnerName(zone, abs); err != nil || again != got {
				t.Errorf("OwnerName(%q) = %q, %v; want %q", abs, again, err, got)
			}
		}
	}
}

func TestCompareNames(t *testing.T) {
	t.Parallel()
	names := []string{"@", "a", "*.a", "b.a", "c.b.a", "b", "_dmarc", "*"}
	want := []string{"@", "*", "_dmarc", "a", "*.a", "b.a", "c.b.a", "b"}
	got := append([]string(nil), names...)
	sortNames(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("sorted = %v, want %v", got, want)
	}
}

func sortNames(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && CompareNames(s[j-1], s[j]) > 0; j-- {
			s[j-1], s[j] = s[j], s[j-1]
		}
	}
}
