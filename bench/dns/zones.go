package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Each zone's shape (zoneFile): per zone 12 + hosts×2 + hosts/4 + aliases RRsets
// besides the SOA and apex NS: 120 hosts and 20 aliases make 302.
const (
	hosts   = 120
	aliases = 20
)

// zoneName is the i-th customer zone's name (from 1), under the reserved TLD
// .example (RFC 2606).
func zoneName(i int) string { return fmt.Sprintf("customer%03d.example", i) }

// zoneFile is the i-th zone as BIND text, as a customer would import it with
// POST /domains: an apex with A, AAAA, two MX and an SPF TXT, _dmarc, mail hosts,
// hosts with A and AAAA (a TXT on every fourth), CNAMEs to hosts, www a CNAME to the
// apex, ext a CNAME out of the zone, and a wildcard *.apps with A and AAAA.
func zoneFile(i int) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("@ A 10.%d.0.1", i)
	w("@ AAAA 2001:db8:%x::1", i)
	w("@ MX 10 mail")
	w("@ MX 20 mail2")
	w(`@ TXT "v=spf1 mx -all"`)
	w(`_dmarc 300 TXT "v=DMARC1; p=reject; rua=mailto:dmarc@%s"`, zoneName(i))
	w("mail A 10.%d.0.2", i)
	w("mail AAAA 2001:db8:%x::2", i)
	w("mail2 A 10.%d.0.3", i)
	w("www CNAME %s.", zoneName(i))
	w("ext CNAME www.example.net.")
	w("*.apps 300 A 10.%d.255.1", i)
	w("*.apps 300 AAAA 2001:db8:%x::ff01", i)
	for h := 1; h <= hosts; h++ {
		w("host%03d A 10.%d.%d.%d", h, i, 1+h/250, h%250+1)
		w("host%03d AAAA 2001:db8:%x:%x::1", h, i, h)
		if h%4 == 0 {
			w(`host%03d TXT "owner=team-%d" "rotated=2026-11-%02d"`, h, h%7, 1+h%28)
		}
	}
	for a := 1; a <= aliases; a++ {
		w("alias%03d 600 CNAME host%03d", a, 1+(a*7)%hosts)
	}
	return b.String()
}

// query is one line of dnsperf's input.
type query struct{ name, qtype string }

// queries are n queries over the first zones zones, drawn with a fixed seed: hits
// of existing RRsets (A, AAAA, MX, TXT), CNAMEs followed within the zone (to an A)
// and out of it, wildcard answers, NODATA (a name without the type) and NXDOMAIN.
// The mix in percent is in the README.
func queries(zones, n int) []query {
	r := rand.New(rand.NewPCG(2026, 11))
	out := make([]query, 0, n)
	host := func() int { return 1 + r.IntN(hosts) }
	for range n {
		z := zoneName(1 + r.IntN(zones))
		p := r.IntN(100)
		var q query
		switch {
		case p < 25: // hit: a host's A
			q = query{fmt.Sprintf("host%03d.%s", host(), z), "A"}
		case p < 38: // hit: a host's AAAA
			q = query{fmt.Sprintf("host%03d.%s", host(), z), "AAAA"}
		case p < 43: // hit: the apex A
			q = query{z, "A"}
		case p < 48: // hit: the apex MX
			q = query{z, "MX"}
		case p < 52: // hit: TXT (SPF, a host's, DMARC)
			switch r.IntN(3) {
			case 0:
				q = query{z, "TXT"}
			case 1:
				q = query{fmt.Sprintf("host%03d.%s", 4*(1+r.IntN(hosts/4)), z), "TXT"}
			default:
				q = query{"_dmarc." + z, "TXT"}
			}
		case p < 55: // hit: mail hosts
			q = query{"mail." + z, "A"}
		case p < 65: // CNAME to a host, followed
			q = query{fmt.Sprintf("alias%03d.%s", 1+r.IntN(aliases), z), "A"}
		case p < 70: // CNAME to the apex, followed
			q = query{"www." + z, "A"}
		case p < 72: // CNAME out of the zone
			q = query{"ext." + z, "A"}
		case p < 82: // wildcard
			t := "A"
			if r.IntN(4) == 0 {
				t = "AAAA"
			}
			q = query{fmt.Sprintf("app-%d.apps.%s", r.IntN(100000), z), t}
		case p < 87: // NODATA: the name exists, the type does not
			q = query{fmt.Sprintf("host%03d.%s", host(), z), "MX"}
		default: // NXDOMAIN
			q = query{fmt.Sprintf("nohost%05d.%s", r.IntN(100000), z), "A"}
		}
		out = append(out, q)
	}
	return out
}

// floodQueries is a query file of distinct names, as many as a flood of d at rate
// sends (no name asked twice, so no cache answers one): kind "outside", names in no
// zone, which the embedded server answers REFUSED; "servers", names under the default
// domain of servers' names (berthd's default, berth.localhost), NXDOMAIN.
// Each call's names are new: a round after another asks none the last one asked.
func floodQueries(kind string, d time.Duration, rate int) []byte {
	var b strings.Builder
	n := int(d.Seconds()*float64(rate)) + rate
	floodCalls++
	for i := floodCalls * 10_000_000; i < floodCalls*10_000_000+n; i++ {
		switch kind {
		case "servers":
			fmt.Fprintf(&b, "srv-%08d.berth.localhost A\n", i)
		case "outside":
			fmt.Fprintf(&b, "www.nozone-%08d.example A\n", i)
		default:
			panic("no flood of kind " + kind)
		}
	}
	return []byte(b.String())
}

// floodCalls counts floodQueries' calls.
var floodCalls int
