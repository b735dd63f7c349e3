package powerdns

import (
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/nameserver/powerdns/powerdnstest"
)

// A publish of an older serial than PowerDNS holds (a job that read the zone before
// the change another job published) leaves PowerDNS as it is; the same serial again
// (a job run again after a crash) and a greater one are published.
func TestPublishNeverGoesBack(t *testing.T) {
	t.Parallel()
	srv := powerdnstest.Start(t, powerdnstest.Options{})
	c := newClient(t, srv, srv.APIKey)
	old := forwardZone(t)
	newer := republished(old)
	for _, z := range []nameserver.Zone{newer, old} {
		if err := c.Publish(ctx(t), z); err != nil {
			t.Fatalf("Publish serial %d: %v", z.Serial, err)
		}
	}
	a := srv.DNSAddr
	expectAnswer(t, a, "www.example.com", dns.TypeA, "www.example.com. 600 IN A 192.0.2.20")
	expectAnswer(t, a, "example.com", dns.TypeSOA,
		"example.com. 3600 IN SOA ns3.berth.test. hostmaster.example.com. 2026112702 "+soaTimers)

	// Past 2^32 the serial wraps (RFC 1982): 1 is greater than 4294967295.
	if err := c.Withdraw(ctx(t), "example.com"); err != nil {
		t.Fatal(err)
	}
	wrap := newer
	wrap.Serial = 4294967295
	wrapped := republished(forwardZone(t))
	wrapped.Serial = 1
	wrapped.RRsets = append(wrapped.RRsets, nameserver.RRset{Name: "wrapped.example.com", Type: "A", TTL: 60, Values: []string{"192.0.2.77"}})
	for _, z := range []nameserver.Zone{wrap, wrapped} {
		if err := c.Publish(ctx(t), z); err != nil {
			t.Fatalf("Publish serial %d: %v", z.Serial, err)
		}
	}
	expectAnswer(t, a, "wrapped.example.com", dns.TypeA, "wrapped.example.com. 60 IN A 192.0.2.77")
}

// A Partial zone changes only the RRsets it holds: those with values replaced, those
// without deleted; the others stay, and the serial is raised at each publish.
func TestPublishPartial(t *testing.T) {
	t.Parallel()
	srv := powerdnstest.Start(t, powerdnstest.Options{})
	c := newClient(t, srv, srv.APIKey)
	ns := []string{"ns1.berth.test"}
	first := nameserver.Zone{Name: "servers.test", TTL: 300, Nameservers: ns, Partial: true, Serial: 5, RRsets: []nameserver.RRset{
		{Name: "a.servers.test", Type: "A", TTL: 300, Values: []string{"192.0.2.1"}},
		{Name: "a.servers.test", Type: "AAAA", TTL: 300, Values: []string{"2001:db8::1"}},
		{Name: "b.servers.test", Type: "A", TTL: 300, Values: []string{"192.0.2.2"}},
	}}
	second := nameserver.Zone{Name: "servers.test", TTL: 300, Nameservers: ns, Partial: true, RRsets: []nameserver.RRset{
		{Name: "a.servers.test", Type: "A", TTL: 300, Values: []string{"192.0.2.9"}},
		{Name: "a.servers.test", Type: "AAAA", TTL: 300},
		{Name: "c.servers.test", Type: "A", TTL: 300, Values: []string{"192.0.2.3"}},
	}}
	for _, z := range []nameserver.Zone{first, second} {
		if err := c.Publish(ctx(t), z); err != nil {
			t.Fatal(err)
		}
	}
	a := srv.DNSAddr
	expectAnswer(t, a, "a.servers.test", dns.TypeA, "a.servers.test. 300 IN A 192.0.2.9")
	if in := expectRcode(t, a, "a.servers.test", dns.TypeAAAA, dns.RcodeSuccess); len(in.Answer) != 0 {
		t.Errorf("a's AAAA was deleted, yet answered %v", in.Answer)
	}
	expectAnswer(t, a, "b.servers.test", dns.TypeA, "b.servers.test. 300 IN A 192.0.2.2")
	expectAnswer(t, a, "c.servers.test", dns.TypeA, "c.servers.test. 300 IN A 192.0.2.3")
	in := query(t, "udp", a, "servers.test", dns.TypeSOA)
	if len(in.Answer) != 1 || in.Answer[0].(*dns.SOA).Serial <= 5 {
		t.Errorf("the SOA after two publishes: %v; want a serial above 5", in.Answer)
	}
}

// A zone published with Serial 0 has PowerDNS's serial: YYYYMMDD01 of today when
// made, raised when anything changes, kept when nothing does.
func TestPublishOwnSerial(t *testing.T) {
	t.Parallel()
	srv := powerdnstest.Start(t, powerdnstest.Options{})
	c := newClient(t, srv, srv.APIKey)
	z := reverseZone()
	z.Serial = 0
	soa := func() uint32 {
		t.Helper()
		in := query(t, "udp", srv.DNSAddr, z.Name, dns.TypeSOA)
		if len(in.Answer) != 1 {
			t.Fatalf("SOA: %v", in)
		}
		return in.Answer[0].(*dns.SOA).Serial
	}
	if err := c.Publish(ctx(t), z); err != nil {
		t.Fatal(err)
	}
	first := soa()
	if first != hosting.NewZoneSerial(time.Now()) {
		t.Errorf("made with serial %d, want today's first", first)
	}
	if err := c.Publish(ctx(t), z); err != nil {
		t.Fatal(err)
	}
	if got := soa(); got != first {
		t.Errorf("published unchanged: serial %d, want %d kept", got, first)
	}
	z.RRsets = append(z.RRsets, nameserver.RRset{Name: "11.2.0.192.in-addr.arpa", Type: "PTR", TTL: 300, Values: []string{"mail.example.com."}})
	if err := c.Publish(ctx(t), z); err != nil {
		t.Fatal(err)
	}
	if got := soa(); !hosting.SerialGreater(got, first) {
		t.Errorf("changed: serial %d, want above %d", got, first)
	}
	expectAnswer(t, srv.DNSAddr, "11.2.0.192.in-addr.arpa", dns.TypePTR, "11.2.0.192.in-addr.arpa. 300 IN PTR mail.example.com.")
}
