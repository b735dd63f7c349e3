package storetest

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// operatorNames: what the operator's zones serve (docs/operating.md, DNS) is found
// by a live server's name, by the /24 and /64 of its addresses, and by one address:
// its PTR when one is set, else its server's name; a deleted server and an address
// that left its server are found no more.
func operatorNames(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s, a, b := twoAccounts(t, open, "opnames", zoneNow)
	inTx(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, catalog()) })
	web, db := newServer(t, s, a, "server-web01"), newServer(t, s, b, "server-db01")
	inTx(t, s, func(tx store.Tx) error {
		if err := tx.SetServerAddresses(ctx, web, "192.0.2.10", "2001:db8:0:1::1"); err != nil {
			return err
		}
		if err := tx.SetServerAddresses(ctx, db, "192.0.2.11", "2001:db8:0:2::1"); err != nil {
			return err
		}
		return tx.SetPTR(ctx, hosting.PTR{ServerID: web, IP: "2001:db8:0:1::25", PTR: "mail.example.com"})
	})
	if srv, err := s.ServerNamed(ctx, "server-db01"); err != nil || srv.ID != db || srv.IPv4 == nil || *srv.IPv4 != "192.0.2.11" {
		t.Errorf("ServerNamed(server-db01) = %+v, %v", srv, err)
	}
	if _, err := s.ServerNamed(ctx, "server-none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ServerNamed(server-none): %v, want ErrNotFound", err)
	}
	nets := []struct {
		net  string
		want bool
	}{{"192.0.2.0/24", true}, {"192.0.3.0/24", false}, {"2001:db8:0:1::/64", true}, {"2001:db8:0:2::/64", true}, {"2001:db8:0:3::/64", false}}
	for _, c := range nets {
		if got, err := s.NetHasServer(ctx, netip.MustParsePrefix(c.net)); err != nil || got != c.want {
			t.Errorf("NetHasServer(%s) = %v, %v; want %v", c.net, got, err, c.want)
		}
	}
	if _, err := s.NetHasServer(ctx, netip.MustParsePrefix("192.0.0.0/16")); err == nil {
		t.Error("NetHasServer of a /16: no error")
	}
	addrs := []struct{ ip, server, ptr string }{
		{"192.0.2.10", "server-web01", ""}, {"192.0.2.11", "server-db01", ""}, {"2001:db8:0:1::1", "server-web01", ""},
		{"2001:db8:0:1::25", "server-web01", "mail.example.com"}, {"2001:db8:0:1::26", "", ""}, {"192.0.2.12", "", ""},
	}
	checkAddrs := func(when string) {
		t.Helper()
		for _, c := range addrs {
			srv, ptr, err := s.AddressName(ctx, netip.MustParseAddr(c.ip))
			if c.server == "" && !errors.Is(err, store.ErrNotFound) || c.server != "" && (err != nil || srv != c.server || ptr != c.ptr) {
				t.Errorf("%s: AddressName(%s) = %q, %q, %v; want %q, %q", when, c.ip, srv, ptr, err, c.server, c.ptr)
			}
		}
	}
	checkAddrs("first")
	inTx(t, s, func(tx store.Tx) error { return tx.SetServerAddresses(ctx, web, "192.0.2.20", "2001:db8:0:5::1") })
	addrs[0].server, addrs[2].server, addrs[3].server = "", "", "" // left the server, its PTR with it
	addrs = append(addrs, struct{ ip, server, ptr string }{"192.0.2.20", "server-web01", ""})
	checkAddrs("after new addresses")
	inTx(t, s, func(tx store.Tx) error { return tx.DeleteServer(ctx, db, zoneNow) })
	addrs[1].server = ""
	checkAddrs("after a deletion")
	if got, err := s.NetHasServer(ctx, netip.MustParsePrefix("2001:db8:0:2::/64")); err != nil || got {
		t.Errorf("NetHasServer of a deleted server's /64 = %v, %v", got, err)
	}
	if _, err := s.ServerNamed(ctx, "server-db01"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ServerNamed of a deleted server: %v, want ErrNotFound", err)
	}
}
