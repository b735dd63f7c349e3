package powerdns

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/nameserver"
)

// zone is a zone as PowerDNS's API reads and writes it.
type zone struct {
	Name        string   `json:"name"`
	Kind        string   `json:"kind,omitempty"`
	Account     string   `json:"account"`
	SOAEdit     string   `json:"soa_edit"`
	SOAEditAPI  string   `json:"soa_edit_api"`
	Serial      uint32   `json:"serial,omitempty"`
	Nameservers []string `json:"nameservers"`
	RRsets      []rrset  `json:"rrsets"`
}

// Publish makes PowerDNS serve z exactly: it creates the zone, or changes in one
// PATCH every RRset that differs and deletes every RRset z no longer has, then
// flushes PowerDNS's cache of the zone. Publishing what PowerDNS already has sends no
// PATCH, but still the flush: a job that stopped between the two runs again.
//
// PowerDNS never goes back: a zone of Berth's (the client's account) that PowerDNS
// holds with a serial greater than z's (RFC 1982) is left as it is, for z was read before what made it (a job that ran late,
// docs/operating.md, DNS). Berth's serials only grow under a zone's name, a zone
// deleted and made again included.
//
// A zone of Serial 0 has the serial PowerDNS holds, raised (hosting.NextZoneSerial)
// when anything else of it changes, YYYYMMDD01 when it is made: the operator's
// reverse zones, whose changes are servers' and have no serial in the store
// (docs/operating.md, DNS); whoever publishes them keeps two publishes of one zone
// from crossing. A Partial zone changes only what it holds (publishPartial).
func (c *Client) Publish(ctx context.Context, z nameserver.Zone) error {
	if err := checkName(z.Name); err != nil {
		return err
	}
	if z.Partial {
		return c.publishPartial(ctx, z)
	}
	have, err := c.readZone(ctx, z.Name, true)
	if err != nil {
		return err
	}
	own := z.Serial == 0
	if have == nil {
		if own {
			z.Serial = hosting.NewZoneSerial(time.Now())
		}
		err = c.createZone(ctx, z.Name, wantRRsets(z))
		if !hasStatus(err, http.StatusConflict) {
			if err != nil {
				return err
			}
			return c.flush(ctx, z.Name)
		}
		// Another publisher made it meanwhile: bring it to z like any other.
		if have, err = c.readZone(ctx, z.Name, true); err != nil {
			return err
		}
		if have == nil {
			return fmt.Errorf("%w: zone %s was made and deleted while being created", ErrRetryable, z.Name)
		}
	}
	held, ok := heldSerial(have)
	switch {
	case own:
		// The serial is PowerDNS's, raised when anything else changes.
		z.Serial = held
		if len(diff(have.RRsets, wantRRsets(z))) > 0 {
			z.Serial = hosting.NextZoneSerial(held, time.Now())
		}
	case ok && have.Account == c.account && hosting.SerialGreater(held, z.Serial):
		return nil // Berth's, newer than z: z is stale
	}
	if err := c.updateZone(ctx, have, wantRRsets(z)); err != nil {
		return err
	}
	return c.flush(ctx, z.Name)
}

// publishPartial publishes a Partial zone, one too large to send whole at each change
// (the default domain of servers' names, docs/operating.md, DNS): PowerDNS's copy is
// never read whole. A zone PowerDNS lacks is created with z's SOA, apex NS and RRsets;
// else one PATCH replaces each RRset z holds with values and deletes each it holds
// without any (a name that lost that type), leaves every other RRset as it is, and
// puts the SOA (its serial raised: the greater of z.Serial and
// hosting.NextZoneSerial of the one PowerDNS holds, so that a secondary sees the
// change) and the apex NS as z has them. Whoever calls it keeps two publishes of one
// name from crossing: PowerDNS cannot tell an older one here.
func (c *Client) publishPartial(ctx context.Context, z nameserver.Zone) error {
	have, err := c.readZone(ctx, z.Name, false)
	if err != nil {
		return err
	}
	if have == nil {
		if z.Serial == 0 {
			z.Serial = hosting.NewZoneSerial(time.Now())
		}
		err := c.createZone(ctx, z.Name, wantRRsets(z))
		if !hasStatus(err, http.StatusConflict) {
			if err != nil {
				return err
			}
			return c.flush(ctx, z.Name)
		}
		if have, err = c.readZone(ctx, z.Name, false); err != nil {
			return err
		}
		if have == nil {
			return fmt.Errorf("%w: zone %s was made and deleted while being created", ErrRetryable, z.Name)
		}
	}
	if next := hosting.NextZoneSerial(have.Serial, time.Now()); !hosting.SerialGreater(z.Serial, next) {
		z.Serial = next
	}
	if err := c.setMeta(ctx, have); err != nil {
		return err
	}
	var patch []rrset
	for _, s := range wantRRsets(z) {
		s.ChangeType = changeReplace
		patch = append(patch, s)
	}
	for _, s := range z.RRsets {
		if len(s.Values) == 0 {
			patch = append(patch, rrset{Name: fqdn(s.Name), Type: strings.ToUpper(s.Type), ChangeType: changeDelete, Records: []record{}})
		}
	}
	// The DELETEs first, as diff orders them.
	slices.SortStableFunc(patch, func(a, b rrset) int {
		return boolOrder(a.ChangeType != changeDelete) - boolOrder(b.ChangeType != changeDelete)
	})
	if err := c.do(ctx, http.MethodPatch, zonePath(z.Name), map[string][]rrset{"rrsets": toPowerDNS(patch)}, nil); err != nil {
		return err
	}
	return c.flush(ctx, z.Name)
}

func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}

// heldSerial is the serial of the SOA PowerDNS holds for z.
func heldSerial(z *zone) (uint32, bool) {
	for _, s := range z.RRsets {
		if strings.EqualFold(s.Type, "SOA") && len(s.Records) > 0 {
			f := strings.Fields(s.Records[0].Content)
			if len(f) < 3 {
				return 0, false
			}
			v, err := strconv.ParseUint(f[2], 10, 32)
			return uint32(v), err == nil
		}
	}
	return 0, false
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

// Names lists the owner names below the apex of the zone named zone that PowerDNS
// holds RRsets of (lower case, without the trailing dot, sorted, each once); none
// when it has no such zone. A resync compares the operator's zone of servers' names
// with the servers there are: it reads the zone whole, once.
func (c *Client) Names(ctx context.Context, zone string) ([]string, error) {
	if err := checkName(zone); err != nil {
		return nil, err
	}
	z, err := c.readZone(ctx, zone, true)
	if err != nil || z == nil {
		return nil, err
	}
	apex := strings.ToLower(fqdn(zone))
	var names []string
	for _, set := range z.RRsets {
		n := strings.ToLower(set.Name)
		if n != apex {
			names = append(names, strings.TrimSuffix(n, "."))
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// readZone is the zone, with its RRsets when rrsets (else its metadata and serial
// only), nil when PowerDNS has none of that name.
func (c *Client) readZone(ctx context.Context, name string, rrsets bool) (*zone, error) {
	var z zone
	path := zonePath(name)
	if !rrsets {
		path += "?rrsets=false"
	}
	err := c.do(ctx, http.MethodGet, path, nil, &z)
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
	if err := c.setMeta(ctx, have); err != nil {
		return err
	}
	patch := diff(have.RRsets, want)
	if len(patch) == 0 {
		return nil
	}
	return c.do(ctx, http.MethodPatch, zonePath(have.Name), map[string][]rrset{"rrsets": toPowerDNS(patch)}, nil)
}

// setMeta puts the zone in the client's account with SOA-EDIT and SOA-EDIT-API
// cleared (PowerDNS would change Berth's serial), if it was not so.
func (c *Client) setMeta(ctx context.Context, have *zone) error {
	if have.Account == c.account && have.SOAEdit == "" && have.SOAEditAPI == "" {
		return nil
	}
	meta := map[string]string{"account": c.account, "soa_edit": "", "soa_edit_api": ""}
	return c.do(ctx, http.MethodPut, zonePath(have.Name), meta, nil)
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
