package realip

import "testing"

func TestGroupingKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, host string
		bits       int // 0: the zero Grouping
		want       string
	}{
		{"ipv4", "198.51.100.7", 0, "198.51.100.7"},
		{"ipv4 stays alone at /32", "198.51.100.7", 32, "198.51.100.7"},
		{"ipv4 neighbour", "198.51.100.8", 0, "198.51.100.8"},
		{"ipv6 default /64", "2001:db8:1:2::c8", 0, "2001:db8:1:2::/64"},
		{"ipv6 /64", "2001:db8:1:2:aaaa:bbbb:cccc:dddd", 64, "2001:db8:1:2::/64"},
		{"ipv6 next /64", "2001:db8:1:3::1", 64, "2001:db8:1:3::/64"},
		{"ipv6 /56", "2001:db8:1:2ff::1", 56, "2001:db8:1:200::/56"},
		{"ipv6 /48", "2001:db8:1:ffff::1", 48, "2001:db8:1::/48"},
		{"ipv6 /32", "2001:db8:ffff::1", 32, "2001:db8::/32"},
		{"ipv6 /128", "2001:db8:1:2::c8", 128, "2001:db8:1:2::c8/128"},
		{"ipv6 upper case", "2001:DB8:1:2::C8", 64, "2001:db8:1:2::/64"},
		{"loopback", "::1", 0, "::/64"},
		{"mapped", "::ffff:198.51.100.7", 0, "198.51.100.7"},
		{"mapped at /128", "::ffff:198.51.100.7", 128, "198.51.100.7"},
		{"zone", "fe80::1%eth0", 0, "fe80::/64"},
		{"zone at /128", "fe80::1%eth0", 128, "fe80::1/128"},
		{"mapped with zone", "::ffff:198.51.100.7%eth0", 0, "198.51.100.7"},
		{"empty", "", 0, ""},
		{"not an address", "pipe", 0, "pipe"},
		{"with port", "198.51.100.7:80", 0, "198.51.100.7:80"},
		{"a network", "2001:db8::/64", 0, "2001:db8::/64"},
		{"bracketed", "[2001:db8::1]", 0, "[2001:db8::1]"},
	}
	for _, c := range cases {
		g := Grouping{}
		if c.bits != 0 {
			var err error
			if g, err = NewGrouping(c.bits); err != nil {
				t.Fatalf("%s: NewGrouping(%d): %v", c.name, c.bits, err)
			}
		}
		if got := g.Key(c.host); got != c.want {
			t.Errorf("%s: /%d Key(%q) = %q, want %q", c.name, g.IPv6Bits(), c.host, got, c.want)
		}
	}
}

func TestNewGrouping(t *testing.T) {
	t.Parallel()
	if got := (Grouping{}).IPv6Bits(); got != 64 {
		t.Errorf("zero Grouping counts by /%d, want /64", got)
	}
	for _, bits := range []int{32, 48, 56, 64, 128} {
		g, err := NewGrouping(bits)
		if err != nil || g.IPv6Bits() != bits {
			t.Errorf("NewGrouping(%d) = /%d, %v", bits, g.IPv6Bits(), err)
		}
	}
	for _, bits := range []int{-64, 0, 1, 31, 129, 200} {
		if _, err := NewGrouping(bits); err == nil {
			t.Errorf("NewGrouping(%d): no error", bits)
		}
	}
}
