package powerdns

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/berthhq/berth/internal/nameserver"
)

// zone is a zone as PowerDNS's API reads and writes it.
type zone struct {
	Name        string   `json:"name"`
	Kind        string   `json:"kind,omitempty"`
	Account     string   `json:"account"`
	SOAEdit     string   `json:"soa_edit"`
	SOAEditAPI  string   `json:"soa_edit_api"`
	Nameservers []string `json:"nameservers"`
	RRsets      []rrset  `json:"rrsets"`
}

// Publish makes PowerDNS serve z exactly: it creates the zone, or changes in one
// PATCH every RRset that differs and deletes every RRset z no longer has, then
// flushes PowerDNS's cache of the zone. Publishing what PowerDNS already has sends no
// PATCH, but still the flush: a job that stopped between the two runs again.
func (c *Client) Publish(ctx context.Context, z nameserver.Zone) error {
	if err := checkName(z.Name); err != nil {
		return err
	}
	want := wantRRsets(z)
	have, err := c.readZone(ctx, z.Name)
	if err != nil {
		return err
	}
	if have == nil {
		err = c.createZone(ctx, z.Name, want)
		if !hasStatus(err, http.StatusConflict) {
			if err != nil {
				return err
			}
			return c.flush(ctx, z.Name)
		}
		// Another publisher made it meanwhile: bring it to z like any other.
		if have, err = c.readZone(ctx, z.Name); err != nil {
			return err
		}
		if have == nil {
			return fmt.Errorf("%w: zone %s was made and deleted while being created", ErrRetryable, z.Name)
		}
	}
	if err := c.updateZone(ctx, have, want); err != nil {
		return err
	}
	return c.flush(ctx, z.Name)
}

// Withdraw deletes the zone from PowerDNS (an unknown zone is no error) and flushes
// PowerDNS's cache of it, so that it is answered REFUSED at once.
func (c *Client) Withdraw(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	err := c.do(ctx, http.MethodDelete, zonePath(name), nil, nil)
	if err != nil && !hasStatus(err, http.StatusNotFound) {
		return err
	}
	return c.flush(ctx, name)
}

// Zones lists the names of the zones Berth has published to PowerDNS (those of the
// client's account; others PowerDNS serves are not listed), lower case without the
// trailing dot, sorted: what a resync compares with the zones Berth has.
func (c *Client) Zones(ctx context.Context) ([]string, error) {
	var zs []zone
	if err := c.do(ctx, http.MethodGet, "/zones", nil, &zs); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(zs))
	for _, z := range zs {
		if z.Account == c.account {
			names = append(names, strings.TrimSuffix(strings.ToLower(z.Name), "."))
		}
	}
	slices.Sort(names)
	return names, nil
}

// readZone is the zone with its RRsets, nil when PowerDNS has none of that name.
func (c *Client) readZone(ctx context.Context, name string) (*zone, error) {
	var z zone
	err := c.do(ctx, http.MethodGet, zonePath(name), nil, &z)
	if hasStatus(err, http.StatusNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &z, nil
}

// createZone makes a Native zone of want in the client's account, the SOA's serial
// left as Berth set it.
func (c *Client) createZone(ctx context.Context, name string, want []rrset) error {
	z := zone{Name: fqdn(name), Kind: "Native", Account: c.account, Nameservers: []string{}, RRsets: toPowerDNS(want)}
	return c.do(ctx, http.MethodPost, "/zones", z, nil)
}

// updateZone turns have into want: the zone put in the client's account, SOA-EDIT
// and SOA-EDIT-API cleared (PowerDNS would change Berth's serial) if it was not so,
// then one PATCH of the difference.
func (c *Client) updateZone(ctx context.Context, have *zone, want []rrset) error {
	if have.Account != c.account || have.SOAEdit != "" || have.SOAEditAPI != "" {
		meta := map[string]string{"account": c.account, "soa_edit": "", "soa_edit_api": ""}
		if err := c.do(ctx, http.MethodPut, zonePath(have.Name), meta, nil); err != nil {
			return err
		}
	}
	patch := diff(have.RRsets, want)
	if len(patch) == 0 {
		return nil
	}
	return c.do(ctx, http.MethodPatch, zonePath(have.Name), map[string][]rrset{"rrsets": toPowerDNS(patch)}, nil)
}

// flush drops what PowerDNS's caches hold of the zone's names.
func (c *Client) flush(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodPut, "/cache/flush?domain="+url.QueryEscape(fqdn(name)), nil, nil)
}

// checkName refuses an empty zone name, which would be the root zone.
func checkName(name string) error {
	if strings.Trim(name, ".") == "" {
		return fmt.Errorf("powerdns: no zone name (%q)", name)
	}
	return nil
}

func zonePath(name string) string { return "/zones/" + url.PathEscape(fqdn(name)) }

func hasStatus(err error, status int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == status
}
