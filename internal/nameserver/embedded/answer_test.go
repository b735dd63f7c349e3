package embedded

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/nameserver"
)

// testZone is the zone the answer table runs on.
func testZone() nameserver.Zone {
	return nameserver.Zone{Name: "example.com", Serial: 9, TTL: 3600, Nameservers: []string{"ns1.berth.example"},
		RRsets: []nameserver.RRset{
			{Name: "www.example.com", Type: "A", TTL: 300, Values: []string{"192.0.2.2"}},
			{Name: "*.example.com", Type: "TXT", Values: []string{`"wild"`}},
			{Name: "a.b.example.com", Type: "A", Values: []string{"192.0.2.3"}},
			{Name: "alias.example.com", Type: "CNAME", Values: []string{"www.example.com."}},
			{Name: "dangling.example.com", Type: "CNAME", Values: []string{"nothing.b.example.com."}},
			{Name: "loop1.example.com", Type: "CNAME", Values: []string{"loop2.example.com."}},
			{Name: "loop2.example.com", Type: "CNAME", Values: []string{"loop1.example.com."}},
			{Name: "intocut.example.com", Type: "CNAME", Values: []string{"host.sub.example.com."}},
			{Name: "sub.example.com", Type: "NS", Values: []string{"ns.sub.example.com.", "ns.other.example."}},
			{Name: "ns.sub.example.com", Type: "AAAA", Values: []string{"2001:db8::53"}},
		}}
}

// TestAnswer is the answer logic alone (RFC 1034 §4.3.2, RFC 4592), no sockets:
// each row a question and the sections it gets, records as "name type rdata".
func TestAnswer(t *testing.T) {
	t.Parallel()
	z, err := build(testZone())
	if err != nil {
		t.Fatal(err)
	}
	soa := "example.com. SOA ns1.berth.example. hostmaster.example.com. 9 10800 3600 1209600 300"
	for _, tc := range []struct {
		qname, qtype string
		rcode        int
		aa           bool
		answer, auth []string
		extra        []string
	}{
		{"www.example.com.", "A", dns.RcodeSuccess, true, []string{"www.example.com. A 192.0.2.2"}, nil, nil},
		{"WWW.Example.COM.", "A", dns.RcodeSuccess, true, []string{"www.example.com. A 192.0.2.2"}, nil, nil},
		{"example.com.", "NS", dns.RcodeSuccess, true, []string{"example.com. NS ns1.berth.example."}, nil, nil},
		{"www.example.com.", "MX", dns.RcodeSuccess, true, nil, []string{soa}, nil},
		{"x.y.example.com.", "TXT", dns.RcodeSuccess, true, []string{`x.y.example.com. TXT "wild"`}, nil, nil},
		{"x.example.com.", "A", dns.RcodeSuccess, true, nil, []string{soa}, nil},   // the wildcard has no A
		{"b.example.com.", "TXT", dns.RcodeSuccess, true, nil, []string{soa}, nil}, // an empty non-terminal
		{"x.b.example.com.", "TXT", dns.RcodeNameError, true, nil, []string{soa}, nil},
		{"x.*.example.com.", "TXT", dns.RcodeNameError, true, nil, []string{soa}, nil},
		{"alias.example.com.", "A", dns.RcodeSuccess, true, []string{"alias.example.com. CNAME www.example.com.", "www.example.com. A 192.0.2.2"}, nil, nil},
		{"alias.example.com.", "CNAME", dns.RcodeSuccess, true, []string{"alias.example.com. CNAME www.example.com."}, nil, nil},
		{"dangling.example.com.", "A", dns.RcodeNameError, true, []string{"dangling.example.com. CNAME nothing.b.example.com."}, []string{soa}, nil},
		{"loop1.example.com.", "A", dns.RcodeSuccess, true, []string{"loop1.example.com. CNAME loop2.example.com.", "loop2.example.com. CNAME loop1.example.com."}, nil, nil},
		{"intocut.example.com.", "A", dns.RcodeSuccess, true, []string{"intocut.example.com. CNAME host.sub.example.com."}, nil, nil},
		{"host.sub.example.com.", "A", dns.RcodeSuccess, false, nil,
			[]string{"sub.example.com. NS ns.other.example.", "sub.example.com. NS ns.sub.example.com."}, []string{"ns.sub.example.com. AAAA 2001:db8::53"}},
		{"sub.example.com.", "NS", dns.RcodeSuccess, false, nil,
			[]string{"sub.example.com. NS ns.other.example.", "sub.example.com. NS ns.sub.example.com."}, []string{"ns.sub.example.com. AAAA 2001:db8::53"}},
		{"sub.example.com.", "DS", dns.RcodeSuccess, true, nil, []string{soa}, nil},
		{"www.example.com.", "ANY", dns.RcodeSuccess, true, []string{`www.example.com. HINFO "RFC8482" ""`}, nil, nil},
		{"b.example.com.", "ANY", dns.RcodeSuccess, true, nil, []string{soa}, nil},
	} {
		t.Run(tc.qname+"/"+tc.qtype, func(t *testing.T) {
			m := new(dns.Msg)
			z.answer(m, tc.qname, dns.StringToType[tc.qtype])
			if m.Rcode != tc.rcode || m.Authoritative != tc.aa {
				t.Errorf("%s AA=%v, want %s AA=%v", dns.RcodeToString[m.Rcode], m.Authoritative, dns.RcodeToString[tc.rcode], tc.aa)
			}
			for _, s := range []struct {
				name      string
				got, want []string
			}{{"answer", rrStrings(m.Answer, false), tc.answer}, {"authority", rrStrings(m.Ns, true), tc.auth}, {"additional", rrStrings(m.Extra, true), tc.extra}} {
				if !slices.Equal(s.got, s.want) {
					t.Errorf("%s = %q, want %q", s.name, s.got, s.want)
				}
			}
		})
	}
}

// rrStrings are rrs as "name type rdata", sorted when the order does not matter.
func rrStrings(rrs []dns.RR, sorted bool) []string {
	var out []string
	for _, rr := range rrs {
		h := rr.Header()
		out = append(out, h.Name+" "+dns.TypeToString[h.Rrtype]+" "+strings.TrimPrefix(rr.String(), h.String()))
	}
	if sorted {
		slices.Sort(out)
	}
	return out
}

// TestAnswerLeavesZoneAlone: answers share the zone's records, so a wildcard's
// synthesis and the appends of a CNAME chain must not change them.
func TestAnswerLeavesZoneAlone(t *testing.T) {
	t.Parallel()
	z, err := build(testZone())
	if err != nil {
		t.Fatal(err)
	}
	before := rrStrings(z.all, false)
	for _, q := range []string{"x.example.com.", "alias.example.com.", "www.example.com.", "host.sub.example.com."} {
		m := new(dns.Msg)
		z.answer(m, q, dns.TypeTXT)
		z.answer(m, q, dns.TypeA)
	}
	if after := rrStrings(z.all, false); !slices.Equal(before, after) {
		t.Fatalf("zone changed by answering:\n%q\n%q", before, after)
	}
}

func TestPublishRefusesWhatDoesNotBuild(t *testing.T) {
	t.Parallel()
	for name, change := range map[string]func(z *nameserver.Zone){
		"upper-case name": func(z *nameserver.Zone) { z.Name = "Example.com" },
		"no nameserver":   func(z *nameserver.Zone) { z.Nameservers = nil },
		"bad value":       func(z *nameserver.Zone) { z.RRsets[0].Values = []string{"192.0.2.300"} },
		"outside":         func(z *nameserver.Zone) { z.RRsets[0].Name = "www.example.net" },
	} {
		t.Run(name, func(t *testing.T) {
			z := testZone()
			change(&z)
			mem := NewMemory()
			if err := mem.Publish(context.Background(), z); err == nil {
				t.Fatal("published")
			}
			if _, ok, _ := mem.Enclosing(context.Background(), "www.example.com."); ok {
				t.Fatal("served after a refused Publish")
			}
		})
	}
}

// fakeWriter is a dns.ResponseWriter that packs what is written, as the server's
// would, and keeps the last message.
type fakeWriter struct {
	remote net.Addr
	msg    *dns.Msg
	size   int
}

func (w *fakeWriter) LocalAddr() net.Addr  { return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53} }
func (w *fakeWriter) RemoteAddr() net.Addr { return w.remote }
func (w *fakeWriter) WriteMsg(m *dns.Msg) error {
	b, err := m.Pack()
	w.msg, w.size = m, len(b)
	return err
}
func (w *fakeWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *fakeWriter) Close() error                { return nil }
func (w *fakeWriter) TsigStatus() error           { return nil }
func (w *fakeWriter) TsigTimersOnly(bool)         {}
func (w *fakeWriter) Hijack()                     {}

func udpClient() net.Addr { return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000} }

// BenchmarkServeDNS answers one query over UDP, packing included, the zone built
// once: a name, a wildcard, a CNAME followed, a name that does not exist.
func BenchmarkServeDNS(b *testing.B) {
	mem := NewMemory()
	if err := mem.Publish(context.Background(), testZone()); err != nil {
		b.Fatal(err)
	}
	s := New(mem, Options{})
	for _, q := range []struct {
		name   string
		qtype  uint16
		answer int
	}{
		{"www.example.com.", dns.TypeA, 1}, {"x.y.example.com.", dns.TypeTXT, 1},
		{"alias.example.com.", dns.TypeA, 2}, {"x.b.example.com.", dns.TypeA, 0},
	} {
		b.Run(q.name, func(b *testing.B) {
			req := new(dns.Msg).SetQuestion(q.name, q.qtype)
			w := &fakeWriter{remote: udpClient()}
			b.ReportAllocs()
			for b.Loop() {
				s.ServeDNS(w, req)
			}
			if w.msg == nil || len(w.msg.Answer) != q.answer {
				b.Fatalf("answer %v", w.msg)
			}
		})
	}
}
