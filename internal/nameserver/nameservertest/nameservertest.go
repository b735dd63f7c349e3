// Package nameservertest is the conformance suite every nameserver driver passes
// (docs/api.md, Domains): it publishes zones through the driver's
// nameserver.Publisher and checks what the server answers over the wire, on UDP and
// on TCP, with a github.com/miekg/dns client.
package nameservertest

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/nameserver"
)

// Options are what the suite asks of a server it starts.
type Options struct {
	// AllowTransfer are the ranges the server answers AXFR to.
	AllowTransfer []netip.Prefix
}

// NewServer starts a nameserver answering UDP and TCP on one port of 127.0.0.1,
// stopped when t ends, and returns its Publisher and address ("127.0.0.1:port").
type NewServer func(t *testing.T, o Options) (nameserver.Publisher, string)

// Nameservers are the operator's nameservers in every zone the suite publishes.
var Nameservers = []string{"ns1.berth-suite.example", "ns2.berth-suite.example"}

// visible is how soon a published change must be answered (docs/api.md, Domains).
const visible = time.Second

// suite is one server the rules are checked against, and the zones published to it.
type suite struct {
	pub  nameserver.Publisher
	addr string
	n    atomic.Int32
}

// Exercise runs every rule against servers made by newServer: one allowing
// transfers to 127.0.0.0/8 and ::1, one allowing them to 10.0.0.0/8 only. Zone names
// are unique per rule, so the rules run in parallel on one server.
func Exercise(t *testing.T, newServer NewServer) {
	pub, addr := newServer(t, Options{AllowTransfer: []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
	s := &suite{pub: pub, addr: addr}
	for _, r := range s.rules() {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			r.check(t)
		})
	}
	t.Run("AXFRRefusedOutsideAllowed", func(t *testing.T) {
		pub, addr := newServer(t, Options{AllowTransfer: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
		s := &suite{pub: pub, addr: addr}
		s.axfrRefused(t)
	})
}

type rule struct {
	name  string
	check func(t *testing.T)
}

func (s *suite) rules() []rule {
	return []rule{
		{"AuthoritativeAnswer", s.authoritative},
		{"SOA", s.soa},
		{"ApexNS", s.apexNS},
		{"SerialRaisedByRepublish", s.serialRaised},
		{"NXDOMAIN", s.nxdomain},
		{"NODATA", s.nodata},
		{"Wildcard", s.wildcard},
		{"WildcardBlockedByExistingName", s.wildcardBlockedByName},
		{"WildcardBlockedByEmptyNonTerminal", s.wildcardBlockedByENT},
		{"CNAMEInZoneFollowed", s.cnameInZone},
		{"CNAMEOutOfZoneNotFollowed", s.cnameOutOfZone},
		{"Delegation", s.delegation},
		{"TruncatedWithoutEDNS0", s.truncatedPlain},
		{"TruncatedAtEDNS0SizeCapped", s.truncatedEDNS},
		{"LargeAnswerWholeOverTCP", s.largeOverTCP},
		{"RefusedOutsideZones", s.refusedOutside},
		{"AXFR", s.axfr},
		{"AXFROverUDPNotAnswered", s.axfrUDP},
		{"ReversePTR", s.reversePTR},
		{"WithdrawnZoneRefused", s.withdrawn},
		{"CaseInsensitive", s.caseInsensitive},
		{"ChangeVisibleWithin1s", s.changeVisible},
	}
}

// zone is a zone named <tag>.suite.example, with:
//
//	@        A      192.0.2.1
//	www      A      192.0.2.2
//	*        A      192.0.2.10
//	a.b      A      192.0.2.11           (b an empty non-terminal)
//	alias    CNAME  www
//	out      CNAME  www.example.net.
//	sub      NS     ns1.sub, ns.example.net.  (a delegation, ns1.sub its glue)
//	ns1.sub  A      192.0.2.53
//	big      TXT    30 strings of 100 bytes (over 1232 bytes)
func zone(tag string, serial uint32) nameserver.Zone {
	n := tag + ".suite.example"
	big := make([]string, 30)
	for i := range big {
		big[i] = fmt.Sprintf("%q", fmt.Sprintf("%02d", i)+strings.Repeat("x", 98))
	}
	return nameserver.Zone{Name: n, Serial: serial, TTL: 3600, Nameservers: Nameservers, RRsets: []nameserver.RRset{
		{Name: n, Type: "A", TTL: 300, Values: []string{"192.0.2.1"}},
		{Name: "www." + n, Type: "A", TTL: 300, Values: []string{"192.0.2.2"}},
		{Name: "*." + n, Type: "A", TTL: 300, Values: []string{"192.0.2.10"}},
		{Name: "a.b." + n, Type: "A", TTL: 300, Values: []string{"192.0.2.11"}},
		{Name: "alias." + n, Type: "CNAME", TTL: 300, Values: []string{"www." + n + "."}},
		{Name: "out." + n, Type: "CNAME", TTL: 300, Values: []string{"www.example.net."}},
		{Name: "sub." + n, Type: "NS", TTL: 300, Values: []string{"ns1.sub." + n + ".", "ns.example.net."}},
		{Name: "ns1.sub." + n, Type: "A", TTL: 300, Values: []string{"192.0.2.53"}},
		{Name: "big." + n, Type: "TXT", TTL: 300, Values: big},
	}}
}

// publish publishes z and waits (1 s at most) until its serial is answered.
func (s *suite) publish(t *testing.T, z nameserver.Zone) {
	t.Helper()
	if err := s.pub.Publish(context.Background(), z); err != nil {
		t.Fatalf("Publish(%s): %v", z.Name, err)
	}
	s.await(t, "serial "+fmt.Sprint(z.Serial), func() bool {
		r, err := exchange("udp", s.addr, query(z.Name, dns.TypeSOA))
		return err == nil && len(r.Answer) == 1 && r.Answer[0].(*dns.SOA).Serial == z.Serial
	})
}

// newZone publishes zone(tag, 1) and returns its name as an FQDN.
func (s *suite) newZone(t *testing.T, tag string) string {
	t.Helper()
	z := zone(tag, 1)
	s.publish(t, z)
	return z.Name + "."
}

// await polls ok until it holds, failing t after visible.
func (s *suite) await(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(visible)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s not answered within %v", what, visible)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func query(name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg).SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = false
	return m
}

func exchange(network, addr string, m *dns.Msg) (*dns.Msg, error) {
	c := &dns.Client{Net: network, Timeout: 2 * time.Second}
	r, _, err := c.Exchange(m, addr)
	return r, err
}

// both asks m on UDP and on TCP and hands check each answer.
func (s *suite) both(t *testing.T, m *dns.Msg, check func(t *testing.T, r *dns.Msg)) {
	t.Helper()
	for _, network := range []string{"udp", "tcp"} {
		r, err := exchange(network, s.addr, m.Copy())
		if err != nil {
			t.Fatalf("%s %s %s: %v", network, m.Question[0].Name, dns.TypeToString[m.Question[0].Qtype], err)
		}
		t.Run(network, func(t *testing.T) { check(t, r) })
	}
}
