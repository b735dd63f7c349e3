package powerdns

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/nameserver/powerdns/powerdnstest"
)

// bigZone is a zone at dnszone's limit, 5,000 RRsets, the address of each host
// shifted by shift.
func bigZone(serial uint32, shift int) nameserver.Zone {
	z := nameserver.Zone{Name: "big.example", Serial: serial, TTL: 3600, Nameservers: []string{"ns1.berth.test"}}
	for i := range 5000 {
		ip := fmt.Sprintf("10.%d.%d.%d", (i+shift)>>16&255, (i+shift)>>8&255, (i+shift)&255)
		z.RRsets = append(z.RRsets, nameserver.RRset{Name: fmt.Sprintf("h%d.big.example", i), Type: "A", TTL: 300, Values: []string{ip}})
	}
	return z
}

// A zone of 5,000 RRsets is created, then has every RRset replaced, each in one
// request well within the client's DefaultTimeout.
func TestPublishLargeZone(t *testing.T) {
	t.Parallel()
	srv := powerdnstest.Start(t, powerdnstest.Options{})
	c := newClient(t, srv, srv.APIKey)
	for i, z := range []nameserver.Zone{bigZone(1, 0), bigZone(2, 7)} {
		start := time.Now()
		if err := c.Publish(ctx(t), z); err != nil {
			t.Fatalf("Publish #%d: %v", i+1, err)
		}
		took := time.Since(start)
		t.Logf("publish #%d of 5,000 RRsets: %v", i+1, took)
		if took > DefaultTimeout/3 {
			t.Errorf("publish #%d took %v, too close to the client's timeout %v", i+1, took, DefaultTimeout)
		}
	}
	expectAnswer(t, srv.DNSAddr, "h4999.big.example", dns.TypeA, "h4999.big.example. 300 IN A 10.0.19.142")
	expectAnswer(t, srv.DNSAddr, "big.example", dns.TypeSOA,
		"big.example. 3600 IN SOA ns1.berth.test. hostmaster.big.example. 2 "+soaTimers)
}

// interleave is a transport that makes the zone, as another publisher would,
// between Publish's read and its create: PowerDNS answers the create 409.
type interleave struct {
	other   *Client
	zone    nameserver.Zone
	created atomic.Bool
}

func (i *interleave) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/zones") && !i.created.Swap(true) {
		if err := i.other.Publish(r.Context(), i.zone); err != nil {
			return nil, err
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestPublishWhileAnotherCreatesTheZone(t *testing.T) {
	t.Parallel()
	srv := powerdnstest.Start(t, powerdnstest.Options{})
	older := forwardZone(t)
	older.RRsets = older.RRsets[:1]
	tr := &interleave{other: newClient(t, srv, srv.APIKey), zone: older}
	c, err := New(Options{URL: srv.URL, APIKey: srv.APIKey, HTTPClient: &http.Client{Transport: tr, Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	z := forwardZone(t)
	z.Serial++
	if err := c.Publish(ctx(t), z); err != nil {
		t.Fatalf("Publish over a zone made meanwhile: %v", err)
	}
	if !tr.created.Load() {
		t.Fatal("the other publisher never ran")
	}
	expectAnswer(t, srv.DNSAddr, "example.com", dns.TypeSOA,
		"example.com. 3600 IN SOA ns1.berth.test. hostmaster.example.com. 2026112702 "+soaTimers)
	expectAnswer(t, srv.DNSAddr, "www.example.com", dns.TypeAAAA, "www.example.com. 300 IN AAAA 2001:db8::10")
}

// A PowerDNS that takes the connection and never answers ends in the client's
// timeout, retryable.
func TestHungPowerDNSIsRetryable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn // held open, never answered
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
	}()
	c, err := New(Options{URL: "http://" + ln.Addr().String(), APIKey: "k", HTTPClient: &http.Client{Timeout: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Publish(ctx(t), reverseZone()); !errors.Is(err, ErrRetryable) {
		t.Errorf("Publish to a hung PowerDNS: %v; want ErrRetryable", err)
	}
}
