package ops_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/nameserver/powerdns"
	"github.com/berthhq/berth/internal/nameserver/powerdns/powerdnstest"
	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/telemetry"
	"github.com/berthhq/berth/internal/telemetry/telemetrytest"
	"github.com/berthhq/berth/internal/testenv"
)

// dnsEnv is a Berth publishing to a real PowerDNS (docs/operating.md, DNS), and an
// account of it.
func dnsEnv(t *testing.T) (*testenv.Env, *powerdnstest.Server, hosting.Principal, *powerdns.Client) {
	t.Helper()
	pdns := powerdnstest.Start(t, powerdnstest.Options{})
	pub, err := powerdns.New(powerdns.Options{URL: pdns.URL, APIKey: pdns.APIKey, HTTPClient: &http.Client{Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.New(t, testenv.Options{DNS: ops.DNSOptions{Publisher: pub, DefaultDomain: "srv.example.net",
		Nameservers: []string{"ns1.example.net"}}})
	a := newHolder(t, env.App.Service, "dns@example.com")
	return env, pdns, hosting.Principal{Account: a}, pub
}

// pdnsAnswers asks PowerDNS name's qtype over UDP: its rcode and values.
func pdnsAnswers(t *testing.T, addr, name string, qtype uint16) string {
	t.Helper()
	m := new(dns.Msg).SetQuestion(dns.Fqdn(name), qtype)
	r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, addr)
	if err != nil {
		t.Fatalf("%s %s: %v", name, dns.TypeToString[qtype], err)
	}
	out := []string{dns.RcodeToString[r.Rcode]}
	for _, rr := range r.Answer {
		out = append(out, strings.TrimPrefix(rr.String(), rr.Header().String()))
	}
	return strings.Join(out, " ")
}

// eventually waits (10 s at most) until PowerDNS answers want.
func eventually(t *testing.T, addr, name string, qtype uint16, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := pdnsAnswers(t, addr, name, qtype)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PowerDNS answers %s %s: %q, want %q", name, dns.TypeToString[qtype], got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func dnsJobs(t *testing.T, env *testenv.Env) int {
	t.Helper()
	jobs, err := env.App.Jobs(context.Background(), ops.DNSPublishKind)
	if err != nil {
		t.Fatal(err)
	}
	return len(jobs)
}

func soaSerial(t *testing.T, addr, zone string) uint32 {
	t.Helper()
	m := new(dns.Msg).SetQuestion(dns.Fqdn(zone), dns.TypeSOA)
	r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, addr)
	if err != nil || len(r.Answer) != 1 {
		t.Fatalf("%s SOA: %v, %v", zone, r, err)
	}
	return r.Answer[0].(*dns.SOA).Serial
}

// TestDNSPublishJobInTheChangesTransaction: a change's publishing job is enqueued in
// the change's transaction: rolled back, no job and PowerDNS unchanged; committed, the
// job publishes it.
func TestDNSPublishJobInTheChangesTransaction(t *testing.T) {
	t.Parallel()
	env, pdns, p, _ := dnsEnv(t)
	svc, ctx := env.App.Service, context.Background()
	name := "example.com"
	if _, err := svc.CreateDomain(ctx, p, ops.DomainCreate{Name: &name}); err != nil {
		t.Fatal(err)
	}
	eventually(t, pdns.DNSAddr, "www.example.com", dns.TypeA, "NXDOMAIN")
	before := dnsJobs(t, env)
	put := func(ctx context.Context, v string) error {
		_, _, err := svc.PutRRset(ctx, p, hosting.DomainRef{Name: name}, "www", "A", nil, []ops.RecordInput{{Value: &v}})
		return err
	}
	held, hold := store.WithHold(ctx)
	if err := put(held, "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	hold.Release() // rolled back
	if n := dnsJobs(t, env); n != before {
		t.Errorf("a rolled back change left %d DNS jobs, want %d", n, before)
	}
	time.Sleep(300 * time.Millisecond)
	if got := pdnsAnswers(t, pdns.DNSAddr, "www.example.com", dns.TypeA); got != "NXDOMAIN" {
		t.Errorf("after a rolled back change PowerDNS answers %q", got)
	}
	held, hold = store.WithHold(ctx)
	if err := put(held, "192.0.2.2"); err != nil {
		t.Fatal(err)
	}
	if err := hold.Commit(func(store.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if n := dnsJobs(t, env); n != before+1 {
		t.Errorf("a committed change: %d DNS jobs, want %d", n, before+1)
	}
	eventually(t, pdns.DNSAddr, "www.example.com", dns.TypeA, "NOERROR 192.0.2.2")
}

// TestDNSPublishNeverGoesBack: a publish of what a job read before a later change
// (a job that ran late) leaves PowerDNS with the later change; a zone deleted and made
// again the same day is served with a greater serial, and the deleted zone's last
// state published late does not replace it.
func TestDNSPublishNeverGoesBack(t *testing.T) {
	t.Parallel()
	env, pdns, p, pub := dnsEnv(t)
	svc, ctx := env.App.Service, context.Background()
	name := "example.com"
	d, err := svc.CreateDomain(ctx, p, ops.DomainCreate{Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	put := func(v string) {
		t.Helper()
		if _, _, err := svc.PutRRset(ctx, p, hosting.DomainRef{Name: name}, "www", "A", nil, []ops.RecordInput{{Value: &v}}); err != nil {
			t.Fatal(err)
		}
	}
	put("192.0.2.1")
	eventually(t, pdns.DNSAddr, "www.example.com", dns.TypeA, "NOERROR 192.0.2.1")
	stale, err := env.App.DB.ServedZone(ctx, d.ID) // what a late job read
	if err != nil {
		t.Fatal(err)
	}
	stale.Nameservers = svc.Nameservers()
	put("192.0.2.2")
	eventually(t, pdns.DNSAddr, "www.example.com", dns.TypeA, "NOERROR 192.0.2.2")
	if err := pub.Publish(ctx, stale); err != nil {
		t.Fatal(err)
	}
	if got := pdnsAnswers(t, pdns.DNSAddr, "www.example.com", dns.TypeA); got != "NOERROR 192.0.2.2" {
		t.Errorf("after a late publish of serial %d, PowerDNS answers %q", stale.Serial, got)
	}

	last, err := env.App.DB.ServedZone(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	last.Nameservers = svc.Nameservers()
	if err := svc.DeleteDomain(ctx, p, hosting.DomainRef{Name: name}); err != nil {
		t.Fatal(err)
	}
	eventually(t, pdns.DNSAddr, "www.example.com", dns.TypeA, "REFUSED")
	again, err := svc.CreateDomain(ctx, p, ops.DomainCreate{Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	if !hosting.SerialGreater(again.Serial, last.Serial) {
		t.Fatalf("the zone made again has serial %d, not above the deleted one's %d", again.Serial, last.Serial)
	}
	eventually(t, pdns.DNSAddr, "www.example.com", dns.TypeA, "NXDOMAIN")
	if got := soaSerial(t, pdns.DNSAddr, name); got != again.Serial {
		t.Errorf("PowerDNS's serial of the zone made again: %d, want %d", got, again.Serial)
	}
	if err := pub.Publish(ctx, last); err != nil {
		t.Fatal(err)
	}
	if got := pdnsAnswers(t, pdns.DNSAddr, "www.example.com", dns.TypeA); got != "NXDOMAIN" {
		t.Errorf("the deleted zone published late over the one made again: www answers %q", got)
	}
}

// TestDNSResyncWithdrawsWhatTheStoreLacks: a resync publishes the store's zones to a
// PowerDNS that lost them, withdraws a zone of Berth's the store does not have, and
// removes the default domain's name of a server that is gone.
func TestDNSResyncWithdrawsWhatTheStoreLacks(t *testing.T) {
	t.Parallel()
	env, pdns, p, pub := dnsEnv(t)
	svc, ctx := env.App.Service, context.Background()
	for _, name := range []string{"a.example", "b.example"} {
		if _, err := svc.CreateDomain(ctx, p, ops.DomainCreate{Name: &name}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, pdns.DNSAddr, "b.example", dns.TypeNS, "NOERROR ns1.example.net.")
	pdns.Restart(t, true)
	orphan := svc.Nameservers()
	if err := pub.Publish(ctx, nameserverZone("gone.example", orphan)); err != nil {
		t.Fatal(err)
	}
	// Names in the default domain: a server's that is gone, one below a server's
	// name (not Berth's, kept), a nameserver's (kept).
	ghosts := []nameserver.RRset{
		{Name: "ghost.srv.example.net", Type: "A", TTL: 60, Values: []string{"192.0.2.66"}},
		{Name: "ghost.srv.example.net", Type: "AAAA", TTL: 60, Values: []string{"2001:db8::66"}},
		{Name: "a.b.srv.example.net", Type: "TXT", TTL: 60, Values: []string{`"kept"`}},
	}
	if err := pub.Publish(ctx, nameserver.Zone{Name: "srv.example.net", TTL: 60, Partial: true, Nameservers: orphan, RRsets: ghosts}); err != nil {
		t.Fatal(err)
	}
	eventually(t, pdns.DNSAddr, "ghost.srv.example.net", dns.TypeA, "NOERROR 192.0.2.66")
	r, err := svc.ResyncDNS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Zones != 2 || !slices.Equal(r.Withdrawn, []string{"gone.example"}) || !slices.Equal(r.StaleNames, []string{"ghost.srv.example.net"}) {
		t.Errorf("resync: %+v; want 2 zones published, gone.example withdrawn, ghost.srv.example.net removed", r)
	}
	eventually(t, pdns.DNSAddr, "ghost.srv.example.net", dns.TypeA, "NXDOMAIN")
	eventually(t, pdns.DNSAddr, "a.b.srv.example.net", dns.TypeTXT, `NOERROR "kept"`)
	if held, err := pub.Names(ctx, "srv.example.net"); err != nil || !slices.Equal(held, []string{"a.b.srv.example.net"}) {
		t.Errorf("the default domain holds %v, %v; want only a.b", held, err)
	}
	eventually(t, pdns.DNSAddr, "a.example", dns.TypeNS, "NOERROR ns1.example.net.")
	eventually(t, pdns.DNSAddr, "gone.example", dns.TypeSOA, "REFUSED")
	names, err := pub.Zones(ctx)
	if err != nil || !slices.Equal(names, []string{"a.example", "b.example", "srv.example.net"}) {
		t.Errorf("PowerDNS holds %v, %v", names, err)
	}
}

func nameserverZone(name string, ns []string) nameserver.Zone {
	return nameserver.Zone{Name: name, Serial: 1, TTL: 300, Nameservers: ns}
}

// TestDNSPublishRetriedWhilePowerDNSIsDown: with PowerDNS stopped the API still
// answers; the job fails, is counted and retried, and lands once PowerDNS is back.
func TestDNSPublishRetriedWhilePowerDNSIsDown(t *testing.T) {
	t.Parallel()
	pdns := powerdnstest.Start(t, powerdnstest.Options{})
	pub, err := powerdns.New(powerdns.Options{URL: pdns.URL, APIKey: pdns.APIKey, HTTPClient: &http.Client{Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	tel := telemetry.New(slog.New(slog.DiscardHandler))
	env := testenv.New(t, testenv.Options{Telemetry: tel, DNS: ops.DNSOptions{Publisher: pub, DefaultDomain: "srv.example.net",
		Nameservers: []string{"ns1.example.net"}}})
	svc, ctx := env.App.Service, context.Background()
	p := hosting.Principal{Account: newHolder(t, svc, "down@example.com")}
	pdns.Stop()
	name := "example.com"
	if _, err := svc.CreateDomain(ctx, p, ops.DomainCreate{Name: &name}); err != nil {
		t.Fatalf("CreateDomain with PowerDNS down: %v", err)
	}
	errors := func() float64 {
		v, _ := telemetrytest.Sample(telemetrytest.Gather(t, tel.Registry()), "berth_dns_publishes_total", map[string]string{"result": "error"})
		return v
	}
	deadline := time.Now().Add(20 * time.Second)
	for errors() < 2 { // the first try and a retry
		if time.Now().After(deadline) {
			t.Fatalf("berth_dns_publishes_total{result=error} = %v after 20 s, want 2 or more", errors())
		}
		time.Sleep(50 * time.Millisecond)
	}
	pdns.Restart(t, false)
	eventually(t, pdns.DNSAddr, "example.com", dns.TypeNS, "NOERROR ns1.example.net.")
}

// slowNetwork is a proxy to PowerDNS's API that holds each request for up to 100 ms,
// as a loaded network or PowerDNS would: a job that read the store before another's
// change may then reach PowerDNS after it.
func slowNetwork(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(rand.IntN(100)) * time.Millisecond)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestDNSConcurrentPublishesNeverGoBack: a burst of changes of one RRset, made through
// two Berths on one PostgreSQL database (one on SQLite), whose jobs run at once on
// both over a slow network: the serial PowerDNS answers never goes down meanwhile (a
// job that read the zone before another's change never lands after it), and PowerDNS
// ends with the last change.
func TestDNSConcurrentPublishesNeverGoBack(t *testing.T) {
	t.Parallel()
	pdns := powerdnstest.Start(t, powerdnstest.Options{})
	pub, err := powerdns.New(powerdns.Options{URL: slowNetwork(t, pdns.URL), APIKey: pdns.APIKey, HTTPClient: &http.Client{Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	o := testenv.Options{DataDir: t.TempDir(), DNS: ops.DNSOptions{Publisher: pub, DefaultDomain: "srv.example.net",
		Nameservers: []string{"ns1.example.net"}}}
	envs := []*testenv.Env{testenv.New(t, o)}
	if testenv.Postgres() {
		envs = append(envs, testenv.New(t, o))
	}
	ctx := context.Background()
	p := hosting.Principal{Account: newHolder(t, envs[0].App.Service, "burst@example.com")}
	name := "example.com"
	if _, err := envs[0].App.Service.CreateDomain(ctx, p, ops.DomainCreate{Name: &name}); err != nil {
		t.Fatal(err)
	}
	eventually(t, pdns.DNSAddr, "example.com", dns.TypeNS, "NOERROR ns1.example.net.")
	// Watch the serial PowerDNS answers while the changes are published.
	stop, went := make(chan struct{}), make(chan string, 1)
	go func() {
		defer close(went)
		var seen uint32
		c := &dns.Client{Timeout: time.Second}
		for {
			select {
			case <-stop:
				return
			default:
			}
			r, _, err := c.Exchange(new(dns.Msg).SetQuestion("example.com.", dns.TypeSOA), pdns.DNSAddr)
			if err != nil || len(r.Answer) != 1 {
				continue
			}
			serial := r.Answer[0].(*dns.SOA).Serial
			if hosting.SerialGreater(seen, serial) {
				went <- fmt.Sprintf("PowerDNS answered serial %d after %d", serial, seen)
				return
			}
			seen = serial
		}
	}()
	var last string
	for i := range 40 {
		last = fmt.Sprintf("192.0.2.%d", i+1)
		svc := envs[i%len(envs)].App.Service
		if _, _, err := svc.PutRRset(ctx, p, hosting.DomainRef{Name: name}, "www", "A", nil, []ops.RecordInput{{Value: &last}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond) // jobs run between the changes
	}
	eventually(t, pdns.DNSAddr, "www.example.com", dns.TypeA, "NOERROR "+last)
	// Every job has ended by now or ends without changing it.
	deadline := time.Now().Add(20 * time.Second)
	for {
		jobs, err := envs[0].App.Jobs(ctx, ops.DNSPublishKind)
		if err != nil {
			t.Fatal(err)
		}
		done := true
		for _, j := range jobs {
			done = done && j.FinalizedAt != nil
		}
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	if back, ok := <-went; ok {
		t.Errorf("PowerDNS went back: %s", back)
	}
	if got := pdnsAnswers(t, pdns.DNSAddr, "www.example.com", dns.TypeA); got != "NOERROR "+last {
		t.Errorf("after every job ended PowerDNS answers %q, want the last change %s", got, last)
	}
}

// TestDNSPublishDoesNotWaitForThePoll: a change's publishing job, in a queue of its
// own, is fetched once the change commits, as an operation's is (internal/app,
// wake.go), not at the queue's next poll: with a poll every 60 s, PowerDNS answers
// the change within eventually's 10 s.
func TestDNSPublishDoesNotWaitForThePoll(t *testing.T) {
	t.Parallel()
	pdns := powerdnstest.Start(t, powerdnstest.Options{})
	pub, err := powerdns.New(powerdns.Options{URL: pdns.URL, APIKey: pdns.APIKey, HTTPClient: &http.Client{Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.New(t, testenv.Options{FetchPoll: time.Minute, DNS: ops.DNSOptions{Publisher: pub,
		DefaultDomain: "srv.example.net", Nameservers: []string{"ns1.example.net"}}})
	p := hosting.Principal{Account: newHolder(t, env.App.Service, "dns@example.com")}
	svc, ctx := env.App.Service, context.Background()
	// River fetches once as it starts; let that pass so the next fetch is the poll's.
	time.Sleep(500 * time.Millisecond)
	name, v := "example.com", "192.0.2.7"
	if _, err := svc.CreateDomain(ctx, p, ops.DomainCreate{Name: &name}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.PutRRset(ctx, p, hosting.DomainRef{Name: name}, "www", "A", nil, []ops.RecordInput{{Value: &v}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, pdns.DNSAddr, "www.example.com", dns.TypeA, "NOERROR 192.0.2.7")
}
