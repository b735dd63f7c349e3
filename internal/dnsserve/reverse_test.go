package dnsserve

import (
	"net/netip"
	"testing"
)

func TestReverseZoneNames(t *testing.T) {
	for _, c := range []struct{ net, zone string }{
		{"192.0.2.0/24", "2.0.192.in-addr.arpa"},
		{"2001:db8:0:1::/64", "1.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa"},
		{"2001:db8:abcd:12::/64", "2.1.0.0.d.c.b.a.8.b.d.0.1.0.0.2.ip6.arpa"},
	} {
		p := netip.MustParsePrefix(c.net)
		if got := ReverseZone(p); got != c.zone {
			t.Errorf("ReverseZone(%s) = %s, want %s", c.net, got, c.zone)
		}
		if got, ok := ReverseNet(c.zone); !ok || got != p {
			t.Errorf("ReverseNet(%s) = %v, %v; want %s", c.zone, got, ok, c.net)
		}
		if got := ReverseNetOf(p.Addr().Next()); got != p {
			t.Errorf("ReverseNetOf(%s) = %s", p.Addr().Next(), got)
		}
	}
	for _, zone := range []string{"10.2.0.192.in-addr.arpa", "0.192.in-addr.arpa", "example.com", "0.1.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa"} {
		if p, ok := ReverseNet(zone); ok {
			t.Errorf("ReverseNet(%s) = %s, want none", zone, p)
		}
	}
}
