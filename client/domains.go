package client

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/dnszone"
)

// Domains are the DNS zones an account hosts on the operator's nameservers
// (docs/api.md, Domains); a zone is named by its id or its name (domain). The unit of
// change is the RRset, every record of one name and one type: PutRRset sets a whole
// set. Names of RRsets are relative to the zone, "@" the apex. Reading needs read;
// changing the scope domains (ErrMissingScope otherwise).

func domainPath(domain, rest string) string { return "/domains/" + url.PathEscape(domain) + rest }

func rrsetPath(domain, name, typ string) string {
	return domainPath(domain, "/rrsets/"+url.PathEscape(name)+"/"+url.PathEscape(typ))
}

// ListDomains returns the account's zones, oldest first (at most the zone quota, 100).
func (c *Client) ListDomains(ctx context.Context) ([]api.Domain, error) {
	return list[api.Domain](c, ctx, "/domains", nil)
}

// CreateDomain adds a zone for req.Name, optionally with its TTL and the RRsets of a
// zone file. ErrValidation: "name" (not a domain, a public suffix, held here by
// anyone, or a parent or child of a zone held; the quota), "ttl", "line N" and
// "zone_file" for the zone file.
func (c *Client) CreateDomain(ctx context.Context, req api.DomainCreate) (*api.Domain, error) {
	return one[api.Domain](c, ctx, http.MethodPost, "/domains", nil, req)
}

// GetDomain returns a zone. ErrNotFound.
func (c *Client) GetDomain(ctx context.Context, domain string) (*api.Domain, error) {
	return one[api.Domain](c, ctx, http.MethodGet, domainPath(domain, ""), nil, nil)
}

// UpdateDomain changes a zone's TTL. ErrNotFound, ErrValidation ("ttl").
func (c *Client) UpdateDomain(ctx context.Context, domain string, req api.DomainUpdate) (*api.Domain, error) {
	return one[api.Domain](c, ctx, http.MethodPatch, domainPath(domain, ""), nil, req)
}

// DeleteDomain deletes a zone with every RRset of it. ErrNotFound.
func (c *Client) DeleteDomain(ctx context.Context, domain string) error {
	return c.do(ctx, http.MethodDelete, domainPath(domain, ""), nil, nil, nil)
}

// RRsetListOptions narrows ListRRsets to one name and one type ("": any).
type RRsetListOptions struct {
	Name, Type string
}

// ListRRsets returns a zone's RRsets, the operator's SOA and apex NS first, then in
// DNS order. ErrNotFound, ErrValidation (a name outside the zone, an unknown type).
func (c *Client) ListRRsets(ctx context.Context, domain string, opts RRsetListOptions) ([]api.RRset, error) {
	q := url.Values{}
	if opts.Name != "" {
		q.Set("name", opts.Name)
	}
	if opts.Type != "" {
		q.Set("type", opts.Type)
	}
	return list[api.RRset](c, ctx, domainPath(domain, "/rrsets"), q)
}

// GetRRset returns the RRset of name and typ. ErrNotFound.
func (c *Client) GetRRset(ctx context.Context, domain, name, typ string) (*api.RRset, error) {
	return one[api.RRset](c, ctx, http.MethodGet, rrsetPath(domain, name, typ), nil, nil)
}

// PutRRset creates the RRset of name and typ, or replaces it whole, and returns it
// with its values canonical (SameRecordValue compares them). ErrNotFound,
// ErrValidation ("name", "type", "ttl", "records").
func (c *Client) PutRRset(ctx context.Context, domain, name, typ string, req api.RRsetPut) (*api.RRset, error) {
	return one[api.RRset](c, ctx, http.MethodPut, rrsetPath(domain, name, typ), nil, req)
}

// DeleteRRset deletes the RRset of name and typ. ErrNotFound, ErrValidation (the
// operator's SOA and apex NS, "type").
func (c *Client) DeleteRRset(ctx context.Context, domain, name, typ string) error {
	return c.do(ctx, http.MethodDelete, rrsetPath(domain, name, typ), nil, nil, nil)
}

// ExportZoneFile returns a zone as a zone file (BIND text). ErrNotFound.
func (c *Client) ExportZoneFile(ctx context.Context, domain string) (string, error) {
	var out textBody
	err := c.do(ctx, http.MethodGet, domainPath(domain, "/zone-file"), nil, nil, &out)
	return string(out), err
}

// ImportZoneFile replaces every RRset of a zone with those of a zone file (at most
// 256 KiB), all or nothing. ErrNotFound, ErrValidation (keyed "line N", and
// "zone_file").
func (c *Client) ImportZoneFile(ctx context.Context, domain, zoneFile string) (*api.Domain, error) {
	return one[api.Domain](c, ctx, http.MethodPut, domainPath(domain, "/zone-file"), nil, textBody(zoneFile))
}

// ListRDNS returns the PTR of a server's IPv4 address and of each of its IPv6
// addresses that has one (docs/api.md, Reverse DNS). ErrNotFound.
func (c *Client) ListRDNS(ctx context.Context, server string) ([]api.RDNS, error) {
	return list[api.RDNS](c, ctx, serverPath(server, "/rdns"), nil)
}

// SetRDNS sets the PTR of req.IP, the server's IPv4 address or one of its IPv6 /64
// (req.PTR api.Null: back to the default), and returns the server's PTRs.
// ErrNotFound, ErrValidation ("ip", "ptr").
func (c *Client) SetRDNS(ctx context.Context, server string, req api.RDNSSet) ([]api.RDNS, error) {
	var out api.List[api.RDNS]
	if err := c.do(ctx, http.MethodPut, serverPath(server, "/rdns"), nil, req, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// SameRecordValue reports whether a and b are the same value of a record of type typ
// named name (relative, "@" the apex) in zone: whether the API writes them alike
// (docs/api.md, Domains), as "10 mail" and "10 mail.example.com." in example.com. A
// value the API would refuse is the same only as itself.
func SameRecordValue(zone, name, typ, a, b string) bool {
	if a == b {
		return true
	}
	z, err := dnszone.ZoneName(zone)
	if err != nil {
		return false
	}
	t := dnszone.Type(strings.ToUpper(typ))
	ca, errA := dnszone.CanonicalValue(z, name, t, a)
	cb, errB := dnszone.CanonicalValue(z, name, t, b)
	return errA == nil && errB == nil && ca == cb
}
