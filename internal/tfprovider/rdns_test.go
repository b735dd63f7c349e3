package tfprovider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// ptrsAre checks in the API the PTRs of the state's server s: want maps "ipv4" and
// "ipv6" (the server's addresses) to their PTR, "" for none of its own (the IPv4's
// default, <server name>.<domain>; an IPv6 address unlisted).
func (a *acc) ptrsAre(want map[string]string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		id, err := idOf(s, "berth_server.s")
		if err != nil {
			return err
		}
		srv, err := a.c.GetServer(a.ctx(), client.ID(id))
		if err != nil {
			return err
		}
		list, err := a.c.ListRDNS(a.ctx(), client.ID(id))
		if err != nil {
			return err
		}
		got := map[string]string{}
		for _, p := range list {
			got[p.IP] = p.PTR
		}
		for key, ip := range map[string]string{"ipv4": deref(srv.IPv4), "ipv6": deref(srv.IPv6)} {
			ptr, ok := got[ip]
			switch w := want[key]; {
			case w == "" && key == "ipv4" && !strings.HasPrefix(ptr, srv.Name+"."):
				return fmt.Errorf("PTR of %s is %q, want the default %s.…", ip, ptr, srv.Name)
			case w == "" && key == "ipv6" && ok:
				return fmt.Errorf("PTR of %s is %q, want none", ip, ptr)
			case w != "" && ptr != w:
				return fmt.Errorf("PTR of %s is %q, want %q", ip, ptr, w)
			}
		}
		return nil
	}
}

// resetPTR gives an address of the state's server s its default PTR through the API,
// as a change outside OpenTofu.
func (a *acc) resetPTR(s *terraform.State, key string) error {
	id, err := idOf(s, "berth_server.s")
	if err != nil {
		return err
	}
	ip, err := attr(s, "berth_server.s", key)
	if err != nil {
		return err
	}
	_, err = a.c.SetRDNS(a.ctx(), client.ID(id), api.RDNSSet{IP: &ip, PTR: api.Null[string]()})
	return err
}

const rdnsServer = `
resource "berth_server" "s" {
  location = "fsn1"
  plan     = "s1-1c-1g"
  image    = "debian-12"
}
`

// rdnsConfig is the server with a PTR of its IPv4 address (by the server's id) and
// one of its IPv6 address in capitals (by the server's name).
func rdnsConfig(a *acc, ptr4 string) string {
	return a.config(rdnsServer + fmt.Sprintf(`
resource "berth_server_rdns" "v4" {
  server = berth_server.s.id
  ip     = berth_server.s.ipv4
  ptr    = %q
}

resource "berth_server_rdns" "v6" {
  server = berth_server.s.name
  ip     = upper(berth_server.s.ipv6)
  ptr    = "v6.example.com"
}
`, ptr4))
}

// TestAccServerRDNS: the PTRs of a server's IPv4 and IPv6 addresses, written otherwise
// than Berth keeps them (Mail.Example.com., 2001:DB8:…), plan no diff after the
// apply; imported by server/ip (the server by the name where the configuration
// gives its id, and the other way round) they plan none either; reset
// through the API they are set again; a new PTR changes in place; an address not the
// server's is an error on ip in the account's language; destroyed, the IPv4 has its
// default name back and the IPv6 none.
func TestAccServerRDNS(t *testing.T) {
	a := newAcc(t, "fr")
	const v4, v6 = "berth_server_rdns.v4", "berth_server_rdns.v6"
	var state *terraform.State
	keep := func(s *terraform.State) error { state = s; return nil }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		Steps: append([]resource.TestStep{
			{
				Config:           rdnsConfig(a, "Mail.Example.com."),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.ComposeAggregateTestCheckFunc(keep,
					a.ptrsAre(map[string]string{"ipv4": "mail.example.com", "ipv6": "v6.example.com"}),
					resource.TestCheckResourceAttr(v4, "ptr", "Mail.Example.com."),
					resource.TestMatchResourceAttr(v6, "ip", regexpOf(`^2001:DB8:[0-9A-F]+::1$`))),
			},
			{Config: a.config(rdnsServer + "\nremoved {\n  from = berth_server_rdns.v4\n}\n\nremoved {\n  from = berth_server_rdns.v6\n}\n"),
				Check: a.ptrsAre(map[string]string{"ipv4": "mail.example.com", "ipv6": "v6.example.com"})},
			{Config: rdnsConfig(a, "Mail.Example.com."), ResourceName: v4, ImportState: true, ImportStatePersist: true,
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					name, err := attr(s, "berth_server.s", "name")
					ip, _ := attr(s, "berth_server.s", "ipv4")
					return name + "/" + ip, err
				},
				ImportStateCheck: func(is []*terraform.InstanceState) error {
					return importedPTR(is, "ipv4", state, "mail.example.com")
				}},
			{Config: rdnsConfig(a, "Mail.Example.com."), ResourceName: v6, ImportState: true, ImportStatePersist: true,
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					id, err := attr(s, "berth_server.s", "id")
					ip, _ := attr(s, "berth_server.s", "ipv6")
					return id + "/" + ip, err
				},
				ImportStateCheck: func(is []*terraform.InstanceState) error {
					return importedPTR(is, "ipv6", state, "v6.example.com")
				}},
			{Config: rdnsConfig(a, "Mail.Example.com."), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(v4, plancheck.ResourceActionNoop),
				plancheck.ExpectResourceAction(v6, plancheck.ResourceActionNoop)}}},
		}, rdnsChangeSteps(t, a, &state)...),
	})
}

// importedPTR checks the PTR an import of the state's server's address key ("ipv4",
// "ipv6") made: its id server/ip, its PTR as Berth keeps it.
func importedPTR(is []*terraform.InstanceState, key string, s *terraform.State, ptr string) error {
	id, err := attr(s, "berth_server.s", "id")
	if err != nil {
		return err
	}
	ip, err := attr(s, "berth_server.s", key)
	if err != nil {
		return err
	}
	for _, i := range is {
		if i.ID == id+"/"+ip {
			if got := i.Attributes["ptr"]; got != ptr {
				return fmt.Errorf("imported %s: ptr %q, want %q", i.ID, got, ptr)
			}
			return nil
		}
	}
	return fmt.Errorf("no instance %s/%s among the %d imported", id, ip, len(is))
}

// rdnsChangeSteps are TestAccServerRDNS's steps after the imports: each PTR reset
// through the API, set again; a new PTR in place; an address Berth refuses; the
// PTRs destroyed.
func rdnsChangeSteps(t *testing.T, a *acc, state **terraform.State) []resource.TestStep {
	const v4, v6 = "berth_server_rdns.v4", "berth_server_rdns.v6"
	reset := func(key string) func() {
		return func() {
			if err := a.resetPTR(*state, key); err != nil {
				t.Fatalf("resetting the PTR of %s through the API: %v", key, err)
			}
		}
	}
	both := map[string]string{"ipv4": "mail.example.com", "ipv6": "v6.example.com"}
	return []resource.TestStep{
		{PreConfig: reset("ipv4"), Config: rdnsConfig(a, "Mail.Example.com."),
			ConfigPlanChecks: expect(v4, plancheck.ResourceActionUpdate), Check: a.ptrsAre(both)},
		{PreConfig: reset("ipv6"), Config: rdnsConfig(a, "Mail.Example.com."),
			ConfigPlanChecks: expect(v6, plancheck.ResourceActionCreate), Check: a.ptrsAre(both)},
		{Config: rdnsConfig(a, "www.example.com"), ConfigPlanChecks: expect(v4, plancheck.ResourceActionUpdate),
			Check: a.ptrsAre(map[string]string{"ipv4": "www.example.com", "ipv6": "v6.example.com"})},
		{
			Config: rdnsConfig(a, "www.example.com") +
				hcl(`resource "berth_server_rdns" "bad" { server = berth_server.s.id; ip = "192.0.2.250"; ptr = "x.example.com" }`),
			ExpectError: onAttribute("berth_server_rdns.bad", "ip", message(t, "fr", "validation.rdns_ip",
				map[string]any{"ip": "192.0.2.250"})),
		},
		{Config: a.config(rdnsServer), Check: a.ptrsAre(map[string]string{})},
	}
}

func regexpOf(s string) *regexp.Regexp { return regexp.MustCompile(s) }
