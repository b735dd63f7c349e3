package dnszone_test

import (
	"maps"
	"testing"

	"github.com/berthhq/berth/internal/dnszone"
)

func TestOccluded(t *testing.T) {
	t.Parallel()
	set := func(name string, typ dnszone.Type, values ...string) dnszone.RRset {
		s := dnszone.RRset{Name: name, Type: typ}
		for _, v := range values {
			s.Records = append(s.Records, dnszone.Record{Value: v})
		}
		return s
	}
	for _, c := range []struct {
		name string
		sets []dnszone.RRset
		want map[string]string
	}{
		{"no delegation", []dnszone.RRset{set("@", dnszone.TypeNS, "ns1.example.net."), set("www", dnszone.TypeA, "192.0.2.1"),
			set("sub", dnszone.TypeA, "192.0.2.2")}, nil},
		{"data beside and below a delegation", []dnszone.RRset{
			set("sub", dnszone.TypeNS, "ns1.example.net."), set("sub", dnszone.TypeA, "192.0.2.2"), set("sub", dnszone.TypeTXT, `"x"`), set("www.sub", dnszone.TypeAAAA, "2001:db8::1"),
			set("a.b.sub", dnszone.TypeCNAME, "www.example.com."), set("www", dnszone.TypeA, "192.0.2.3"),
			set("xsub", dnszone.TypeA, "192.0.2.4"), set("sub.www", dnszone.TypeA, "192.0.2.5")},
			map[string]string{"sub A": "sub", "sub TXT": "sub", "www.sub AAAA": "sub", "a.b.sub CNAME": "sub"}},
		{"glue is served, other data of its name is not", []dnszone.RRset{
			set("sub", dnszone.TypeNS, "ns1.sub.example.com.", "NS2.SUB.EXAMPLE.COM.", "ns.elsewhere.example."),
			set("ns1.sub", dnszone.TypeA, "192.0.2.53"), set("ns2.sub", dnszone.TypeAAAA, "2001:db8::53"),
			set("ns1.sub", dnszone.TypeTXT, `"x"`), set("ns3.sub", dnszone.TypeA, "192.0.2.54")},
			map[string]string{"ns1.sub TXT": "sub", "ns3.sub A": "sub"}},
		{"nested delegations: the highest", []dnszone.RRset{
			set("sub", dnszone.TypeNS, "ns1.example.net."), set("deep.sub", dnszone.TypeNS, "ns1.example.net."),
			set("x.deep.sub", dnszone.TypeA, "192.0.2.9")},
			map[string]string{"deep.sub NS": "sub", "x.deep.sub A": "sub"}},
		{"the apex's NS delegates nothing", []dnszone.RRset{set("@", dnszone.TypeNS, "ns1.example.net."),
			set("@", dnszone.TypeA, "192.0.2.1")}, nil},
	} {
		got := dnszone.Occluded("example.com", c.sets)
		if !maps.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
