package embedded

import (
	"context"
	"net"

	"github.com/miekg/dns"
)

// isTransfer reports whether req asks for a zone transfer (AXFR; IXFR is answered
// with the whole zone, as RFC 1995 §4 allows).
func isTransfer(req *dns.Msg) bool {
	return req.Opcode == dns.OpcodeQuery && len(req.Question) == 1 &&
		(req.Question[0].Qtype == dns.TypeAXFR || req.Question[0].Qtype == dns.TypeIXFR)
}

// transfer sends the zone named in req's question, SOA first and last, in messages
// of at most 60,000 bytes of records, when req came over TCP from an allowed
// range; else, and for a partial zone (nameserver.Zone.Partial), it answers REFUSED.
func (s *Server) transfer(ctx context.Context, w dns.ResponseWriter, req *dns.Msg, tcp bool) {
	q := req.Question[0]
	var z *zone
	if tcp && q.Qclass == dns.ClassINET && s.transferAllowed(w.RemoteAddr()) {
		if found, _ := s.zone(ctx, lower(q.Name)); found != nil && !found.partial && found.origin == lower(q.Name) {
			z = found
		}
	}
	if z == nil {
		m := new(dns.Msg).SetRcode(req, dns.RcodeRefused)
		fit(m, req, tcp)
		_ = w.WriteMsg(m)
		return
	}
	rrs := append(append([]dns.RR(nil), z.all...), z.soa)
	for len(rrs) > 0 {
		m := new(dns.Msg).SetReply(req)
		m.Authoritative, m.Compress = true, true
		size := 0
		for len(rrs) > 0 && (len(m.Answer) == 0 || size+dns.Len(rrs[0]) <= transferChunk) {
			size += dns.Len(rrs[0])
			m.Answer, rrs = append(m.Answer, rrs[0]), rrs[1:]
		}
		if err := w.WriteMsg(m); err != nil {
			return // the client is gone
		}
	}
}

func (s *Server) transferAllowed(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return false
	}
	ip := tcp.AddrPort().Addr().Unmap()
	for _, p := range s.opts.AllowTransfer {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
