package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/testnet"
)

// dnsAsk asks addr name's qtype over network, not recursively.
func dnsAsk(t *testing.T, network, addr, name string, qtype uint16) *dns.Msg {
	t.Helper()
	m := new(dns.Msg).SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = false
	r, _, err := (&dns.Client{Net: network, Timeout: 2 * time.Second}).Exchange(m, addr)
	if err != nil {
		t.Fatalf("%s %s %s: %v", network, name, dns.TypeToString[qtype], err)
	}
	return r
}

// answers is r's rcode and its answer's values ("NOERROR 192.0.2.7"), the AA bit
// required.
func answers(r *dns.Msg) string {
	out := []string{dns.RcodeToString[r.Rcode]}
	if !r.Authoritative && r.Rcode != dns.RcodeRefused {
		out = append(out, "(not AA)")
	}
	for _, rr := range r.Answer {
		out = append(out, strings.TrimPrefix(rr.String(), rr.Header().String()))
	}
	return strings.Join(out, " ")
}

// within asks addr name's qtype over UDP and TCP until both answer want, failing
// after 1 s (docs/api.md, Domains: a change the API answered is visible over DNS
// within 1 s).
func within(t *testing.T, addr, name string, qtype uint16, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		u, tc := answers(dnsAsk(t, "udp", addr, name, qtype)), answers(dnsAsk(t, "tcp", addr, name, qtype))
		if u == want && tc == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s after 1 s: udp %q, tcp %q; want %q", name, dns.TypeToString[qtype], u, tc, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dnsAccount makes an account with credit and a token for servers and domains.
func dnsAccount(t *testing.T, bin, data string) string {
	t.Helper()
	runJSON(t, bin, append([]string{"migrate"}, storeFlags(t, data)...)...)
	acct := runJSON(t, bin, append([]string{"admin", "account", "create", "--email", "dns@example.com", "--password", "long-enough-pw",
		"--credit", "500"}, storeFlags(t, data)...)...)
	tok := runJSON(t, bin, append([]string{"admin", "token", "create", "--account", fmt.Sprint(acct["id"]), "--name", "dns",
		"--scopes", "read,servers,domains"}, storeFlags(t, data)...)...)
	return tok["token"].(string)
}

func (d *daemon) want(t *testing.T, token, method, path string, body any, code int) map[string]any {
	t.Helper()
	got, m := d.call(t, token, method, path, body)
	if got != code {
		t.Fatalf("%s %s: %d %v; want %d", method, path, got, m, code)
	}
	return m
}

// TestServeDNS: berthd serve --dns-addr answers over UDP and TCP what the API
// changed, within 1 s: a zone's RRset, its SOA serial raised, NXDOMAIN once the RRset
// is deleted; a server's default name forward and its addresses' PTR, set through
// PUT /servers/{id}/rdns and reset, both gone with the server; AXFR refused
// without --dns-allow-transfer.
func TestServeDNS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin, data := testenv.BerthdBinary(t), t.TempDir()
	token := dnsAccount(t, bin, data)
	dnsAddr := testnet.FreeDNSAddr(t)
	d := startServe(t, bin, data, testnet.FreeAddr(t), "0.01", "--dns-addr", dnsAddr,
		"--dns-default-domain", "srv.example.net", "--dns-nameservers", "ns1.example.net, ns2.example.net")
	d.want(t, token, "POST", "/domains", map[string]any{"name": "example.com"}, 201)
	d.want(t, token, "PUT", "/domains/example.com/rrsets/www/A", map[string]any{"records": []any{map[string]any{"value": "192.0.2.7"}}}, 201)
	within(t, dnsAddr, "www.example.com", dns.TypeA, "NOERROR 192.0.2.7")
	if r := dnsAsk(t, "udp", dnsAddr, "example.com", dns.TypeNS); answers(r) != "NOERROR ns1.example.net. ns2.example.net." {
		t.Errorf("example.com NS: %s", answers(r))
	}
	serial := dnsAsk(t, "tcp", dnsAddr, "example.com", dns.TypeSOA).Answer[0].(*dns.SOA).Serial
	d.want(t, token, "PUT", "/domains/example.com/rrsets/www/A", map[string]any{"records": []any{map[string]any{"value": "192.0.2.8"}}}, 200)
	within(t, dnsAddr, "www.example.com", dns.TypeA, "NOERROR 192.0.2.8")
	if got := dnsAsk(t, "udp", dnsAddr, "example.com", dns.TypeSOA).Answer[0].(*dns.SOA).Serial; got <= serial {
		t.Errorf("serial after a change: %d, was %d", got, serial)
	}
	d.want(t, token, "DELETE", "/domains/example.com/rrsets/www/A", nil, 204)
	within(t, dnsAddr, "www.example.com", dns.TypeA, "NXDOMAIN")
	if r := dnsAsk(t, "tcp", dnsAddr, "example.com", dns.TypeAXFR); r.Rcode != dns.RcodeRefused {
		t.Errorf("AXFR without --dns-allow-transfer: %s", answers(r))
	}
	within(t, dnsAddr, "example.org", dns.TypeA, "REFUSED")
	serverNames(t, d, token, dnsAddr)
}

// serverNames orders a server and checks its default name and its addresses' PTRs.
func serverNames(t *testing.T, d *daemon, token, dnsAddr string) {
	t.Helper()
	m := d.want(t, token, "POST", "/servers", map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1}, 201)
	srv := m["data"].(map[string]any)
	d.waitOp(t, token, srv["operation"].(map[string]any)["id"].(float64), 60*time.Second)
	srv = d.server(t, token, srv["name"].(string))
	name, v4, v6 := srv["name"].(string), srv["ipv4"].(string), srv["ipv6"].(string)
	host := name + ".srv.example.net"
	within(t, dnsAddr, host, dns.TypeA, "NOERROR "+v4)
	within(t, dnsAddr, host, dns.TypeAAAA, "NOERROR "+v6)
	within(t, dnsAddr, "ns1.srv.example.net", dns.TypeA, "NXDOMAIN")
	rev4, _ := dns.ReverseAddr(v4)
	rev6, _ := dns.ReverseAddr(v6)
	within(t, dnsAddr, rev4, dns.TypePTR, "NOERROR "+host+".")
	within(t, dnsAddr, rev6, dns.TypePTR, "NOERROR "+host+".")
	path := fmt.Sprintf("/servers/%d/rdns", int64(srv["id"].(float64)))
	d.want(t, token, "PUT", path, map[string]any{"ip": v4, "ptr": "mail.example.com"}, 200)
	within(t, dnsAddr, rev4, dns.TypePTR, "NOERROR mail.example.com.")
	d.want(t, token, "PUT", path, map[string]any{"ip": v4, "ptr": nil}, 200)
	within(t, dnsAddr, rev4, dns.TypePTR, "NOERROR "+host+".")
	// Deleted, the server takes its names with it: no name under the default domain,
	// and no reverse zone for a /24 that holds no server.
	d.want(t, token, "DELETE", fmt.Sprintf("/servers/%d", int64(srv["id"].(float64))), nil, 204)
	within(t, dnsAddr, host, dns.TypeA, "NXDOMAIN")
	within(t, dnsAddr, rev4, dns.TypePTR, "REFUSED")
}

// TestServeDNSCluster: two berthd on one PostgreSQL database answer alike, each
// within 1 s of a change made through the other (its notification on
// berth_dns_changed empties the other's cache).
func TestServeDNSCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	if !testenv.Postgres() {
		t.Skip("several processes share a database on PostgreSQL only (BERTH_TEST_STORE=postgres)")
	}
	t.Parallel()
	bin, data := testenv.BerthdBinary(t), t.TempDir()
	token := dnsAccount(t, bin, data)
	dnsA, dnsB := testnet.FreeDNSAddr(t), testnet.FreeDNSAddr(t)
	a := startServe(t, bin, data, testnet.FreeAddr(t), "0.01", "--dns-addr", dnsA)
	b := startServe(t, bin, data, testnet.FreeAddr(t), "0.01", "--dns-addr", dnsB)
	a.want(t, token, "POST", "/domains", map[string]any{"name": "example.com"}, 201)
	for i, via := range []*daemon{a, b, a, b} {
		// Each asked before the change too, so that both have it cached.
		for _, addr := range []string{dnsA, dnsB} {
			dnsAsk(t, "udp", addr, "www.example.com", dns.TypeA)
		}
		v := fmt.Sprintf("192.0.2.%d", i+1)
		via.want(t, token, "PUT", "/domains/example.com/rrsets/www/A", map[string]any{"records": []any{map[string]any{"value": v}}}, 200+boolInt(i == 0))
		within(t, dnsA, "www.example.com", dns.TypeA, "NOERROR "+v)
		within(t, dnsB, "www.example.com", dns.TypeA, "NOERROR "+v)
	}
	b.want(t, token, "DELETE", "/domains/example.com", nil, 204)
	within(t, dnsA, "www.example.com", dns.TypeA, "REFUSED")
	within(t, dnsB, "www.example.com", dns.TypeA, "REFUSED")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestServeDNSFlags: a DNS flag that would mean something else is refused before
// anything starts (exit 1, the error names the flag), and a --dns-addr whose port is
// taken fails the start as a taken --addr does.
func TestServeDNSFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon")
	}
	t.Parallel()
	bin := testenv.BerthdBinary(t)
	taken, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dns-addr", "127.0.0.1"}, `--dns-addr "127.0.0.1"`},
		{[]string{"--dns-nameservers", "ns1.example.net,,ns2.example.net"}, "--dns-nameservers"},
		{[]string{"--dns-nameservers", "ns1.example.net,not a host"}, "--dns-nameservers"},
		{[]string{"--dns-nameservers", "com"}, "--dns-nameservers"},
		{[]string{"--dns-default-domain", ""}, "--dns-default-domain"},
		{[]string{"--dns-default-domain", "-bad-.example"}, "--dns-default-domain"},
		{[]string{"--dns-allow-transfer", "192.0.2.53"}, `--dns-allow-transfer "192.0.2.53"`},
		{[]string{"--dns-allow-transfer", "10.0.0.0/8", "--dns-allow-transfer", "secondary.example.net"}, "--dns-allow-transfer"},
		{[]string{"--dns-addr", taken.LocalAddr().String()}, "--dns-addr " + taken.LocalAddr().String()},
	} {
		cmd := exec.Command(bin, append([]string{"serve", "--data", t.TempDir(), "--addr", testnet.FreeAddr(t)}, tc.args...)...)
		out, err := cmd.Output()
		var res struct{ Error string }
		_ = json.Unmarshal(out, &res)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(res.Error, tc.want) {
			t.Errorf("serve %v: %v, %s; want exit 1 with an error mentioning %s", tc.args, err, out, tc.want)
		}
	}
}
