package sqlstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/metrics"
	"github.com/berthhq/berth/internal/store"
)

// The token and server reads are answered from memory; these tests prove they are
// never staler than a query would be, also when another process (here: a second
// handle on the same data dir, as an admin command opens it) writes.
func TestCachedReadsFollowWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	serve, admin := openMigrated(t, dir), openMigrated(t, dir)
	in := func(s store.Store, fn func(tx store.Tx) error) {
		t.Helper()
		if err := s.InTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	hash := sha256.Sum256([]byte("secret"))
	var acct, tok, srv int64
	in(serve, func(tx store.Tx) error {
		err := tx.ApplyCatalog(ctx, hosting.Catalog{
			Plans:  []hosting.Plan{{ID: 1, Name: "small", VCPUs: 1, MemoryMB: 1024, DiskGB: 20, PriceHourly: 70, PriceMonthly: 45100}},
			Images: []hosting.Image{{ID: 1, Name: "ubuntu-24.04", OS: "ubuntu", Version: "24.04"}, {ID: 2, Name: "debian-12", OS: "debian", Version: "12"}},
			Locations: []hosting.CatalogLocation{{
				Location: hosting.Location{ID: 1, Name: "fsn1", City: "Falkenstein", Country: "DE", SnapshotPriceGBHour: 1},
				Offers:   []hosting.PlanOffer{{PlanID: 1}},
				ImageIDs: []int64{1, 2},
			}},
		})
		if err != nil {
			return err
		}
		if acct, err = tx.CreateAccount(ctx, hosting.Account{Email: "c@example.com", Name: "c", Language: "en", Currency: "EUR", Quotas: hosting.Quotas{Servers: 5}, CreatedAt: now}); err != nil {
			return err
		}
		if tok, err = tx.CreateToken(ctx, hosting.Token{AccountID: acct, Name: "t", Hash: hash[:], Scopes: hosting.Scopes{hosting.ScopeRead}, CreatedAt: now}); err != nil {
			return err
		}
		srv, err = tx.CreateServer(ctx, hosting.Server{AccountID: acct, Name: "server-abc123", DisplayName: "web", Status: hosting.StatusRunning,
			LocationID: 1, PlanID: 1, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, SSHKeyIDs: []int64{}, CreatedAt: now})
		return err
	})
	byID, byName := hosting.ServerRef{ID: srv}, hosting.ServerRef{Name: "server-abc123"}
	server := func(ref hosting.ServerRef) hosting.Server {
		t.Helper()
		s, err := serve.Server(ctx, acct, ref)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	// Fill the cache, then change the rows from the other handle.
	if s := server(byID); s.DisplayName != "web" {
		t.Fatalf("display name %q", s.DisplayName)
	}
	server(byName)
	if _, a, err := serve.TokenByHash(ctx, hash[:]); err != nil || a.Blocked {
		t.Fatalf("token: %+v %v", a, err)
	}
	in(admin, func(tx store.Tx) error { return tx.SetServerSuspended(ctx, srv, true) })
	in(admin, func(tx store.Tx) error { return tx.RevokeToken(ctx, tok, now) })
	in(admin, func(tx store.Tx) error { return tx.SetAccountBlocked(ctx, acct, true) })
	if s := server(byID); !s.Suspended {
		t.Error("server by id: another process's suspension not seen")
	}
	if s := server(byName); !s.Suspended {
		t.Error("server by name: another process's suspension not seen")
	}
	if tk, a, err := serve.TokenByHash(ctx, hash[:]); err != nil || tk.RevokedAt == nil || !a.Blocked {
		t.Errorf("token after revocation and blocking elsewhere: %+v %+v %v", tk, a, err)
	}

	// A write by another tool altogether (no change counter) is seen within seconds.
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "berth.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE servers SET display_name = 'by-hand' WHERE id = ?`, srv); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); server(byID).DisplayName != "by-hand"; {
		if time.Now().After(deadline) {
			t.Fatal("a write by another tool is never seen")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The serving handle's own writes.
	in(serve, func(tx store.Tx) error {
		s := server(byID)
		s.DisplayName = "renamed"
		return tx.UpdateServer(ctx, s)
	})
	if s := server(byName); s.DisplayName != "renamed" {
		t.Errorf("own write not seen: %q", s.DisplayName)
	}
	in(serve, func(tx store.Tx) error { return tx.DeleteServer(ctx, srv, now) })
	if _, err := serve.Server(ctx, acct, byID); err != store.ErrNotFound {
		t.Errorf("deleted server: %v, want not found", err)
	}

	// Another account never gets a cached answer for this one's server.
	if _, err := serve.Server(ctx, acct+1, byName); err != store.ErrNotFound {
		t.Errorf("other account: %v", err)
	}
}

// What this process writes on the store's writer outside a Tx (River's job queue,
// the simulated driver's counters, metric samples) changes nothing the cache holds:
// the change watcher, which looks for other connections' commits, does not count it.
func TestWatcherCountsOnlyOtherConnections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMigrated(t, t.TempDir())
	before := db.CacheCounters()
	if err := db.AddMetricSamples(ctx, []metrics.Sample{{ServerID: 1, At: time.Unix(1e9, 0), CPU: 12.5}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.WriteDB().Exec(`INSERT INTO sim_counters (machine, at, cpu_ns, net_rx, net_tx, disk_read, disk_write) VALUES ('m', 1, 0, 0, 0, 0, 0)`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond) // the watcher looks every second
	if after := db.CacheCounters(); !slices.Equal(after, before) {
		t.Errorf("change counters %v after writes on the store's own writer, were %v", after, before)
	}
}

// Outside sqlstore, writes go through a Tx's methods: a statement run on WriteDB or
// Tx.SQL is not looked at by the cache (cache.go), so none may write a table the
// cached reads read.
func TestNoRawWritesToCachedTables(t *testing.T) {
	t.Parallel()
	write := regexp.MustCompile(`(?i)\b(insert\s+(or\s+\w+\s+)?into|replace\s+into|update|delete\s+from)\s+["\x60]?(servers|operations|tokens|accounts)\b`)
	root := filepath.Join("..", "..", "..")
	for _, dir := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "sqlstore" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if m := write.Find(b); m != nil {
				t.Errorf("%s writes a table the cache holds outside the store: %q", path, m)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A caller changing what it got back in place does not change the next answer.
func TestCachedReadsAreCopies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMigrated(t, t.TempDir())
	hash := sha256.Sum256([]byte("copy"))
	err := db.InTx(ctx, func(tx store.Tx) error {
		acct, err := tx.CreateAccount(ctx, hosting.Account{Email: "d@example.com", Language: "en", Currency: "EUR", Quotas: hosting.Quotas{Servers: 1}, CreatedAt: time.Now()})
		if err != nil {
			return err
		}
		_, err = tx.CreateToken(ctx, hosting.Token{AccountID: acct, Name: "t", Hash: hash[:], Scopes: hosting.Scopes{hosting.ScopeRead, hosting.ScopePower}, CreatedAt: time.Now()})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		tk, _, err := db.TokenByHash(ctx, hash[:])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(tk.Hash, hash[:]) || len(tk.Scopes) != 2 || tk.Scopes[1] != hosting.ScopePower {
			t.Fatalf("token changed by an earlier caller: %+v", tk)
		}
		tk.Hash[0]++
		tk.Scopes[1] = hosting.ScopeServers
	}
}
