package powerdns

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/nameserver"
)

// Change types of a PATCH (PowerDNS 4.7 knows these two).
const (
	changeReplace = "REPLACE"
	changeDelete  = "DELETE"
)

// rrset is an RRset as PowerDNS's API reads and writes it: the name absolute with
// its trailing dot.
type rrset struct {
	Name       string   `json:"name"`
	Type       string   `json:"type"`
	TTL        int      `json:"ttl,omitempty"`
	ChangeType string   `json:"changetype,omitempty"`
	Records    []record `json:"records"`
}

type record struct {
	Content  string `json:"content"`
	Disabled bool   `json:"disabled"`
}

// wantRRsets is everything PowerDNS must serve for z: its SOA (the serial Berth's,
// the MNAME the first nameserver, the RNAME hostmaster.<zone>, dnszone's timers),
// its apex NS, then each of its RRsets, names with their trailing dot. An RRset
// without a value is none (PowerDNS would refuse it).
func wantRRsets(z nameserver.Zone) []rrset {
	apex := fqdn(z.Name)
	mname := apex
	if len(z.Nameservers) > 0 {
		mname = fqdn(z.Nameservers[0])
	}
	soa := fmt.Sprintf("%s hostmaster.%s %d %d %d %d %d", mname, apex, z.Serial,
		dnszone.SOARefresh, dnszone.SOARetry, dnszone.SOAExpire, dnszone.SOANegative)
	sets := []rrset{{Name: apex, Type: "SOA", TTL: z.TTL, Records: []record{{Content: soa}}}}
	if len(z.Nameservers) > 0 {
		ns := rrset{Name: apex, Type: "NS", TTL: z.TTL}
		for _, n := range z.Nameservers {
			ns.Records = append(ns.Records, record{Content: fqdn(n)})
		}
		sets = append(sets, ns)
	}
	for _, s := range z.RRsets {
		if len(s.Values) == 0 {
			continue
		}
		ttl := s.TTL
		if ttl == 0 {
			ttl = z.TTL
		}
		set := rrset{Name: fqdn(s.Name), Type: strings.ToUpper(s.Type), TTL: ttl}
		for _, v := range s.Values {
			set.Records = append(set.Records, record{Content: v})
		}
		sets = append(sets, set)
	}
	return sets
}

// diff is the PATCH that turns what PowerDNS has into want: a DELETE of each RRset
// PowerDNS has that want has not, then a REPLACE of each RRset of want that PowerDNS
// lacks or has otherwise (another TTL, other records, in any order). Empty when they
// agree. Names compare without regard to case, as DNS does. The DELETEs come first:
// PowerDNS applies a PATCH in order and refuses a CNAME beside an RRset not yet
// deleted (a name going from A to CNAME).
func diff(have, want []rrset) []rrset {
	byKey := make(map[string]rrset, len(have))
	for _, s := range have {
		byKey[key(s)] = s
	}
	wanted := make(map[string]bool, len(want))
	for _, w := range want {
		wanted[key(w)] = true
	}
	var out []rrset
	for _, h := range have {
		if !wanted[key(h)] {
			out = append(out, rrset{Name: h.Name, Type: h.Type, ChangeType: changeDelete, Records: []record{}})
		}
	}
	for _, w := range want {
		if h, ok := byKey[key(w)]; ok && sameRRset(h, w) {
			continue
		}
		w.ChangeType = changeReplace
		out = append(out, w)
	}
	return out
}

func key(s rrset) string { return strings.ToLower(fqdn(s.Name)) + " " + strings.ToUpper(s.Type) }

// sameRRset reports whether a and b are alike: the same TTL and the same records, in
// any order, none disabled (a disabled record is not Berth's).
func sameRRset(a, b rrset) bool {
	return a.TTL == b.TTL && slices.Equal(contents(a), contents(b))
}

func contents(s rrset) []string {
	var out []string
	for _, r := range s.Records {
		c := r.Content
		if strings.EqualFold(s.Type, "AAAA") {
			c = sameAAAA(c)
		}
		if r.Disabled {
			c = "disabled " + c
		}
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// sameAAAA is an AAAA value as Go writes the address, so that forms of one address
// compare equal: PowerDNS answers an IPv4-compatible address dotted ("::1.2.3.4"),
// dnszone writes it in hex ("::102:304").
func sameAAAA(v string) string {
	if a, err := netip.ParseAddr(v); err == nil {
		return a.String()
	}
	return v
}

// fqdn is name lower case with one trailing dot.
func fqdn(name string) string {
	return strings.ToLower(strings.TrimSuffix(name, ".")) + "."
}

// toPowerDNS is sets as PowerDNS 4.7 takes them: an IPv4-mapped AAAA in hex
// ("::ffff:c000:201"), for PowerDNS refuses the dotted form that dnszone writes
// ("::ffff:192.0.2.1", as miekg/dns and Go print it), though it answers the records
// in that form, so that what it reads back compares equal to the zone's values.
func toPowerDNS(sets []rrset) []rrset {
	out := make([]rrset, len(sets))
	for i, s := range sets {
		out[i] = s
		if s.Type != "AAAA" {
			continue
		}
		out[i].Records = make([]record, len(s.Records))
		for j, r := range s.Records {
			r.Content = hexAAAA(r.Content)
			out[i].Records[j] = r
		}
	}
	return out
}

// hexAAAA writes an IPv4-mapped IPv6 address in hex; any other value is left as it
// is (PowerDNS judges it).
func hexAAAA(v string) string {
	a, err := netip.ParseAddr(v)
	if err != nil || !a.Is4In6() {
		return v
	}
	b := a.As16()
	return fmt.Sprintf("::ffff:%x:%x", uint16(b[12])<<8|uint16(b[13]), uint16(b[14])<<8|uint16(b[15]))
}
