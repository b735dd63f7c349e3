package sqlstore_test

import (
	"context"
	"testing"

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
