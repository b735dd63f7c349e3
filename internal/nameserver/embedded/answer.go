package embedded

import (
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// maxChain is how many CNAMEs within a zone one answer follows (a loop ends there).
const maxChain = 8

// anyTTL is the TTL of the HINFO that answers ANY (RFC 8482 §4.2 suggests it).
const anyTTL = 3789

// answer fills m's rcode, AA bit and sections for qname/qtype from z, the zone
// enclosing qname (RFC 1034 §4.3.2): a referral below a delegation, the RRset,
// the CNAMEs within the zone followed, a wildcard's records under qname, NODATA or
// NXDOMAIN with the SOA in authority. Only new slices are appended to: z's are
// shared by every answer.
func (z *zone) answer(m *dns.Msg, qname string, qtype uint16) {
	m.Authoritative = true
	name := strings.ToLower(dns.Fqdn(qname))
	for hop := 0; hop < maxChain; hop++ {
		if cut := z.cut(name, qtype); cut != "" {
			if hop == 0 {
				z.referral(m, cut)
			}
			return
		}
		sets, exists := z.lookup(name)
		switch {
		case !exists:
			m.Rcode = dns.RcodeNameError
			m.Ns = append(m.Ns, z.negSOA)
			return
		case len(sets[qtype]) > 0:
			m.Answer = appendAs(m.Answer, sets[qtype], name)
			return
		case qtype == dns.TypeANY && len(sets) > 0:
			m.Answer = append(m.Answer, &dns.HINFO{Hdr: hdr(name, dns.TypeHINFO, anyTTL), Cpu: "RFC8482"})
			return
		case qtype == dns.TypeCNAME || len(sets[dns.TypeCNAME]) == 0:
			m.Ns = append(m.Ns, z.negSOA)
			return
		}
		m.Answer = appendAs(m.Answer, sets[dns.TypeCNAME], name)
		name = strings.ToLower(sets[dns.TypeCNAME][0].(*dns.CNAME).Target)
		if !dns.IsSubDomain(z.origin, name) || answered(m.Answer, name) {
			return // the resolver follows it elsewhere, or a loop
		}
	}
}

// answered reports whether rrs hold records of name.
func answered(rrs []dns.RR, name string) bool {
	return slices.ContainsFunc(rrs, func(rr dns.RR) bool { return rr.Header().Name == name })
}

// appendAs appends set to dst, its records under owner when a wildcard made them.
func appendAs(dst, set []dns.RR, owner string) []dns.RR {
	for _, rr := range set {
		if rr.Header().Name != owner {
			rr = dns.Copy(rr)
			rr.Header().Name = owner
		}
		dst = append(dst, rr)
	}
	return dst
}

// lookup returns the RRsets of name, those of the wildcard that covers it (RFC 4592:
// the closest encloser's "*" child) or none; exists is false for NXDOMAIN. An empty
// non-terminal exists with no RRsets, and blocks the wildcard above it.
func (z *zone) lookup(name string) (sets map[uint16][]dns.RR, exists bool) {
	if sets, ok := z.nodes[name]; ok {
		return sets, true
	}
	if z.exists[name] {
		return nil, true
	}
	encloser := parent(name)
	for !z.exists[encloser] && encloser != z.origin && encloser != "." {
		encloser = parent(encloser)
	}
	sets, ok := z.nodes["*."+encloser]
	return sets, ok
}

// cut returns the delegation name falls under, the highest one below the apex, or
// "". A DS query at the cut itself is the parent's to answer (RFC 4035 §3.1.4.1).
func (z *zone) cut(name string, qtype uint16) string {
	if len(z.cuts) == 0 {
		return ""
	}
	found := ""
	for n := name; n != z.origin && dns.IsSubDomain(z.origin, n); n = parent(n) {
		if z.cuts[n] && (n != name || qtype != dns.TypeDS) {
			found = n
		}
	}
	return found
}

// referral answers with the delegation's NS records in authority, not
// authoritatively, and the addresses this zone holds for their targets as glue.
func (z *zone) referral(m *dns.Msg, cut string) {
	m.Authoritative = false
	ns := z.nodes[cut][dns.TypeNS]
	m.Ns = append(m.Ns, ns...)
	for _, rr := range ns {
		target := strings.ToLower(rr.(*dns.NS).Ns)
		if !dns.IsSubDomain(z.origin, target) {
			continue
		}
		m.Extra = append(m.Extra, z.nodes[target][dns.TypeA]...)
		m.Extra = append(m.Extra, z.nodes[target][dns.TypeAAAA]...)
	}
}
