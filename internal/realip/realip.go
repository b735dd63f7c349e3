// Package realip finds a request's client address behind trusted proxies (a load
// balancer in front of several berthd): when the connection comes from one of them,
// the client is the rightmost address of X-Forwarded-For that is not itself a
// trusted proxy. A connection from anywhere else is its own client, whatever it
// claims: X-Forwarded-For is anyone's to write, and only the hops Berth trusts to
// append the address they saw can vouch for it.
//
// haproxy's `option forwardfor` and nginx's
// `proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for` append that address.
package realip

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Proxies are the addresses whose X-Forwarded-For Berth believes.
type Proxies struct {
	prefixes []netip.Prefix
}

// Parse reads serve's --trusted-proxy values: each an address (10.0.0.5, ::1) or a
// network in CIDR notation (10.0.0.0/24, fd00::/8).
func Parse(values []string) (Proxies, error) {
	var p Proxies
	for _, v := range values {
		v = strings.TrimSpace(v)
		var pre netip.Prefix
		var err error
		if strings.Contains(v, "/") {
			pre, err = netip.ParsePrefix(v)
			if err == nil && pre != pre.Masked() {
				return Proxies{}, fmt.Errorf("%q has host bits set; the network is %s", v, pre.Masked())
			}
		} else {
			var a netip.Addr
			if a, err = netip.ParseAddr(v); err == nil {
				if a.Zone() != "" {
					return Proxies{}, fmt.Errorf("%q: an address with a zone cannot be matched", v)
				}
				pre = netip.PrefixFrom(a, a.BitLen())
			}
		}
		if err != nil {
			return Proxies{}, fmt.Errorf("%q is neither an IP address nor a network in CIDR notation (10.0.0.0/24)", v)
		}
		p.prefixes = append(p.prefixes, pre)
	}
	return p, nil
}

// Empty reports whether no proxy is trusted (every connection is its own client).
func (p Proxies) Empty() bool { return len(p.prefixes) == 0 }

func (p Proxies) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, pre := range p.prefixes {
		if pre.Contains(a) {
			return true
		}
	}
	return false
}

// Client is the client address of a request that came over a connection from
// remoteAddr (http.Request.RemoteAddr, host:port) with the X-Forwarded-For header
// lines xff. Behind trusted proxies it walks the list from the right, past every
// trusted proxy, to the first address that is not one; an entry that is not an
// address ends the walk at the hop that handed it on (nothing further left can be
// believed). If every entry is a trusted proxy, the leftmost is the client.
func (p Proxies) Client(remoteAddr string, xff []string) string {
	return p.client(hostOf(remoteAddr), xff)
}

// client is Client of the connection's host.
func (p Proxies) client(peer string, xff []string) string {
	if len(p.prefixes) == 0 || len(xff) == 0 {
		return peer
	}
	a, err := netip.ParseAddr(peer)
	if err != nil || !p.trusted(a) {
		return peer
	}
	client := peer
	for i := len(xff) - 1; i >= 0; i-- {
		entries := strings.Split(xff[i], ",")
		for j := len(entries) - 1; j >= 0; j-- {
			e := strings.TrimSpace(entries[j])
			if e == "" {
				continue
			}
			a, ok := parseEntry(e)
			if !ok {
				return client
			}
			client = a.String()
			if !p.trusted(a) {
				return client
			}
		}
	}
	return client
}

// Handler hands h each request with RemoteAddr set to its client's address (port 0)
// when the connection comes from a trusted proxy; other requests go on untouched.
func (p Proxies) Handler(h http.Handler) http.Handler {
	if len(p.prefixes) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		xff := r.Header.Values("X-Forwarded-For")
		if len(xff) > 0 {
			peer := hostOf(r.RemoteAddr)
			if c := p.client(peer, xff); c != peer {
				r2 := new(http.Request)
				*r2 = *r
				r2.RemoteAddr = net.JoinHostPort(c, "0")
				r = r2
			}
		}
		h.ServeHTTP(w, r)
	})
}

// hostOf is the host of host:port (all of s when it has no port).
func hostOf(s string) string {
	if host, _, err := net.SplitHostPort(s); err == nil {
		return host
	}
	return s
}

// parseEntry reads one X-Forwarded-For entry: an address, or an address with a port
// (1.2.3.4:5678, [2001:db8::1]:5678), as some proxies write them. A zone is dropped.
func parseEntry(e string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(e); err == nil {
		return a.WithZone("").Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(e); err == nil {
		return ap.Addr().WithZone("").Unmap(), true
	}
	if strings.HasPrefix(e, "[") && strings.HasSuffix(e, "]") {
		if a, err := netip.ParseAddr(e[1 : len(e)-1]); err == nil {
			return a.WithZone("").Unmap(), true
		}
	}
	return netip.Addr{}, false
}
