package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
)

// fakeNet is the network of the delivery tests: an injected resolver that answers
// from a table, and an injected dialer that connects only to 127.0.0.1. A test makes
// a public address (203.0.113.5:443) reach a local httptest server by routing it;
// any other dial is recorded and refused, so no packet leaves for 10.0.0.1 or
// 169.254.169.254 whatever the code under test does.
type fakeNet struct {
	t       *testing.T
	mu      sync.Mutex
	names   map[string][][]netip.Addr // each lookup takes the next answer; the last stays
	dnsErr  error                     // every lookup fails with it when set
	routes  map[string]string         // dialed address -> 127.0.0.1:port
	lookups []string
	dials   []string
}

func newFakeNet(t *testing.T) *fakeNet {
	return &fakeNet{t: t, names: map[string][][]netip.Addr{}, routes: map[string]string{}}
}

// resolve makes host answer addrs at its next lookup (after earlier answers).
func (f *fakeNet) resolve(host string, addrs ...string) {
	var as []netip.Addr
	for _, a := range addrs {
		as = append(as, netip.MustParseAddr(a))
	}
	f.names[host] = append(f.names[host], as)
}

// route makes a dial to addr reach the local server s.
func (f *fakeNet) route(addr string, s *httptest.Server) {
	f.routes[addr] = s.Listener.Addr().String()
}

func (f *fakeNet) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups = append(f.lookups, host)
	if f.dnsErr != nil {
		return nil, f.dnsErr
	}
	answers := f.names[host]
	if len(answers) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	if len(answers) > 1 {
		f.names[host] = answers[1:]
	}
	return answers[0], nil
}

func (f *fakeNet) dial(ctx context.Context, network, address string) (net.Conn, error) {
	f.mu.Lock()
	f.dials = append(f.dials, address)
	local, routed := f.routes[address]
	f.mu.Unlock()
	if !routed {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || ap.Addr() != netip.MustParseAddr("127.0.0.1") {
			f.t.Errorf("dial %s: the fake network connects only to 127.0.0.1", address)
			return nil, errors.New("fake network: refused to dial " + address)
		}
		local = address
	}
	var d net.Dialer
	return d.DialContext(ctx, network, local)
}

func (f *fakeNet) dialed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.dials...)
}

// client is a production Client (private addresses refused) on the fake network,
// trusting the TLS server s's certificate (valid for example.com).
func (f *fakeNet) client(s *httptest.Server, o Options) *Client {
	o.Resolver, o.Dial = f, f.dial
	if s != nil {
		roots := x509.NewCertPool()
		roots.AddCert(s.Certificate())
		o.TLSConfig = &tls.Config{RootCAs: roots}
	}
	return New(o)
}
