package embedded

import (
	"context"
	"net"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/nameserver"
)

// ServeDNS answers req: a zone transfer, or one query fitted to its transport.
func (s *Server) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
	defer cancel()
	_, tcp := w.RemoteAddr().(*net.TCPAddr)
	if isTransfer(req) {
		s.transfer(ctx, w, req, tcp)
		return
	}
	m := s.reply(ctx, req)
	fit(m, req, tcp)
	_ = w.WriteMsg(m) // the client is gone
}

// reply is the answer to req, before it is fitted to its transport.
func (s *Server) reply(ctx context.Context, req *dns.Msg) *dns.Msg {
	m := new(dns.Msg).SetReply(req)
	switch {
	case req.Opcode != dns.OpcodeQuery:
		m.Rcode = dns.RcodeNotImplemented
	case len(req.Question) != 1:
		m.Rcode = dns.RcodeFormatError
	case req.Question[0].Qclass != dns.ClassINET:
		m.Rcode = dns.RcodeRefused
	case req.IsEdns0() != nil && req.IsEdns0().Version() != 0:
		m.Rcode = dns.RcodeBadVers
	default:
		q := req.Question[0]
		z, rcode := s.zone(ctx, lower(q.Name))
		if z == nil {
			m.Rcode = rcode
			break
		}
		z.answer(m, q.Name, q.Qtype)
	}
	return m
}

// fit makes m fit req's transport: an OPT record when req had one, and on UDP no
// more than 512 bytes, or the query's EDNS0 size capped at 1232, the TC bit set
// when records had to go; on TCP no more than a message can hold.
func fit(m, req *dns.Msg, tcp bool) {
	m.Compress = true
	size := dns.MinMsgSize
	if opt := req.IsEdns0(); opt != nil {
		size = min(max(int(opt.UDPSize()), dns.MinMsgSize), maxUDPSize)
		m.SetEdns0(maxUDPSize, false)
	}
	if tcp {
		size = dns.MaxMsgSize
	}
	m.Truncate(size)
}

// zone is the built zone enclosing name, or the rcode to answer without one:
// REFUSED outside every zone, SERVFAIL when the Source fails or the zone does not
// build. A zone is built again only when its serial changed.
func (s *Server) zone(ctx context.Context, name string) (*zone, int) {
	src, ok, err := s.src.Enclosing(ctx, name)
	if err != nil {
		if s.sourceErrLog.Allow() {
			s.log.Warn("dns: reading the zone enclosing a query, answering SERVFAIL", "name", name, "err", err)
		}
		return nil, dns.RcodeServerFailure
	}
	if !ok {
		return nil, dns.RcodeRefused
	}
	b := s.builtFor(src)
	if b.err != nil || !dns.IsSubDomain(b.zone.origin, name) {
		return nil, dns.RcodeServerFailure
	}
	return b.zone, dns.RcodeSuccess
}

// builtFor is src built, from those kept when it is the same (built.builtFrom). One zone is
// built at a time: queries that find a zone changed wait for the one that builds it
// rather than all building it.
func (s *Server) builtFor(src nameserver.Zone) built {
	if src.Partial {
		b := built{serial: src.Serial}
		if b.zone, b.err = build(src); b.err != nil && s.sourceErrLog.Allow() {
			s.log.Error("dns: a zone does not build, answering SERVFAIL", "zone", src.Name, "err", b.err)
		}
		return b
	}
	key := lower(src.Name)
	if b, ok := s.kept(key); ok && b.builtFrom(src) {
		return b
	}
	s.building.Lock()
	defer s.building.Unlock()
	if b, ok := s.kept(key); ok && b.builtFrom(src) {
		return b
	}
	b := built{serial: src.Serial, ttl: src.TTL, sets: src.RRsets}
	s.builds.Add(1)
	if b.zone, b.err = build(src); b.err != nil {
		s.log.Error("dns: a zone does not build, answering SERVFAIL", "zone", src.Name, "serial", src.Serial, "err", b.err)
	}
	s.keep(key, b)
	return b
}

func (s *Server) kept(key string) (built, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.built[key]
	return b, ok
}

// keep remembers b as the zone key's, forgetting some other zone when maxBuilt are
// kept already (a withdrawn zone is forgotten so, or rebuilt if it is still served).
func (s *Server) keep(key string, b built) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.built[key]; !ok && len(s.built) >= maxBuilt {
		for k := range s.built {
			delete(s.built, k)
			break
		}
	}
	s.built[key] = b
}
