package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// The account's DNS zones and their RRsets (docs/api.md, Domains). The rules of
// names, types, values and zone files are dnszone's; here they meet the store, the
// quota and the events.

// DNSOptions are the operator's DNS settings (serve --dns-nameservers,
// --dns-default-domain).
type DNSOptions struct {
	// Nameservers are host names without a trailing dot: every zone's apex NS, the
	// first one its SOA's MNAME.
	Nameservers []string
	// DefaultDomain names a server's default PTR, <server name>.<DefaultDomain>.
	DefaultDomain string
	// Publisher, when set, is the nameserver every change of what DNS answers is
	// published to by a durable job (serve --powerdns-url; dns_publish.go).
	Publisher DNSPublisher
	// Lock keeps two publishes of one zone from crossing, across the processes on
	// the database (nil: within this process only).
	Lock ZoneLock
}

// DomainCreate is POST /domains's body.
type DomainCreate struct {
	Name     *string
	TTL      *int64
	ZoneFile *string
}

// RecordInput is one record of an RRset as a PUT gives it.
type RecordInput struct {
	Value   *string
	Comment *string
}

// ParseDomainRef reads how a path names a zone: a positive id without sign or
// leading zeros, or a name in any form dnszone.ZoneName takes. ok is false for what
// can name no zone (the API answers 404).
func ParseDomainRef(s string) (ref hosting.DomainRef, ok bool) {
	if s != "" && s[0] >= '1' && s[0] <= '9' {
		if id, err := strconv.ParseInt(s, 10, 64); err == nil {
			return hosting.DomainRef{ID: id}, true
		}
	}
	name, err := dnszone.ZoneName(s)
	if err != nil {
		return ref, false
	}
	return hosting.DomainRef{Name: name}, true
}

// Nameservers are the operator's, as every zone shows them.
func (s *Service) Nameservers() []string { return s.dns.Nameservers }

// Domains lists the account's zones, oldest first.
func (s *Service) Domains(ctx context.Context, p hosting.Principal) ([]hosting.Domain, error) {
	ds, err := s.store.Domains(ctx, p.Account.ID)
	return ds, internal("domains", err)
}

// Domain finds one of the account's zones; CodeNotFound otherwise.
func (s *Service) Domain(ctx context.Context, p hosting.Principal, ref hosting.DomainRef) (hosting.Domain, error) {
	d, err := s.store.Domain(ctx, p.Account.ID, ref)
	return d, notFoundOr("domain", err)
}

// CreateDomain adds a zone, with the RRsets of a zone file when one is given. Every
// field's problems are reported at once; the zone file is read once the name is
// right (its names are relative to it).
func (s *Service) CreateDomain(ctx context.Context, p hosting.Principal, c DomainCreate) (hosting.Domain, error) {
	d, sets, err := checkDomainCreate(c)
	if err != nil {
		return d, err
	}
	if s.operatorZone(d.Name) {
		return d, hosting.Invalid("name", "validation.zone_reserved", "name", d.Name)
	}
	d.AccountID, d.CreatedAt = p.Account.ID, s.NowFor(p.Account.ID)
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		var v hosting.Validation
		if err := s.checkQuota(ctx, tx, d.AccountID, hosting.QuotaZones, &v); err != nil {
			return err
		}
		related, err := tx.ZoneRelated(ctx, d.Name)
		if err != nil {
			return internal("zones related", err)
		}
		if related {
			v.Add("name", "validation.zone_taken", "name", d.Name)
		}
		if err := v.Err("name"); err != nil {
			return err
		}
		id, err := tx.CreateDomain(ctx, d, sets)
		if errors.Is(err, store.ErrConflict) {
			return hosting.Invalid("name", "validation.zone_taken", "name", d.Name)
		} else if err != nil {
			return internal("create domain", err)
		}
		if d, err = tx.Domain(ctx, d.AccountID, hosting.DomainRef{ID: id}); err != nil {
			return internal("domain", err)
		}
		if err := s.publishZone(ctx, tx, d.Name); err != nil {
			return err
		}
		return s.emitDomain(ctx, tx, hosting.EventDomainCreated, d)
	})
	return d, err
}

// operatorZone reports whether name is the operator's to serve (docs/api.md, Domains):
// the default domain (servers' default names), a parent or a child of it, or a name
// of the reverse trees under arpa (the address pools' PTRs).
func (s *Service) operatorZone(name string) bool {
	return dnszone.IsSubdomain(name, "arpa") || s.dns.DefaultDomain != "" && dnszone.Related(name, s.dns.DefaultDomain)
}

// checkDomainCreate checks a creation's fields: the zone as it would be made, and
// the RRsets of its zone file.
func checkDomainCreate(c DomainCreate) (hosting.Domain, []dnszone.RRset, error) {
	var v hosting.Validation
	d := hosting.Domain{TTL: hosting.DomainDefaultTTL}
	if c.Name == nil {
		v.Add("name", "validation.required")
	} else if name, err := dnszone.ZoneName(*c.Name); err != nil {
		v.AddAll(err)
	} else {
		d.Name = name
	}
	if c.TTL != nil {
		if err := checkZoneTTL(*c.TTL); err != nil {
			v.AddAll(err)
		} else {
			d.TTL = int(*c.TTL)
		}
	}
	var sets []dnszone.RRset
	if c.ZoneFile != nil && len(*c.ZoneFile) > dnszone.MaxZoneFileBytes {
		v.Add("zone_file", "validation.dns_zone_file_size", "max", dnszone.MaxZoneFileBytes)
	} else if c.ZoneFile != nil && d.Name != "" && !v.Has("ttl") {
		var err error
		if sets, err = dnszone.ParseZoneFile(d.Name, d.TTL, *c.ZoneFile); err != nil {
			v.AddAll(err)
		}
	}
	return d, sets, v.Err("name", "ttl", "zone_file")
}

// checkTTL is dnszone.CheckTTL for a TTL as JSON gives it (any int64).
func checkTTL(ttl *int64) error {
	if ttl == nil {
		return nil
	}
	t := int(max(min(*ttl, dnszone.MaxTTL+1), dnszone.MinTTL-1))
	return dnszone.CheckTTL(&t)
}

// checkZoneTTL refuses, on "ttl", a zone's TTL outside 60–86400 seconds. A zone's
// TTL is never null, so its message is not an RRset's (which may be null: the zone's).
func checkZoneTTL(ttl int64) error {
	if ttl < dnszone.MinTTL || ttl > dnszone.MaxTTL {
		var v hosting.Validation
		v.Add("ttl", "validation.zone_ttl", "min", dnszone.MinTTL, "max", dnszone.MaxTTL)
		return v.Err("ttl")
	}
	return nil
}

// SetDomainTTL changes a zone's TTL, raising its serial.
func (s *Service) SetDomainTTL(ctx context.Context, p hosting.Principal, ref hosting.DomainRef, ttl *int64) (hosting.Domain, error) {
	var d hosting.Domain
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if d, err = tx.LockDomain(ctx, p.Account.ID, ref); err != nil {
			return notFoundOr("domain", err)
		}
		if ttl == nil {
			return hosting.Invalid("ttl", "validation.required")
		}
		if err := checkZoneTTL(*ttl); err != nil {
			return err
		}
		if err := tx.SetDomainTTL(ctx, d.ID, int(*ttl), s.NowFor(d.AccountID)); err != nil {
			return internal("set domain ttl", err)
		}
		if d, err = tx.Domain(ctx, d.AccountID, hosting.DomainRef{ID: d.ID}); err != nil {
			return internal("domain", err)
		}
		if err := s.publishZone(ctx, tx, d.Name); err != nil {
			return err
		}
		return s.emitDomain(ctx, tx, hosting.EventDomainUpdated, d, "ttl")
	})
	return d, err
}

// DeleteDomain deletes a zone with its RRsets; its name is free again.
func (s *Service) DeleteDomain(ctx context.Context, p hosting.Principal, ref hosting.DomainRef) error {
	return s.store.InTx(ctx, func(tx store.Tx) error {
		d, err := tx.LockDomain(ctx, p.Account.ID, ref)
		if err != nil {
			return notFoundOr("domain", err)
		}
		if err := tx.DeleteDomain(ctx, d.ID); err != nil {
			return internal("delete domain", err)
		}
		if err := s.publishZone(ctx, tx, d.Name); err != nil {
			return err
		}
		return s.emitDomain(ctx, tx, hosting.EventDomainDeleted, d)
	})
}

// RRsets lists a zone's RRsets that name and typ admit ("" any), the operator's
// SOA and apex NS among them, in DNS order. A name or type no RRset can have is
// refused on its parameter.
func (s *Service) RRsets(ctx context.Context, p hosting.Principal, ref hosting.DomainRef, name, typ string) ([]dnszone.RRset, error) {
	d, err := s.Domain(ctx, p, ref)
	if err != nil {
		return nil, err
	}
	var v hosting.Validation
	var f store.RRsetFilter
	if name != "" {
		if f.Name, err = dnszone.OwnerName(d.Name, name); err != nil {
			v.AddAll(err)
		}
	}
	if typ != "" {
		if f.Type = dnszone.Type(strings.ToUpper(typ)); f.Type != dnszone.TypeSOA && !slices.Contains(dnszone.Types, f.Type) {
			v.Add("type", "validation.dns_type_unsupported", "type", typ, "types", "SOA, "+dnszone.TypeList())
		}
	}
	if err := v.Err("name", "type"); err != nil {
		return nil, err
	}
	sets, err := s.store.RRsets(ctx, d.ID, f)
	if err != nil {
		return nil, internal("rrsets", err)
	}
	var out []dnszone.RRset
	for _, o := range s.operatorSets(d) {
		if (f.Name == "" || f.Name == o.Name) && (f.Type == "" || f.Type == o.Type) {
			out = append(out, o)
		}
	}
	return append(out, sets...), nil
}

// RRset finds one RRset of a zone by its name and type; CodeNotFound for a name
// outside the zone, a type no RRset has, or no such set.
func (s *Service) RRset(ctx context.Context, p hosting.Principal, ref hosting.DomainRef, name, typ string) (dnszone.RRset, error) {
	d, err := s.Domain(ctx, p, ref)
	if err != nil {
		return dnszone.RRset{}, err
	}
	owner, t, ok := rrsetKey(d, name, typ)
	if !ok {
		return dnszone.RRset{}, hosting.ErrNotFound()
	}
	for _, o := range s.operatorSets(d) {
		if o.Name == owner && o.Type == t {
			return o, nil
		}
	}
	sets, err := s.store.RRsets(ctx, d.ID, store.RRsetFilter{Name: owner, Type: t})
	if err != nil {
		return dnszone.RRset{}, internal("rrsets", err)
	}
	if len(sets) == 0 {
		return dnszone.RRset{}, hosting.ErrNotFound()
	}
	return sets[0], nil
}

// rrsetKey reads a path's RRset name and type: ok is false when no RRset of the zone
// can have them.
func rrsetKey(d hosting.Domain, name, typ string) (string, dnszone.Type, bool) {
	owner, err := dnszone.OwnerName(d.Name, name)
	t := dnszone.Type(strings.ToUpper(typ))
	return owner, t, err == nil && (t == dnszone.TypeSOA || slices.Contains(dnszone.Types, t))
}

// operatorSets are the zone's SOA and apex NS, which the operator's settings make:
// read-only, shown first.
func (s *Service) operatorSets(d hosting.Domain) []dnszone.RRset {
	mname := d.Name + "."
	if len(s.dns.Nameservers) > 0 {
		mname = s.dns.Nameservers[0] + "."
	}
	soa := fmt.Sprintf("%s hostmaster.%s. %d %d %d %d %d", mname, d.Name, d.Serial,
		dnszone.SOARefresh, dnszone.SOARetry, dnszone.SOAExpire, dnszone.SOANegative)
	sets := []dnszone.RRset{{Name: dnszone.Apex, Type: dnszone.TypeSOA, Records: []dnszone.Record{{Value: soa}}}}
	if len(s.dns.Nameservers) > 0 {
		ns := dnszone.RRset{Name: dnszone.Apex, Type: dnszone.TypeNS}
		for _, n := range s.dns.Nameservers {
			ns.Records = append(ns.Records, dnszone.Record{Value: n + "."})
		}
		sets = append(sets, ns)
	}
	return sets
}

// OperatorRRsets counts the RRsets of every zone that are the operator's (the
// API's rrset_count adds them).
func (s *Service) OperatorRRsets() int { return len(s.operatorSets(hosting.Domain{})) }

// PutRRset creates or replaces the RRset of name and typ in a zone, whole, and
// answers it canonical and whether it was created. The zone is locked first, so that
// the count of its RRsets and the CNAME rule see what the write changes.
func (s *Service) PutRRset(ctx context.Context, p hosting.Principal, ref hosting.DomainRef, name, typ string, ttl *int64, records []RecordInput) (dnszone.RRset, bool, error) {
	var out dnszone.RRset
	var created bool
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		d, err := tx.LockDomain(ctx, p.Account.ID, ref)
		if err != nil {
			return notFoundOr("domain", err)
		}
		if out, err = checkRRset(d, name, typ, ttl, records); err != nil {
			return err
		}
		if err := s.checkRRsetInZone(ctx, tx, d, out); err != nil {
			return err
		}
		if created, err = tx.PutRRset(ctx, d.ID, out, s.NowFor(d.AccountID)); err != nil {
			return internal("put rrset", err)
		}
		if err := s.publishZone(ctx, tx, d.Name); err != nil {
			return err
		}
		typ := hosting.EventRRsetUpdated
		if created {
			typ = hosting.EventRRsetCreated
		}
		return s.emitRRset(ctx, tx, typ, d, out.Name, out.Type)
	})
	return out, created, err
}

// checkRRset checks a PUT's set on its own: its name and type (from the path, a
// name outside the zone is 404), its TTL and its records.
func checkRRset(d hosting.Domain, name, typ string, ttl *int64, records []RecordInput) (dnszone.RRset, error) {
	if _, err := dnszone.OwnerName(d.Name, name); outsideZone(err) {
		return dnszone.RRset{}, hosting.ErrNotFound()
	}
	var v hosting.Validation
	in := dnszone.RRset{Name: name, Type: dnszone.Type(typ)}
	if err := checkTTL(ttl); err != nil {
		v.AddAll(err)
	} else if ttl != nil {
		t := int(*ttl)
		in.TTL = &t
	}
	if records == nil {
		v.Add("records", "validation.required")
	}
	for _, r := range records {
		var rec dnszone.Record // a value left out is empty: dnszone names the record
		if r.Value != nil {
			rec.Value = *r.Value
		}
		if r.Comment != nil {
			rec.Comment = *r.Comment
		}
		in.Records = append(in.Records, rec)
	}
	out, err := dnszone.CanonicalRRset(d.Name, in)
	if err != nil {
		v.AddAll(err)
	}
	return out, v.Err("name", "type", "ttl", "records")
}

// outsideZone reports whether err is dnszone's refusal of a name outside the zone:
// a path naming one names no RRset of the zone (404), where a name that is no name
// is refused on "name".
func outsideZone(err error) bool {
	var e *hosting.Error
	if !errors.As(err, &e) {
		return false
	}
	for _, m := range e.Fields["name"] {
		if m.ID == "validation.dns_name_outside" {
			return true
		}
	}
	return false
}

// checkRRsetInZone applies the rules across the zone to set as the PUT would leave
// it: a CNAME alone at its name, and a new RRset within the zone's limit.
func (s *Service) checkRRsetInZone(ctx context.Context, tx store.Tx, d hosting.Domain, set dnszone.RRset) error {
	at, err := tx.RRsets(ctx, d.ID, store.RRsetFilter{Name: set.Name})
	if err != nil {
		return internal("rrsets", err)
	}
	after := []dnszone.RRset{set}
	exists := false
	for _, o := range at {
		if o.Type == set.Type {
			exists = true
			continue
		}
		after = append(after, o)
	}
	if err := dnszone.CheckZone(after); err != nil {
		return err
	}
	if !exists && d.RRsetCount >= dnszone.MaxRRsets {
		return hosting.Invalid("name", "validation.dns_rrsets_many", "max", dnszone.MaxRRsets, "count", d.RRsetCount+1)
	}
	return nil
}

// DeleteRRset deletes the RRset of name and typ; the operator's SOA and apex NS are
// refused on "type".
func (s *Service) DeleteRRset(ctx context.Context, p hosting.Principal, ref hosting.DomainRef, name, typ string) error {
	return s.store.InTx(ctx, func(tx store.Tx) error {
		d, err := tx.LockDomain(ctx, p.Account.ID, ref)
		if err != nil {
			return notFoundOr("domain", err)
		}
		owner, t, ok := rrsetKey(d, name, typ)
		if !ok {
			return hosting.ErrNotFound()
		}
		if _, err := dnszone.ParseType(string(t), owner == dnszone.Apex); err != nil {
			return err
		}
		if err := tx.DeleteRRset(ctx, d.ID, owner, t, s.NowFor(d.AccountID)); err != nil {
			return notFoundOr("delete rrset", err)
		}
		if err := s.publishZone(ctx, tx, d.Name); err != nil {
			return err
		}
		return s.emitRRset(ctx, tx, hosting.EventRRsetDeleted, d, owner, t)
	})
}

// ZoneFile exports a zone as BIND text (dnszone.ExportZoneFile).
func (s *Service) ZoneFile(ctx context.Context, p hosting.Principal, ref hosting.DomainRef) (string, error) {
	d, err := s.Domain(ctx, p, ref)
	if err != nil {
		return "", err
	}
	sets, err := s.store.RRsets(ctx, d.ID, store.RRsetFilter{})
	if err != nil {
		return "", internal("rrsets", err)
	}
	soa := dnszone.SOA{Serial: d.Serial, Nameservers: s.dns.Nameservers, TTL: d.TTL}
	return dnszone.ExportZoneFile(d.Name, soa, sets), nil
}

// ImportZoneFile replaces every RRset of a zone with a zone file's, in one
// transaction, or changes nothing and answers the file's errors.
func (s *Service) ImportZoneFile(ctx context.Context, p hosting.Principal, ref hosting.DomainRef, text string) (hosting.Domain, error) {
	var d hosting.Domain
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if d, err = tx.LockDomain(ctx, p.Account.ID, ref); err != nil {
			return notFoundOr("domain", err)
		}
		sets, err := dnszone.ParseZoneFile(d.Name, d.TTL, text)
		if err != nil {
			return err
		}
		if err := tx.ReplaceRRsets(ctx, d.ID, sets, s.NowFor(d.AccountID)); err != nil {
			return internal("replace rrsets", err)
		}
		if err := s.publishZone(ctx, tx, d.Name); err != nil {
			return err
		}
		if d, err = tx.Domain(ctx, d.AccountID, hosting.DomainRef{ID: d.ID}); err != nil {
			return internal("domain", err)
		}
		return s.emitDomain(ctx, tx, hosting.EventDomainUpdated, d, "rrsets")
	})
	return d, err
}

func (s *Service) emitDomain(ctx context.Context, tx store.Tx, typ hosting.EventType, d hosting.Domain, changes ...string) error {
	return s.emit(ctx, tx, d.AccountID, typ, hosting.EventResource{Type: "domain", ID: d.ID},
		hosting.DomainEventData{ID: d.ID, Name: d.Name, Serial: d.Serial, Changes: changes})
}

// emitRRset says that the RRset name/t of d changed; the serial is the zone's after
// the change (the store raised it by one step).
func (s *Service) emitRRset(ctx context.Context, tx store.Tx, typ hosting.EventType, d hosting.Domain, name string, t dnszone.Type) error {
	now, err := tx.Domain(ctx, d.AccountID, hosting.DomainRef{ID: d.ID})
	if err != nil {
		return internal("domain", err)
	}
	return s.emit(ctx, tx, d.AccountID, typ, hosting.EventResource{Type: "domain", ID: d.ID},
		hosting.RRsetEventData{DomainID: d.ID, Domain: d.Name, Name: name, Type: string(t), Serial: now.Serial})
}
