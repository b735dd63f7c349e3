package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// Resolver finds the addresses of a host name; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DialFunc opens a connection to an address ("192.0.2.7:443"), as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// ResolveError is an attempt whose host name did not resolve.
type ResolveError struct {
	Host string
	Err  error // the resolver's; nil when it answered no address
}

func (e *ResolveError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("host %s has no address", e.Host)
	}
	// A *net.DNSError names the resolver it asked, an address of the provider's
	// network that the delivery log, which the customer reads, does not show.
	var de *net.DNSError
	if errors.As(e.Err, &de) {
		return fmt.Sprintf("host %s does not resolve: %s", e.Host, de.Err)
	}
	return fmt.Sprintf("host %s does not resolve: %v", e.Host, e.Err)
}

func (e *ResolveError) Unwrap() error { return e.Err }

// guard is the dialer of every delivery (docs/SECURITY.md, API7): it resolves the
// host at each attempt, refuses the whole host when any of its addresses is refused,
// and dials the vetted addresses themselves, so that a second resolution (DNS
// rebinding) cannot change where the connection goes.
type guard struct {
	allowPrivate bool
	own          []netip.Prefix
	resolver     Resolver
	dial         DialFunc
}

// DialContext is the transport's dialer: address is the URL's host and port.
func (g *guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var first error
	for _, a := range addrs {
		conn, err := g.dial(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		first = firstErr(first, err)
	}
	return nil, first
}

// firstErr is the first non-nil of its errors.
func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// resolve is the vetted addresses of host: itself when it is an IP address, else
// what the resolver answers now. Any refused address fails it with an *AddressError.
func (g *guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = g.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, &ResolveError{Host: host, Err: err}
		}
		if len(addrs) == 0 {
			return nil, &ResolveError{Host: host}
		}
	}
	if g.allowPrivate {
		return addrs, nil
	}
	for _, a := range addrs {
		if err := vet(a, g.own); err != nil {
			return nil, err
		}
	}
	return addrs, nil
}

// control is the default dialer's last check, on the address the socket is about to
// connect to: whatever path led there, no connection to a refused address is opened.
func (g *guard) control(_, address string, _ syscall.RawConn) error {
	if g.allowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, err)
	}
	return vet(ap.Addr(), g.own)
}
