package ops

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
	"github.com/riverqueue/river"

	"github.com/berthhq/berth/internal/dnsserve"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/store"
)

// Publishing DNS to a nameserver that keeps zones of its own, PowerDNS (serve
// --powerdns-url; docs/operating.md, DNS): every transaction that changes what a zone
// answers enqueues a DNSPublishArgs job for it, which publishes the zone as the store
// has it when the job runs. A job is durable (River): it runs, exactly once in
// effect, whatever crashes and restarts between; PowerDNS unreachable, it is retried.

// DNSPublishKind is the kind of the job that publishes a zone.
const DNSPublishKind = "berth.dns_publish"

// DNSQueue is the job queue the publishing jobs run in, apart from the operations: a
// few at a time per process (a zone's publishes take turns, DNSOptions.Lock), and an
// operation never waits behind them.
const DNSQueue = "dns"

// DNSPublishMaxAttempts is how often a publishing job is tried: with DNSRetryWait's
// waits, about a week of PowerDNS unreachable. A job given up leaves its zone as
// PowerDNS last had it until its next change or `berthd admin dns resync`.
const DNSPublishMaxAttempts = 10_000

// DNSRetryWait is the wait before attempt+1 of a publishing job that failed: 1 s,
// doubling, at most a minute, so that a zone's change reaches PowerDNS within a
// minute of its coming back.
func DNSRetryWait(attempt int) time.Duration {
	return min(time.Second<<min(max(attempt-1, 0), 6), time.Minute)
}

// DNSPublishArgs are a publishing job's: the zone's name. For the default domain of
// servers' names it also holds the names (labels under it) whose A and AAAA changed:
// that zone is never read or sent whole (nameserver.Zone.Partial).
type DNSPublishArgs struct {
	Zone  string   `json:"zone"`
	Names []string `json:"names,omitempty"`
}

// Kind implements river.JobArgs.
func (DNSPublishArgs) Kind() string { return DNSPublishKind }

// InsertOpts: the DNS queue, DNSPublishMaxAttempts. Jobs are not made unique: River
// would drop a job while one of the zone runs, which may have read the zone before
// this change.
func (DNSPublishArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: DNSQueue, MaxAttempts: DNSPublishMaxAttempts}
}

// DNSPublisher is a nameserver that keeps zones (PowerDNS's driver): what is
// published to it, and the zones it holds of Berth's (a resync withdraws those the
// store no longer has).
type DNSPublisher interface {
	nameserver.Publisher
	Zones(ctx context.Context) ([]string, error)
	// Names lists the names below a zone's apex that the nameserver holds records
	// of (a resync removes those of servers that are gone).
	Names(ctx context.Context, zone string) ([]string, error)
}

// ZoneLock runs fn while no other publish of the zone named zone runs, in any process
// on the database (app's: a PostgreSQL advisory lock, or a lock file beside SQLite's
// database).
type ZoneLock func(ctx context.Context, zone string, fn func(ctx context.Context) error) error

// dnsPublishing reports whether DNS changes are published (DNSOptions.Publisher).
func (s *Service) dnsPublishing() bool { return s.dns.Publisher != nil }

// publishDNS enqueues in tx the jobs that publish zones after tx's change: nothing
// when no publisher is configured.
func (s *Service) publishDNS(ctx context.Context, tx store.Tx, jobs ...DNSPublishArgs) error {
	if !s.dnsPublishing() {
		return nil
	}
	for _, j := range jobs {
		if err := s.enqueue(ctx, tx, j); err != nil {
			return internal("enqueue dns publish", err)
		}
	}
	return nil
}

// publishZone enqueues the publishing of a customer's zone.
func (s *Service) publishZone(ctx context.Context, tx store.Tx, name string) error {
	return s.publishDNS(ctx, tx, DNSPublishArgs{Zone: name})
}

// publishServerDNS enqueues the publishing of what a server's change moves in the
// operator's zones: its name's A and AAAA in the default domain, and the reverse
// zones of its addresses, before (srv's) and after (ipv4 and ipv6, "" none).
func (s *Service) publishServerDNS(ctx context.Context, tx store.Tx, srv hosting.Server, ipv4, ipv6 string) error {
	if !s.dnsPublishing() {
		return nil
	}
	jobs := []DNSPublishArgs{{Zone: s.dns.DefaultDomain, Names: []string{srv.Name}}}
	for _, ip := range []string{deref(srv.IPv4), deref(srv.IPv6), ipv4, ipv6} {
		a, err := netip.ParseAddr(ip)
		if err != nil {
			continue
		}
		zone := dnsserve.ReverseZone(dnsserve.ReverseNetOf(a))
		if !slices.ContainsFunc(jobs, func(j DNSPublishArgs) bool { return j.Zone == zone }) {
			jobs = append(jobs, DNSPublishArgs{Zone: zone})
		}
	}
	return s.publishDNS(ctx, tx, jobs...)
}

// DNSPublishWorker publishes zones (DNSPublishArgs) to the DNSOptions.Publisher.
type DNSPublishWorker struct {
	river.WorkerDefaults[DNSPublishArgs]
	s *Service
}

// NewDNSPublishWorker is the worker of s's publishing jobs. Without a publisher it
// ends each job doing nothing (jobs left from a run that had one).
func NewDNSPublishWorker(s *Service) *DNSPublishWorker { return &DNSPublishWorker{s: s} }

// Work publishes the zone as the store has it now.
func (w *DNSPublishWorker) Work(ctx context.Context, job *river.Job[DNSPublishArgs]) error {
	s := w.s
	if !s.dnsPublishing() {
		s.log.Warn("a DNS publishing job ended without publishing: berthd runs without --powerdns-url", "zone", job.Args.Zone)
		return nil
	}
	err := s.PublishZone(ctx, job.Args.Zone, job.Args.Names)
	if s.telemetry != nil && ctx.Err() == nil {
		s.telemetry.DNSPublished(err)
	}
	if err != nil {
		s.log.Warn("publishing DNS failed; retried", "zone", job.Args.Zone, "attempt", job.Attempt,
			"next_in", DNSRetryWait(job.Attempt).String(), "err", err)
	}
	return err
}

// PublishZone publishes the zone named zone as the store has it now, while no other
// publish of it runs: a customer's zone whole (withdrawn when no zone has the name),
// a reverse zone of the operator's whole (withdrawn when no live server has an
// address in it), and of the default domain only names (servers' names).
func (s *Service) PublishZone(ctx context.Context, zone string, names []string) error {
	zone = strings.ToLower(strings.TrimSuffix(zone, "."))
	return s.lockZone(ctx, zone, func(ctx context.Context) error {
		if zone == s.dns.DefaultDomain {
			return s.publishNames(ctx, names)
		}
		if p, ok := dnsserve.ReverseNet(zone); ok {
			return s.publishReverse(ctx, zone, p)
		}
		return s.publishCustomerZone(ctx, zone)
	})
}

// lockZone runs fn under DNSOptions.Lock; without one (a Service not built by app),
// every publish of this process takes its turn.
func (s *Service) lockZone(ctx context.Context, zone string, fn func(ctx context.Context) error) error {
	if s.dns.Lock != nil {
		return s.dns.Lock(ctx, zone, fn)
	}
	s.publishMu.Lock()
	defer s.publishMu.Unlock()
	return fn(ctx)
}

// publishCustomerZone publishes a customer's zone whole, or withdraws its name.
func (s *Service) publishCustomerZone(ctx context.Context, zone string) error {
	pub := s.dns.Publisher
	d, err := s.store.EnclosingZone(ctx, zone)
	if errors.Is(err, store.ErrNotFound) || err == nil && d.Name != zone {
		return pub.Withdraw(ctx, zone)
	}
	if err != nil {
		return fmt.Errorf("zone %s: %w", zone, err)
	}
	z, err := s.store.ServedZone(ctx, d.ID)
	if errors.Is(err, store.ErrNotFound) {
		return pub.Withdraw(ctx, zone) // deleted since: that deletion's job runs after
	}
	if err != nil {
		return fmt.Errorf("zone %s: %w", zone, err)
	}
	z.Nameservers = s.dns.Nameservers
	return pub.Publish(ctx, z)
}

// publishReverse publishes the operator's reverse zone of p whole (an IPv4 /24 holds
// at most 256 PTRs; an IPv6 /64 one server's address and the PTRs it set), its serial
// PowerDNS's own (nameserver.Zone.Serial 0), or withdraws it when no live server has
// an address in p.
func (s *Service) publishReverse(ctx context.Context, zone string, p netip.Prefix) error {
	names, err := s.store.NetNames(ctx, p)
	if err != nil {
		return fmt.Errorf("reverse zone %s: %w", zone, err)
	}
	if len(names) == 0 {
		return s.dns.Publisher.Withdraw(ctx, zone)
	}
	z := s.emptyOperatorZone(zone)
	for _, n := range names {
		ptr := n.PTR
		if ptr == "" {
			ptr = n.Server + "." + s.dns.DefaultDomain
		}
		z.RRsets = append(z.RRsets, nameserver.RRset{Name: strings.TrimSuffix(reverseName(n.IP), "."), Type: "PTR",
			TTL: dnsserve.OperatorTTL, Values: []string{dns.Fqdn(ptr)}})
	}
	return s.dns.Publisher.Publish(ctx, z)
}

// publishNames publishes the A and AAAA of servers' names in the default domain, a
// Partial zone: each name's as its live server has them, none for a name no live
// server has (deleted). A nameserver's name under the default domain is never a
// server's.
func (s *Service) publishNames(ctx context.Context, names []string) error {
	z := s.emptyOperatorZone(s.dns.DefaultDomain)
	z.Partial = true
	for _, name := range names {
		owner := strings.ToLower(name) + "." + s.dns.DefaultDomain
		if slices.Contains(s.dns.Nameservers, owner) {
			continue
		}
		var v4, v6 []string
		srv, err := s.store.ServerNamed(ctx, name)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("server %s: %w", name, err)
		}
		if err == nil && deref(srv.IPv4) != "" {
			v4 = []string{*srv.IPv4}
		}
		if err == nil && deref(srv.IPv6) != "" {
			v6 = []string{*srv.IPv6}
		}
		z.RRsets = append(z.RRsets,
			nameserver.RRset{Name: owner, Type: "A", TTL: dnsserve.OperatorTTL, Values: v4},
			nameserver.RRset{Name: owner, Type: "AAAA", TTL: dnsserve.OperatorTTL, Values: v6})
	}
	return s.dns.Publisher.Publish(ctx, z)
}

// emptyOperatorZone is an operator's zone named zone without RRsets: its serial
// PowerDNS's own, its TTL the operator's records'.
func (s *Service) emptyOperatorZone(zone string) nameserver.Zone {
	return nameserver.Zone{Name: zone, TTL: dnsserve.OperatorTTL, Nameservers: s.dns.Nameservers}
}

// reverseName is the name of ip in the reverse trees, an FQDN.
func reverseName(ip netip.Addr) string {
	n, _ := dns.ReverseAddr(ip.String())
	return n
}

// setServerAddresses records a server's addresses and publishes what they move in
// the operator's zones.
func (s *Service) setServerAddresses(ctx context.Context, tx store.Tx, serverID int64, ipv4, ipv6 string) error {
	var was hosting.Server
	hooked, err := tx.HookedLicenses(ctx, 0, serverID)
	if err != nil {
		return err
	}
	if s.dnsPublishing() || len(hooked) > 0 {
		if was, err = tx.ServerAny(ctx, serverID); err != nil {
			return err
		}
	}
	if err := tx.SetServerAddresses(ctx, serverID, ipv4, ipv6); err != nil {
		return err
	}
	if err := s.addressHooks(ctx, tx, was, hooked); err != nil {
		return err
	}
	if !s.dnsPublishing() {
		return nil
	}
	return s.publishServerDNS(ctx, tx, was, ipv4, ipv6)
}

// publishResetDNS enqueues, before an account's reset, the publishing of what it
// removes from DNS: its zones, and its live servers' names and addresses.
func (s *Service) publishResetDNS(ctx context.Context, tx store.Tx, accountID int64) error {
	if !s.dnsPublishing() {
		return nil
	}
	zones, err := tx.Domains(ctx, accountID)
	if err != nil {
		return internal("domains", err)
	}
	for _, d := range zones {
		if err := s.publishZone(ctx, tx, d.Name); err != nil {
			return err
		}
	}
	servers, err := tx.Servers(ctx, accountID, store.ServerFilter{})
	if err != nil {
		return internal("servers", err)
	}
	for _, srv := range servers {
		if err := s.publishServerDNS(ctx, tx, srv, "", ""); err != nil {
			return err
		}
	}
	return nil
}

// DNSResync is what ResyncDNS published: the customers' zones, the servers whose
// names it published in the default domain, the reverse zones, the names of the
// zones it withdrew, and the default domain's names of servers that are gone, which
// it removed.
type DNSResync struct {
	Zones, Servers, ReverseZones int
	Withdrawn                    []string
	StaleNames                   []string
}

// resyncPage is how many zones, or servers, a resync reads at a time.
const resyncPage = 500

// errNoPublisher is why a resync without a publisher does nothing.
var errNoPublisher = errors.New("no nameserver to publish to (--powerdns-url)")

// ResyncDNS publishes everything the store has to the publisher again, each zone as
// its job would (PublishZone, so that a job running meanwhile never crosses it): every
// customer's zone, the default domain's names of every live server in pages, the
// reverse zones of their addresses; then it withdraws each zone the publisher holds
// of Berth's that is none of those (docs/operating.md, DNS: after PowerDNS lost its
// database, or jobs given up). It stops at the first error.
func (s *Service) ResyncDNS(ctx context.Context) (DNSResync, error) {
	var r DNSResync
	if !s.dnsPublishing() {
		return r, errNoPublisher
	}
	published := map[string]bool{}
	for after := ""; ; {
		names, err := s.store.ZoneNames(ctx, after, resyncPage)
		if err != nil {
			return r, err
		}
		if len(names) == 0 {
			break
		}
		for _, name := range names {
			if err := s.PublishZone(ctx, name, nil); err != nil {
				return r, fmt.Errorf("zone %s: %w", name, err)
			}
			published[name] = true
			r.Zones++
		}
		after = names[len(names)-1]
	}
	// The default domain first made (its SOA and NS), then its names page by page.
	if err := s.PublishZone(ctx, s.dns.DefaultDomain, nil); err != nil {
		return r, fmt.Errorf("zone %s: %w", s.dns.DefaultDomain, err)
	}
	published[s.dns.DefaultDomain] = true
	nets := map[netip.Prefix]bool{}
	live := map[string]bool{} // the default domain's names of live servers
	for after := int64(0); ; {
		page, err := s.store.LiveServers(ctx, after, resyncPage)
		if err != nil {
			return r, err
		}
		if len(page) == 0 {
			break
		}
		names := make([]string, len(page))
		for i, srv := range page {
			names[i] = srv.Name
			for _, ip := range []string{deref(srv.IPv4), deref(srv.IPv6)} {
				if a, err := netip.ParseAddr(ip); err == nil {
					nets[dnsserve.ReverseNetOf(a)] = true
				}
			}
		}
		if err := s.PublishZone(ctx, s.dns.DefaultDomain, names); err != nil {
			return r, fmt.Errorf("zone %s: %w", s.dns.DefaultDomain, err)
		}
		for _, n := range names {
			live[strings.ToLower(n)+"."+s.dns.DefaultDomain] = true
		}
		r.Servers += len(page)
		after = page[len(page)-1].ID
	}
	// The names the default domain still holds of servers that are gone (their
	// deletion's job given up, or PowerDNS restored from an older backup): published
	// as their jobs would, which removes them unless such a server was made meanwhile.
	held, err := s.dns.Publisher.Names(ctx, s.dns.DefaultDomain)
	if err != nil {
		return r, fmt.Errorf("zone %s: %w", s.dns.DefaultDomain, err)
	}
	var stale []string
	for _, owner := range held {
		label, ok := strings.CutSuffix(owner, "."+s.dns.DefaultDomain)
		if live[owner] || !ok || strings.Contains(label, ".") || slices.Contains(s.dns.Nameservers, owner) {
			continue
		}
		stale = append(stale, label)
	}
	for start := 0; start < len(stale); start += resyncPage {
		page := stale[start:min(start+resyncPage, len(stale))]
		if err := s.PublishZone(ctx, s.dns.DefaultDomain, page); err != nil {
			return r, fmt.Errorf("zone %s: %w", s.dns.DefaultDomain, err)
		}
		for _, label := range page {
			r.StaleNames = append(r.StaleNames, label+"."+s.dns.DefaultDomain)
		}
	}
	for p := range nets {
		zone := dnsserve.ReverseZone(p)
		if err := s.PublishZone(ctx, zone, nil); err != nil {
			return r, fmt.Errorf("zone %s: %w", zone, err)
		}
		published[zone] = true
		r.ReverseZones++
	}
	zones, err := s.dns.Publisher.Zones(ctx)
	if err != nil {
		return r, err
	}
	for _, name := range zones {
		if published[name] {
			continue
		}
		// Published as its job would: withdrawn, unless the zone was made meanwhile.
		if err := s.PublishZone(ctx, name, nil); err != nil {
			return r, fmt.Errorf("zone %s: %w", name, err)
		}
		r.Withdrawn = append(r.Withdrawn, name)
	}
	return r, nil
}
