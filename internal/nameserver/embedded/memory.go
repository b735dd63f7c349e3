package embedded

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/nameserver"
)

// Source is where the server finds what to answer: in berthd the store behind a
// cache, in tests and the sandbox a Memory.
type Source interface {
	// Enclosing returns the served zone closest enclosing name (an FQDN, lower case):
	// the one whose name is the longest suffix of it; ok is false when no zone
	// encloses it. The server calls it once a query and builds the zone's records
	// again only when its name, serial, TTL or RRsets slice changed, so a Source
	// returns the same Zone value (and slices) again and again while the zone is
	// unchanged, new slices when it read it again; it must not change them
	// afterwards.
	// An error is answered SERVFAIL.
	Enclosing(ctx context.Context, name string) (z nameserver.Zone, ok bool, err error)
}

// Memory is a Source held in memory, and the nameserver.Publisher that fills it.
type Memory struct {
	mu    sync.RWMutex
	zones map[string]nameserver.Zone // by FQDN
}

var (
	_ Source               = (*Memory)(nil)
	_ nameserver.Publisher = (*Memory)(nil)
)

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{zones: map[string]nameserver.Zone{}} }

// Publish serves z from now on, in place of any zone of its name. A zone whose name
// is not lower case, without a nameserver or with a value that does not parse is an
// error, and changes nothing.
func (m *Memory) Publish(_ context.Context, z nameserver.Zone) error {
	z = copyZone(z)
	if _, err := build(z); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.zones[dns.Fqdn(z.Name)] = z
	return nil
}

// Withdraw stops serving the zone name; an unknown one is no error.
func (m *Memory) Withdraw(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.zones, dns.Fqdn(strings.ToLower(name)))
	return nil
}

// Enclosing implements Source.
func (m *Memory) Enclosing(_ context.Context, name string) (nameserver.Zone, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for n := name; ; n = parent(n) {
		if z, ok := m.zones[n]; ok {
			return z, true, nil
		}
		if n == "." {
			return nameserver.Zone{}, false, nil
		}
	}
}

// copyZone is z with slices of its own, so the caller may reuse its own.
func copyZone(z nameserver.Zone) nameserver.Zone {
	z.Nameservers = slices.Clone(z.Nameservers)
	z.RRsets = slices.Clone(z.RRsets)
	for i := range z.RRsets {
		z.RRsets[i].Values = slices.Clone(z.RRsets[i].Values)
	}
	return z
}
