package storetest

import (
	"context"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// serialsGrowUnderAName: a zone deleted and made again the same day, by its account
// or another, or gone with a reset account, starts above the serial it had, so that
// a secondary and PowerDNS (which never goes back) take it; a name never used starts
// at YYYYMMDD01, and one made again days later at that day's.
func serialsGrowUnderAName(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s, a, b := twoAccounts(t, open, "serials", zoneNow)
	serial := func(account int64, name string) uint32 {
		t.Helper()
		d, err := s.Domain(ctx, account, hosting.DomainRef{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return d.Serial
	}
	id := newZone(t, s, a, "again.example")
	for range 3 {
		inTx(t, s, func(tx store.Tx) error {
			_, err := tx.PutRRset(ctx, id, set("www", dnszone.TypeA, nil, "192.0.2.1"), zoneNow)
			return err
		})
	}
	if got := serial(a, "again.example"); got != 2026112704 {
		t.Fatalf("serial after three changes: %d, want 2026112704", got)
	}
	inTx(t, s, func(tx store.Tx) error { return tx.DeleteDomain(ctx, id) })
	id = newZone(t, s, b, "again.example")
	if got := serial(b, "again.example"); got != 2026112705 {
		t.Errorf("the zone made again the same day: serial %d, want 2026112705 (above the deleted one's 2026112704)", got)
	}
	// Gone with a reset account, made again.
	inTx(t, s, func(tx store.Tx) error { _, err := tx.ResetAccount(ctx, b, zoneNow); return err })
	newZone(t, s, a, "again.example")
	if got := serial(a, "again.example"); got != 2026112706 {
		t.Errorf("made again after a reset: serial %d, want 2026112706", got)
	}
	newZone(t, s, a, "fresh.example")
	if got := serial(a, "fresh.example"); got != 2026112701 {
		t.Errorf("a name never used: serial %d, want 2026112701", got)
	}
	// Made again three days later: that day's first serial, above the old one.
	var later int64
	inTx(t, s, func(tx store.Tx) error {
		d, err := tx.Domain(ctx, a, hosting.DomainRef{Name: "fresh.example"})
		if err == nil {
			err = tx.DeleteDomain(ctx, d.ID)
		}
		if err == nil {
			later, err = tx.CreateDomain(ctx, hosting.Domain{AccountID: a, Name: "fresh.example", TTL: 3600,
				CreatedAt: zoneNow.Add(72 * time.Hour)}, nil)
		}
		return err
	})
	if d, err := s.Domain(ctx, a, hosting.DomainRef{ID: later}); err != nil || d.Serial != 2026113001 {
		t.Errorf("made again days later: %+v, %v; want serial 2026113001", d, err)
	}
}

// netNames: a network's reverse names are each live server's own address in it and
// each address it set a PTR for, with the PTR; other networks' and deleted servers'
// are not among them.
func netNames(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s, a, b := twoAccounts(t, open, "netnames", zoneNow)
	inTx(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, catalog()) })
	web, db, gone := newServer(t, s, a, "server-nn01"), newServer(t, s, b, "server-nn02"), newServer(t, s, b, "server-nn03")
	inTx(t, s, func(tx store.Tx) error {
		for _, c := range []struct {
			id         int64
			ipv4, ipv6 string
		}{{web, "192.0.2.10", "2001:db8:0:1::1"}, {db, "192.0.2.11", "2001:db8:0:2::1"}, {gone, "192.0.2.12", "2001:db8:0:3::1"}} {
			if err := tx.SetServerAddresses(ctx, c.id, c.ipv4, c.ipv6); err != nil {
				return err
			}
		}
		for _, p := range []hosting.PTR{{ServerID: web, IP: "2001:db8:0:1::25", PTR: "mail.example.com"},
			{ServerID: db, IP: "192.0.2.11", PTR: "db.example.org"}} {
			if err := tx.SetPTR(ctx, p); err != nil {
				return err
			}
		}
		return tx.DeleteServer(ctx, gone, zoneNow)
	})
	an := func(ip, server, ptr string) store.AddressName {
		return store.AddressName{IP: netip.MustParseAddr(ip), Server: server, PTR: ptr}
	}
	for net, want := range map[string][]store.AddressName{
		"192.0.2.0/24":      {an("192.0.2.10", "server-nn01", ""), an("192.0.2.11", "server-nn02", "db.example.org")},
		"2001:db8:0:1::/64": {an("2001:db8:0:1::1", "server-nn01", ""), an("2001:db8:0:1::25", "server-nn01", "mail.example.com")},
		"2001:db8:0:2::/64": {an("2001:db8:0:2::1", "server-nn02", "")},
		"2001:db8:0:3::/64": {},
		"198.51.100.0/24":   {},
	} {
		got, err := s.NetNames(ctx, netip.MustParsePrefix(net))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("NetNames(%s) = %v, %v; want %v", net, got, err, want)
		}
	}
	if _, err := s.NetNames(ctx, netip.MustParsePrefix("192.0.0.0/16")); err == nil {
		t.Error("NetNames of a /16: no error")
	}
}

// dnsWalks: ZoneNames and LiveServers walk every account's zones and live servers in
// pages.
func dnsWalks(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s, a, b := twoAccounts(t, open, "walks", zoneNow)
	inTx(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, catalog()) })
	for _, z := range []struct {
		account int64
		name    string
	}{{a, "c.example"}, {b, "a.example"}, {a, "b.example"}} {
		newZone(t, s, z.account, z.name)
	}
	var names []string
	for after := ""; ; {
		page, err := s.ZoneNames(ctx, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		names, after = append(names, page...), page[len(page)-1]
	}
	if !slices.Equal(names, []string{"a.example", "b.example", "c.example"}) {
		t.Errorf("ZoneNames in pages of 2: %v", names)
	}
	one, two, three := newServer(t, s, a, "server-walk01"), newServer(t, s, b, "server-walk02"), newServer(t, s, a, "server-walk03")
	inTx(t, s, func(tx store.Tx) error {
		if err := tx.SetServerAddresses(ctx, one, "192.0.2.1", "2001:db8::1"); err != nil {
			return err
		}
		return tx.DeleteServer(ctx, two, zoneNow)
	})
	var got []string
	for after := int64(0); ; {
		page, err := s.LiveServers(ctx, after, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, srv := range page {
			got = append(got, srv.Name+" "+deref(srv.IPv4)+" "+deref(srv.IPv6))
		}
		after = page[len(page)-1].ID
	}
	if want := []string{"server-walk01 192.0.2.1 2001:db8::1", "server-walk03  "}; !slices.Equal(got, want) || three == 0 {
		t.Errorf("LiveServers in pages of 1: %q, want %q", got, want)
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
