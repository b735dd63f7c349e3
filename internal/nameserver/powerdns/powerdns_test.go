package powerdns

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/nameserver/powerdns/powerdnstest"
)

// These tests publish to a real pdns_server (powerdnstest) and look at the result
// over DNS, UDP and TCP, with miekg/dns: what a resolver would see.

func newClient(t *testing.T, srv *powerdnstest.Server, key string) *Client {
	t.Helper()
	c, err := New(Options{URL: srv.URL, APIKey: key, HTTPClient: &http.Client{Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// longTXT is a TXT value of 300 bytes in dnszone's canonical form: two strings, of
// 255 and 45 bytes.
func longTXT(t *testing.T) string {
	t.Helper()
	v, err := dnszone.CanonicalValue("example.com", "@", dnszone.TypeTXT, `"`+strings.Repeat("v", 300)+`"`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v, `" "`) {
		t.Fatalf("the TXT value is not split in strings: %s", v)
	}
	return v
}

func forwardZone(t *testing.T) nameserver.Zone {
	return nameserver.Zone{
		Name: "example.com", Serial: 2026112701, TTL: 3600,
		Nameservers: []string{"ns1.berth.test", "ns2.berth.test"},
		RRsets: []nameserver.RRset{
			{Name: "example.com", Type: "A", TTL: 3600, Values: []string{"192.0.2.1"}},
			{Name: "example.com", Type: "MX", TTL: 3600, Values: []string{"10 mail.example.com.", "20 mx2.example.net."}},
			{Name: "example.com", Type: "TXT", TTL: 3600, Values: []string{longTXT(t), `"v=spf1 -all"`}},
			{Name: "example.com", Type: "CAA", TTL: 3600, Values: []string{`0 issue "letsencrypt.org"`}},
			{Name: "www.example.com", Type: "A", TTL: 300, Values: []string{"192.0.2.10", "192.0.2.11"}},
			{Name: "www.example.com", Type: "AAAA", TTL: 300, Values: []string{"2001:db8::10"}},
			{Name: "mail.example.com", Type: "A", TTL: 3600, Values: []string{"192.0.2.25"}},
			{Name: "mapped.example.com", Type: "AAAA", TTL: 3600, Values: []string{"::ffff:192.0.2.26", "::c000:21b"}},
			{Name: "_sip._tcp.example.com", Type: "SRV", TTL: 3600, Values: []string{"10 60 5060 sip.example.com."}},
			{Name: "alias.example.com", Type: "CNAME", TTL: 3600, Values: []string{"www.example.com."}},
			{Name: "sub.example.com", Type: "NS", TTL: 3600, Values: []string{"ns1.other.test.", "ns2.other.test."}},
			{Name: "*.wild.example.com", Type: "A", TTL: 60, Values: []string{"192.0.2.99"}},
		},
	}
}

func reverseZone() nameserver.Zone {
	return nameserver.Zone{
		Name: "2.0.192.in-addr.arpa", Serial: 7, TTL: 86400,
		Nameservers: []string{"ns1.berth.test"},
		RRsets: []nameserver.RRset{
			{Name: "10.2.0.192.in-addr.arpa", Type: "PTR", TTL: 86400, Values: []string{"www.example.com."}},
		},
	}
}

// query asks addr over network ("udp" or "tcp") for name and type.
func query(t *testing.T, network, addr, name string, qtype uint16) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	c := dns.Client{Net: network, Timeout: 5 * time.Second, UDPSize: 512}
	in, _, err := c.Exchange(m, addr)
	if err != nil {
		t.Fatalf("%s %s %s: %v", network, name, dns.TypeToString[qtype], err)
	}
	if in.Truncated {
		t.Fatalf("%s %s %s: truncated", network, name, dns.TypeToString[qtype])
	}
	return in
}

// rrs are records as miekg/dns writes them, sorted; want are "name ttl TYPE value"
// lines written the same way.
func rrs(rr []dns.RR) []string {
	out := make([]string, 0, len(rr))
	for _, r := range rr {
		out = append(out, r.String())
	}
	slices.Sort(out)
	return out
}

func want(t *testing.T, lines ...string) []string {
	t.Helper()
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		out = append(out, rr.String())
	}
	slices.Sort(out)
	return out
}

// expectAnswer checks an authoritative NOERROR answer of exactly lines, over UDP and
// TCP.
func expectAnswer(t *testing.T, addr, name string, qtype uint16, lines ...string) {
	t.Helper()
	for _, network := range []string{"udp", "tcp"} {
		in := query(t, network, addr, name, qtype)
		if in.Rcode != dns.RcodeSuccess || !in.Authoritative {
			t.Errorf("%s %s %s: rcode %s, AA %v; want NOERROR, AA", network, name,
				dns.TypeToString[qtype], dns.RcodeToString[in.Rcode], in.Authoritative)
		}
		if got, w := rrs(in.Answer), want(t, lines...); !slices.Equal(got, w) {
			t.Errorf("%s %s %s: answer\n%s\nwant\n%s", network, name, dns.TypeToString[qtype],
				strings.Join(got, "\n"), strings.Join(w, "\n"))
		}
	}
}

func expectRcode(t *testing.T, addr, name string, qtype uint16, rcode int) *dns.Msg {
	t.Helper()
	var in *dns.Msg
	for _, network := range []string{"udp", "tcp"} {
		in = query(t, network, addr, name, qtype)
		if in.Rcode != rcode {
			t.Errorf("%s %s %s: rcode %s, want %s", network, name, dns.TypeToString[qtype],
				dns.RcodeToString[in.Rcode], dns.RcodeToString[rcode])
		}
	}
	return in
}

const soaTimers = "10800 3600 1209600 300"

func TestPublishServesTheZone(t *testing.T) {
	t.Parallel()
	srv := powerdnstest.Start(t, powerdnstest.Options{})
	c := newClient(t, srv, srv.APIKey)
	z := forwardZone(t)
	for _, zone := range []nameserver.Zone{z, reverseZone()} {
		if err := c.Publish(ctx(t), zone); err != nil {
			t.Fatalf("Publish %s: %v", zone.Name, err)
		}
	}
	a := srv.DNSAddr
	expectAnswer(t, a, "example.com", dns.TypeSOA,
		"example.com. 3600 IN SOA ns1.berth.test. hostmaster.example.com. 2026112701 "+soaTimers)
	expectAnswer(t, a, "example.com", dns.TypeNS,
		"example.com. 3600 IN NS ns1.berth.test.", "example.com. 3600 IN NS ns2.berth.test.")
	expectAnswer(t, a, "example.com", dns.TypeA, "example.com. 3600 IN A 192.0.2.1")
	expectAnswer(t, a, "example.com", dns.TypeMX,
		"example.com. 3600 IN MX 10 mail.example.com.", "example.com. 3600 IN MX 20 mx2.example.net.")
	expectAnswer(t, a, "example.com", dns.TypeTXT,
		"example.com. 3600 IN TXT "+longTXT(t), `example.com. 3600 IN TXT "v=spf1 -all"`)
	expectAnswer(t, a, "example.com", dns.TypeCAA, `example.com. 3600 IN CAA 0 issue "letsencrypt.org"`)
	expectAnswer(t, a, "www.example.com", dns.TypeA,
		"www.example.com. 300 IN A 192.0.2.10", "www.example.com. 300 IN A 192.0.2.11")
	expectAnswer(t, a, "www.example.com", dns.TypeAAAA, "www.example.com. 300 IN AAAA 2001:db8::10")
	expectAnswer(t, a, "mapped.example.com", dns.TypeAAAA,
		"mapped.example.com. 3600 IN AAAA ::ffff:192.0.2.26", "mapped.example.com. 3600 IN AAAA ::c000:21b")
	expectAnswer(t, a, "_sip._tcp.example.com", dns.TypeSRV,
		"_sip._tcp.example.com. 3600 IN SRV 10 60 5060 sip.example.com.")
	expectAnswer(t, a, "alias.example.com", dns.TypeA, "alias.example.com. 3600 IN CNAME www.example.com.",
		"www.example.com. 300 IN A 192.0.2.10", "www.example.com. 300 IN A 192.0.2.11")
	expectAnswer(t, a, "anything.wild.example.com", dns.TypeA, "anything.wild.example.com. 60 IN A 192.0.2.99")
	expectAnswer(t, a, "2.0.192.in-addr.arpa", dns.TypeSOA,
		"2.0.192.in-addr.arpa. 86400 IN SOA ns1.berth.test. hostmaster.2.0.192.in-addr.arpa. 7 "+soaTimers)
	expectAnswer(t, a, "10.2.0.192.in-addr.arpa", dns.TypePTR, "10.2.0.192.in-addr.arpa. 86400 IN PTR www.example.com.")
	checkDelegation(t, a)
	expectRcode(t, a, "example.org", dns.TypeA, dns.RcodeRefused)
}

// checkDelegation: a name under sub.example.com is referred to sub's nameservers, not
// answered authoritatively.
func checkDelegation(t *testing.T, addr string) {
	t.Helper()
	for _, network := range []string{"udp", "tcp"} {
		in := query(t, network, addr, "host.sub.example.com", dns.TypeA)
		got, w := rrs(in.Ns), want(t, "sub.example.com. 3600 IN NS ns1.other.test.", "sub.example.com. 3600 IN NS ns2.other.test.")
		if in.Rcode != dns.RcodeSuccess || in.Authoritative || len(in.Answer) != 0 || !slices.Equal(got, w) {
			t.Errorf("%s: the delegation answered %s, AA %v, answer %v, authority\n%s\nwant a referral to\n%s",
				network, dns.RcodeToString[in.Rcode], in.Authoritative, in.Answer,
				strings.Join(got, "\n"), strings.Join(w, "\n"))
		}
	}
}

func TestRepublishServesTheNewStateAtOnce(t *testing.T) {
	t.Parallel()
	srv := powerdnstest.Start(t, powerdnstest.Options{})
	c := newClient(t, srv, srv.APIKey)
	z := forwardZone(t)
	if err := c.Publish(ctx(t), z); err != nil {
		t.Fatal(err)
	}
	a := srv.DNSAddr
	// Asked once, so that PowerDNS's caches hold the old answers.
	expectAnswer(t, a, "www.example.com", dns.TypeA,
		"www.example.com. 300 IN A 192.0.2.10", "www.example.com. 300 IN A 192.0.2.11")
	expectAnswer(t, a, "www.example.com", dns.TypeAAAA, "www.example.com. 300 IN AAAA 2001:db8::10")
	expectAnswer(t, a, "example.com", dns.TypeSOA,
		"example.com. 3600 IN SOA ns1.berth.test. hostmaster.example.com. 2026112701 "+soaTimers)
	expectRcode(t, a, "new.example.com", dns.TypeA, dns.RcodeNameError)

	expectAnswer(t, a, "alias.example.com", dns.TypeA, "alias.example.com. 3600 IN CNAME www.example.com.",
		"www.example.com. 300 IN A 192.0.2.10", "www.example.com. 300 IN A 192.0.2.11")

	z = republished(z)
	if err := c.Publish(ctx(t), z); err != nil {
		t.Fatal(err)
	}
	expectAnswer(t, a, "www.example.com", dns.TypeA, "www.example.com. 600 IN A 192.0.2.20")
	expectAnswer(t, a, "new.example.com", dns.TypeA, "new.example.com. 60 IN A 192.0.2.30")
	newSOA := "example.com. 3600 IN SOA ns3.berth.test. hostmaster.example.com. 2026112702 " + soaTimers
	expectAnswer(t, a, "example.com", dns.TypeSOA, newSOA)
	expectAnswer(t, a, "example.com", dns.TypeNS, "example.com. 3600 IN NS ns3.berth.test.")
	// The AAAA is gone: NODATA, the new SOA in authority.
	in := expectRcode(t, a, "www.example.com", dns.TypeAAAA, dns.RcodeSuccess)
	if len(in.Answer) != 0 || !slices.Equal(rrs(in.Ns), want(t, strings.Replace(newSOA, " 3600 ", " 300 ", 1))) {
		t.Errorf("the removed AAAA: answer %v, authority %v; want NODATA with the new SOA", in.Answer, in.Ns)
	}
	expectRcode(t, a, "nothing.example.com", dns.TypeA, dns.RcodeNameError)
	expectAnswer(t, a, "mail.example.com", dns.TypeA, "mail.example.com. 3600 IN A 192.0.2.25")
	expectAnswer(t, a, "alias.example.com", dns.TypeA, "alias.example.com. 60 IN A 192.0.2.40")
	expectAnswer(t, a, "mapped.example.com", dns.TypeAAAA, "mapped.example.com. 60 IN CNAME www.example.com.")
}

// republished is z with its serial raised and the changes a customer makes: another
// nameserver, www's AAAA removed and its A replaced, a new name, and two names whose
// type changes (alias from CNAME to A, mapped from AAAA to CNAME: PowerDNS refuses
// a CNAME beside another type even for a moment within one PATCH).
func republished(z nameserver.Zone) nameserver.Zone {
	z.Serial++
	z.Nameservers = []string{"ns3.berth.test"}
	var sets []nameserver.RRset
	for _, s := range z.RRsets {
		switch s.Name + " " + s.Type {
		case "www.example.com AAAA":
			continue
		case "www.example.com A":
			s = nameserver.RRset{Name: s.Name, Type: "A", TTL: 600, Values: []string{"192.0.2.20"}}
		case "alias.example.com CNAME":
			s = nameserver.RRset{Name: s.Name, Type: "A", TTL: 60, Values: []string{"192.0.2.40"}}
		case "mapped.example.com AAAA":
			s = nameserver.RRset{Name: s.Name, Type: "CNAME", TTL: 60, Values: []string{"www.example.com."}}
		}
		sets = append(sets, s)
	}
	z.RRsets = append(sets, nameserver.RRset{Name: "new.example.com", Type: "A", TTL: 60, Values: []string{"192.0.2.30"}})
	return z
}

func TestPublishTwiceChangesNothing(t *testing.T) {
	t.Parallel()
	srv := powerdnstest.Start(t, powerdnstest.Options{})
	c := newClient(t, srv, srv.APIKey)
	z := forwardZone(t)
	for i := range 2 {
		if err := c.Publish(ctx(t), z); err != nil {
			t.Fatalf("Publish #%d: %v", i+1, err)
		}
	}
	have, err := c.readZone(ctx(t), z.Name, true)
	if err != nil || have == nil {
		t.Fatalf("readZone: %v, %v", have, err)
	}
	// PowerDNS holds the values as Berth writes them: nothing left to PATCH, so a
	// publish of an unchanged zone sends none.
	if d := diff(have.RRsets, wantRRsets(z)); len(d) != 0 {
		t.Errorf("after publishing, PowerDNS's RRsets differ from the zone's: %+v", d)
	}
	if have.SOAEdit != "" || have.SOAEditAPI != "" {
		t.Errorf("soa_edit %q, soa_edit_api %q; want none (the serial is Berth's)", have.SOAEdit, have.SOAEditAPI)
	}
	expectAnswer(t, srv.DNSAddr, "example.com", dns.TypeSOA,
		"example.com. 3600 IN SOA ns1.berth.test. hostmaster.example.com. 2026112701 "+soaTimers)
}

// A zone PowerDNS had before Berth published it is served as Berth's: made with
// PowerDNS's defaults (SOA-EDIT-API DEFAULT, which rewrites serials), or in another
// account, it is listed by Zones once published.
func TestPublishOverAZoneMadeElsewhere(t *testing.T) {
	t.Parallel()
	for name, foreign := range map[string]map[string]any{
		"defaults":        {},
		"another account": {"account": "someone", "soa_edit_api": ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := powerdnstest.Start(t, powerdnstest.Options{})
			c := newClient(t, srv, srv.APIKey)
			foreign["name"], foreign["kind"], foreign["nameservers"] = "example.com.", "Native", []string{"ns.elsewhere.test."}
			if err := c.do(ctx(t), http.MethodPost, "/zones", foreign, nil); err != nil {
				t.Fatal(err)
			}
			if err := c.Publish(ctx(t), forwardZone(t)); err != nil {
				t.Fatal(err)
			}
			expectAnswer(t, srv.DNSAddr, "example.com", dns.TypeSOA,
				"example.com. 3600 IN SOA ns1.berth.test. hostmaster.example.com. 2026112701 "+soaTimers)
			expectAnswer(t, srv.DNSAddr, "example.com", dns.TypeNS,
				"example.com. 3600 IN NS ns1.berth.test.", "example.com. 3600 IN NS ns2.berth.test.")
			if names, err := c.Zones(ctx(t)); err != nil || !slices.Equal(names, []string{"example.com"}) {
				t.Errorf("Zones: %v, %v; want example.com", names, err)
			}
		})
	}
}

func TestWithdraw(t *testing.T) {
	t.Parallel()
	srv := powerdnstest.Start(t, powerdnstest.Options{})
	c := newClient(t, srv, srv.APIKey)
	// A zone of the operator's own on the same PowerDNS: not Berth's to list.
	other := map[string]any{"name": "operator.test.", "kind": "Native", "nameservers": []string{"ns.operator.test."}}
	if err := c.do(ctx(t), http.MethodPost, "/zones", other, nil); err != nil {
		t.Fatal(err)
	}
	for _, z := range []nameserver.Zone{forwardZone(t), reverseZone()} {
		if err := c.Publish(ctx(t), z); err != nil {
			t.Fatal(err)
		}
	}
	names, err := c.Zones(ctx(t))
	if err != nil || !slices.Equal(names, []string{"2.0.192.in-addr.arpa", "example.com"}) {
		t.Fatalf("Zones: %v, %v", names, err)
	}
	expectAnswer(t, srv.DNSAddr, "www.example.com", dns.TypeAAAA, "www.example.com. 300 IN AAAA 2001:db8::10")
	for i := range 2 { // the second time, of a zone PowerDNS no longer has
		if err := c.Withdraw(ctx(t), "example.com"); err != nil {
			t.Fatalf("Withdraw #%d: %v", i+1, err)
		}
	}
	expectRcode(t, srv.DNSAddr, "www.example.com", dns.TypeAAAA, dns.RcodeRefused)
	expectRcode(t, srv.DNSAddr, "example.com", dns.TypeSOA, dns.RcodeRefused)
	expectAnswer(t, srv.DNSAddr, "10.2.0.192.in-addr.arpa", dns.TypePTR,
		"10.2.0.192.in-addr.arpa. 86400 IN PTR www.example.com.")
	if names, err = c.Zones(ctx(t)); err != nil || !slices.Equal(names, []string{"2.0.192.in-addr.arpa"}) {
		t.Fatalf("Zones after the withdrawal: %v, %v", names, err)
	}
}

func TestWrongAPIKey(t *testing.T) {
	t.Parallel()
	srv := powerdnstest.Start(t, powerdnstest.Options{})
	c := newClient(t, srv, "not-"+srv.APIKey)
	err := c.Publish(ctx(t), forwardZone(t))
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
		t.Fatalf("Publish with a wrong key: %v; want a 401 *APIError", err)
	}
	if !strings.Contains(err.Error(), "API key") || errors.Is(err, ErrRetryable) {
		t.Errorf("the error %q should name the API key and not be retryable", err)
	}
	if _, err := c.Zones(ctx(t)); !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
		t.Errorf("Zones with a wrong key: %v", err)
	}
}

// A zone PowerDNS refuses is an error with PowerDNS's own text, not retryable.
func TestRefusedZoneKeepsPowerDNSText(t *testing.T) {
	t.Parallel()
	srv := powerdnstest.Start(t, powerdnstest.Options{})
	c := newClient(t, srv, srv.APIKey)
	z := forwardZone(t)
	z.RRsets = append(z.RRsets, nameserver.RRset{Name: "bad.example.com", Type: "A", TTL: 60, Values: []string{"not-an-address"}})
	err := c.Publish(ctx(t), z)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status/100 != 4 || ae.Message == "" || errors.Is(err, ErrRetryable) {
		t.Fatalf("Publish of a bad A: %v; want a 4xx *APIError with PowerDNS's text, not retryable", err)
	}
	t.Logf("PowerDNS said: %v", err)
}

func TestPowerDNSStoppedIsRetryable(t *testing.T) {
	t.Parallel()
	srv := powerdnstest.Start(t, powerdnstest.Options{})
	c := newClient(t, srv, srv.APIKey)
	srv.Stop()
	for name, err := range map[string]error{
		"Publish":  c.Publish(ctx(t), forwardZone(t)),
		"Withdraw": c.Withdraw(ctx(t), "example.com"),
	} {
		if !errors.Is(err, ErrRetryable) {
			t.Errorf("%s with PowerDNS stopped: %v; want ErrRetryable", name, err)
		}
	}
	if _, err := c.Zones(ctx(t)); !errors.Is(err, ErrRetryable) {
		t.Errorf("Zones with PowerDNS stopped: %v; want ErrRetryable", err)
	}
}

func TestAXFROnlyToAllowed(t *testing.T) {
	t.Parallel()
	for _, allowed := range []bool{true, false} {
		t.Run(fmt.Sprint("allowed=", allowed), func(t *testing.T) {
			t.Parallel()
			var o powerdnstest.Options
			if allowed {
				o.AllowAXFR = []string{"127.0.0.0/8"}
			}
			srv := powerdnstest.Start(t, o)
			c := newClient(t, srv, srv.APIKey)
			if err := c.Publish(ctx(t), reverseZone()); err != nil {
				t.Fatal(err)
			}
			m := new(dns.Msg)
			m.SetAxfr("2.0.192.in-addr.arpa.")
			env, err := (&dns.Transfer{}).In(m, srv.DNSAddr)
			var records int
			if err == nil {
				for e := range env {
					if e.Error != nil {
						err = e.Error
						break
					}
					records += len(e.RR)
				}
			}
			// SOA, NS, PTR, SOA again.
			if ok := err == nil && records == 4; ok != allowed {
				t.Errorf("AXFR: %d records, %v; allowed %v", records, err, allowed)
			}
		})
	}
}
