package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// everyDomainEndpoint: each domain, RRset and reverse DNS method against a real
// Berth, from a zone's creation to its deletion, with the errors a client handles
// apart.
func everyDomainEndpoint(t *testing.T, ctx context.Context, c *client.Client, srv *api.Server) {
	t.Helper()
	d := must[*api.Domain](t)(c.CreateDomain(ctx, api.DomainCreate{Name: client.Ptr("SDK.Example."), TTL: client.Ptr(int64(600)),
		ZoneFile: client.Ptr("www IN A 192.0.2.1\n")}))
	if d.Name != "sdk.example" || d.TTL != 600 || d.RRsetCount != 3 || len(d.Nameservers) == 0 {
		t.Fatalf("CreateDomain: %+v", d)
	}
	if _, err := c.CreateDomain(ctx, api.DomainCreate{Name: client.Ptr("a.sdk.example")}); !errors.Is(err, client.ErrValidation) {
		t.Errorf("CreateDomain of a child: %v, want ErrValidation", err)
	}
	if got := must[*api.Domain](t)(c.GetDomain(ctx, "sdk.example.")); got.ID != d.ID {
		t.Errorf("GetDomain by name: %+v", got)
	}
	if l := must[[]api.Domain](t)(c.ListDomains(ctx)); len(l) != 1 || l[0].ID != d.ID {
		t.Errorf("ListDomains: %+v", l)
	}
	set := must[*api.RRset](t)(c.PutRRset(ctx, "sdk.example", "@", "mx", api.RRsetPut{Records: []api.DNSRecordInput{{Value: client.Ptr("10 mail")}}}))
	if set.Type != "MX" || len(set.Records) != 1 || !client.SameRecordValue("sdk.example", "@", "MX", "10 mail", set.Records[0].Value) {
		t.Errorf("PutRRset: %+v", set)
	}
	if got := must[*api.RRset](t)(c.GetRRset(ctx, "sdk.example", "www", "A")); got.Records[0].Value != "192.0.2.1" {
		t.Errorf("GetRRset: %+v", got)
	}
	if l := must[[]api.RRset](t)(c.ListRRsets(ctx, "sdk.example", client.RRsetListOptions{Name: "@"})); len(l) != 3 {
		t.Errorf("ListRRsets at the apex: %+v", l)
	}
	if _, err := c.ListRRsets(ctx, "sdk.example", client.RRsetListOptions{Type: "PTR"}); !errors.Is(err, client.ErrValidation) {
		t.Errorf("ListRRsets of PTR: %v, want ErrValidation", err)
	}
	zone := must[string](t)(c.ExportZoneFile(ctx, "sdk.example"))
	if !strings.Contains(zone, "www\t600\tIN\tA\t192.0.2.1\n") {
		t.Errorf("ExportZoneFile:\n%s", zone)
	}
	if d = must[*api.Domain](t)(c.ImportZoneFile(ctx, "sdk.example", zone)); d.RRsetCount != 4 {
		t.Errorf("ImportZoneFile of the export: %+v", d)
	}
	if _, err := c.ImportZoneFile(ctx, "sdk.example", "www IN A 300.0.0.1\n"); !errors.Is(err, client.ErrValidation) {
		t.Errorf("ImportZoneFile of a bad file: %v, want ErrValidation", err)
	} else if e := (*client.Error)(nil); errors.As(err, &e) && len(e.Fields["line 1"]) == 0 {
		t.Errorf("ImportZoneFile of a bad file: %v, want an error on line 1", e.Fields)
	}
	d = must[*api.Domain](t)(c.UpdateDomain(ctx, "sdk.example", api.DomainUpdate{TTL: client.Ptr(int64(3600))}))
	if err := c.DeleteRRset(ctx, "sdk.example", "@", "MX"); err != nil {
		t.Errorf("DeleteRRset: %v", err)
	}
	if err := c.DeleteRRset(ctx, "sdk.example", "@", "SOA"); !errors.Is(err, client.ErrValidation) {
		t.Errorf("DeleteRRset of the SOA: %v, want ErrValidation", err)
	}
	if err := c.DeleteDomain(ctx, "sdk.example"); err != nil {
		t.Errorf("DeleteDomain: %v", err)
	}
	if _, err := c.GetDomain(ctx, "sdk.example"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("GetDomain of a deleted zone: %v, want ErrNotFound", err)
	}

	ptrs := must[[]api.RDNS](t)(c.SetRDNS(ctx, srv.Name, api.RDNSSet{IP: srv.IPv4, PTR: api.Some("mail.sdk.example")}))
	if len(ptrs) != 1 || ptrs[0].PTR != "mail.sdk.example" {
		t.Errorf("SetRDNS: %+v", ptrs)
	}
	ptrs = must[[]api.RDNS](t)(c.SetRDNS(ctx, srv.Name, api.RDNSSet{IP: srv.IPv4, PTR: api.Null[string]()}))
	if got := must[[]api.RDNS](t)(c.ListRDNS(ctx, srv.Name)); len(got) != 1 || got[0].PTR != ptrs[0].PTR || got[0].PTR == "mail.sdk.example" {
		t.Errorf("ListRDNS after the reset: %+v", got)
	}
}

// TestSameRecordValue: the values the API writes alike are the same; a value it
// refuses is the same only as itself.
func TestSameRecordValue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		zone, name, typ, a, b string
		same                  bool
	}{
		{"example.com", "@", "MX", "10 mail", "10 mail.example.com.", true},
		{"Example.COM.", "@", "mx", "10 MAIL", "10 mail.example.com.", true},
		{"example.com", "www", "CNAME", "host", "host.example.com.", true},
		{"example.com", "www", "CNAME", "host", "host.example.net.", false},
		{"example.com", "@", "AAAA", "2001:DB8::1", "2001:db8:0::1", true},
		{"example.com", "@", "TXT", `"v=spf1 -all"`, `"v=spf1 -all"`, true},
		{"example.com", "@", "A", "192.0.2.1", "192.0.2.2", false},
		{"example.com", "@", "A", "not an address", "not an address", true},
		{"example.com", "@", "A", "300.0.0.1", "300.0.0.01", false},
		{"com", "@", "MX", "10 mail", "10 mail.com.", false},
	} {
		if got := client.SameRecordValue(c.zone, c.name, c.typ, c.a, c.b); got != c.same {
			t.Errorf("SameRecordValue(%q, %q, %q, %q, %q) = %v, want %v", c.zone, c.name, c.typ, c.a, c.b, got, c.same)
		}
	}
}
