package app

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/berthhq/berth/internal/dnsserve"
	"github.com/berthhq/berth/internal/nameserver/embedded"
)

// DNSServer is the embedded nameserver's part of a Config (serve --dns-addr,
// --dns-allow-transfer; docs/operating.md, DNS).
type DNSServer struct {
	// Addr is where DNS is answered, on UDP and TCP (host:port); "": nowhere.
	Addr string
	// AllowTransfer are the ranges AXFR is answered to (none: no one).
	AllowTransfer []netip.Prefix
}

// ServeDNS starts answering DNS on Config.DNSServer.Addr, UDP and TCP, from the store
// (dnsserve), and returns the function that stops it, letting the queries in flight
// finish (once, however often it is called). Without an address it does nothing. A port it cannot listen on is an error
// naming the flag.
func (a *App) ServeDNS() (stop func() error, err error) {
	addr := a.cfg.DNSServer.Addr
	if addr == "" {
		return func() error { return nil }, nil
	}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("--dns-addr %s: %w", addr, err)
	}
	ln, err := net.Listen("tcp", pc.LocalAddr().String())
	if err != nil {
		pc.Close()
		return nil, fmt.Errorf("--dns-addr %s: %w", addr, err)
	}
	o := dnsOptions(a.cfg.DNS)
	src := dnsserve.New(a.DB, dnsserve.Options{Nameservers: o.Nameservers, DefaultDomain: o.DefaultDomain})
	srv := embedded.New(src, embedded.Options{AllowTransfer: a.cfg.DNSServer.AllowTransfer, Logger: a.log})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, pc, ln) }()
	a.log.Info("serving DNS", "addr", pc.LocalAddr().String(), "nameservers", o.Nameservers, "default_domain", o.DefaultDomain,
		"allow_transfer", a.cfg.DNSServer.AllowTransfer)
	return sync.OnceValue(func() error {
		cancel()
		return <-done
	}), nil
}
