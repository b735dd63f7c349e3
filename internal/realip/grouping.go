package realip

import (
	"fmt"
	"net/netip"
)

// The IPv6 prefix lengths a Grouping takes, and the one it has by default.
const (
	MinIPv6Bits     = 32
	MaxIPv6Bits     = 128
	DefaultIPv6Bits = 64
)

// Grouping says which client addresses count as one client for the per-address limits
// (docs/SECURITY.md, API2): an IPv4 address alone, an IPv6 address together with every
// address of its network of IPv6Bits. Anyone with IPv6 holds at least a /64 (a
// provider hands out no less, and SLAAC needs it), and picks any address in it at
// will: counted alone, each would have a budget of its own, and the limit none at all.
// The zero Grouping counts by /64.
type Grouping struct {
	v6bits int
}

// NewGrouping is the Grouping of IPv6 networks of v6bits (serve --ipv6-limit-prefix):
// MinIPv6Bits to MaxIPv6Bits, where 128 counts each IPv6 address alone.
func NewGrouping(v6bits int) (Grouping, error) {
	if v6bits < MinIPv6Bits || v6bits > MaxIPv6Bits {
		return Grouping{}, fmt.Errorf("must be a prefix length from %d to %d (%d, the default: a /%d is one client; %d: each address alone)",
			MinIPv6Bits, MaxIPv6Bits, DefaultIPv6Bits, DefaultIPv6Bits, MaxIPv6Bits)
	}
	return Grouping{v6bits: v6bits}, nil
}

// IPv6Bits is the length of the IPv6 networks counted as one client.
func (g Grouping) IPv6Bits() int {
	if g.v6bits == 0 {
		return DefaultIPv6Bits
	}
	return g.v6bits
}

// Key is the key a per-address limit counts the client address host under (an
// address without port, as Proxies.Client gives it): an IPv4 address itself
// (198.51.100.7), also when written as IPv4-mapped IPv6 (::ffff:198.51.100.7); an
// IPv6 address its network (2001:db8:1:2::/64), its zone dropped. Anything else,
// which no connection has, is its own key.
//
// Every per-address limit takes its key from here, and a shared store keeps it as
// it is: the processes of a deployment count alike when their Groupings are alike.
func (g Grouping) Key(host string) string {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.WithZone("").Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(g.IPv6Bits()) // 32..128 bits of a 128-bit address: no error
	return p.String()
}
