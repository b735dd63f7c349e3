// Package nameserver is the seam between Berth's DNS hosting (docs/api.md, Domains)
// and what answers DNS queries for it. Two drivers sit behind it and pass one
// conformance suite that queries them over the wire (nameservertest): the embedded
// server (github.com/miekg/dns, answering from a Source: the store in berthd), and
// PowerDNS Authoritative, to which every change is published through its HTTP API.
//
// A zone crosses the seam whole, as Zone: its SOA's serial and timers, the
// operator's nameservers at its apex, and every RRset, names absolute. Customers'
// zones and the operator's reverse zones (the PTRs of the address pools) are alike
// here.
package nameserver

import "context"

// Zone is everything a nameserver serves for one zone.
type Zone struct {
	// Name is the zone's name, lower case, without the trailing dot: "example.com",
	// "2.0.192.in-addr.arpa".
	Name string
	// Serial is the SOA's serial; every change of the zone raises it.
	Serial uint32
	// TTL is the zone's TTL: its SOA's and apex NS's, and that of each RRset
	// published without one of its own.
	TTL int
	// Nameservers are the operator's (serve --dns-nameservers), host names without
	// the trailing dot: the apex NS records, the first one the SOA's MNAME. The
	// SOA's RNAME is hostmaster.<zone>, its timers dnszone's (SOARefresh, ...).
	Nameservers []string
	// RRsets are every RRset of the zone but the SOA and the apex NS.
	RRsets []RRset
	// Partial says RRsets holds only what one query needs (the RRsets of the name it
	// asks for) of a zone too large to read whole for every change: the operator's
	// zones of servers' names and addresses (docs/operating.md, DNS). A server
	// answers that query from it and keeps nothing, and never transfers it. A
	// publisher that keeps zones (PowerDNS) changes only what a Partial zone holds:
	// each RRset with values replaced, each without any deleted (its name lost that
	// type), the SOA (its serial raised) and the apex NS put as given, every other
	// RRset left as it is.
	Partial bool
}

// RRset is one name and type of a zone with all its records.
type RRset struct {
	// Name is absolute, lower case, without the trailing dot: "www.example.com",
	// "*.example.com", "example.com" for the apex.
	Name string
	// Type is the record type's mnemonic: A, AAAA, CNAME, MX, TXT, SRV, CAA, NS, PTR.
	Type string
	// TTL is in seconds (the zone's when the customer set none).
	TTL int
	// Values are the records' RDATA in zone-file presentation form, canonical as
	// dnszone writes them: names absolute with their trailing dot, TXT quoted.
	Values []string
}

// Publisher makes a nameserver serve zones as given. Publish replaces whatever was
// served under the zone's name (an unknown zone is created); Withdraw stops serving
// a zone (an unknown one is no error). When either returns nil the change is
// answered over DNS. Both are idempotent: a durable job may run them again after a
// crash. A publisher that keeps zones never goes back: it leaves a zone it holds at
// a serial greater than the one published (RFC 1982).
type Publisher interface {
	Publish(ctx context.Context, z Zone) error
	Withdraw(ctx context.Context, name string) error
}
