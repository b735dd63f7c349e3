package nameservertest

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/nameserver"
)

func wantRcode(t *testing.T, r *dns.Msg, rcode int, aa bool) {
	t.Helper()
	if r.Rcode != rcode || r.Authoritative != aa {
		t.Fatalf("answer %s AA=%v, want %s AA=%v:\n%v", dns.RcodeToString[r.Rcode], r.Authoritative,
			dns.RcodeToString[rcode], aa, r)
	}
}

// values are the records of rrs of type t in presentation form, without header.
func values(rrs []dns.RR, t uint16) []string {
	var out []string
	for _, rr := range rrs {
		if rr.Header().Rrtype == t {
			out = append(out, strings.TrimPrefix(rr.String(), rr.Header().String()))
		}
	}
	slices.Sort(out)
	return out
}

func wantValues(t *testing.T, section string, rrs []dns.RR, rt uint16, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := values(rrs, rt); !slices.Equal(got, want) {
		t.Fatalf("%s %s = %q, want %q", section, dns.TypeToString[rt], got, want)
	}
}

// wantNegative checks a NODATA or NXDOMAIN: no answer, the zone's SOA in authority.
func wantNegative(t *testing.T, r *dns.Msg, rcode int, zone string) {
	t.Helper()
	wantRcode(t, r, rcode, true)
	if len(r.Answer) != 0 || len(r.Ns) != 1 || r.Ns[0].Header().Rrtype != dns.TypeSOA ||
		!strings.EqualFold(r.Ns[0].Header().Name, zone) {
		t.Fatalf("want no answer and the SOA of %s in authority:\n%v", zone, r)
	}
}

func (s *suite) authoritative(t *testing.T) {
	z := s.newZone(t, "aa")
	s.both(t, query("www."+z, dns.TypeA), func(t *testing.T, r *dns.Msg) {
		wantRcode(t, r, dns.RcodeSuccess, true)
		wantValues(t, "answer", r.Answer, dns.TypeA, "192.0.2.2")
	})
}

func (s *suite) soa(t *testing.T) {
	z := zone("soa", 2026112701)
	s.publish(t, z)
	s.both(t, query(z.Name, dns.TypeSOA), func(t *testing.T, r *dns.Msg) {
		wantRcode(t, r, dns.RcodeSuccess, true)
		if len(r.Answer) != 1 {
			t.Fatalf("want one SOA:\n%v", r)
		}
		soa := r.Answer[0].(*dns.SOA)
		want := dns.SOA{Ns: Nameservers[0] + ".", Mbox: "hostmaster." + z.Name + ".", Serial: z.Serial,
			Refresh: dnszone.SOARefresh, Retry: dnszone.SOARetry, Expire: dnszone.SOAExpire, Minttl: dnszone.SOANegative}
		soa.Hdr = want.Hdr
		if *soa != want {
			t.Fatalf("SOA %v, want %v", soa, &want)
		}
	})
}

func (s *suite) apexNS(t *testing.T) {
	z := s.newZone(t, "ns")
	s.both(t, query(z, dns.TypeNS), func(t *testing.T, r *dns.Msg) {
		wantRcode(t, r, dns.RcodeSuccess, true)
		wantValues(t, "answer", r.Answer, dns.TypeNS, "ns1.berth-suite.example.", "ns2.berth-suite.example.")
	})
}

func (s *suite) serialRaised(t *testing.T) {
	z := zone("serial", 7)
	s.publish(t, z)
	z.Serial = 8
	s.publish(t, z) // fails unless serial 8 is answered within 1 s
	s.both(t, query(z.Name, dns.TypeSOA), func(t *testing.T, r *dns.Msg) {
		if len(r.Answer) != 1 || r.Answer[0].(*dns.SOA).Serial != 8 {
			t.Fatalf("want serial 8:\n%v", r)
		}
	})
}

func (s *suite) nxdomain(t *testing.T) {
	z := s.newZone(t, "nx")
	// Below b (no wildcard there); every other name of the zone has *'s records.
	s.both(t, query("nope.b."+z, dns.TypeA), func(t *testing.T, r *dns.Msg) {
		wantNegative(t, r, dns.RcodeNameError, z)
	})
}

func (s *suite) nodata(t *testing.T) {
	z := s.newZone(t, "nodata")
	s.both(t, query("www."+z, dns.TypeMX), func(t *testing.T, r *dns.Msg) {
		wantNegative(t, r, dns.RcodeSuccess, z)
	})
}

func (s *suite) wildcard(t *testing.T) {
	z := s.newZone(t, "wild")
	s.both(t, query("anything."+z, dns.TypeA), func(t *testing.T, r *dns.Msg) {
		wantRcode(t, r, dns.RcodeSuccess, true)
		wantValues(t, "answer", r.Answer, dns.TypeA, "192.0.2.10")
		if !strings.EqualFold(r.Answer[0].Header().Name, "anything."+z) {
			t.Fatalf("wildcard answered under %s, want the query's name", r.Answer[0].Header().Name)
		}
	})
}

func (s *suite) wildcardBlockedByName(t *testing.T) {
	z := s.newZone(t, "wildname")
	s.both(t, query("www."+z, dns.TypeAAAA), func(t *testing.T, r *dns.Msg) {
		wantNegative(t, r, dns.RcodeSuccess, z)
	})
}

func (s *suite) wildcardBlockedByENT(t *testing.T) {
	z := s.newZone(t, "wildent")
	s.both(t, query("b."+z, dns.TypeA), func(t *testing.T, r *dns.Msg) {
		wantNegative(t, r, dns.RcodeSuccess, z)
	})
}

func (s *suite) cnameInZone(t *testing.T) {
	z := s.newZone(t, "cname")
	s.both(t, query("alias."+z, dns.TypeA), func(t *testing.T, r *dns.Msg) {
		wantRcode(t, r, dns.RcodeSuccess, true)
		wantValues(t, "answer", r.Answer, dns.TypeCNAME, "www."+z)
		wantValues(t, "answer", r.Answer, dns.TypeA, "192.0.2.2")
	})
}

func (s *suite) cnameOutOfZone(t *testing.T) {
	z := s.newZone(t, "cnameout")
	s.both(t, query("out."+z, dns.TypeA), func(t *testing.T, r *dns.Msg) {
		wantRcode(t, r, dns.RcodeSuccess, true)
		if len(r.Answer) != 1 {
			t.Fatalf("want the CNAME alone:\n%v", r)
		}
		wantValues(t, "answer", r.Answer, dns.TypeCNAME, "www.example.net.")
	})
}

func (s *suite) delegation(t *testing.T) {
	z := s.newZone(t, "deleg")
	s.both(t, query("host.sub."+z, dns.TypeA), func(t *testing.T, r *dns.Msg) {
		wantRcode(t, r, dns.RcodeSuccess, false)
		if len(r.Answer) != 0 {
			t.Fatalf("a referral has no answer:\n%v", r)
		}
		wantValues(t, "authority", r.Ns, dns.TypeNS, "ns1.sub."+z, "ns.example.net.")
		wantValues(t, "additional", r.Extra, dns.TypeA, "192.0.2.53")
	})
}

// udpRaw sends m over UDP and returns the answer with its size on the wire.
func (s *suite) udpRaw(t *testing.T, m *dns.Msg) (*dns.Msg, int) {
	t.Helper()
	c, err := net.Dial("udp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	q, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write(q); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, dns.MaxMsgSize)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	r := new(dns.Msg)
	if err := r.Unpack(buf[:n]); err != nil {
		t.Fatal(err)
	}
	return r, n
}

func (s *suite) truncatedPlain(t *testing.T) {
	z := s.newZone(t, "tc")
	r, n := s.udpRaw(t, query("big."+z, dns.TypeTXT))
	if !r.Truncated || n > dns.MinMsgSize {
		t.Fatalf("answer of %d bytes TC=%v, want TC and at most 512 bytes", n, r.Truncated)
	}
}

func (s *suite) truncatedEDNS(t *testing.T) {
	z := s.newZone(t, "tcedns")
	for _, size := range []uint16{800, 4096} {
		m := query("big."+z, dns.TypeTXT)
		m.SetEdns0(size, false)
		r, n := s.udpRaw(t, m)
		if limit := min(int(size), 1232); !r.Truncated || n > limit {
			t.Fatalf("EDNS0 %d: answer of %d bytes TC=%v, want TC and at most %d bytes", size, n, r.Truncated, limit)
		}
	}
}

func (s *suite) largeOverTCP(t *testing.T) {
	z := s.newZone(t, "tcp")
	r, err := exchange("tcp", s.addr, query("big."+z, dns.TypeTXT))
	if err != nil {
		t.Fatal(err)
	}
	wantRcode(t, r, dns.RcodeSuccess, true)
	if r.Truncated || len(values(r.Answer, dns.TypeTXT)) != 30 {
		t.Fatalf("TC=%v with %d TXT, want the 30 whole", r.Truncated, len(r.Answer))
	}
}

func (s *suite) refusedOutside(t *testing.T) {
	s.newZone(t, "refused")
	s.both(t, query("www.not-served.example.", dns.TypeA), func(t *testing.T, r *dns.Msg) {
		if r.Rcode != dns.RcodeRefused || len(r.Answer)+len(r.Ns) != 0 {
			t.Fatalf("want REFUSED and nothing else:\n%v", r)
		}
	})
}

func (s *suite) axfr(t *testing.T) {
	z := zone("axfr", 5)
	s.publish(t, z)
	envs, err := new(dns.Transfer).In(query(z.Name, dns.TypeAXFR), s.addr)
	if err != nil {
		t.Fatal(err)
	}
	var rrs []dns.RR
	for e := range envs {
		if e.Error != nil {
			t.Fatal(e.Error)
		}
		rrs = append(rrs, e.RR...)
	}
	first, last := rrs[0], rrs[len(rrs)-1]
	if first.Header().Rrtype != dns.TypeSOA || last.Header().Rrtype != dns.TypeSOA {
		t.Fatalf("transfer starts with %v, ends with %v; want the SOA", first, last)
	}
	want := 2 + len(Nameservers) // the SOA twice, the apex NS
	for _, set := range z.RRsets {
		want += len(set.Values)
	}
	if len(rrs) != want {
		t.Fatalf("transfer of %d records, want %d", len(rrs), want)
	}
	wantValues(t, "transfer", rrs, dns.TypeTXT, values(s.tcpAnswer(t, "big."+z.Name, dns.TypeTXT), dns.TypeTXT)...)
	wantValues(t, "transfer", rrs, dns.TypeNS, "ns1.berth-suite.example.", "ns2.berth-suite.example.",
		"ns1.sub.axfr.suite.example.", "ns.example.net.")
}

func (s *suite) tcpAnswer(t *testing.T, name string, qtype uint16) []dns.RR {
	t.Helper()
	r, err := exchange("tcp", s.addr, query(name, qtype))
	if err != nil {
		t.Fatal(err)
	}
	return r.Answer
}

func (s *suite) axfrRefused(t *testing.T) {
	z := s.newZone(t, "axfrrefused")
	r, err := exchange("tcp", s.addr, query(z, dns.TypeAXFR))
	if err != nil {
		t.Fatal(err)
	}
	// REFUSED is the embedded server's answer (docs/api.md, Domains); PowerDNS
	// answers NOTAUTH. Either way no record of the zone leaves.
	if r.Rcode != dns.RcodeRefused && r.Rcode != dns.RcodeNotAuth || len(r.Answer) != 0 {
		t.Fatalf("AXFR from 127.0.0.1 with only 10.0.0.0/8 allowed, want REFUSED or NOTAUTH:\n%v", r)
	}
}

func (s *suite) axfrUDP(t *testing.T) {
	z := s.newZone(t, "axfrudp")
	c, err := net.Dial("udp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	q, _ := query(z, dns.TypeAXFR).Pack()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write(q); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, dns.MaxMsgSize)
	n, err := c.Read(buf)
	if err != nil {
		return // not answered
	}
	// An answer without the zone's records is fine (PowerDNS answers NOERROR with
	// the SOA in authority, the embedded server refuses): what must not happen is the
	// zone sent over UDP, to an address that may be spoofed.
	r := new(dns.Msg)
	if err := r.Unpack(buf[:n]); err != nil || len(r.Answer) != 0 {
		t.Fatalf("AXFR over UDP answered with %d bytes (%v):\n%v", n, err, r)
	}
}

func (s *suite) reversePTR(t *testing.T) {
	z := zone("unused", 3)
	z.Name = "2.0.192.in-addr.arpa"
	z.RRsets = []nameserver.RRset{{Name: "5.2.0.192.in-addr.arpa", Type: "PTR", TTL: 600, Values: []string{"web-1.example.com."}}}
	s.publish(t, z)
	s.both(t, query("5.2.0.192.in-addr.arpa", dns.TypePTR), func(t *testing.T, r *dns.Msg) {
		wantRcode(t, r, dns.RcodeSuccess, true)
		wantValues(t, "answer", r.Answer, dns.TypePTR, "web-1.example.com.")
	})
}

func (s *suite) withdrawn(t *testing.T) {
	z := s.newZone(t, "withdrawn")
	if err := s.pub.Withdraw(context.Background(), strings.TrimSuffix(z, ".")); err != nil {
		t.Fatal(err)
	}
	s.await(t, "the withdrawal", func() bool {
		r, err := exchange("udp", s.addr, query("www."+z, dns.TypeA))
		return err == nil && r.Rcode == dns.RcodeRefused
	})
	if err := s.pub.Withdraw(context.Background(), strings.TrimSuffix(z, ".")); err != nil {
		t.Fatalf("withdrawing again: %v", err)
	}
}

func (s *suite) caseInsensitive(t *testing.T) {
	s.newZone(t, "case")
	asked := "wWw.CaSe.SuItE.ExAmPlE."
	s.both(t, query(asked, dns.TypeA), func(t *testing.T, r *dns.Msg) {
		wantRcode(t, r, dns.RcodeSuccess, true)
		if r.Question[0].Name != asked {
			t.Fatalf("question %s, want %s as asked", r.Question[0].Name, asked)
		}
		wantValues(t, "answer", r.Answer, dns.TypeA, "192.0.2.2")
	})
}

func (s *suite) changeVisible(t *testing.T) {
	z := zone("change", 1)
	s.publish(t, z)
	z.Serial = 2
	z.RRsets[1].Values = []string{"192.0.2.99"}
	if err := s.pub.Publish(context.Background(), z); err != nil {
		t.Fatal(err)
	}
	s.await(t, "the changed www", func() bool {
		r, err := exchange("udp", s.addr, query("www."+z.Name, dns.TypeA))
		return err == nil && slices.Equal(values(r.Answer, dns.TypeA), []string{"192.0.2.99"})
	})
}
