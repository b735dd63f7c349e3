package ops

import (
	"context"
	"net/netip"

	"github.com/berthhq/berth/internal/dnsserve"
	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// Reverse DNS of a server's addresses (docs/api.md, Reverse DNS): the PTR of its
// IPv4 address and of any address of its IPv6 /64. An address without one of its
// own has the default name, <server name>.<the operator's default domain>.

// RDNSService is the principal's servers' reverse DNS.
type RDNSService interface {
	// RDNS lists the PTR of the server's IPv4 address and of each IPv6 address
	// that has one.
	RDNS(ctx context.Context, p hosting.Principal, ref hosting.ServerRef) ([]hosting.PTR, error)
	// SetRDNS sets the PTR of one of the server's addresses (ptr nil: back to the
	// default) and answers the list as RDNS does.
	SetRDNS(ctx context.Context, p hosting.Principal, ref hosting.ServerRef, ip, ptr *string) ([]hosting.PTR, error)
}

// DefaultPTR is a server's addresses' name when none was set.
func (s *Service) DefaultPTR(srv hosting.Server) string {
	return srv.Name + "." + s.dns.DefaultDomain
}

// RDNS lists a server's PTRs.
func (s *Service) RDNS(ctx context.Context, p hosting.Principal, ref hosting.ServerRef) ([]hosting.PTR, error) {
	srv, err := s.Server(ctx, p, ref)
	if err != nil {
		return nil, err
	}
	return s.rdnsList(ctx, s.store, srv)
}

func (s *Service) rdnsList(ctx context.Context, r store.Reader, srv hosting.Server) ([]hosting.PTR, error) {
	set, err := r.PTRs(ctx, srv.ID)
	if err != nil {
		return nil, internal("ptrs", err)
	}
	var out []hosting.PTR
	if srv.IPv4 != nil {
		v4 := hosting.PTR{ServerID: srv.ID, IP: *srv.IPv4, PTR: s.DefaultPTR(srv)}
		for _, p := range set {
			if p.IP == v4.IP {
				v4.PTR = p.PTR
			}
		}
		out = append(out, v4)
	}
	for _, p := range set {
		if srv.IPv4 == nil || p.IP != *srv.IPv4 {
			out = append(out, p)
		}
	}
	return out, nil
}

// SetRDNS sets or resets the PTR of one of a server's addresses.
func (s *Service) SetRDNS(ctx context.Context, p hosting.Principal, ref hosting.ServerRef, ip, ptr *string) ([]hosting.PTR, error) {
	var out []hosting.PTR
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		srv, err := s.server(ctx, tx, p, ref)
		if err != nil {
			return err
		}
		if err := refuseSuspended(srv); err != nil {
			return err
		}
		addr, name, err := checkRDNS(srv, ip, ptr)
		if err != nil {
			return err
		}
		if name == "" {
			err = tx.DeletePTR(ctx, srv.ID, addr)
		} else {
			err = tx.SetPTR(ctx, hosting.PTR{ServerID: srv.ID, IP: addr, PTR: name})
		}
		if err != nil {
			return internal("set ptr", err)
		}
		if err := s.publishDNS(ctx, tx, DNSPublishArgs{Zone: dnsserve.ReverseZone(dnsserve.ReverseNetOf(netip.MustParseAddr(addr)))}); err != nil {
			return err
		}
		if name == "" {
			name = s.DefaultPTR(srv)
		}
		if err := s.emit(ctx, tx, srv.AccountID, hosting.EventRDNSUpdated, serverResource(srv.ID),
			hosting.RDNSEventData{ServerID: srv.ID, IP: addr, PTR: name}); err != nil {
			return err
		}
		out, err = s.rdnsList(ctx, tx, srv)
		return err
	})
	return out, err
}

// checkRDNS checks a PUT's address, one of the server's (its IPv4, or inside its
// IPv6 /64), and its PTR, a host name or nil; it answers them canonical ("" for nil).
func checkRDNS(srv hosting.Server, ip, ptr *string) (string, string, error) {
	var v hosting.Validation
	var addr string
	if ip == nil {
		v.Add("ip", "validation.required")
	} else if !hosting.ServerHasAddress(deref(srv.IPv4), deref(srv.IPv6), *ip) {
		v.Add("ip", "validation.rdns_ip", "ip", *ip)
	} else {
		addr = netip.MustParseAddr(*ip).String()
	}
	var name string
	if ptr != nil {
		n, err := dnszone.ZoneName(*ptr)
		if err != nil {
			v.Add("ptr", "validation.rdns_ptr", "ptr", *ptr)
		}
		name = n
	}
	return addr, name, v.Err("ip", "ptr")
}
