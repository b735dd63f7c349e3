// Package embedded is Berth's own nameserver (docs/api.md, Domains): it answers UDP
// and TCP queries with github.com/miekg/dns from a Source (the store in berthd, a
// Memory in tests and the sandbox) and passes the nameservertest suite.
//
// It answers only for the zones of its Source, authoritatively, and never
// amplifies: ANY gets one HINFO (RFC 8482), a UDP answer never exceeds the query's
// limit (512 bytes, or its EDNS0 size capped at 1232), AXFR goes only over TCP to
// the allowed ranges, and TCP connections are capped and time out when idle.
package embedded

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/nameserver"
)

// The server's limits (docs/SECURITY.md, DNS).
const (
	// maxUDPSize caps the EDNS0 size a query asks for (the DNS flag day 2020 value).
	maxUDPSize = 1232
	// DefaultMaxTCPConns is how many TCP connections are served at once; more are
	// closed at once.
	DefaultMaxTCPConns = 256
	// DefaultTCPIdleTimeout closes a TCP connection without a query for so long.
	DefaultTCPIdleTimeout = 10 * time.Second
	// tcpReadTimeout is what a new TCP connection has to send its first query, and
	// each write to it.
	tcpReadTimeout = 2 * time.Second
	// maxTCPQueries closes a TCP connection after so many queries.
	maxTCPQueries = 1000
	// queryTimeout bounds the Source's work for one query.
	queryTimeout = 2 * time.Second
	// shutdownTimeout is what Serve lets queries in flight have once ctx ends.
	shutdownTimeout = 5 * time.Second
	// maxBuilt is how many zones' records the server keeps built.
	maxBuilt = 10000
	// transferChunk bounds the records' bytes in one AXFR message (below 64 KiB).
	transferChunk = 60000
)

// Options configure a Server.
type Options struct {
	// AllowTransfer are the ranges AXFR is answered to (over TCP); none: no one.
	AllowTransfer []netip.Prefix
	// Logger logs what the server cannot answer (a Source's error, a zone that does
	// not build); nil: nothing.
	Logger *slog.Logger
	// MaxTCPConns is DefaultMaxTCPConns when 0.
	MaxTCPConns int
	// TCPIdleTimeout is DefaultTCPIdleTimeout when 0.
	TCPIdleTimeout time.Duration
}

// Server answers DNS queries from a Source. It is a dns.Handler.
type Server struct {
	src  Source
	opts Options
	log  *slog.Logger

	// sourceErrLog logs a Source's errors once a second at most: a store that is
	// down fails every query.
	sourceErrLog everySecond
	building     sync.Mutex   // held while a zone is built
	builds       atomic.Int64 // zones built, for tests
	mu           sync.Mutex
	built        map[string]built // by zone FQDN
}

// built is a zone as last built, or the error that building it gave.
type built struct {
	serial uint32
	ttl    int
	// sets are the RRsets it was built from: the same serial with other RRsets is a
	// zone deleted and made again the same day, built again.
	sets []nameserver.RRset
	zone *zone
	err  error
}

// builtFrom reports whether b was built from src: the same serial, TTL and RRsets
// (the same slice: a Source returns the same one while the zone is unchanged).
func (b built) builtFrom(src nameserver.Zone) bool {
	return b.serial == src.Serial && b.ttl == src.TTL && len(b.sets) == len(src.RRsets) &&
		(len(src.RRsets) == 0 || &b.sets[0] == &src.RRsets[0])
}

var _ dns.Handler = (*Server)(nil)

// New returns a Server answering from src.
func New(src Source, opts Options) *Server {
	if opts.MaxTCPConns <= 0 {
		opts.MaxTCPConns = DefaultMaxTCPConns
	}
	if opts.TCPIdleTimeout <= 0 {
		opts.TCPIdleTimeout = DefaultTCPIdleTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{src: src, opts: opts, log: log, built: map[string]built{}}
}

// ListenAndServe serves UDP and TCP on addr ("127.0.0.1:5353"; port 0: one the
// system picks, the same for both) until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", pc.LocalAddr().String())
	if err != nil {
		pc.Close()
		return err
	}
	return s.Serve(ctx, pc, ln)
}

// Serve answers queries on pc (UDP) and ln (TCP) until ctx ends, then lets the
// queries in flight finish (5 s at most) and closes both. It returns nil after ctx
// ended, else the error that stopped it.
func (s *Server) Serve(ctx context.Context, pc net.PacketConn, ln net.Listener) error {
	defer pc.Close() // closed already, but for a server that did not start
	defer ln.Close()
	srvs := []*dns.Server{
		{PacketConn: pc, Handler: s, UDPSize: dns.DefaultMsgSize},
		{Listener: &limitListener{Listener: ln, sem: make(chan struct{}, s.opts.MaxTCPConns)}, Handler: s,
			ReadTimeout: tcpReadTimeout, WriteTimeout: tcpReadTimeout, MaxTCPQueries: maxTCPQueries,
			IdleTimeout: func() time.Duration { return s.opts.TCPIdleTimeout }},
	}
	errc := make(chan error, len(srvs))
	started := 0
	var err error
	for _, srv := range srvs {
		up := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(up) }
		go func() { errc <- srv.ActivateAndServe() }()
		select {
		case <-up:
			started++
			continue
		case err = <-errc:
		}
		break
	}
	if err == nil {
		select {
		case <-ctx.Done():
		case err = <-errc:
			started-- // stopped by itself
		}
	}
	return errors.Join(err, shutdown(srvs, started, errc))
}

// shutdown stops servers and waits for the n still running to return.
func shutdown(srvs []*dns.Server, n int, errc chan error) error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	for _, srv := range srvs {
		_ = srv.ShutdownContext(ctx) // "not started" for one that never was
	}
	var errs []error
	for range n {
		errs = append(errs, <-errc)
	}
	return errors.Join(errs...)
}

// limitListener closes the connections beyond its semaphore's capacity at once.
type limitListener struct {
	net.Listener
	sem chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.sem <- struct{}{}:
			return &limitConn{Conn: c, release: sync.OnceFunc(func() { <-l.sem })}, nil
		default:
			c.Close()
		}
	}
}

type limitConn struct {
	net.Conn
	release func()
}

func (c *limitConn) Close() error {
	c.release()
	return c.Conn.Close()
}

// lower is name as an FQDN in lower case.
func lower(name string) string { return strings.ToLower(dns.Fqdn(name)) }

// everySecond allows once a second at most.
type everySecond struct{ last atomic.Int64 }

func (e *everySecond) Allow() bool {
	now, last := time.Now().UnixNano(), e.last.Load()
	return now-last >= int64(time.Second) && e.last.CompareAndSwap(last, now)
}
