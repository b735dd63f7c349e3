package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/dnszone"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// domains checks DNS zones, their RRsets and reverse DNS (docs/api.md, Domains).
func domains(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("Zones", func(t *testing.T) { zones(t, open) })
	t.Run("RelatedNames", func(t *testing.T) { relatedNames(t, open) })
	t.Run("ZoneCreationsTakeTurns", func(t *testing.T) { zoneCreationsTakeTurns(t, open) })
	t.Run("EnclosingZone", func(t *testing.T) { enclosingZone(t, open) })
	t.Run("RRsets", func(t *testing.T) { rrsets(t, open) })
	t.Run("ReplaceRRsets", func(t *testing.T) { replaceRRsets(t, open) })
	t.Run("ServedZone", func(t *testing.T) { servedZone(t, open) })
	t.Run("PTRs", func(t *testing.T) { ptrs(t, open) })
	t.Run("ResetAccount", func(t *testing.T) { resetDomains(t, open) })
	t.Run("OperatorNames", func(t *testing.T) { operatorNames(t, open) })
	t.Run("SerialsGrowUnderAName", func(t *testing.T) { serialsGrowUnderAName(t, open) })
	t.Run("NetNames", func(t *testing.T) { netNames(t, open) })
	t.Run("Walks", func(t *testing.T) { dnsWalks(t, open) })
}

var zoneNow = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func ttlp(v int) *int { return &v }

// inTx runs fn in a transaction of s that must commit.
func inTx(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := s.InTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// newZone makes a zone of account named name with sets, and returns its id.
func newZone(t *testing.T, s store.Store, account int64, name string, sets ...dnszone.RRset) int64 {
	t.Helper()
	var id int64
	inTx(t, s, func(tx store.Tx) error {
		var err error
		id, err = tx.CreateDomain(context.Background(), hosting.Domain{AccountID: account, Name: name, TTL: 3600, CreatedAt: zoneNow}, sets)
		return err
	})
	return id
}

func set(name string, t dnszone.Type, ttl *int, values ...string) dnszone.RRset {
	s := dnszone.RRset{Name: name, Type: t, TTL: ttl}
	for _, v := range values {
		s.Records = append(s.Records, dnszone.Record{Value: v})
	}
	return s
}

// zones: a zone is read back as written, by id and by name, hidden from other
// accounts, its name unique across accounts, counted against the quota, its TTL
// changed with its serial raised, and its name free again once it is deleted.
func zones(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s, a, b := twoAccounts(t, open, "zones", zoneNow)
	id := newZone(t, s, a, "example.com", set("www", dnszone.TypeA, nil, "192.0.2.1"), set("@", dnszone.TypeMX, nil, "10 mail.example.com."))
	want := hosting.Domain{ID: id, AccountID: a, Name: "example.com", TTL: 3600, Serial: 2026112701, RRsetCount: 2, CreatedAt: zoneNow}
	for _, ref := range []hosting.DomainRef{{ID: id}, {Name: "example.com"}} {
		if d, err := s.Domain(ctx, a, ref); err != nil || d != want {
			t.Errorf("Domain(%+v) = %+v, %v; want %+v", ref, d, err, want)
		}
		if _, err := s.Domain(ctx, b, ref); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account's zone by %+v: %v, want ErrNotFound", ref, err)
		}
		err := s.InTx(ctx, func(tx store.Tx) error { _, err := tx.LockDomain(ctx, b, ref); return err })
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("LockDomain of another account's zone by %+v: %v, want ErrNotFound", ref, err)
		}
	}
	inTx(t, s, func(tx store.Tx) error {
		d, err := tx.LockDomain(ctx, a, hosting.DomainRef{Name: "example.com"})
		if err == nil && d != want {
			t.Errorf("LockDomain = %+v, want %+v", d, want)
		}
		return err
	})
	err := s.InTx(ctx, func(tx store.Tx) error {
		_, err := tx.CreateDomain(ctx, hosting.Domain{AccountID: b, Name: "example.com", TTL: 60, CreatedAt: zoneNow}, nil)
		return err
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("another account's example.com: %v, want ErrConflict", err)
	}
	other := newZone(t, s, a, "example.org")
	if ds, err := s.Domains(ctx, a); err != nil || len(ds) != 2 || ds[0] != want || ds[1].ID != other || ds[1].RRsetCount != 0 {
		t.Errorf("Domains = %+v, %v", ds, err)
	}
	if ds, err := s.Domains(ctx, b); err != nil || ds == nil || len(ds) != 0 {
		t.Errorf("Domains of an account without any = %#v, %v; want empty", ds, err)
	}
	if u, err := s.Usage(ctx, a, zoneNow); err != nil || u.Zones != 2 {
		t.Errorf("Usage.Zones = %d, %v; want 2", u.Zones, err)
	}
	zoneTTLAndDeletion(t, s, a, b, id)
}

// zoneTTLAndDeletion: a TTL change raises the serial; a deleted zone is gone with its
// RRsets and its name can be had again, by another account too.
func zoneTTLAndDeletion(t *testing.T, s store.Store, a, b, id int64) {
	ctx := context.Background()
	inTx(t, s, func(tx store.Tx) error { return tx.SetDomainTTL(ctx, id, 600, zoneNow.Add(time.Hour)) })
	if d, err := s.Domain(ctx, a, hosting.DomainRef{ID: id}); err != nil || d.TTL != 600 || d.Serial != 2026112702 {
		t.Errorf("after SetDomainTTL: %+v, %v; want TTL 600, serial 2026112702", d, err)
	}
	inTx(t, s, func(tx store.Tx) error { return tx.DeleteDomain(ctx, id) })
	if _, err := s.Domain(ctx, a, hosting.DomainRef{Name: "example.com"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted zone: %v, want ErrNotFound", err)
	}
	if sets, err := s.RRsets(ctx, id, store.RRsetFilter{}); err != nil || len(sets) != 0 {
		t.Errorf("the RRsets of a deleted zone: %+v, %v", sets, err)
	}
	for name, fn := range map[string]func(tx store.Tx) error{
		"DeleteDomain": func(tx store.Tx) error { return tx.DeleteDomain(ctx, id) },
		"SetDomainTTL": func(tx store.Tx) error { return tx.SetDomainTTL(ctx, id, 60, zoneNow) },
		"PutRRset": func(tx store.Tx) error {
			_, err := tx.PutRRset(ctx, id, set("www", dnszone.TypeA, nil, "192.0.2.1"), zoneNow)
			return err
		},
		"ReplaceRRsets": func(tx store.Tx) error { return tx.ReplaceRRsets(ctx, id, nil, zoneNow) },
	} {
		if err := s.InTx(ctx, fn); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s of a deleted zone: %v, want ErrNotFound", name, err)
		}
	}
	again := newZone(t, s, b, "example.com")
	if d, err := s.Domain(ctx, b, hosting.DomainRef{Name: "example.com"}); err != nil || d.ID != again || d.ID == id || d.RRsetCount != 0 {
		t.Errorf("example.com made again by another account: %+v, %v", d, err)
	}
}

// relatedNames: ZoneRelated finds a zone of any account that is the name, a parent or
// a child of it, and nothing else: not a name that merely ends alike, and not through
// LIKE's wildcards.
func relatedNames(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s, a, b := twoAccounts(t, open, "related", zoneNow)
	newZone(t, s, a, "example.com")
	newZone(t, s, b, "sub.example.net")
	for _, c := range []struct {
		name string
		want bool
	}{
		{"example.com", true},       // held
		{"a.example.com", true},     // a child
		{"b.a.example.com", true},   // a grandchild
		{"com", true},               // a parent
		{"xexample.com", false},     // ends alike
		{"example.co", false},       // begins alike
		{"mple.com", false},         // a tail that is no label
		{"example.net", true},       // the parent of another account's zone
		{"net", true},               // its grandparent
		{"a.sub.example.net", true}, // its child
		{"example_net", false},      // _ is no wildcard: it would match sub.example.net's "."
		{"%.net", false},            // nor %
		{"%", false},
		{"_xample.com", false},
		{"b.example.org", false},
	} {
		inTx(t, s, func(tx store.Tx) error {
			got, err := tx.ZoneRelated(ctx, c.name)
			if err == nil && got != c.want {
				t.Errorf("ZoneRelated(%q) = %v, want %v", c.name, got, c.want)
			}
			return err
		})
	}
}

// zoneCreationsTakeTurns: a check for related zones waits while another transaction
// that checked and created a parent is open, and then finds it: two transactions
// never both add a zone and its child.
func zoneCreationsTakeTurns(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s, a, b := twoAccounts(t, open, "turns", zoneNow)
	created, release, first := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		first <- s.InTx(ctx, func(tx store.Tx) error {
			if rel, err := tx.ZoneRelated(ctx, "example.com"); err != nil || rel {
				return fmt.Errorf("ZoneRelated(example.com) = %v, %v before any zone", rel, err)
			}
			if _, err := tx.CreateDomain(ctx, hosting.Domain{AccountID: a, Name: "example.com", TTL: 3600, CreatedAt: zoneNow}, nil); err != nil {
				return err
			}
			close(created)
			<-release
			return nil
		})
	}()
	select {
	case err := <-first:
		t.Fatalf("the first creation ended early: %v", err)
	case <-created:
	}
	type answer struct {
		related bool
		err     error
	}
	second := make(chan answer, 1)
	go func() {
		var related bool
		err := s.InTx(ctx, func(tx store.Tx) error {
			var err error
			if related, err = tx.ZoneRelated(ctx, "a.example.com"); err != nil || related {
				return err
			}
			_, err = tx.CreateDomain(ctx, hosting.Domain{AccountID: b, Name: "a.example.com", TTL: 3600, CreatedAt: zoneNow}, nil)
			return err
		})
		second <- answer{related, err}
	}()
	select {
	case got := <-second:
		t.Errorf("the check of a.example.com answered %+v while example.com's creation was open", got)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got := <-second; got.err != nil || !got.related {
		t.Errorf("the check of a.example.com after example.com committed: %+v, want related", got)
	}
	if _, err := s.Domain(ctx, b, hosting.DomainRef{Name: "a.example.com"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a.example.com was made beside example.com: %v", err)
	}
}

// enclosingZone: the zone a query name falls in is the longest suffix of it that is
// a zone, of whichever account; a name in none is ErrNotFound.
func enclosingZone(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s, a, b := twoAccounts(t, open, "enclosing", zoneNow)
	outer := newZone(t, s, a, "example.com")
	inner := newZone(t, s, b, "dev.example.com") // the store keeps what the core allowed
	for _, c := range []struct {
		name string
		want int64
	}{
		{"example.com", outer},
		{"www.example.com", outer},
		{"WWW.Example.COM.", outer},
		{"dev.example.com", inner},
		{"a.b.dev.example.com.", inner},
		{"xdev.example.com", outer},
		{"xexample.com", 0},
		{"com", 0},
		{"", 0},
		{"example.org", 0},
	} {
		d, err := s.EnclosingZone(ctx, c.name)
		switch {
		case c.want == 0 && !errors.Is(err, store.ErrNotFound):
			t.Errorf("EnclosingZone(%q) = %+v, %v; want ErrNotFound", c.name, d, err)
		case c.want != 0 && (err != nil || d.ID != c.want):
			t.Errorf("EnclosingZone(%q) = %+v, %v; want zone %d", c.name, d, err, c.want)
		}
	}
}
