package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// compare asks both servers each of the first n distinct queries over UDP, as
// dnsperf asks (no EDNS), and counts those whose rcode, AA bit, answer section or
// authority section differ: the benchmark is only fair when both do the same work.
// The additional section is compared apart: PowerDNS adds the addresses of an MX's
// targets, the embedded server does not (more work for PowerDNS).
func compare(qs []query, n int, embeddedAddr, pdnsAddr string) (same, differ, extraDiffer int, examples []string, err error) {
	c := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
	seen := map[query]bool{}
	for _, q := range qs {
		if len(seen) >= n {
			break
		}
		if seen[q] {
			continue
		}
		seen[q] = true
		m := new(dns.Msg).SetQuestion(dns.Fqdn(q.name), dns.StringToType[q.qtype])
		m.RecursionDesired = false
		a, _, err := c.Exchange(m, embeddedAddr)
		if err != nil {
			return same, differ, extraDiffer, examples, fmt.Errorf("embedded, %s %s: %w", q.name, q.qtype, err)
		}
		b, _, err := c.Exchange(m, pdnsAddr)
		if err != nil {
			return same, differ, extraDiffer, examples, fmt.Errorf("PowerDNS, %s %s: %w", q.name, q.qtype, err)
		}
		ka, kb := key(a), key(b)
		if ka != kb {
			differ++
			if len(examples) < 5 {
				examples = append(examples, fmt.Sprintf("%s %s:\n    embedded: %s\n    PowerDNS: %s", q.name, q.qtype, ka, kb))
			}
			continue
		}
		same++
		if section(a.Extra) != section(b.Extra) {
			extraDiffer++
		}
	}
	return same, differ, extraDiffer, examples, nil
}

// key is what compare compares of an answer.
func key(m *dns.Msg) string {
	return fmt.Sprintf("%s aa=%v answer=[%s] authority=[%s]", dns.RcodeToString[m.Rcode], m.Authoritative, section(m.Answer), section(m.Ns))
}

// section is rrs as sorted text (the order of records in an RRset is free).
func section(rrs []dns.RR) string {
	var out []string
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeOPT {
			continue
		}
		out = append(out, strings.ReplaceAll(rr.String(), "\t", " "))
	}
	slices.Sort(out)
	return strings.Join(out, " | ")
}
