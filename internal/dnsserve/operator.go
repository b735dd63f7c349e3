package dnsserve

import (
	"context"
	"errors"
	"net/netip"
	"strconv"
	"strings"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/store"
)

// The operator's zones (docs/operating.md, DNS) are answered name by name, as
// partial zones (nameserver.Zone.Partial): the default domain holds every live
// server's name, too many to read whole at each change.
const (
	// OperatorTTL is the TTL of the operator's records: a name set through the API
	// reaches resolvers' caches within it.
	OperatorTTL = 300
	// operatorSerial is the SOA serial of the operator's zones: never transferred,
	// they have no versions for a secondary to follow.
	operatorSerial = 1
)

// operatorName reports whether name is under the default domain or in the reverse
// trees, where an operator's zone may be closer than a customer's.
func (s *Source) operatorName(name string) bool {
	return dns.IsSubDomain(s.defaultZone, name) || dns.IsSubDomain("in-addr.arpa.", name) || dns.IsSubDomain("ip6.arpa.", name)
}

// operator answers name when it is the operator's: under the default domain, or in a
// reverse zone holding a live server's address. handled false: a customer's zone may
// hold it.
func (s *Source) operator(ctx context.Context, name string) (z nameserver.Zone, ok, handled bool, err error) {
	if dns.IsSubDomain(s.defaultZone, name) {
		z, err := s.forward(ctx, name)
		return z, err == nil, true, err
	}
	r, isReverse := parseReverse(name)
	if !isReverse {
		return nameserver.Zone{}, false, false, nil
	}
	has, err := s.st.NetHasServer(ctx, r.net)
	if err != nil || !has {
		return nameserver.Zone{}, false, err != nil, err
	}
	z = s.operatorZone(r.zone)
	if r.addr.IsValid() {
		set, err := s.ptr(ctx, name, r.addr)
		if err != nil {
			return nameserver.Zone{}, false, true, err
		}
		z.RRsets = set
	}
	return z, true, true, nil
}

func (s *Source) operatorZone(fqdn string) nameserver.Zone {
	return nameserver.Zone{Name: strings.TrimSuffix(fqdn, "."), Serial: operatorSerial, TTL: OperatorTTL,
		Nameservers: s.o.Nameservers, Partial: true}
}

// forward is the default domain with the records of the server named by the label
// of name just under it: its A and AAAA. A nameserver's name is never a server's.
func (s *Source) forward(ctx context.Context, name string) (nameserver.Zone, error) {
	z := s.operatorZone(s.defaultZone)
	if name == s.defaultZone {
		return z, nil
	}
	labels := dns.SplitDomainName(strings.TrimSuffix(name, s.defaultZone))
	label := labels[len(labels)-1]
	owner := label + "." + s.defaultZone
	if s.nsLabels[owner] {
		return z, nil
	}
	srv, err := s.st.ServerNamed(ctx, label)
	if errors.Is(err, store.ErrNotFound) {
		return z, nil
	}
	if err != nil {
		return nameserver.Zone{}, err
	}
	owner = strings.TrimSuffix(owner, ".")
	if srv.IPv4 != nil && *srv.IPv4 != "" {
		z.RRsets = append(z.RRsets, nameserver.RRset{Name: owner, Type: "A", TTL: OperatorTTL, Values: []string{*srv.IPv4}})
	}
	if srv.IPv6 != nil && *srv.IPv6 != "" {
		z.RRsets = append(z.RRsets, nameserver.RRset{Name: owner, Type: "AAAA", TTL: OperatorTTL, Values: []string{*srv.IPv6}})
	}
	return z, nil
}

// ptr is the PTR RRset of addr, named name: the name set for it, else its server's
// default name; none when no live server holds it.
func (s *Source) ptr(ctx context.Context, name string, addr netip.Addr) ([]nameserver.RRset, error) {
	server, ptr, err := s.st.AddressName(ctx, addr)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if ptr == "" {
		ptr = server + "." + strings.TrimSuffix(s.defaultZone, ".")
	}
	return []nameserver.RRset{{Name: strings.TrimSuffix(name, "."), Type: "PTR", TTL: OperatorTTL,
		Values: []string{dns.Fqdn(ptr)}}}, nil
}

// reverse is a name of the reverse trees: the operator's zone it would be in (an
// IPv4 /24's, an IPv6 /64's), that network, and the address it names, if it names
// one.
type reverse struct {
	zone string // FQDN
	net  netip.Prefix
	addr netip.Addr // invalid: the name is not an address's
}

// parseReverse parses name (an FQDN, lower case) under in-addr.arpa with at least
// three labels of octets, or under ip6.arpa with at least sixteen of nibbles.
func parseReverse(name string) (reverse, bool) {
	if rest, ok := strings.CutSuffix(name, ".in-addr.arpa."); ok {
		return parseV4(dns.SplitDomainName(rest))
	}
	if rest, ok := strings.CutSuffix(name, ".ip6.arpa."); ok {
		return parseV6(dns.SplitDomainName(rest))
	}
	return reverse{}, false
}

func parseV4(labels []string) (reverse, bool) {
	n := len(labels)
	if n < 3 {
		return reverse{}, false
	}
	var b [4]byte
	for i := 0; i < 3; i++ {
		o, ok := octet(labels[n-1-i])
		if !ok {
			return reverse{}, false
		}
		b[i] = o
	}
	r := reverse{zone: strings.Join(labels[n-3:], ".") + ".in-addr.arpa.", net: netip.PrefixFrom(netip.AddrFrom4(b), 24)}
	if n == 4 {
		if o, ok := octet(labels[0]); ok {
			b[3] = o
			r.addr = netip.AddrFrom4(b)
		}
	}
	return r, true
}

// octet is a decimal label of 0 to 255, written without leading zeros.
func octet(l string) (byte, bool) {
	v, err := strconv.Atoi(l)
	if err != nil || v < 0 || v > 255 || strconv.Itoa(v) != l {
		return 0, false
	}
	return byte(v), true
}

func parseV6(labels []string) (reverse, bool) {
	n := len(labels)
	if n < 16 {
		return reverse{}, false
	}
	var b [16]byte
	for i := 0; i < min(n, 32); i++ {
		l := labels[n-1-i]
		v, err := strconv.ParseUint(l, 16, 8)
		if len(l) != 1 || err != nil {
			if i < 16 {
				return reverse{}, false
			}
			n = 0 // not an address's name
			break
		}
		b[i/2] |= byte(v) << (4 * (1 - i%2))
	}
	r := reverse{net: netip.PrefixFrom(netip.AddrFrom16(b), 64).Masked()}
	r.zone = strings.Join(labels[len(labels)-16:], ".") + ".ip6.arpa."
	if n == 32 {
		r.addr = netip.AddrFrom16(b)
	}
	return r, true
}

// ReverseZone is the name of the operator's reverse zone of p, an IPv4 /24 or an
// IPv6 /64, without the trailing dot: "2.0.192.in-addr.arpa".
func ReverseZone(p netip.Prefix) string {
	p = p.Masked()
	if p.Addr().Is4() {
		b := p.Addr().As4()
		return strconv.Itoa(int(b[2])) + "." + strconv.Itoa(int(b[1])) + "." + strconv.Itoa(int(b[0])) + ".in-addr.arpa"
	}
	b := p.Addr().As16()
	labels := make([]string, 0, 16)
	for i := 7; i >= 0; i-- {
		labels = append(labels, strconv.FormatUint(uint64(b[i]&15), 16), strconv.FormatUint(uint64(b[i]>>4), 16))
	}
	return strings.Join(labels, ".") + ".ip6.arpa"
}

// ReverseNet is the network of the operator's reverse zone named zone (ReverseZone's
// inverse); ok is false for a name that is no such zone.
func ReverseNet(zone string) (netip.Prefix, bool) {
	fqdn := lowerFqdn(zone)
	r, ok := parseReverse(fqdn)
	if !ok || r.zone != fqdn {
		return netip.Prefix{}, false
	}
	return r.net, true
}

// ReverseNetOf is the network of the operator's reverse zone that holds ip: its /24,
// or its /64.
func ReverseNetOf(ip netip.Addr) netip.Prefix {
	ip = ip.Unmap()
	if ip.Is4() {
		return netip.PrefixFrom(ip, 24).Masked()
	}
	return netip.PrefixFrom(ip, 64).Masked()
}
