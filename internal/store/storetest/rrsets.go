package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/store"
)

// serialOf reads a zone's serial and RRset count.
func serialOf(t *testing.T, s store.Store, account, id int64) (uint32, int) {
	t.Helper()
	d, err := s.Domain(context.Background(), account, hosting.DomainRef{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return d.Serial, d.RRsetCount
}

// rrsets: a set is created, then replaced whole, its records in their order with
// their comments; the list is in DNS order and filtered by name and type; each change
// raises the serial (by one within a day, to the next day's YYYYMMDD00 after it) and
// keeps the count.
func rrsets(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s, a, _ := twoAccounts(t, open, "rrsets", zoneNow)
	id := newZone(t, s, a, "example.com")
	put := func(set dnszone.RRset, at time.Time) bool {
		t.Helper()
		var created bool
		inTx(t, s, func(tx store.Tx) error {
			var err error
			created, err = tx.PutRRset(ctx, id, set, at)
			return err
		})
		return created
	}
	mx := dnszone.RRset{Name: "@", Type: dnszone.TypeMX, Records: []dnszone.Record{
		{Value: "20 backup.example.net.", Comment: "the fallback ; second"}, {Value: "10 mail.example.com.", Comment: "first"}}}
	for i, c := range []struct {
		set     dnszone.RRset
		created bool
	}{
		{set("www", dnszone.TypeA, nil, "192.0.2.1"), true},
		{mx, true},
		{set("www", dnszone.TypeA, ttlp(60), "192.0.2.2", "192.0.2.1"), false},
		{set("*.dev", dnszone.TypeCNAME, nil, "www.example.com."), true},
		{set("dev", dnszone.TypeTXT, nil, `"a"`), true},
		{set("www", dnszone.TypeAAAA, nil, "2001:db8::1"), true},
		{set("b", dnszone.TypeA, nil, "192.0.2.3"), true},
	} {
		if got := put(c.set, zoneNow); got != c.created {
			t.Errorf("PutRRset %s %s: created %v, want %v", c.set.Name, c.set.Type, got, c.created)
		}
		if serial, n := serialOf(t, s, a, id); serial != uint32(2026112702+i) {
			t.Errorf("after change %d the serial is %d, want %d (%d RRsets)", i+1, serial, 2026112702+i, n)
		}
	}
	want := []dnszone.RRset{mx, set("b", dnszone.TypeA, nil, "192.0.2.3"), set("dev", dnszone.TypeTXT, nil, `"a"`),
		set("*.dev", dnszone.TypeCNAME, nil, "www.example.com."), set("www", dnszone.TypeA, ttlp(60), "192.0.2.2", "192.0.2.1"),
		set("www", dnszone.TypeAAAA, nil, "2001:db8::1")}
	if got, err := s.RRsets(ctx, id, store.RRsetFilter{}); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("RRsets = %+v, %v;\nwant %+v", got, err, want)
	}
	rrsetFilters(t, s, id, want)
	if _, n := serialOf(t, s, a, id); n != 6 {
		t.Errorf("rrset_count %d, want 6", n)
	}
	rrsetDeletion(t, s, a, id)
}

// rrsetFilters: the list by name, by type, by both, and of nothing that matches.
func rrsetFilters(t *testing.T, s store.Store, id int64, all []dnszone.RRset) {
	for _, c := range []struct {
		f    store.RRsetFilter
		want []dnszone.RRset
	}{
		{store.RRsetFilter{Name: "www"}, all[4:6]},
		{store.RRsetFilter{Type: dnszone.TypeA}, []dnszone.RRset{all[1], all[4]}},
		{store.RRsetFilter{Name: "www", Type: dnszone.TypeAAAA}, all[5:6]},
		{store.RRsetFilter{Name: "@"}, all[0:1]},
		{store.RRsetFilter{Name: "nothing"}, []dnszone.RRset{}},
	} {
		if got, err := s.RRsets(context.Background(), id, c.f); err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("RRsets(%+v) = %+v, %v; want %+v", c.f, got, err, c.want)
		}
	}
}

// rrsetDeletion: a deleted set is gone, the serial raised (to the next day's
// YYYYMMDD00 on the next day) and the count kept; deleting a set that is not there is
// ErrNotFound and changes nothing.
func rrsetDeletion(t *testing.T, s store.Store, a, id int64) {
	ctx := context.Background()
	inTx(t, s, func(tx store.Tx) error {
		return tx.DeleteRRset(ctx, id, "www", dnszone.TypeAAAA, zoneNow.Add(24*time.Hour))
	})
	if serial, n := serialOf(t, s, a, id); serial != 2026112800 || n != 5 {
		t.Errorf("after a deletion the next day: serial %d, %d RRsets; want 2026112800, 5", serial, n)
	}
	err := s.InTx(ctx, func(tx store.Tx) error {
		return tx.DeleteRRset(ctx, id, "www", dnszone.TypeAAAA, zoneNow.Add(24*time.Hour))
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting a set that is not there: %v, want ErrNotFound", err)
	}
	if serial, n := serialOf(t, s, a, id); serial != 2026112800 || n != 5 {
		t.Errorf("after a refused deletion: serial %d, %d RRsets; want them unchanged", serial, n)
	}
}

// replaceRRsets: a zone's every RRset replaced in one call, of more sets than one
// statement writes; a replacement that fails (two sets of one name and type), or
// whose transaction rolls back, leaves the zone as it was.
func replaceRRsets(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s, a, _ := twoAccounts(t, open, "replace", zoneNow)
	before := []dnszone.RRset{set("@", dnszone.TypeTXT, nil, `"v=spf1 -all"`), set("old", dnszone.TypeA, nil, "192.0.2.9")}
	id := newZone(t, s, a, "example.com", before...)
	var many []dnszone.RRset
	for i := range 250 {
		many = append(many, set(fmt.Sprintf("h%03d", i), dnszone.TypeA, nil, fmt.Sprintf("192.0.2.%d", i%250+1)))
	}
	refused := append([]dnszone.RRset{}, many[:3]...)
	refused = append(refused, many[1])
	if err := s.InTx(ctx, func(tx store.Tx) error { return tx.ReplaceRRsets(ctx, id, refused, zoneNow) }); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a replacement with one set twice: %v, want ErrConflict", err)
	}
	rollback := errors.New("rolled back")
	if err := s.InTx(ctx, func(tx store.Tx) error {
		if err := tx.ReplaceRRsets(ctx, id, many, zoneNow); err != nil {
			return err
		}
		return rollback
	}); !errors.Is(err, rollback) {
		t.Errorf("a replacement rolled back: %v", err)
	}
	if got, err := s.RRsets(ctx, id, store.RRsetFilter{}); err != nil || !reflect.DeepEqual(got, before) {
		t.Errorf("after a refused and a rolled-back replacement: %+v, %v; want %+v", got, err, before)
	}
	if serial, n := serialOf(t, s, a, id); serial != 2026112701 || n != 2 {
		t.Errorf("after a refused and a rolled-back replacement: serial %d, %d RRsets; want 2026112701, 2", serial, n)
	}
	inTx(t, s, func(tx store.Tx) error { return tx.ReplaceRRsets(ctx, id, many, zoneNow) })
	if got, err := s.RRsets(ctx, id, store.RRsetFilter{}); err != nil || !reflect.DeepEqual(got, many) {
		t.Errorf("after the replacement: %d sets, %v; want the %d given", len(got), err, len(many))
	}
	if serial, n := serialOf(t, s, a, id); serial != 2026112702 || n != 250 {
		t.Errorf("after the replacement: serial %d, %d RRsets; want 2026112702, 250", serial, n)
	}
	inTx(t, s, func(tx store.Tx) error { return tx.ReplaceRRsets(ctx, id, nil, zoneNow) })
	if serial, n := serialOf(t, s, a, id); serial != 2026112703 || n != 0 {
		t.Errorf("after emptying: serial %d, %d RRsets; want 2026112703, 0", serial, n)
	}
}

// servedZone: a zone as a nameserver reads it: names absolute, TTLs resolved, values
// in their order, sets in DNS order; a zone without sets has none; no zone is
// ErrNotFound.
func servedZone(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s, a, _ := twoAccounts(t, open, "served", zoneNow)
	id := newZone(t, s, a, "example.com", set("www", dnszone.TypeA, ttlp(60), "192.0.2.2", "192.0.2.1"),
		dnszone.RRset{Name: "@", Type: dnszone.TypeMX, Records: []dnszone.Record{{Value: "10 mail.example.com.", Comment: "c"}}},
		set("*.dev", dnszone.TypeCNAME, nil, "www.example.com."))
	empty := newZone(t, s, a, "example.org")
	want := nameserver.Zone{Name: "example.com", Serial: 2026112701, TTL: 3600, RRsets: []nameserver.RRset{
		{Name: "example.com", Type: "MX", TTL: 3600, Values: []string{"10 mail.example.com."}},
		{Name: "*.dev.example.com", Type: "CNAME", TTL: 3600, Values: []string{"www.example.com."}},
		{Name: "www.example.com", Type: "A", TTL: 60, Values: []string{"192.0.2.2", "192.0.2.1"}},
	}}
	if got, err := s.ServedZone(ctx, id); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ServedZone = %+v, %v;\nwant %+v", got, err, want)
	}
	if got, err := s.ServedZone(ctx, empty); err != nil || got.Name != "example.org" || len(got.RRsets) != 0 || got.Serial != 2026112701 {
		t.Errorf("ServedZone of a zone without RRsets = %+v, %v", got, err)
	}
	if _, err := s.ServedZone(ctx, empty+100); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ServedZone of no zone: %v, want ErrNotFound", err)
	}
}
