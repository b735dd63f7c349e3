package webhook

import (
	"fmt"
	"net/netip"
)

// refusedRanges are the networks no delivery goes to (docs/SECURITY.md, API7): the
// host's own, the provider's private networks and the link-local one where cloud
// metadata lives (169.254.169.254). IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) are
// checked as the IPv4 address they reach.
var refusedRanges = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("100.64.0.0/10"), "cgnat"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
}

// nat64 is the well-known NAT64 prefix (RFC 6052): where a NAT64 gateway serves it,
// 64:ff9b::a00:1 reaches 10.0.0.1, so its embedded IPv4 address is checked.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Refused says why a delivery may not go to addr ("" when it may): "loopback",
// "private", "unique-local", "link-local", "cgnat", "multicast", "unspecified",
// "broadcast", or "own pool" when it is in one of own (the networks Berth hands
// its servers' addresses from). The zone of an address is ignored.
func Refused(addr netip.Addr, own []netip.Prefix) string {
	addr = addr.WithZone("").Unmap()
	if nat64.Contains(addr) {
		b := addr.As16()
		addr = netip.AddrFrom4([4]byte(b[12:]))
	}
	for _, r := range refusedRanges {
		if r.prefix.Contains(addr) {
			return r.reason
		}
	}
	for _, p := range own {
		if p.Contains(addr) {
			return "own pool"
		}
	}
	return ""
}

// AddressError is a delivery refused for the address its host has.
type AddressError struct {
	Addr   netip.Addr
	Reason string // as Refused gives it
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("address %s refused: %s", e.Addr, e.Reason)
}

// vet is nil when a delivery may go to addr, else an *AddressError.
func vet(addr netip.Addr, own []netip.Prefix) error {
	if r := Refused(addr, own); r != "" {
		return &AddressError{Addr: addr, Reason: r}
	}
	return nil
}
