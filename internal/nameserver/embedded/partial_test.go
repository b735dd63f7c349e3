package embedded

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/nameserver"
)

// partialSource answers every name under example.com with a partial zone holding
// only that name's A record, one serial for all.
type partialSource map[string]string

func (p partialSource) Enclosing(_ context.Context, name string) (nameserver.Zone, bool, error) {
	z := nameserver.Zone{Name: "example.com", Serial: 1, TTL: 300, Nameservers: []string{"ns1.berth.example"}, Partial: true}
	if v, ok := p[name]; ok {
		z.RRsets = []nameserver.RRset{{Name: name[:len(name)-1], Type: "A", TTL: 300, Values: []string{v}}}
	}
	return z, dns.IsSubDomain("example.com.", name), nil
}

// TestPartialZone: a partial zone answers the query it was read for, never another
// from what it held (its serial the same), and is never transferred.
func TestPartialZone(t *testing.T) {
	t.Parallel()
	s := New(partialSource{"a.example.com.": "192.0.2.1", "b.example.com.": "192.0.2.2"},
		Options{AllowTransfer: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	ask := func(name string, qtype uint16, remote net.Addr) *dns.Msg {
		w := &fakeWriter{remote: remote}
		s.ServeDNS(w, new(dns.Msg).SetQuestion(name, qtype))
		return w.msg
	}
	for _, c := range []struct{ name, want string }{
		{"a.example.com.", "192.0.2.1"}, {"b.example.com.", "192.0.2.2"}, {"a.example.com.", "192.0.2.1"},
	} {
		m := ask(c.name, dns.TypeA, udpClient())
		if len(m.Answer) != 1 || m.Answer[0].(*dns.A).A.String() != c.want || !m.Authoritative {
			t.Errorf("%s A: %v; want %s", c.name, m, c.want)
		}
	}
	if m := ask("c.example.com.", dns.TypeA, udpClient()); m.Rcode != dns.RcodeNameError {
		t.Errorf("c.example.com A: rcode %s, want NXDOMAIN", dns.RcodeToString[m.Rcode])
	}
	tcp := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
	if m := ask("example.com.", dns.TypeAXFR, tcp); m.Rcode != dns.RcodeRefused {
		t.Errorf("AXFR of a partial zone: rcode %s, want REFUSED", dns.RcodeToString[m.Rcode])
	}
}
