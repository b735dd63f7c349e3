package embedded_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/nameserver/embedded"
)

func exampleZone() nameserver.Zone {
	return nameserver.Zone{Name: "example.com", Serial: 1, TTL: 3600, Nameservers: []string{"ns1.berth.example"},
		RRsets: []nameserver.RRset{{Name: "www.example.com", Type: "A", TTL: 300, Values: []string{"192.0.2.2"}}}}
}

func started(t *testing.T, src embedded.Source, o embedded.Options) string {
	t.Helper()
	if src == nil {
		mem := embedded.NewMemory()
		if err := mem.Publish(context.Background(), exampleZone()); err != nil {
			t.Fatal(err)
		}
		src = mem
	}
	return serve(t, embedded.New(src, o))
}

// TestRefusesAbuse: what a nameserver must not answer in full (docs/SECURITY.md, DNS).
func TestRefusesAbuse(t *testing.T) {
	t.Parallel()
	addr := started(t, nil, embedded.Options{})
	q := func(name string, qtype uint16) *dns.Msg { return new(dns.Msg).SetQuestion(name, qtype) }
	for _, tc := range []struct {
		name  string
		req   func() *dns.Msg
		rcode int
	}{
		{"two questions", func() *dns.Msg {
			m := q("www.example.com.", dns.TypeA)
			m.Question = append(m.Question, m.Question[0])
			return m
		}, dns.RcodeFormatError},
		{"no question", func() *dns.Msg { m := q("www.example.com.", dns.TypeA); m.Question = nil; return m }, dns.RcodeFormatError},
		{"NOTIFY", func() *dns.Msg { m := q("example.com.", dns.TypeSOA); m.Opcode = dns.OpcodeNotify; return m }, dns.RcodeNotImplemented},
		{"UPDATE", func() *dns.Msg { m := q("example.com.", dns.TypeSOA); m.Opcode = dns.OpcodeUpdate; return m }, dns.RcodeNotImplemented},
		{"STATUS", func() *dns.Msg { m := q("example.com.", dns.TypeSOA); m.Opcode = dns.OpcodeStatus; return m }, dns.RcodeNotImplemented},
		{"class CH", func() *dns.Msg { m := q("version.bind.", dns.TypeTXT); m.Question[0].Qclass = dns.ClassCHAOS; return m }, dns.RcodeRefused},
		{"class ANY", func() *dns.Msg { m := q("www.example.com.", dns.TypeA); m.Question[0].Qclass = dns.ClassANY; return m }, dns.RcodeRefused},
		{"EDNS version 1", func() *dns.Msg {
			m := q("www.example.com.", dns.TypeA)
			m.SetEdns0(1232, false)
			m.IsEdns0().SetVersion(1)
			return m
		}, dns.RcodeBadVers},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := dns.Exchange(tc.req(), addr)
			if err != nil {
				t.Fatal(err)
			}
			if r.Rcode != tc.rcode || len(r.Answer) != 0 {
				t.Fatalf("answer %s, want %s and no records:\n%v", dns.RcodeToString[r.Rcode], dns.RcodeToString[tc.rcode], r)
			}
		})
	}
}

// TestANYAnsweredMinimally: ANY gets one synthesized HINFO (RFC 8482), not every
// RRset of the name.
func TestANYAnsweredMinimally(t *testing.T) {
	t.Parallel()
	addr := started(t, nil, embedded.Options{})
	r, err := dns.Exchange(new(dns.Msg).SetQuestion("example.com.", dns.TypeANY), addr)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Answer) != 1 || r.Answer[0].Header().Rrtype != dns.TypeHINFO || len(r.Ns)+len(r.Extra) != 0 {
		t.Fatalf("ANY at the apex (SOA, NS): want one HINFO alone:\n%v", r)
	}
}

// TestTCPIdleTimeout: a connection that sends nothing more is closed.
func TestTCPIdleTimeout(t *testing.T) {
	t.Parallel()
	addr := started(t, nil, embedded.Options{TCPIdleTimeout: 200 * time.Millisecond})
	c, err := dns.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WriteMsg(new(dns.Msg).SetQuestion("www.example.com.", dns.TypeA)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadMsg(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	start := time.Now()
	if _, err := c.ReadMsg(); !errors.Is(err, io.EOF) {
		t.Fatalf("read after idling: %v, want EOF", err)
	}
	if idle := time.Since(start); idle > 2*time.Second {
		t.Fatalf("closed after %v idle, want about 200ms", idle)
	}
}

// TestTCPConnectionCap: connections beyond the cap are closed at once; one freed
// is taken again.
func TestTCPConnectionCap(t *testing.T) {
	t.Parallel()
	addr := started(t, nil, embedded.Options{MaxTCPConns: 2})
	first := []*dns.Conn{tcpAsk(t, addr), tcpAsk(t, addr)}
	c, err := dns.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.WriteMsg(new(dns.Msg).SetQuestion("www.example.com.", dns.TypeA))
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if r, err := c.ReadMsg(); err == nil {
		t.Fatalf("a third connection was answered: %v", r)
	}
	c.Close()
	first[0].Close()
	deadline := time.Now().Add(2 * time.Second)
	for {
		c, err := dns.Dial("tcp", addr)
		if err == nil && c.WriteMsg(new(dns.Msg).SetQuestion("www.example.com.", dns.TypeA)) == nil {
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			_, err = c.ReadMsg()
			c.Close()
			if err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no connection answered after one of the two was closed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	first[1].Close()
}

// tcpAsk opens a TCP connection and has one query answered on it.
func tcpAsk(t *testing.T, addr string) *dns.Conn {
	t.Helper()
	c, err := dns.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMsg(new(dns.Msg).SetQuestion("www.example.com.", dns.TypeA)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadMsg(); err != nil {
		t.Fatal(err)
	}
	return c
}

// failing is a Source that cannot read its zones.
type failing struct{}

func (failing) Enclosing(context.Context, string) (nameserver.Zone, bool, error) {
	return nameserver.Zone{}, false, errors.New("store down")
}

func TestSourceErrorIsServfail(t *testing.T) {
	t.Parallel()
	addr := started(t, failing{}, embedded.Options{})
	r, err := dns.Exchange(new(dns.Msg).SetQuestion("www.example.com.", dns.TypeA), addr)
	if err != nil {
		t.Fatal(err)
	}
	if r.Rcode != dns.RcodeServerFailure {
		t.Fatalf("want SERVFAIL:\n%v", r)
	}
}

// TestListenAndServeStops: ListenAndServe answers on the port it was given and
// returns nil once its context ends.
func TestListenAndServeStops(t *testing.T) {
	t.Parallel()
	pc, ln := listen(t)
	addr := pc.LocalAddr().String()
	pc.Close()
	ln.Close()
	mem := embedded.NewMemory()
	_ = mem.Publish(context.Background(), exampleZone())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- embedded.New(mem, embedded.Options{}).ListenAndServe(ctx, addr) }()
	deadline := time.Now().Add(2 * time.Second)
	for {
		r, _, err := (&dns.Client{Timeout: 200 * time.Millisecond}).Exchange(new(dns.Msg).SetQuestion("www.example.com.", dns.TypeA), addr)
		if err == nil && len(r.Answer) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not answering on %s: %v", addr, err)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(6 * time.Second):
		t.Fatal("ListenAndServe still running 6 s after its context ended")
	}
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("TCP port still held: %v", err)
	}
	ln2.Close()
}

// TestSourceErrorsLoggedOnceASecond: a store that is down fails every query, and
// the log says so once, not once a query.
func TestSourceErrorsLoggedOnceASecond(t *testing.T) {
	t.Parallel()
	logged := &syncWriter{w: new(bytes.Buffer)}
	log := slog.New(slog.NewTextHandler(logged, nil))
	addr := started(t, failing{}, embedded.Options{Logger: log})
	for range 20 {
		if _, err := dns.Exchange(new(dns.Msg).SetQuestion("www.example.com.", dns.TypeA), addr); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(logged.String(), "store down"); n != 1 {
		t.Fatalf("%d log lines for 20 failed queries in well under a second:\n%s", n, logged.String())
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestLargeTransfer: a zone larger than one message (64 KiB) goes over in several,
// every record once, SOA first and last.
func TestLargeTransfer(t *testing.T) {
	t.Parallel()
	z := exampleZone()
	for i := range 3000 {
		z.RRsets = append(z.RRsets, nameserver.RRset{Name: fmt.Sprintf("n%d.example.com", i), Type: "TXT",
			Values: []string{`"` + strings.Repeat("x", 200) + `"`}})
	}
	mem := embedded.NewMemory()
	if err := mem.Publish(context.Background(), z); err != nil {
		t.Fatal(err)
	}
	addr := started(t, mem, embedded.Options{AllowTransfer: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	envs, err := new(dns.Transfer).In(new(dns.Msg).SetAxfr("example.com."), addr)
	if err != nil {
		t.Fatal(err)
	}
	var rrs []dns.RR
	messages := 0
	for e := range envs {
		if e.Error != nil {
			t.Fatal(e.Error)
		}
		messages++
		rrs = append(rrs, e.RR...)
	}
	seen := map[string]bool{}
	for _, rr := range rrs[1 : len(rrs)-1] {
		seen[rr.String()] = true
	}
	if want := 1 + 1 + 3000; len(seen) != want || len(rrs) != want+2 || messages < 10 ||
		rrs[0].Header().Rrtype != dns.TypeSOA || rrs[len(rrs)-1].Header().Rrtype != dns.TypeSOA {
		t.Fatalf("%d records (%d distinct) in %d messages, want %d between two SOAs in 10 or more", len(rrs), len(seen), messages, want)
	}
}

// TestTransferRefused: AXFR to an address outside --dns-allow-transfer is REFUSED,
// exactly (docs/api.md, Domains), over TCP and over UDP; the shared suite takes
// PowerDNS's NOTAUTH too.
func TestTransferRefused(t *testing.T) {
	t.Parallel()
	addr := started(t, nil, embedded.Options{AllowTransfer: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	for _, network := range []string{"tcp", "udp"} {
		c := &dns.Client{Net: network, Timeout: 5 * time.Second}
		r, _, err := c.Exchange(new(dns.Msg).SetAxfr("example.com."), addr)
		if err != nil {
			t.Fatalf("%s: %v", network, err)
		}
		if r.Rcode != dns.RcodeRefused || len(r.Answer) != 0 {
			t.Errorf("AXFR over %s from outside the allowed range: %s, want REFUSED and no records", network, dns.RcodeToString[r.Rcode])
		}
	}
}
