package dnsserve

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/store"
)

// fakeStore is a Store in memory that counts its reads.
type fakeStore struct {
	version atomic.Uint64
	reads   atomic.Int32
	zones   map[string]nameserver.Zone // by name, id the index in order
	order   []string
	servers map[string]hosting.Server // by name
	ptrs    map[netip.Addr]string
}

func (f *fakeStore) DNSVersion() uint64 { return f.version.Load() }

func (f *fakeStore) EnclosingZone(_ context.Context, name string) (hosting.Domain, error) {
	f.reads.Add(1)
	for n := strings.TrimSuffix(name, "."); n != ""; {
		if z, ok := f.zones[n]; ok {
			for i, o := range f.order {
				if o == n {
					return hosting.Domain{ID: int64(i + 1), Name: n, Serial: z.Serial}, nil
				}
			}
		}
		_, rest, _ := strings.Cut(n, ".")
		n = rest
	}
	return hosting.Domain{}, store.ErrNotFound
}

func (f *fakeStore) ServedZone(_ context.Context, id int64) (nameserver.Zone, error) {
	f.reads.Add(1)
	if z, ok := f.zones[f.order[id-1]]; ok {
		return z, nil
	}
	return nameserver.Zone{}, store.ErrNotFound
}

func (f *fakeStore) ServerNamed(_ context.Context, name string) (hosting.Server, error) {
	f.reads.Add(1)
	if s, ok := f.servers[name]; ok {
		return s, nil
	}
	return hosting.Server{}, store.ErrNotFound
}

func (f *fakeStore) NetHasServer(_ context.Context, p netip.Prefix) (bool, error) {
	f.reads.Add(1)
	for _, s := range f.servers {
		for _, a := range []*string{s.IPv4, s.IPv6} {
			if a != nil && p.Contains(netip.MustParseAddr(*a)) {
				return true, nil
			}
		}
	}
	return false, nil
}

func (f *fakeStore) AddressName(_ context.Context, ip netip.Addr) (string, string, error) {
	f.reads.Add(1)
	for _, s := range f.servers {
		for _, a := range []*string{s.IPv4, s.IPv6} {
			if a != nil && netip.MustParseAddr(*a) == ip {
				return s.Name, f.ptrs[ip], nil
			}
		}
	}
	return "", "", store.ErrNotFound
}

func (f *fakeStore) addZone(name string, serial uint32, sets ...nameserver.RRset) {
	if _, ok := f.zones[name]; !ok {
		f.order = append(f.order, name)
	}
	f.zones[name] = nameserver.Zone{Name: name, Serial: serial, TTL: 3600, RRsets: sets}
	f.version.Add(1)
}

func newFake() *fakeStore {
	v4, v6 := "192.0.2.5", "2001:db8:0:1::1"
	ns := "10.0.0.1"
	return &fakeStore{zones: map[string]nameserver.Zone{}, ptrs: map[netip.Addr]string{},
		servers: map[string]hosting.Server{"web1": {Name: "web1", IPv4: &v4, IPv6: &v6}, "ns1": {Name: "ns1", IPv4: &ns}}}
}

var testOptions = Options{Nameservers: []string{"ns1.srv.example.net", "ns2.example.org"}, DefaultDomain: "srv.example.net"}

// enclosing asks s for name and returns the zone's name and its values, "-" when
// none encloses name.
func enclosing(t *testing.T, s *Source, name string) string {
	t.Helper()
	z, ok, err := s.Enclosing(context.Background(), name)
	if err != nil {
		t.Fatalf("Enclosing(%s): %v", name, err)
	}
	if !ok {
		return "-"
	}
	out := []string{z.Name}
	for _, set := range z.RRsets {
		out = append(out, set.Type+" "+strings.Join(set.Values, ","))
	}
	return strings.Join(out, " ")
}

// TestSourceCache: an answer is read once while the version stays, read again once
// it changes or once it is MaxAge old, and a zone's records are read again only when
// its serial changed; a name under a zone read already costs no read.
func TestSourceCache(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.addZone("example.com", 1, nameserver.RRset{Name: "www.example.com", Type: "A", Values: []string{"192.0.2.9"}})
	o := testOptions
	o.MaxAge = 200 * time.Millisecond
	s := New(f, o)
	steps := []struct {
		name, want string
		reads      int32
	}{
		{"www.example.com.", "example.com A 192.0.2.9", 2}, // the zone found, its records read
		{"www.example.com.", "example.com A 192.0.2.9", 0},
		{"other.example.com.", "example.com A 192.0.2.9", 0}, // under a zone read already
		{"example.org.", "-", 1},
		{"example.org.", "-", 0},
	}
	for _, st := range steps {
		before := f.reads.Load()
		if got := enclosing(t, s, st.name); got != st.want || f.reads.Load()-before != st.reads {
			t.Fatalf("%s: %q after %d reads; want %q after %d", st.name, got, f.reads.Load()-before, st.want, st.reads)
		}
	}
	f.version.Add(1) // another zone changed: this one found again, its records kept
	if before := f.reads.Load(); enclosing(t, s, "www.example.com.") != steps[0].want || f.reads.Load()-before != 1 {
		t.Fatalf("after another change: %d reads, want 1 (the serial)", f.reads.Load()-before)
	}
	f.addZone("example.com", 2, nameserver.RRset{Name: "www.example.com", Type: "A", Values: []string{"192.0.2.10"}})
	if got := enclosing(t, s, "www.example.com."); got != "example.com A 192.0.2.10" {
		t.Fatalf("after a change: %q", got)
	}
	f.zones["example.com"] = nameserver.Zone{Name: "example.com", Serial: 3, TTL: 3600} // no version: a psql edit
	time.Sleep(o.MaxAge)
	if got := enclosing(t, s, "www.example.com."); got != "example.com" {
		t.Fatalf("after MaxAge: %q, want the zone without its record", got)
	}
}

// TestSourceOperatorZones: the default domain answers each live server's name (not
// a nameserver's), a customer's zone under it is never served, and the reverse zone
// of a /24 or /64 holding a server answers its addresses' PTRs, before a customer's
// zone of the same name, which is served once no server is there.
func TestSourceOperatorZones(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.addZone("evil.srv.example.net", 1, nameserver.RRset{Name: "evil.srv.example.net", Type: "A", Values: []string{"192.0.2.66"}})
	f.addZone("2.0.192.in-addr.arpa", 1, nameserver.RRset{Name: "5.2.0.192.in-addr.arpa", Type: "PTR", Values: []string{"x.example.com."}})
	f.ptrs[netip.MustParseAddr("2001:db8:0:1::1")] = "mail.example.com"
	s := New(f, testOptions)
	for _, c := range []struct{ name, want string }{
		{"web1.srv.example.net.", "srv.example.net A 192.0.2.5 AAAA 2001:db8:0:1::1"},
		{"www.web1.srv.example.net.", "srv.example.net A 192.0.2.5 AAAA 2001:db8:0:1::1"},
		{"ns1.srv.example.net.", "srv.example.net"},
		{"evil.srv.example.net.", "srv.example.net"},
		{"srv.example.net.", "srv.example.net"},
		{"5.2.0.192.in-addr.arpa.", "2.0.192.in-addr.arpa PTR web1.srv.example.net."},
		{"6.2.0.192.in-addr.arpa.", "2.0.192.in-addr.arpa"},
		{"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.",
			"1.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa PTR mail.example.com."},
		{"1.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.", "1.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa"},
		{"2.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.", "-"},
		{"1.0.10.in-addr.arpa.", "-"},
	} {
		if got := enclosing(t, s, c.name); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	delete(f.servers, "web1")
	f.version.Add(1)
	if got := enclosing(t, s, "5.2.0.192.in-addr.arpa."); got != "2.0.192.in-addr.arpa PTR x.example.com." {
		t.Errorf("once no server is in the /24: %q, want the customer's zone", got)
	}
}

// TestSourceDefaultDomainUnderCustomerZone: a customer's zone that is a parent of the
// default domain, read first, never answers for a name under the default domain.
func TestSourceDefaultDomainUnderCustomerZone(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.addZone("example.net", 1, nameserver.RRset{Name: "www.example.net", Type: "A", Values: []string{"192.0.2.80"}})
	s := New(f, testOptions)
	for _, c := range []struct{ name, want string }{
		{"www.example.net.", "example.net A 192.0.2.80"},
		{"web1.srv.example.net.", "srv.example.net A 192.0.2.5 AAAA 2001:db8:0:1::1"},
		{"web2.srv.example.net.", "srv.example.net"},
	} {
		if got := enclosing(t, s, c.name); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestParseReverse(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		want *reverse
	}{
		{"4.2.0.192.in-addr.arpa.", &reverse{"2.0.192.in-addr.arpa.", netip.MustParsePrefix("192.0.2.0/24"), netip.MustParseAddr("192.0.2.4")}},
		{"2.0.192.in-addr.arpa.", &reverse{"2.0.192.in-addr.arpa.", netip.MustParsePrefix("192.0.2.0/24"), netip.Addr{}}},
		{"x.4.2.0.192.in-addr.arpa.", &reverse{"2.0.192.in-addr.arpa.", netip.MustParsePrefix("192.0.2.0/24"), netip.Addr{}}},
		{"04.2.0.192.in-addr.arpa.", &reverse{"2.0.192.in-addr.arpa.", netip.MustParsePrefix("192.0.2.0/24"), netip.Addr{}}},
		{"0.192.in-addr.arpa.", nil},
		{"2.0.256.in-addr.arpa.", nil},
		{"2.00.192.in-addr.arpa.", nil},
		{"f.e.d.c.b.a.9.8.7.6.5.4.3.2.1.0.1.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.", &reverse{
			"1.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.", netip.MustParsePrefix("2001:db8:0:1::/64"), netip.MustParseAddr("2001:db8:0:1:123:4567:89ab:cdef")}},
		{"x.f.e.d.c.b.a.9.8.7.6.5.4.3.2.1.0.1.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.", &reverse{
			"1.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.", netip.MustParsePrefix("2001:db8:0:1::/64"), netip.Addr{}}},
		{"0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.", nil},
		{"1.0.0.0.0.0.0.0.8.b.d.0.1.0.0.g.ip6.arpa.", nil},
		{"example.com.", nil},
	} {
		got, ok := parseReverse(c.name)
		if c.want == nil && ok || c.want != nil && (!ok || !reflect.DeepEqual(got, *c.want)) {
			t.Errorf("parseReverse(%s) = %+v, %v; want %+v", c.name, got, ok, c.want)
		}
	}
}

// gatedStore is a fakeStore whose reads of servers by name wait for open to close,
// and that keeps the most reads it had under way at once.
type gatedStore struct {
	*fakeStore
	open     chan struct{}
	entered  chan struct{}
	now, top atomic.Int32
}

func (g *gatedStore) ServerNamed(ctx context.Context, name string) (hosting.Server, error) {
	n := g.now.Add(1)
	defer g.now.Add(-1)
	for {
		top := g.top.Load()
		if n <= top || g.top.CompareAndSwap(top, n) {
			break
		}
	}
	g.entered <- struct{}{}
	<-g.open
	return g.fakeStore.ServerNamed(ctx, name)
}

// TestSourceBoundsStoreReads: names not cached are read from the store MaxReads at
// a time, MaxWaiting more wait for a turn and the rest are ErrBusy at once, so that
// a flood of random names cannot take the store from the API; a cached name is
// answered while every read is taken (docs/SECURITY.md, DNS).
func TestSourceBoundsStoreReads(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.addZone("example.com", 1, nameserver.RRset{Name: "www.example.com", Type: "A", Values: []string{"192.0.2.9"}})
	g := &gatedStore{fakeStore: f, open: make(chan struct{}), entered: make(chan struct{}, 100)}
	o := testOptions
	o.MaxReads, o.MaxWaiting = 2, 3
	s := New(g, o)
	if got := enclosing(t, s, "www.example.com."); got != "example.com A 192.0.2.9" {
		t.Fatalf("www.example.com: %s", got)
	}
	const lookups = 10
	errs := make(chan error, lookups)
	for i := range lookups {
		go func() {
			_, _, err := s.Enclosing(context.Background(), fmt.Sprintf("random-%d.srv.example.net.", i))
			errs <- err
		}()
	}
	busy := 0
	for range lookups - o.MaxReads - o.MaxWaiting {
		select {
		case err := <-errs:
			if !errors.Is(err, ErrBusy) {
				t.Fatalf("a lookup beyond the reads and the waiting ones: %v, want ErrBusy", err)
			}
			busy++
		case <-time.After(10 * time.Second):
			close(g.open)
			t.Fatalf("%d lookups ErrBusy, want %d; store reads at once: %d, MaxReads %d",
				busy, lookups-o.MaxReads-o.MaxWaiting, g.top.Load(), o.MaxReads)
		}
	}
	for range o.MaxReads {
		<-g.entered
	}
	if got := enclosing(t, s, "www.example.com."); got != "example.com A 192.0.2.9" {
		t.Errorf("www.example.com while the reads are taken: %s", got)
	}
	close(g.open)
	for range o.MaxReads + o.MaxWaiting {
		if err := <-errs; err != nil {
			t.Errorf("a lookup that had or waited for a turn: %v", err)
		}
	}
	if top := g.top.Load(); top > int32(o.MaxReads) {
		t.Errorf("%d store reads at once, want at most MaxReads %d", top, o.MaxReads)
	}
}
