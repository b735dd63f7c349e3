// Package dnsserve is what berthd's embedded nameserver answers from
// (docs/operating.md, DNS): the customers' zones in the store, and the operator's
// own: the default forward names (<server name>.<default domain>) and the reverse
// zones of the servers' addresses. It sits behind a cache that every change of what
// DNS serves empties (Store.DNSVersion), so that a change the API answered is
// answered over DNS at once, by every process on the database.
package dnsserve

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/nameserver/embedded"
	"github.com/berthhq/berth/internal/store"
)

// Store is what a Source reads: the store's reads of what DNS serves, and the
// version that changes with them (sqlstore.DB.DNSVersion).
type Store interface {
	store.DNSReader
	// DNSVersion changes whenever what DNS serves may have changed, and never goes
	// down.
	DNSVersion() uint64
}

// Options are the operator's DNS (serve --dns-nameservers, --dns-default-domain).
type Options struct {
	// Nameservers are every zone's apex NS (host names, no trailing dot).
	Nameservers []string
	// DefaultDomain is the operator's zone of the servers' default names.
	DefaultDomain string
	// MaxAge bounds how long a cached answer is kept however the version stays
	// (default 30 s): a change no write of Berth's made (SQL typed in psql), or one
	// whose notification was lost while a process could not listen, shows within it.
	MaxAge time.Duration
	// MaxReads is how many names not cached are read from the store at once
	// (default: half the CPUs, at least 1); MaxWaiting how many more wait for a
	// turn (default 256). A name that finds MaxWaiting waiting already is ErrBusy
	// (SERVFAIL) at once. So a flood of names never asked before (random names under
	// a zone, the default domain, or none) takes no more of the store and the CPUs
	// than that from the API (docs/SECURITY.md, DNS), while the names in the cache
	// are answered as before.
	MaxReads, MaxWaiting int
}

// DefaultMaxWaiting is Options.MaxWaiting's default.
const DefaultMaxWaiting = 256

// ErrBusy is what Enclosing returns for a name it would read from the store when
// Options.MaxWaiting names wait for a read already.
var ErrBusy = errors.New("dnsserve: too many names not cached waiting for the store")

// The cache's bounds: past them a map is emptied (a burst of reads, no growth).
const (
	maxNames = 100_000 // answers by query name
	maxZones = 10_000  // customers' zones' records, by id
)

// Source is an embedded.Source on a Store.
type Source struct {
	st          Store
	o           Options
	defaultZone string          // FQDN of Options.DefaultDomain
	nsLabels    map[string]bool // names under the default domain that are nameservers

	mu   sync.Mutex
	held uint64 // the version names and zones were read under
	// names are the answers by query name (FQDN, lower case), zones the customers'
	// zones by FQDN: every name under one is in it, customers' zones being
	// neither parents nor children of each other (docs/api.md, Domains).
	names map[string]answer
	zones map[string]answer
	// data are the customers' zones' records by id as last read, used again while
	// the zone's serial is the same, whatever the version.
	data map[int64]nameserver.Zone

	// reads holds a token per store read under way (Options.MaxReads); waiting
	// counts the lookups waiting for one.
	reads   chan struct{}
	waiting atomic.Int64
}

// answer is a zone as Enclosing returns it, and when it was read.
type answer struct {
	z  nameserver.Zone
	ok bool
	at time.Time
}

var _ embedded.Source = (*Source)(nil)

// New returns a Source reading st.
func New(st Store, o Options) *Source {
	if o.MaxAge <= 0 {
		o.MaxAge = 30 * time.Second
	}
	if o.MaxReads <= 0 {
		o.MaxReads = max(1, runtime.NumCPU()/2)
	}
	if o.MaxWaiting <= 0 {
		o.MaxWaiting = DefaultMaxWaiting
	}
	s := &Source{st: st, o: o, defaultZone: lowerFqdn(o.DefaultDomain), nsLabels: map[string]bool{},
		names: map[string]answer{}, zones: map[string]answer{}, data: map[int64]nameserver.Zone{},
		reads: make(chan struct{}, o.MaxReads)}
	for _, ns := range o.Nameservers {
		if n := lowerFqdn(ns); dns.IsSubDomain(s.defaultZone, n) && n != s.defaultZone {
			s.nsLabels[n] = true
		}
	}
	return s
}

// Enclosing implements embedded.Source: the operator's zones first (the default
// domain, and the reverse zones that hold a live server's address), then the
// customers'. A customer's zone under the default domain is never served.
func (s *Source) Enclosing(ctx context.Context, name string) (nameserver.Zone, bool, error) {
	name = lowerFqdn(name)
	v := s.st.DNSVersion()
	if a, hit := s.cached(v, name); hit {
		return a.z, a.ok, nil
	}
	release, err := s.turn(ctx)
	if err != nil {
		return nameserver.Zone{}, false, err
	}
	defer release()
	if a, hit := s.cached(v, name); hit { // read by a lookup this one waited behind
		return a.z, a.ok, nil
	}
	z, ok, handled, err := s.operator(ctx, name)
	if err == nil && !handled {
		z, ok, err = s.customer(ctx, v, name)
	}
	if err != nil {
		return nameserver.Zone{}, false, err
	}
	s.file(v, false, name, answer{z: z, ok: ok, at: time.Now()})
	return z, ok, nil
}

// turn waits for a store read's turn (Options.MaxReads, MaxWaiting) and returns
// the function that ends it.
func (s *Source) turn(ctx context.Context) (release func(), err error) {
	release = func() { <-s.reads }
	select {
	case s.reads <- struct{}{}:
		return release, nil
	default:
	}
	if s.waiting.Add(1) > int64(s.o.MaxWaiting) {
		s.waiting.Add(-1)
		return nil, ErrBusy
	}
	defer s.waiting.Add(-1)
	select {
	case s.reads <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// cached is the answer kept for name, or that of the customer's zone enclosing it.
func (s *Source) cached(v uint64, name string) (answer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.admit(v) {
		return answer{}, false
	}
	if a, ok := s.names[name]; ok && time.Since(a.at) < s.o.MaxAge {
		return a, true
	}
	if s.operatorName(name) {
		return answer{}, false // the operator's zones come first: the default domain, a reverse zone
	}
	for n := name; ; n = parentName(n) {
		if a, ok := s.zones[n]; ok && time.Since(a.at) < s.o.MaxAge {
			return a, true
		}
		if n == "." {
			return answer{}, false
		}
	}
}

// admit reports whether what was read under v may be answered and filed, emptying
// the maps when v is newer than what they hold (s.mu held).
func (s *Source) admit(v uint64) bool {
	switch {
	case v == s.held:
		return true
	case v < s.held:
		return false
	}
	s.held = v
	s.names, s.zones = map[string]answer{}, map[string]answer{}
	return true
}

// file keeps a under key, in zones or in names, when it was read under the version
// held, or a newer one.
func (s *Source) file(v uint64, zone bool, key string, a answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.admit(v) {
		return
	}
	if len(s.names) >= maxNames || len(s.zones) >= maxNames {
		s.names, s.zones = map[string]answer{}, map[string]answer{}
	}
	if zone {
		s.zones[key] = a
	} else {
		s.names[key] = a
	}
}

// customer is the customer's zone enclosing name, read from the store.
func (s *Source) customer(ctx context.Context, v uint64, name string) (nameserver.Zone, bool, error) {
	d, err := s.st.EnclosingZone(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nameserver.Zone{}, false, nil
	}
	if err != nil {
		return nameserver.Zone{}, false, err
	}
	fqdn := lowerFqdn(d.Name)
	if dns.IsSubDomain(s.defaultZone, fqdn) {
		return nameserver.Zone{}, false, nil // the operator's
	}
	z, err := s.zoneData(ctx, d.ID, d.Serial)
	if errors.Is(err, store.ErrNotFound) {
		return nameserver.Zone{}, false, nil // deleted since
	}
	if err != nil {
		return nameserver.Zone{}, false, err
	}
	s.file(v, true, fqdn, answer{z: z, ok: true, at: time.Now()})
	return z, true, nil
}

// zoneData is zone id's records, read again unless those last read have serial.
func (s *Source) zoneData(ctx context.Context, id int64, serial uint32) (nameserver.Zone, error) {
	s.mu.Lock()
	z, ok := s.data[id]
	s.mu.Unlock()
	if ok && z.Serial == serial {
		return z, nil
	}
	z, err := s.st.ServedZone(ctx, id)
	if err != nil {
		return nameserver.Zone{}, err
	}
	z.Nameservers = s.o.Nameservers
	s.mu.Lock()
	if len(s.data) >= maxZones {
		s.data = map[int64]nameserver.Zone{}
	}
	s.data[id] = z
	s.mu.Unlock()
	return z, nil
}

// lowerFqdn is name as an FQDN in lower case.
func lowerFqdn(name string) string { return strings.ToLower(dns.Fqdn(name)) }

// parentName is name without its first label ("." stays ".").
func parentName(name string) string {
	if off, end := dns.NextLabel(name, 0); !end {
		return name[off:]
	}
	return "."
}
