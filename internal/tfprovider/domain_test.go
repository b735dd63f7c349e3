package tfprovider_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// domainAPI is what the API says of zone id, as the attributes spell it; nil when
// there is none.
func (a *acc) domainAPI(id int64) (map[string]string, error) {
	d, err := a.c.GetDomain(a.ctx(), client.ID(id))
	if isNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	m := map[string]string{"name": d.Name, "ttl": strconv.Itoa(d.TTL), "serial": fmt.Sprint(d.Serial),
		"rrset_count": strconv.Itoa(d.RRsetCount), "nameservers.#": strconv.Itoa(len(d.Nameservers)),
		"created_at": rfc3339(d.CreatedAt)}
	for i, ns := range d.Nameservers {
		m["nameservers."+strconv.Itoa(i)] = ns
	}
	return m, nil
}

// rrsetIs checks in the API that the zone holds the RRset name/typ with ttl ("" for
// null) and values, canonical, in order.
func (a *acc) rrsetIs(zone, name, typ, ttl string, values ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		s, err := a.c.GetRRset(a.ctx(), zone, name, typ)
		if err != nil {
			return fmt.Errorf("RRset %s %s of %s: %w", name, typ, zone, err)
		}
		var got []string
		for _, r := range s.Records {
			got = append(got, r.Value)
		}
		if gotTTL := idText(intPtr64(s.TTL)); gotTTL != ttl || !slices.Equal(got, values) {
			return fmt.Errorf("RRset %s %s: ttl %q, records %q in the API; want %q, %q", name, typ, gotTTL, got, ttl, values)
		}
		return nil
	}
}

func intPtr64(p *int) *int64 {
	if p == nil {
		return nil
	}
	n := int64(*p)
	return &n
}

// putRRset changes an RRset through the API, as a change outside OpenTofu.
func (a *acc) putRRset(zone, name, typ string, values ...string) {
	a.t.Helper()
	req := api.RRsetPut{TTL: api.Null[int64]()}
	for _, v := range values {
		req.Records = append(req.Records, api.DNSRecordInput{Value: client.Ptr(v)})
	}
	if _, err := a.c.PutRRset(a.ctx(), zone, name, typ, req); err != nil {
		a.t.Fatalf("PUT RRset %s %s through the API: %v", name, typ, err)
	}
}

// domainConfig is TestAccDomain's configuration; %s are the zone's extra arguments
// (ttl).
const domainConfig = `
resource "berth_domain" "z" {
  name = "example.com"
  %s
}

resource "berth_rrset" "mx" {
  domain  = berth_domain.z.id
  name    = "@"
  type    = "MX"
  records = [{ value = "10 mail" }]
}

resource "berth_rrset" "www" {
  domain  = berth_domain.z.name
  name    = "www"
  type    = "AAAA"
  ttl     = 600
  records = [{ value = "2001:DB8::1", comment = "web" }, { value = "2001:db8::2" }]
}

resource "berth_domain" "y" {
  name = "Example.ORG."
}

data "berth_domain" "z" {
  name = berth_domain.z.name
}

data "berth_rrsets" "mx" {
  domain     = berth_domain.z.id
  type       = "MX"
  depends_on = [berth_rrset.mx]
}
`

func domainHCL(a *acc, extra string) string { return a.config(fmt.Sprintf(domainConfig, extra)) }

// TestAccDomain: a zone with an MX and an AAAA written otherwise than Berth writes
// them (`10 mail`, `2001:DB8::1`): the state keeps the configuration's spelling, the
// API has the canonical one, and the plan after the apply is empty (a zone named
// Example.ORG. too); the data sources
// read the zone and its MX; the zone imported by id and by name, each RRset by
// zone/name/type, with an empty plan after each import; the RRsets changed and
// deleted through the API are planned back; the TTL changed in place.
func TestAccDomain(t *testing.T) {
	a := newAcc(t, "en")
	const z, mx, www = "berth_domain.z", "berth_rrset.mx", "berth_rrset.www"
	var id int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy: gone("berth_domain", func(id int64) (bool, error) {
			m, err := a.domainAPI(id)
			return m != nil, err
		}),
		Steps: slices.Concat([]resource.TestStep{
			{
				Config:           domainHCL(a, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(s *terraform.State) (err error) { id, err = idOf(s, z); return err },
					resource.TestCheckResourceAttr(z, "ttl", "3600"),
					resource.TestCheckResourceAttr("berth_domain.y", "name", "Example.ORG."),
					apiAgrees("berth_domain.y", func(id int64) (map[string]string, error) {
						m, err := a.domainAPI(id)
						delete(m, "name") // example.org in the API
						return m, err
					}),
					resource.TestCheckResourceAttr(mx, "id", "example.com/@/MX"),
					resource.TestCheckResourceAttr(mx, "records.0.value", "10 mail"),
					resource.TestCheckResourceAttr(www, "records.0.value", "2001:DB8::1"),
					resource.TestCheckResourceAttr(www, "records.0.comment", "web"),
					resource.TestCheckResourceAttr(www, "records.1.comment", ""),
					a.rrsetIs("example.com", "@", "MX", "", "10 mail.example.com."),
					a.rrsetIs("example.com", "www", "AAAA", "600", "2001:db8::1", "2001:db8::2"),
					resource.TestCheckResourceAttr("data.berth_rrsets.mx", "rrsets.#", "1"),
					resource.TestCheckResourceAttr("data.berth_rrsets.mx", "rrsets.0.records.0.value", "10 mail.example.com."),
					resource.TestCheckResourceAttr("data.berth_rrsets.mx", "rrsets.0.name", "@"),
					resource.TestCheckResourceAttrPair("data.berth_domain.z", "id", z, "id")),
			},
			// The apply wrote the zone before its RRsets: a refresh shows their count.
			{RefreshState: true, Check: resource.ComposeAggregateTestCheckFunc(
				apiAgrees(z, a.domainAPI), resource.TestCheckResourceAttr(z, "rrset_count", "4"),
				func(s *terraform.State) error {
					return dataAgrees("data.berth_domain.z", func() (map[string]string, error) { return a.domainAPI(id) })(s)
				})},
			{ResourceName: z, ImportState: true, ImportStateVerify: true},
			{ResourceName: z, ImportState: true, ImportStateVerify: true, ImportStateId: "example.com"},
		}, domainImportSteps(a), domainDriftSteps(t, a)),
	})
}

// domainImportSteps forget both RRsets and the zone example.org (removed blocks:
// Berth keeps them), import each RRset by zone/name/type (the zone by name, then by
// id) and the zone by name, and plan again: the imported values, canonical, are what
// the configuration writes otherwise (`10 mail`, `Example.ORG.`), so the plan is
// empty.
func domainImportSteps(a *acc) []resource.TestStep {
	const mx, www = "berth_rrset.mx", "berth_rrset.www"
	zone := strings.SplitAfter(fmt.Sprintf(domainConfig, ""), "}\n")[0]
	return []resource.TestStep{
		{Config: a.config(zone + "\nremoved {\n  from = berth_rrset.mx\n}\n\nremoved {\n  from = berth_rrset.www\n}\n" +
			"\nremoved {\n  from = berth_domain.y\n}\n"),
			Check: a.rrsetIs("example.com", "@", "MX", "", "10 mail.example.com.")},
		{Config: domainHCL(a, ""), ResourceName: mx, ImportState: true, ImportStateId: "example.com/@/mx", ImportStatePersist: true,
			ImportStateCheck: imported(map[string]string{"id": "example.com/@/MX", "domain": "example.com", "name": "@",
				"type": "MX", "records.0.value": "10 mail.example.com."})},
		{Config: domainHCL(a, ""), ResourceName: "berth_domain.y", ImportState: true, ImportStateId: "example.org",
			ImportStatePersist: true, ImportStateCheck: func(is []*terraform.InstanceState) error {
				for _, s := range is {
					if s.Attributes["name"] == "example.org" {
						return nil
					}
				}
				return fmt.Errorf("no zone example.org among the %d imported", len(is))
			}},
		{Config: domainHCL(a, ""), ResourceName: www, ImportState: true, ImportStatePersist: true,
			ImportStateIdFunc: func(s *terraform.State) (string, error) {
				id, err := idOf(s, "berth_domain.z")
				return fmt.Sprintf("%d/www.example.com./AAAA", id), err
			},
			ImportStateCheck: imported(map[string]string{"id": "example.com/www/AAAA", "ttl": "600",
				"records.0.value": "2001:db8::1", "records.0.comment": "web"})},
		{Config: domainHCL(a, ""), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction(mx, plancheck.ResourceActionNoop),
			plancheck.ExpectResourceAction(www, plancheck.ResourceActionNoop),
			plancheck.ExpectResourceAction("berth_domain.y", plancheck.ResourceActionNoop)}}},
	}
}

// imported checks the instance an import made, the one of want's id (an import
// persisted in the state is given every instance of the state).
func imported(want map[string]string) resource.ImportStateCheckFunc {
	return func(is []*terraform.InstanceState) error {
		for _, s := range is {
			if s.ID != want["id"] {
				continue
			}
			for k, v := range want {
				if got := s.Attributes[k]; got != v {
					return fmt.Errorf("imported %s = %q, want %q", k, got, v)
				}
			}
			return nil
		}
		return fmt.Errorf("no instance of id %s among the %d imported", want["id"], len(is))
	}
}

// domainDriftSteps: an RRset changed through the API is put back in place, one
// deleted through the API is made again, the zone's TTL changes in place, and a
// value or a zone name Berth refuses is an error on its attribute.
func domainDriftSteps(t *testing.T, a *acc) []resource.TestStep {
	const z, mx, www = "berth_domain.z", "berth_rrset.mx", "berth_rrset.www"
	return []resource.TestStep{
		{
			PreConfig:        func() { a.putRRset("example.com", "@", "MX", "20 other.example.com.") },
			Config:           domainHCL(a, ""),
			ConfigPlanChecks: expect(mx, plancheck.ResourceActionUpdate),
			Check: resource.ComposeAggregateTestCheckFunc(a.rrsetIs("example.com", "@", "MX", "", "10 mail.example.com."),
				resource.TestCheckResourceAttr(mx, "records.0.value", "10 mail")),
		},
		{
			PreConfig: func() {
				if err := a.c.DeleteRRset(a.ctx(), "example.com", "www", "AAAA"); err != nil {
					t.Fatalf("deleting the RRset through the API: %v", err)
				}
			},
			Config:           domainHCL(a, ""),
			ConfigPlanChecks: expect(www, plancheck.ResourceActionCreate),
			Check:            a.rrsetIs("example.com", "www", "AAAA", "600", "2001:db8::1", "2001:db8::2"),
		},
		{
			Config:           domainHCL(a, "ttl = 600"),
			ConfigPlanChecks: expect(z, plancheck.ResourceActionUpdate),
			Check:            resource.ComposeAggregateTestCheckFunc(apiAgrees(z, a.domainAPI), resource.TestCheckResourceAttr(z, "ttl", "600")),
		},
		{
			Config: domainHCL(a, "ttl = 600") +
				hcl(`resource "berth_rrset" "bad" { domain = berth_domain.z.id; name = "bad"; type = "A"; records = [{value = "192.0.2.300"}] }`),
			ExpectError: onAttribute("berth_rrset.bad", "records", message(t, "en", "validation.dns_record_syntax",
				map[string]any{"index": 1, "value": "192.0.2.300", "type": "A", "example": "192.0.2.1"})),
		},
		{
			Config:      domainHCL(a, "ttl = 600") + hcl(`resource "berth_domain" "bad" { name = "co.uk" }`),
			ExpectError: onAttribute("berth_domain.bad", "name", message(t, "en", "validation.dns_zone_public_suffix", map[string]any{"suffix": "co.uk"})),
		},
	}
}
