package hosting

import (
	"net/netip"
	"time"
)

// DomainDefaultTTL is a new zone's TTL when its creator sets none (docs/api.md,
// Domains); the other rules of zones are dnszone's.
const DomainDefaultTTL = 3600

// Domain is a DNS zone an account hosts (docs/api.md, Domains). Its name is held by
// it alone across the installation, and no other zone may be its parent or its
// child. A deleted zone is gone, with its RRsets: it holds no money and no history
// (zones are free, no ledger entry or meter names one), and its name is free again at
// once.
type Domain struct {
	ID        int64
	AccountID int64
	// Name is canonical (dnszone.ZoneName): lower case, no trailing dot, A-labels.
	Name string
	// TTL is the zone's: its SOA's and apex NS's, and each RRset's without its own.
	TTL int
	// Serial is the SOA's serial, raised by every change (NextZoneSerial).
	Serial uint32
	// RRsetCount counts the RRsets stored, without the SOA and apex NS that every
	// zone shows (the API adds those two).
	RRsetCount int
	CreatedAt  time.Time
}

// DomainRef is how a path names a zone: by numeric id or by its name.
type DomainRef struct {
	ID   int64
	Name string
}

// PTR is the reverse DNS name an account set for one address of its server (issue
// 30; docs/api.md, Domains): a host name without the trailing dot. An
// address without a row has the default name.
type PTR struct {
	ServerID int64
	// IP is the address, in its canonical text form (netip.Addr.String).
	IP  string
	PTR string
}

// ServerHasAddress reports whether ip is an address of a server whose addresses are
// ipv4 and ipv6 (either "" for none): its IPv4 address, or any address in the /64 of
// its IPv6 one, the addresses a PTR may be set for (issue 30). An IPv4 address
// written as IPv6 (::ffff:192.0.2.1), an address with a zone (fe80::1%eth0) and
// anything that is no address are not.
func ServerHasAddress(ipv4, ipv6, ip string) bool {
	a, err := netip.ParseAddr(ip)
	if err != nil || a.Zone() != "" {
		return false
	}
	if a.Is4() {
		v4, err := netip.ParseAddr(ipv4)
		return err == nil && v4 == a
	}
	v6, err := netip.ParseAddr(ipv6)
	if err != nil || !v6.Is6() || v6.Is4In6() || a.Is4In6() {
		return false
	}
	net, err := v6.Prefix(64)
	return err == nil && net.Contains(a)
}

// serialDay is the serial YYYYMMDD00 of t's UTC date.
func serialDay(t time.Time) uint32 {
	y, m, d := t.UTC().Date()
	return uint32(y*1000000 + int(m)*10000 + d*100)
}

// NewZoneSerial is the serial of a zone made at created: YYYYMMDD01 of its UTC date
// (RFC 1912 §2.2's form, the first change of that day).
func NewZoneSerial(created time.Time) uint32 { return serialDay(created) + 1 }

// NextZoneSerial is the serial of a zone whose serial was old once it changes at now:
// the greater, in RFC 1982 serial arithmetic, of old+1 and YYYYMMDD00 of now's UTC
// date, so that it is always greater than old (a secondary sees the change) and reads
// as a date while the zone changes fewer than 100 times a day. old+1 wraps past
// 2^32-1 to 1, never 0 (some secondaries take 0 for "no serial").
func NextZoneSerial(old uint32, now time.Time) uint32 {
	next := old + 1
	if next == 0 {
		next = 1
	}
	// day must be greater than old too: one step of RFC 1982 goes at most 2^31-1.
	if day := serialDay(now); SerialGreater(day, next) && SerialGreater(day, old) {
		return day
	}
	return next
}

// SerialGreater reports whether serial a is greater than b in RFC 1982 serial
// arithmetic (§3.2, SERIAL_BITS 32): the distance from b forwards to a is 1 to
// 2^31-1. (At exactly 2^31 the comparison is undefined; it answers false.)
func SerialGreater(a, b uint32) bool {
	d := a - b
	return d != 0 && d < 1<<31
}
