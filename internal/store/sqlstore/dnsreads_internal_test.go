package sqlstore

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/berthhq/berth/internal/store"
)

// The nameserver's reads of a name it has not cached run prepared: after one call
// each, the read pool holds their statements, and calls again add none. (What they
// answer, on both stores, is the store suite's: storetest's DNS names and domains.)
func TestDNSReadsRunPrepared(t *testing.T) {
	t.Parallel()
	db := openMigratedSQLite(t)
	ctx := context.Background()
	reads := func() {
		t.Helper()
		if _, err := db.ServerNamed(ctx, "server-nobody"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("ServerNamed: %v", err)
		}
		if ok, err := db.NetHasServer(ctx, netip.MustParsePrefix("192.0.2.0/24")); ok || err != nil {
			t.Fatalf("NetHasServer: %v, %v", ok, err)
		}
		if _, _, err := db.AddressName(ctx, netip.MustParseAddr("2001:db8::1")); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("AddressName: %v", err)
		}
		if _, err := db.EnclosingZone(ctx, "www.example.com."); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("EnclosingZone: %v", err)
		}
	}
	count := func() int {
		db.stmtMu.Lock()
		defer db.stmtMu.Unlock()
		return len(db.stmts)
	}
	before := count()
	reads()
	// AddressName asks two queries (a PTR set, then the server's own address).
	if got := count() - before; got != 5 {
		t.Errorf("the reads prepared %d statements, want 5", got)
	}
	after := count()
	reads()
	if got := count(); got != after {
		t.Errorf("the reads again prepared %d more statements", got-after)
	}
}

// BenchmarkDNSReadMiss is the store's part of a query for a name no zone and no
// server has: the enclosing zone of a name of 3 labels, then the server named so.
func BenchmarkDNSReadMiss(b *testing.B) {
	db, err := OpenSQLite(context.Background(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := db.EnclosingZone(ctx, "www.nowhere.example."); !errors.Is(err, store.ErrNotFound) {
			b.Fatal(err)
		}
		if _, err := db.ServerNamed(ctx, "server-nowhere"); !errors.Is(err, store.ErrNotFound) {
			b.Fatal(err)
		}
	}
}
