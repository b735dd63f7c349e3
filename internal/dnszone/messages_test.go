package dnszone

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/i18n"
)

// TestMessagesInCatalog: every message id the package names is in the catalogs (a
// value's dns_value_* as a record's dns_record_* too), and every message its refusals
// carry renders whole in en, de and fr with the arguments it comes with.
func TestMessagesInCatalog(t *testing.T) {
	t.Parallel()
	c, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	ids := c.IDs()
	files, _ := filepath.Glob("*.go")
	re := regexp.MustCompile(`"(validation\.dns_[a-z_]+[a-z])"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			want := []string{m[1]}
			if v, ok := strings.CutPrefix(m[1], "validation.dns_value_"); ok {
				want = append(want, "validation.dns_record_"+v)
			}
			for _, id := range want {
				if !slices.Contains(ids, id) {
					t.Errorf("%s: %s is not in the catalogs", f, id)
				}
			}
		}
	}

	const zone = "example.com"
	var errs []error
	for _, n := range []string{"", "a..com", label(64) + ".com", nameOf(254), "xn--zz.com", "-a.com", "1.2.3.4", "co.uk"} {
		_, err := ZoneName(n)
		errs = append(errs, err)
	}
	for _, n := range []string{"a.example.org.", "a b", "a.*"} {
		_, err := OwnerName(zone, n)
		errs = append(errs, err)
	}
	for _, s := range []RRset{
		{Name: "@", Type: "SOA", Records: []Record{{Value: "x"}}},
		{Name: "a", Type: "PTR", TTL: ptr(1)},
		{Name: "a", Type: TypeA, Records: make([]Record, 101)},
		{Name: "a", Type: TypeMX, Records: []Record{{Value: ""}, {Value: strings.Repeat("x", 9000)}, {Value: "1\x00"},
			{Value: "x"}, {Value: `10 a\032b.`}, {Value: "10 a", Comment: "\x01"}, {Value: "10 b"}, {Value: "10 b"}}},
	} {
		_, err := CanonicalRRset(zone, s)
		errs = append(errs, err)
	}
	for _, v := range []string{"", "x", strings.Repeat("x", 9000), "\x00"} {
		_, err := CanonicalValue(zone, "@", TypeA, v)
		errs = append(errs, err)
	}
	_, err = CanonicalValue(zone, "a", TypeCNAME, `a\032b.`)
	errs = append(errs, err)
	errs = append(errs, CheckZone(append(make([]RRset, MaxRRsets), RRset{Name: "@", Type: TypeCNAME},
		RRset{Name: "a", Type: TypeCNAME}, RRset{Name: "a", Type: TypeA})))
	for _, text := range []string{
		"a A x\na CH A 192.0.2.1\na 300 A 192.0.2.1\na 600 A 192.0.2.2\na 300 A 192.0.2.1\nb A 192.0.2.9 ; " + label(300) + "\n",
		strings.Repeat(";", MaxZoneFileBytes+1), "$GENERATE 1-65535 h$ A 192.0.2.1\n$GENERATE 1-2 g$ A 192.0.2.1\n",
		strings.Repeat("x\n", 101),
	} {
		_, err := ParseZoneFile(zone, 3600, text)
		errs = append(errs, err)
	}
	seen := map[string]bool{}
	for _, err := range errs {
		var e *hosting.Error
		if !errors.As(err, &e) {
			t.Fatalf("err = %v", err)
		}
		for f, msgs := range e.Fields {
			for _, m := range msgs {
				seen[m.ID] = true
				for _, lang := range c.Languages() {
					s := c.T(lang, m.ID, m.Args)
					if s == m.ID || strings.Contains(s, "<no value>") || strings.Contains(s, "{{") {
						t.Errorf("%s %s (%s) %v: %q", lang, m.ID, f, m.Args, s)
					}
				}
			}
		}
	}
	for _, id := range ids {
		if strings.HasPrefix(id, "validation.dns_") && !seen[id] {
			t.Errorf("%s is never produced here", id)
		}
	}
}
