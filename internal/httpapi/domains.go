package httpapi

import (
	"errors"
	"io"
	"net/http"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

// ---- domains (docs/api.md, Domains) ----

// plainText is an answer's body sent as text/plain (a zone file).
type plainText string

// domainRef reads the {id} of a domain path: an id or a name (404 when it can name
// none).
func domainRef(r *http.Request) (hosting.DomainRef, error) {
	ref, ok := ops.ParseDomainRef(r.PathValue("id"))
	if !ok {
		return ref, hosting.ErrNotFound()
	}
	return ref, nil
}

// domain finds the path's zone before a body is read: 404 comes before 422.
func (s *Server) domain(r *request) (hosting.DomainRef, error) {
	ref, err := domainRef(r.Request)
	if err != nil {
		return ref, err
	}
	d, err := s.svc.Domains.Domain(r.ctx, r.p, ref)
	return hosting.DomainRef{ID: d.ID}, err
}

func (s *Server) toDomain(d hosting.Domain) api.Domain {
	ns := s.svc.Domains.Nameservers()
	if ns == nil {
		ns = []string{}
	}
	return api.Domain{ID: d.ID, Name: d.Name, TTL: d.TTL, Serial: d.Serial, Nameservers: ns,
		RRsetCount: d.RRsetCount + s.svc.Domains.OperatorRRsets(), CreatedAt: d.CreatedAt}
}

func toRRset(set dnszone.RRset) api.RRset {
	out := api.RRset{Name: set.Name, Type: string(set.Type), TTL: set.TTL, Records: make([]api.DNSRecord, len(set.Records))}
	for i, r := range set.Records {
		out.Records[i] = api.DNSRecord{Value: r.Value, Comment: r.Comment}
	}
	return out
}

func (s *Server) listDomains(r *request) (int, any, error) {
	ds, err := s.svc.Domains.Domains(r.ctx, r.p)
	return http.StatusOK, list(ds, s.toDomain), err
}

func (s *Server) getDomain(r *request) (int, any, error) {
	ref, err := domainRef(r.Request)
	if err != nil {
		return 0, nil, err
	}
	d, err := s.svc.Domains.Domain(r.ctx, r.p, ref)
	return http.StatusOK, one(s.toDomain(d)), err
}

func (s *Server) createDomain(r *request) (int, any, error) {
	var b api.DomainCreate
	if err := decodeMax(r.Request, &b, 2*dnszone.MaxZoneFileBytes); err != nil {
		return 0, nil, err
	}
	d, err := s.svc.Domains.CreateDomain(r.ctx, r.p, ops.DomainCreate{Name: b.Name, TTL: b.TTL, ZoneFile: b.ZoneFile})
	return http.StatusCreated, one(s.toDomain(d)), err
}

func (s *Server) patchDomain(r *request) (int, any, error) {
	ref, err := s.domain(r)
	if err != nil {
		return 0, nil, err
	}
	var b api.DomainUpdate
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	d, err := s.svc.Domains.SetDomainTTL(r.ctx, r.p, ref, b.TTL)
	return http.StatusOK, one(s.toDomain(d)), err
}

func (s *Server) deleteDomain(r *request) (int, any, error) {
	ref, err := domainRef(r.Request)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, s.svc.Domains.DeleteDomain(r.ctx, r.p, ref)
}

func (s *Server) listRRsets(r *request) (int, any, error) {
	ref, err := s.domain(r)
	if err != nil {
		return 0, nil, err
	}
	var v hosting.Validation
	name, _ := queryValue(r.Request, "name", &v)
	typ, _ := queryValue(r.Request, "type", &v)
	if err := v.Err(); err != nil {
		return 0, nil, err
	}
	sets, err := s.svc.Domains.RRsets(r.ctx, r.p, ref, name, typ)
	return http.StatusOK, list(sets, toRRset), err
}

func (s *Server) getRRset(r *request) (int, any, error) {
	ref, err := domainRef(r.Request)
	if err != nil {
		return 0, nil, err
	}
	set, err := s.svc.Domains.RRset(r.ctx, r.p, ref, r.PathValue("name"), r.PathValue("type"))
	return http.StatusOK, one(toRRset(set)), err
}

func (s *Server) putRRset(r *request) (int, any, error) {
	ref, err := s.domain(r)
	if err != nil {
		return 0, nil, err
	}
	var b api.RRsetPut
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	var ttl *int64
	if b.TTL.Set && !b.TTL.Null {
		ttl = &b.TTL.Value
	}
	var records []ops.RecordInput
	if b.Records != nil {
		records = make([]ops.RecordInput, len(b.Records))
		for i, rec := range b.Records {
			records[i] = ops.RecordInput{Value: rec.Value, Comment: rec.Comment}
		}
	}
	set, created, err := s.svc.Domains.PutRRset(r.ctx, r.p, ref, r.PathValue("name"), r.PathValue("type"), ttl, records)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return status, one(toRRset(set)), err
}

func (s *Server) deleteRRset(r *request) (int, any, error) {
	ref, err := domainRef(r.Request)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, s.svc.Domains.DeleteRRset(r.ctx, r.p, ref, r.PathValue("name"), r.PathValue("type"))
}

func (s *Server) exportZoneFile(r *request) (int, any, error) {
	ref, err := domainRef(r.Request)
	if err != nil {
		return 0, nil, err
	}
	text, err := s.svc.Domains.ZoneFile(r.ctx, r.p, ref)
	return http.StatusOK, plainText(text), err
}

// importZoneFile reads a text/plain body of at most dnszone.MaxZoneFileBytes.
func (s *Server) importZoneFile(r *request) (int, any, error) {
	ref, err := s.domain(r)
	if err != nil {
		return 0, nil, err
	}
	if err := checkEncoding(r.Request); err != nil {
		return 0, nil, err
	}
	text, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, dnszone.MaxZoneFileBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return 0, nil, hosting.Invalid("zone_file", "validation.dns_zone_file_size", "max", dnszone.MaxZoneFileBytes)
		}
		return 0, nil, err // the client went away
	}
	d, err := s.svc.Domains.ImportZoneFile(r.ctx, r.p, ref, string(text))
	return http.StatusOK, one(s.toDomain(d)), err
}

// ---- reverse DNS (docs/api.md, Reverse DNS) ----

func toRDNS(p hosting.PTR) api.RDNS { return api.RDNS{IP: p.IP, PTR: p.PTR} }

func (s *Server) listRDNS(r *request) (int, any, error) {
	ref, err := s.serverRef(r)
	if err != nil {
		return 0, nil, err
	}
	ps, err := s.svc.RDNS.RDNS(r.ctx, r.p, ref)
	return http.StatusOK, list(ps, toRDNS), err
}

func (s *Server) setRDNS(r *request) (int, any, error) {
	ref, err := s.serverRef(r)
	if err != nil {
		return 0, nil, err
	}
	if _, err := s.svc.Servers.WritableServer(r.ctx, r.p, ref); err != nil {
		return 0, nil, err
	}
	var b api.RDNSSet
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	var v hosting.Validation
	if b.IP == nil {
		v.Add("ip", "validation.required")
	}
	if !b.PTR.Set {
		v.Add("ptr", "validation.required")
	}
	if err := v.Err("ip", "ptr"); err != nil {
		return 0, nil, err
	}
	var ptr *string
	if !b.PTR.Null {
		ptr = &b.PTR.Value
	}
	ps, err := s.svc.RDNS.SetRDNS(r.ctx, r.p, ref, b.IP, ptr)
	return http.StatusOK, list(ps, toRDNS), err
}
