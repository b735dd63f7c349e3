package embedded

import (
	"fmt"
	"strings"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/nameserver"
)

// zone is a nameserver.Zone built into the dns.RR sets the answers are made of. It
// is read-only once built: answers share its records, never change them.
type zone struct {
	origin string // FQDN, lower case
	serial uint32
	// partial: built from a nameserver.Zone.Partial, for one query; never transferred.
	partial bool
	soa     dns.RR // the apex SOA, answered and transferred
	negSOA  dns.RR // the SOA of a negative answer, its TTL min(TTL, minimum) (RFC 2308 §5)
	// nodes holds every owner name (FQDN, lower case) with its RRsets by type.
	nodes map[string]map[uint16][]dns.RR
	// exists holds every owner name and every empty non-terminal between an owner
	// and the apex.
	exists map[string]bool
	// cuts holds the names below the apex with an NS RRset: delegations.
	cuts map[string]bool
	// all is the zone in transfer order: SOA, apex NS, then the rest.
	all []dns.RR
}

// build turns z into a zone. A value that does not parse is an error naming it;
// dnszone writes only values that parse, so it means the zone did not come from it.
func build(z nameserver.Zone) (*zone, error) {
	if z.Name == "" || strings.ToLower(z.Name) != z.Name || len(z.Nameservers) == 0 {
		return nil, fmt.Errorf("nameserver: zone %q: a lower-case name and a nameserver are required", z.Name)
	}
	origin := dns.Fqdn(z.Name)
	b := &zone{origin: origin, serial: z.Serial, partial: z.Partial, nodes: map[string]map[uint16][]dns.RR{},
		exists: map[string]bool{origin: true}, cuts: map[string]bool{}}
	b.soa = &dns.SOA{Hdr: hdr(origin, dns.TypeSOA, z.TTL), Ns: dns.Fqdn(z.Nameservers[0]),
		Mbox: "hostmaster." + origin, Serial: z.Serial, Refresh: dnszone.SOARefresh,
		Retry: dnszone.SOARetry, Expire: dnszone.SOAExpire, Minttl: dnszone.SOANegative}
	b.negSOA = dns.Copy(b.soa)
	b.negSOA.Header().Ttl = min(uint32(max(z.TTL, 0)), dnszone.SOANegative)
	b.add(b.soa)
	for _, ns := range z.Nameservers {
		b.add(&dns.NS{Hdr: hdr(origin, dns.TypeNS, z.TTL), Ns: dns.Fqdn(strings.ToLower(ns))})
	}
	for _, set := range z.RRsets {
		if err := b.addSet(z, set); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (b *zone) addSet(z nameserver.Zone, set nameserver.RRset) error {
	owner := dns.Fqdn(strings.ToLower(set.Name))
	if !dns.IsSubDomain(b.origin, owner) {
		return fmt.Errorf("nameserver: zone %s: RRset %s is outside the zone", z.Name, set.Name)
	}
	ttl := set.TTL
	if ttl <= 0 {
		ttl = z.TTL
	}
	for _, v := range set.Values {
		rr, err := dns.NewRR(fmt.Sprintf("%s %d IN %s %s", owner, ttl, set.Type, v))
		if err != nil || rr == nil {
			return fmt.Errorf("nameserver: zone %s: %s %s %q: %v", z.Name, set.Name, set.Type, v, err)
		}
		rr.Header().Name = owner
		b.add(rr)
	}
	if set.Type == "NS" && owner != b.origin {
		b.cuts[owner] = true
	}
	return nil
}

// add puts rr in its node, marks its owner and the names between it and the apex as
// existing, and appends it to the transfer.
func (b *zone) add(rr dns.RR) {
	owner := rr.Header().Name
	n := b.nodes[owner]
	if n == nil {
		n = map[uint16][]dns.RR{}
		b.nodes[owner] = n
	}
	t := rr.Header().Rrtype
	n[t] = append(n[t], rr)
	for name := owner; name != b.origin && !b.exists[name]; name = parent(name) {
		b.exists[name] = true
	}
	b.all = append(b.all, rr)
}

func hdr(name string, t uint16, ttl int) dns.RR_Header {
	return dns.RR_Header{Name: name, Rrtype: t, Class: dns.ClassINET, Ttl: uint32(max(ttl, 0))}
}

// parent is name without its first label ("." stays ".").
func parent(name string) string {
	if off, end := dns.NextLabel(name, 0); !end {
		return name[off:]
	}
	return "."
}
