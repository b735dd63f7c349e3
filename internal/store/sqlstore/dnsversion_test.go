package sqlstore_test

import (
	"context"
	"testing"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
	"github.com/berthhq/berth/internal/testpg"
)

// deletePTR writes server_ptrs (a write of what DNS serves) in a transaction of db.
func deletePTR(t *testing.T, db *sqlstore.DB) {
	t.Helper()
	if err := db.InTx(context.Background(), func(tx store.Tx) error {
		return tx.DeletePTR(context.Background(), 1, "192.0.2.1")
	}); err != nil {
		t.Fatal(err)
	}
}

// TestDNSVersionFollowsWrites: on SQLite a write of what DNS serves changes
// DNSVersion, by this process or by another opening the data dir.
func TestDNSVersionFollowsWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, other := sqlstoretest.SQLite(t, dir), sqlstoretest.SQLite(t, dir)
	v := db.DNSVersion()
	deletePTR(t, db)
	if db.DNSVersion() == v {
		t.Fatal("DNSVersion unchanged by this process's write")
	}
	v = db.DNSVersion()
	deletePTR(t, other)
	if db.DNSVersion() == v {
		t.Fatal("DNSVersion unchanged by another process's write")
	}
}

// TestPostgresDNSVersion: on PostgreSQL a write of what DNS serves changes this
// process's DNSVersion, and so does DNSChanged (another process's notification).
func TestPostgresDNSVersion(t *testing.T) {
	t.Parallel()
	testpg.Require(t)
	db := sqlstoretest.Postgres(t)
	v := db.DNSVersion()
	deletePTR(t, db)
	if db.DNSVersion() == v {
		t.Fatal("DNSVersion unchanged by this process's write")
	}
	v = db.DNSVersion()
	db.DNSChanged()
	if db.DNSVersion() == v {
		t.Fatal("DNSVersion unchanged by DNSChanged")
	}
}

// TestDNSVersionOnlyForWhatDNSServes: on both stores, a server's status, suspension,
// display name or plan changing is no change of what DNS serves, and leaves
// DNSVersion (so the nameserver's cache) alone; its addresses and its deletion change
// it. A status change is a write of servers, which emptied the nameserver's cache at
// every step of every operation.
func TestDNSVersionOnlyForWhatDNSServes(t *testing.T) {
	t.Parallel()
	for _, st := range cacheStores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			db, _ := st.open(t)
			f := seedCacheFixture(t, db)
			ctx := context.Background()
			for _, c := range []struct {
				what   string
				change func(tx store.Tx) error
				dns    bool
			}{
				{"status", func(tx store.Tx) error { return tx.SetServerStatus(ctx, f.srv, hosting.StatusStopped) }, false},
				{"suspension", func(tx store.Tx) error { return tx.SetServerSuspended(ctx, f.srv, true) }, false},
				{"display name", func(tx store.Tx) error {
					return tx.UpdateServer(ctx, hosting.Server{ID: f.srv, DisplayName: "db", ProjectID: &f.project})
				}, false},
				{"plan", func(tx store.Tx) error { return tx.SetServerPlan(ctx, f.srv, 2, 4, 8192, 80) }, false},
				{"addresses", func(tx store.Tx) error { return tx.SetServerAddresses(ctx, f.srv, "192.0.2.7", "2001:db8:7::1") }, true},
				{"deletion", func(tx store.Tx) error { return tx.DeleteServer(ctx, f.srv, cacheNow) }, true},
			} {
				v := db.DNSVersion()
				if err := db.InTx(ctx, c.change); err != nil {
					t.Fatalf("%s: %v", c.what, err)
				}
				if changed := db.DNSVersion() != v; changed != c.dns {
					t.Errorf("%s: DNSVersion changed %v, want %v", c.what, changed, c.dns)
				}
			}
		})
	}
}
