package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/nameserver/powerdns"
	"github.com/berthhq/berth/internal/nameserver/powerdns/powerdnstest"
	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// keyFile writes PowerDNS's API key to a file of mode perm and returns its path.
func keyFile(t *testing.T, key string, perm os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pdns-api-key")
	if err := os.WriteFile(p, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
	return p
}

// pdnsWithin asks PowerDNS over UDP and TCP until both answer want, failing after
// 30 s: a job that PowerDNS's outage sent into its backoff waits up to its next try.
func pdnsWithin(t *testing.T, addr, name string, qtype uint16, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		u, tc := sortedAnswers(dnsAsk(t, "udp", addr, name, qtype)), sortedAnswers(dnsAsk(t, "tcp", addr, name, qtype))
		if u == want && tc == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PowerDNS: %s %s after 30 s: udp %q, tcp %q; want %q", name, dns.TypeToString[qtype], u, tc, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sortedAnswers is answers with the values sorted: PowerDNS may answer an RRset's
// records in any order.
func sortedAnswers(r *dns.Msg) string {
	f := strings.Fields(answers(r))
	slices.Sort(f[1:])
	return strings.Join(f, " ")
}

// pdnsServer is a server ordered through d, provisioned: its name, its default host
// name under srv.example.net, and its addresses' reverse names.
type pdnsServer struct {
	id               int64
	host, v4, v6     string
	rev4, rev6, name string
}

func orderServer(t *testing.T, d *daemon, token string) pdnsServer {
	t.Helper()
	m := d.want(t, token, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}, 201)
	srv := m["data"].(map[string]any)
	d.waitOp(t, token, srv["operation"].(map[string]any)["id"].(float64), 60*time.Second)
	srv = d.server(t, token, srv["name"].(string))
	s := pdnsServer{id: int64(srv["id"].(float64)), name: srv["name"].(string), v4: srv["ipv4"].(string), v6: srv["ipv6"].(string)}
	s.host = s.name + ".srv.example.net"
	s.rev4, _ = dns.ReverseAddr(s.v4)
	s.rev6, _ = dns.ReverseAddr(s.v6)
	return s
}

// TestServePowerDNS: berthd serve --powerdns-url publishes what the API changes to a
// real PowerDNS, which answers it over DNS: a zone and its RRsets, a server's default
// name and its addresses' PTRs, an rDNS change, deletions. Changes made while PowerDNS
// is down and berthd is then SIGKILLed land once both are back. After PowerDNS lost
// its database, `berthd admin dns resync` publishes everything again, withdraws a
// zone of Berth's the store does not have and removes a gone server's name.
func TestServePowerDNS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	pdns := powerdnstest.Start(t, powerdnstest.Options{})
	key := keyFile(t, pdns.APIKey, 0o600)
	bin, data := testenv.BerthdBinary(t), t.TempDir()
	token := dnsAccount(t, bin, data)
	dnsFlags := []string{"--dns-default-domain", "srv.example.net", "--dns-nameservers", "ns1.example.net,ns2.example.net"}
	flags := append([]string{"--powerdns-url", pdns.URL, "--powerdns-api-key-file", key}, dnsFlags...)
	addr := testnet.FreeAddr(t)
	d := startServe(t, bin, data, addr, "0.01", flags...)
	a := pdns.DNSAddr

	d.want(t, token, "POST", "/domains", map[string]any{"name": "example.com"}, 201)
	d.want(t, token, "PUT", "/domains/example.com/rrsets/www/A", map[string]any{"records": []any{map[string]any{"value": "192.0.2.7"}}}, 201)
	d.want(t, token, "PUT", "/domains/example.com/rrsets/mail/A", map[string]any{"records": []any{map[string]any{"value": "192.0.2.25"}}}, 201)
	pdnsWithin(t, a, "www.example.com", dns.TypeA, "NOERROR 192.0.2.7")
	pdnsWithin(t, a, "example.com", dns.TypeNS, "NOERROR ns1.example.net. ns2.example.net.")
	d.want(t, token, "DELETE", "/domains/example.com/rrsets/mail/A", nil, 204)
	pdnsWithin(t, a, "mail.example.com", dns.TypeA, "NXDOMAIN")

	keep, gone := orderServer(t, d, token), orderServer(t, d, token)
	for _, s := range []pdnsServer{keep, gone} {
		pdnsWithin(t, a, s.host, dns.TypeA, "NOERROR "+s.v4)
		pdnsWithin(t, a, s.host, dns.TypeAAAA, "NOERROR "+s.v6)
		pdnsWithin(t, a, s.rev4, dns.TypePTR, "NOERROR "+s.host+".")
		pdnsWithin(t, a, s.rev6, dns.TypePTR, "NOERROR "+s.host+".")
	}
	rdns := fmt.Sprintf("/servers/%d/rdns", keep.id)
	d.want(t, token, "PUT", rdns, map[string]any{"ip": keep.v4, "ptr": "mail.example.com"}, 200)
	pdnsWithin(t, a, keep.rev4, dns.TypePTR, "NOERROR mail.example.com.")
	pdnsWithin(t, a, gone.rev4, dns.TypePTR, "NOERROR "+gone.host+".") // the /24's other PTR stays

	// PowerDNS down: the API still answers, the changes wait in their jobs; berthd is
	// killed with them pending, and both come back.
	pdns.Stop()
	d.want(t, token, "PUT", "/domains/example.com/rrsets/www/A", map[string]any{"records": []any{map[string]any{"value": "192.0.2.9"}}}, 200)
	d.want(t, token, "POST", "/domains", map[string]any{"name": "pending.example"}, 201)
	d.want(t, token, "DELETE", fmt.Sprintf("/servers/%d", gone.id), nil, 204)
	d.want(t, token, "PUT", rdns, map[string]any{"ip": keep.v4, "ptr": nil}, 200)
	time.Sleep(time.Second) // a try or two fails meanwhile
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Wait()
	if strings.Contains(d.log.String(), pdns.APIKey) {
		t.Errorf("berthd's log shows PowerDNS's API key:\n%s", d.log)
	}
	pdns.Restart(t, false)
	d = startServe(t, bin, data, addr, "0.01", flags...)
	pdnsWithin(t, a, "www.example.com", dns.TypeA, "NOERROR 192.0.2.9")
	pdnsWithin(t, a, "pending.example", dns.TypeNS, "NOERROR ns1.example.net. ns2.example.net.")
	pdnsWithin(t, a, keep.rev4, dns.TypePTR, "NOERROR "+keep.host+".")
	pdnsWithin(t, a, gone.host, dns.TypeA, "NXDOMAIN")
	pdnsWithin(t, a, gone.rev4, dns.TypePTR, "NXDOMAIN")
	pdnsWithin(t, a, gone.rev6, dns.TypePTR, "REFUSED") // its /64's zone withdrawn

	// PowerDNS rebuilt on an empty database, one zone of Berth's in it the store lacks.
	pdns.Restart(t, true)
	pdnsWithin(t, a, "www.example.com", dns.TypeA, "REFUSED")
	pub, err := powerdns.New(powerdns.Options{URL: pdns.URL, APIKey: pdns.APIKey, HTTPClient: &http.Client{Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(context.Background(), nameserver.Zone{Name: "orphan.example", Serial: 1, TTL: 300,
		Nameservers: []string{"ns1.example.net"}}); err != nil {
		t.Fatal(err)
	}
	// And a name of a server that is gone in the default domain (PowerDNS restored
	// from an older backup).
	if err := pub.Publish(context.Background(), nameserver.Zone{Name: "srv.example.net", TTL: 300, Partial: true,
		Nameservers: []string{"ns1.example.net", "ns2.example.net"},
		RRsets:      []nameserver.RRset{{Name: "ghost.srv.example.net", Type: "A", TTL: 300, Values: []string{"192.0.2.66"}}}}); err != nil {
		t.Fatal(err)
	}
	pdnsWithin(t, a, "ghost.srv.example.net", dns.TypeA, "NOERROR 192.0.2.66")
	out := runJSON(t, bin, append(append([]string{"admin", "dns", "resync", "--powerdns-url", pdns.URL,
		"--powerdns-api-key-file", key}, dnsFlags...), storeFlags(t, data)...)...)
	b, _ := json.Marshal(out)
	if string(b) != `{"reverse_zones":2,"servers":1,"stale_names":["ghost.srv.example.net"],"withdrawn":["orphan.example"],"zones":2}` {
		t.Errorf("admin dns resync printed %s", b)
	}
	pdnsWithin(t, a, "www.example.com", dns.TypeA, "NOERROR 192.0.2.9")
	pdnsWithin(t, a, "pending.example", dns.TypeNS, "NOERROR ns1.example.net. ns2.example.net.")
	pdnsWithin(t, a, keep.host, dns.TypeA, "NOERROR "+keep.v4)
	pdnsWithin(t, a, keep.host, dns.TypeAAAA, "NOERROR "+keep.v6)
	pdnsWithin(t, a, keep.rev4, dns.TypePTR, "NOERROR "+keep.host+".")
	pdnsWithin(t, a, keep.rev6, dns.TypePTR, "NOERROR "+keep.host+".")
	pdnsWithin(t, a, "orphan.example", dns.TypeSOA, "REFUSED")
	pdnsWithin(t, a, "ghost.srv.example.net", dns.TypeA, "NXDOMAIN")
	names, err := pub.Zones(context.Background())
	if err != nil || slices.Contains(names, "orphan.example") || !slices.Contains(names, "srv.example.net") {
		t.Errorf("PowerDNS's zones after the resync: %v, %v", names, err)
	}
	// serve goes on publishing after the resync.
	d.want(t, token, "DELETE", "/domains/example.com", nil, 204)
	pdnsWithin(t, a, "www.example.com", dns.TypeA, "REFUSED")
}

// TestServePowerDNSFlags: the PowerDNS flags are checked before anything starts
// (exit 1, the error names the flag): a URL that is none, one flag without the other,
// a key file others can read, missing or empty; admin dns resync needs the URL.
func TestServePowerDNSFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	good := keyFile(t, "secret-key", 0o600)
	worldReadable := keyFile(t, "secret-key", 0o644)
	empty := keyFile(t, "", 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--powerdns-url", "127.0.0.1:8081", "--powerdns-api-key-file", good}, `--powerdns-url "127.0.0.1:8081"`},
		{[]string{"serve", "--powerdns-url", "ftp://127.0.0.1", "--powerdns-api-key-file", good}, "--powerdns-url"},
		{[]string{"serve", "--powerdns-url", "http://127.0.0.1:8081"}, "--powerdns-api-key-file"},
		{[]string{"serve", "--powerdns-api-key-file", good}, "--powerdns-url"},
		{[]string{"serve", "--powerdns-url", "http://127.0.0.1:8081", "--powerdns-api-key-file", worldReadable}, "readable by others"},
		{[]string{"serve", "--powerdns-url", "http://127.0.0.1:8081", "--powerdns-api-key-file", empty}, "--powerdns-api-key-file"},
		{[]string{"serve", "--powerdns-url", "http://127.0.0.1:8081", "--powerdns-api-key-file", good + ".missing"}, "--powerdns-api-key-file"},
		{[]string{"admin", "dns", "resync"}, "--powerdns-url"},
		{[]string{"admin", "dns", "resync", "--powerdns-url", "http://127.0.0.1:8081", "--powerdns-api-key-file", worldReadable}, "readable by others"},
	} {
		args := append(slices.Clone(tc.args), "--data", t.TempDir())
		if tc.args[0] == "serve" {
			args = append(args, "--addr", testnet.FreeAddr(t))
		}
		cmd := exec.Command(bin, args...)
		out, err := cmd.Output()
		var res struct{ Error string }
		_ = json.Unmarshal(out, &res)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(res.Error, tc.want) {
			t.Errorf("berthd %v: %v, %s; want exit 1 with an error mentioning %s", tc.args, err, out, tc.want)
		}
		if strings.Contains(string(out), "secret-key") {
			t.Errorf("berthd %v printed the key: %s", tc.args, out)
		}
	}
}

// TestServePowerDNSCluster: two berthd on one PostgreSQL database publish to one
// PowerDNS; changes made through either, alternately, end with the last answered, and
// a resync run meanwhile changes nothing of it.
func TestServePowerDNSCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	if !testenv.Postgres() {
		t.Skip("several processes share a database on PostgreSQL only (BERTH_TEST_STORE=postgres)")
	}
	t.Parallel()
	pdns := powerdnstest.Start(t, powerdnstest.Options{})
	key := keyFile(t, pdns.APIKey, 0o600)
	bin, data := testenv.BerthdBinary(t), t.TempDir()
	token := dnsAccount(t, bin, data)
	flags := []string{"--powerdns-url", pdns.URL, "--powerdns-api-key-file", key}
	a := startServe(t, bin, data, testnet.FreeAddr(t), "0.01", flags...)
	b := startServe(t, bin, data, testnet.FreeAddr(t), "0.01", flags...)
	a.want(t, token, "POST", "/domains", map[string]any{"name": "example.com"}, 201)
	var last string
	for i := range 20 {
		via := []*daemon{a, b}[i%2]
		last = fmt.Sprintf("192.0.2.%d", i+1)
		via.want(t, token, "PUT", "/domains/example.com/rrsets/www/A", map[string]any{"records": []any{map[string]any{"value": last}}}, 200+boolInt(i == 0))
		if i == 10 {
			runJSON(t, bin, append([]string{"admin", "dns", "resync", "--powerdns-url", pdns.URL, "--powerdns-api-key-file", key},
				storeFlags(t, data)...)...)
		}
	}
	pdnsWithin(t, pdns.DNSAddr, "www.example.com", dns.TypeA, "NOERROR "+last)
	time.Sleep(time.Second) // any job still running ends
	if got := answers(dnsAsk(t, "udp", pdns.DNSAddr, "www.example.com", dns.TypeA)); got != "NOERROR "+last {
		t.Errorf("a second later PowerDNS answers %q, want %q", got, "NOERROR "+last)
	}
	b.want(t, token, "DELETE", "/domains/example.com", nil, 204)
	pdnsWithin(t, pdns.DNSAddr, "www.example.com", dns.TypeA, "REFUSED")
}
