package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// newServer makes a running server of account named name (the catalog applied).
func newServer(t *testing.T, s store.Store, account int64, name string) int64 {
	t.Helper()
	var id int64
	inTx(t, s, func(tx store.Tx) error {
		var err error
		id, err = tx.CreateServer(context.Background(), hosting.Server{AccountID: account, Name: name, DisplayName: name,
			Status: hosting.StatusRunning, LocationID: 1, PlanID: 1, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, CreatedAt: zoneNow})
		return err
	})
	return id
}

// ptrs: a server's reverse DNS names are set, replaced and cleared by address, listed
// IPv4 first, kept apart from another server's, dropped with the address they name,
// and removed when the server is deleted.
func ptrs(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s, a, b := twoAccounts(t, open, "ptrs", zoneNow)
	inTx(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, catalog()) })
	srv, other := newServer(t, s, a, "server-ptr001"), newServer(t, s, b, "server-ptr002")
	inTx(t, s, func(tx store.Tx) error {
		for _, p := range []hosting.PTR{
			{ServerID: srv, IP: "2001:db8::10", PTR: "v6.example.com"},
			{ServerID: srv, IP: "192.0.2.10", PTR: "old.example.com"},
			{ServerID: srv, IP: "2001:db8::9", PTR: "nine.example.com"},
			{ServerID: srv, IP: "192.0.2.10", PTR: "mail.example.com"}, // replaces old.example.com
			{ServerID: other, IP: "192.0.2.11", PTR: "other.example.net"},
		} {
			if err := tx.SetPTR(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
	want := []hosting.PTR{{ServerID: srv, IP: "192.0.2.10", PTR: "mail.example.com"},
		{ServerID: srv, IP: "2001:db8::9", PTR: "nine.example.com"}, {ServerID: srv, IP: "2001:db8::10", PTR: "v6.example.com"}}
	if got, err := s.PTRs(ctx, srv); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("PTRs = %+v, %v;\nwant %+v", got, err, want)
	}
	inTx(t, s, func(tx store.Tx) error {
		if err := tx.DeletePTR(ctx, srv, "2001:db8::9"); err != nil {
			return err
		}
		return tx.DeletePTR(ctx, srv, "2001:db8::9") // no longer there: no error
	})
	if got, err := s.PTRs(ctx, srv); err != nil || !reflect.DeepEqual(got, []hosting.PTR{want[0], want[2]}) {
		t.Errorf("PTRs after a deletion = %+v, %v", got, err)
	}
	lostAddresses(t, s, srv, want[2])
	inTx(t, s, func(tx store.Tx) error { return tx.DeleteServer(ctx, srv, zoneNow) })
	if got, err := s.PTRs(ctx, srv); err != nil || got == nil || len(got) != 0 {
		t.Errorf("PTRs of a deleted server = %#v, %v; want none", got, err)
	}
	if got, err := s.PTRs(ctx, other); err != nil || len(got) != 1 || got[0].PTR != "other.example.net" {
		t.Errorf("another server's PTRs after a deletion = %+v, %v", got, err)
	}
}

// resetDomains: a sandbox reset removes the account's zones with their RRsets (their
// names free again) and its servers' PTRs, and leaves another account's.
func resetDomains(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s, a, b := twoAccounts(t, open, "reset-dns", zoneNow)
	inTx(t, s, func(tx store.Tx) error { return tx.ApplyCatalog(ctx, catalog()) })
	www := set("www", dnszone.TypeA, nil, "192.0.2.1")
	za, zb := newZone(t, s, a, "example.com", www), newZone(t, s, b, "example.org", www)
	sa, sb := newServer(t, s, a, "server-rdns01"), newServer(t, s, b, "server-rdns02")
	inTx(t, s, func(tx store.Tx) error {
		if err := tx.SetPTR(ctx, hosting.PTR{ServerID: sa, IP: "192.0.2.1", PTR: "a.example.com"}); err != nil {
			return err
		}
		return tx.SetPTR(ctx, hosting.PTR{ServerID: sb, IP: "192.0.2.2", PTR: "b.example.org"})
	})
	inTx(t, s, func(tx store.Tx) error { _, err := tx.ResetAccount(ctx, a, zoneNow); return err })
	if ds, err := s.Domains(ctx, a); err != nil || len(ds) != 0 {
		t.Errorf("zones after a reset: %+v, %v", ds, err)
	}
	if sets, err := s.RRsets(ctx, za, store.RRsetFilter{}); err != nil || len(sets) != 0 {
		t.Errorf("RRsets of a reset zone: %+v, %v", sets, err)
	}
	if ps, err := s.PTRs(ctx, sa); err != nil || len(ps) != 0 {
		t.Errorf("PTRs of a reset account's server: %+v, %v", ps, err)
	}
	if u, err := s.Usage(ctx, a, zoneNow); err != nil || u.Zones != 0 {
		t.Errorf("Usage.Zones after a reset: %d, %v", u.Zones, err)
	}
	if d, err := s.Domain(ctx, b, hosting.DomainRef{ID: zb}); err != nil || d.RRsetCount != 1 {
		t.Errorf("another account's zone after a reset: %+v, %v", d, err)
	}
	if ps, err := s.PTRs(ctx, sb); err != nil || len(ps) != 1 {
		t.Errorf("another account's PTRs after a reset: %+v, %v", ps, err)
	}
	if _, err := s.Domain(ctx, a, hosting.DomainRef{ID: za}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a reset zone by id: %v, want ErrNotFound", err)
	}
	newZone(t, s, b, "example.com") // its name is free again
}

// lostAddresses: a server given addresses keeps the PTRs of its IPv4 address and of
// its IPv6 /64, and loses those of an address it no longer has. v6 is the server's
// one PTR in 2001:db8::/64 left; it has one of 192.0.2.10 besides.
func lostAddresses(t *testing.T, s store.Store, srv int64, v6 hosting.PTR) {
	ctx := context.Background()
	inTx(t, s, func(tx store.Tx) error { return tx.SetServerAddresses(ctx, srv, "192.0.2.10", "2001:db8::1") })
	if got, err := s.PTRs(ctx, srv); err != nil || len(got) != 2 {
		t.Errorf("PTRs of the server's own addresses = %+v, %v; want both kept", got, err)
	}
	inTx(t, s, func(tx store.Tx) error { return tx.SetServerAddresses(ctx, srv, "192.0.2.20", "2001:db8::1") })
	if got, err := s.PTRs(ctx, srv); err != nil || !reflect.DeepEqual(got, []hosting.PTR{v6}) {
		t.Errorf("PTRs once 192.0.2.10 left the server = %+v, %v; want only %+v", got, err, v6)
	}
	inTx(t, s, func(tx store.Tx) error { return tx.SetServerAddresses(ctx, srv, "192.0.2.20", "2001:db8:1::1") })
	if got, err := s.PTRs(ctx, srv); err != nil || len(got) != 0 {
		t.Errorf("PTRs once the /64 left the server = %+v, %v; want none", got, err)
	}
}
