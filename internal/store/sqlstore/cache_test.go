package sqlstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
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
	"github.com/berthhq/berth/internal/store/sqlstore"
	"github.com/berthhq/berth/internal/store/sqlstore/sqlstoretest"
)

// cacheFixture is an account with a token, a project and a running server in it, as
// the cache tests read them.
type cacheFixture struct {
	acct, tok, srv, project int64
	hash                    []byte
}

var cacheNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// seedCacheFixture writes the fixture through s.
func seedCacheFixture(t *testing.T, s store.Store) cacheFixture {
	t.Helper()
	ctx := context.Background()
	hash := sha256.Sum256([]byte("secret"))
	f := cacheFixture{hash: hash[:]}
	err := s.InTx(ctx, func(tx store.Tx) error {
		err := tx.ApplyCatalog(ctx, hosting.Catalog{
			Plans: []hosting.Plan{{ID: 1, Name: "small", VCPUs: 1, MemoryMB: 1024, DiskGB: 20, PriceHourly: 70, PriceMonthly: 45100},
				{ID: 2, Name: "large", VCPUs: 4, MemoryMB: 8192, DiskGB: 80, PriceHourly: 280, PriceMonthly: 180400}},
			Images: []hosting.Image{{ID: 1, Name: "ubuntu-24.04", OS: "ubuntu", Version: "24.04"}, {ID: 2, Name: "debian-12", OS: "debian", Version: "12"}},
			Locations: []hosting.CatalogLocation{{
				Location: hosting.Location{ID: 1, Name: "fsn1", City: "Falkenstein", Country: "DE", SnapshotPriceGBHour: 1},
				Offers:   []hosting.PlanOffer{{PlanID: 1}, {PlanID: 2}},
				ImageIDs: []int64{1, 2},
			}},
		})
		if err != nil {
			return err
		}
		if f.acct, err = tx.CreateAccount(ctx, hosting.Account{Email: "c@example.com", Name: "c", Language: "en", Currency: "EUR", Quotas: hosting.Quotas{Servers: 5}, CreatedAt: cacheNow}); err != nil {
			return err
		}
		if f.tok, err = tx.CreateToken(ctx, hosting.Token{AccountID: f.acct, Name: "t", Hash: f.hash, Scopes: hosting.Scopes{hosting.ScopeRead}, CreatedAt: cacheNow}); err != nil {
			return err
		}
		if f.project, err = tx.CreateProject(ctx, hosting.Project{AccountID: f.acct, Name: "p", CreatedAt: cacheNow}); err != nil {
			return err
		}
		f.srv, err = tx.CreateServer(ctx, hosting.Server{AccountID: f.acct, Name: "server-abc123", DisplayName: "web", ProjectID: &f.project,
			Status: hosting.StatusRunning, LocationID: 1, PlanID: 1, ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, SSHKeyIDs: []int64{}, CreatedAt: cacheNow})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// cacheStores are the stores the cache tests run on: open returns two handles on one
// database, as two processes (berthd serve and an admin command, or two serve
// processes on PostgreSQL) open it.
var cacheStores = []struct {
	name string
	open func(t *testing.T) (serve, other *sqlstore.DB)
}{
	{"sqlite", func(t *testing.T) (*sqlstore.DB, *sqlstore.DB) {
		dir := t.TempDir()
		return sqlstoretest.SQLite(t, dir), sqlstoretest.SQLite(t, dir)
	}},
	{"postgres", func(t *testing.T) (*sqlstore.DB, *sqlstore.DB) {
		dbs := openProcesses(t, 2)
		return dbs[0], dbs[1]
	}},
}

// The token and server reads are answered from memory; these tests prove they are
// never staler than a query would be, also when another process (here: a second
// handle on the same data dir, as an admin command opens it) writes.
func TestCachedReadsFollowWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	serve, admin := sqlstoretest.SQLite(t, dir), sqlstoretest.SQLite(t, dir)
	in := func(s store.Store, fn func(tx store.Tx) error) {
		t.Helper()
		if err := s.InTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	f := seedCacheFixture(t, serve)
	acct, tok, srv, hash, now := f.acct, f.tok, f.srv, f.hash, cacheNow
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
	if _, a, err := serve.TokenByHash(ctx, hash); err != nil || a.Blocked {
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
	if tk, a, err := serve.TokenByHash(ctx, hash); err != nil || tk.RevokedAt == nil || !a.Blocked {
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
	// Also one to the tokens' side.
	if _, err := raw.Exec(`UPDATE accounts SET language = 'fr' WHERE id = ?`, acct); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, a, err := serve.TokenByHash(ctx, hash); err != nil || a.Language == "fr" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a write of an account by another tool is never seen")
		}
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

// Every write that changes what the cached reads return is seen by the very next
// read, whether the serving process wrote it or another one (an admin command): the
// cache counts only some writes as changes, and must count each of these.
func TestCachedReadsSeeEveryWrite(t *testing.T) {
	t.Parallel()
	for _, st := range cacheStores {
		for _, writer := range []string{"own", "another process"} {
			t.Run(st.name+"/"+writer, func(t *testing.T) {
				t.Parallel()
				cachedReadsSeeEveryWrite(t, st.open, writer)
			})
		}
	}
}

func cachedReadsSeeEveryWrite(t *testing.T, open func(t *testing.T) (serve, other *sqlstore.DB), writer string) {
	{
		{
			ctx := context.Background()
			serve, w := open(t)
			if writer == "own" {
				w = serve
			}
			f := seedCacheFixture(t, serve)
			refs := []hosting.ServerRef{{ID: f.srv}, {Name: "server-abc123"}}
			var opID int64

			serverWrites := []struct {
				name  string
				write func(tx store.Tx) error
				// seen reports whether the read shows the write (err: the read's).
				seen func(s hosting.Server, err error) bool
			}{
				{"status", func(tx store.Tx) error { return tx.SetServerStatus(ctx, f.srv, hosting.StatusStopped) },
					func(s hosting.Server, _ error) bool { return s.Status == hosting.StatusStopped }},
				{"operation start", func(tx store.Tx) error {
					var err error
					opID, err = tx.StartOperation(ctx, hosting.Operation{AccountID: f.acct, ServerID: f.srv, Type: hosting.OpPower,
						Action: hosting.PowerOn, StartedAt: cacheNow})
					return err
				}, func(s hosting.Server, _ error) bool { return s.Operation != nil && s.Operation.ID == opID }},
				{"operation finish", func(tx store.Tx) error { return tx.FinishOperation(ctx, opID, hosting.OpSuccess, "", cacheNow) },
					func(s hosting.Server, _ error) bool { return s.Operation == nil }},
				{"rename", func(tx store.Tx) error {
					return tx.UpdateServer(ctx, hosting.Server{ID: f.srv, DisplayName: "renamed", ProjectID: &f.project})
				}, func(s hosting.Server, _ error) bool { return s.DisplayName == "renamed" }},
				{"addresses", func(tx store.Tx) error { return tx.SetServerAddresses(ctx, f.srv, "192.0.2.7", "2001:db8::7") },
					func(s hosting.Server, _ error) bool { return s.IPv4 != nil && *s.IPv4 == "192.0.2.7" }},
				{"plan", func(tx store.Tx) error { return tx.SetServerPlan(ctx, f.srv, 2, 4, 8192, 80) },
					func(s hosting.Server, _ error) bool { return s.PlanID == 2 && s.VCPUs == 4 }},
				{"image", func(tx store.Tx) error { return tx.SetServerImage(ctx, f.srv, 2) },
					func(s hosting.Server, _ error) bool { return s.ImageID == 2 }},
				{"project deleted", func(tx store.Tx) error { return tx.DeleteProject(ctx, f.acct, f.project) },
					func(s hosting.Server, _ error) bool { return s.ProjectID == nil }},
				{"suspend", func(tx store.Tx) error { return tx.SetServerSuspended(ctx, f.srv, true) },
					func(s hosting.Server, _ error) bool { return s.SuspendedByOperator }},
				{"unsuspend", func(tx store.Tx) error { return tx.SetServerSuspended(ctx, f.srv, false) },
					func(s hosting.Server, _ error) bool { return !s.SuspendedByOperator }},
				{"suspend for credit", func(tx store.Tx) error { _, err := tx.SuspendForCredit(ctx, f.acct); return err },
					func(s hosting.Server, _ error) bool { return s.SuspendedForCredit }},
				{"lift credit suspension", func(tx store.Tx) error { _, err := tx.LiftCreditSuspension(ctx, f.acct); return err },
					func(s hosting.Server, _ error) bool { return !s.SuspendedForCredit }},
				{"delete", func(tx store.Tx) error { return tx.DeleteServer(ctx, f.srv, cacheNow) },
					func(_ hosting.Server, err error) bool { return err == store.ErrNotFound }},
			}
			for _, c := range serverWrites {
				for _, ref := range refs {
					if _, err := serve.Server(ctx, f.acct, ref); err != nil {
						t.Fatalf("before %s: %v", c.name, err)
					}
				}
				if err := w.InTx(ctx, c.write); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				for _, ref := range refs {
					if s, err := serve.Server(ctx, f.acct, ref); !c.seen(s, err) {
						t.Errorf("server %+v after %s: an older answer (err %v)", ref, c.name, err)
					}
				}
			}

			budget := hosting.Money(5000)
			tokenWrites := []struct {
				name  string
				write func(tx store.Tx) error
				seen  func(tk hosting.Token, a hosting.Account) bool
			}{
				{"language", func(tx store.Tx) error { return tx.SetAccountLanguage(ctx, f.acct, "de") },
					func(_ hosting.Token, a hosting.Account) bool { return a.Language == "de" }},
				{"quotas", func(tx store.Tx) error { return tx.SetQuotas(ctx, f.acct, hosting.Quotas{Servers: 9, Tokens: 3}) },
					func(_ hosting.Token, a hosting.Account) bool { return a.Quotas.Servers == 9 && a.Quotas.Tokens == 3 }},
				{"credit", func(tx store.Tx) error {
					_, err := tx.AddTransaction(ctx, hosting.Transaction{AccountID: f.acct, Type: hosting.TxTopup, Amount: 10000, CreatedAt: cacheNow})
					return err
				}, func(_ hosting.Token, a hosting.Account) bool { return a.Credit == 10000 }},
				{"covered debit", func(tx store.Tx) error {
					_, err := tx.AddCoveredTransaction(ctx, hosting.Transaction{AccountID: f.acct, Type: hosting.TxCharge, Amount: -2500, CreatedAt: cacheNow})
					return err
				}, func(_ hosting.Token, a hosting.Account) bool { return a.Credit == 7500 }},
				{"budget", func(tx store.Tx) error { return tx.SetBudget(ctx, f.acct, &budget) },
					func(_ hosting.Token, a hosting.Account) bool { return a.Budget != nil && *a.Budget == budget }},
				{"block", func(tx store.Tx) error { return tx.SetAccountBlocked(ctx, f.acct, true) },
					func(_ hosting.Token, a hosting.Account) bool { return a.Blocked }},
				{"unblock", func(tx store.Tx) error { return tx.SetAccountBlocked(ctx, f.acct, false) },
					func(_ hosting.Token, a hosting.Account) bool { return !a.Blocked }},
				{"revoke", func(tx store.Tx) error { return tx.RevokeToken(ctx, f.tok, cacheNow) },
					func(tk hosting.Token, _ hosting.Account) bool { return tk.RevokedAt != nil }},
			}
			if writer == "own" {
				// Recorded by the process that authenticates: another one's is seen
				// through the watcher (within a second), as it may lag by design.
				tokenWrites = append(tokenWrites, struct {
					name  string
					write func(tx store.Tx) error
					seen  func(tk hosting.Token, a hosting.Account) bool
				}{"last use", func(tx store.Tx) error { return tx.TouchToken(ctx, f.tok, cacheNow.Add(time.Hour)) },
					func(tk hosting.Token, _ hosting.Account) bool {
						return tk.LastUsedAt != nil && tk.LastUsedAt.Equal(cacheNow.Add(time.Hour))
					}})
			}
			for _, c := range tokenWrites {
				if _, _, err := serve.TokenByHash(ctx, f.hash); err != nil {
					t.Fatalf("before %s: %v", c.name, err)
				}
				if err := w.InTx(ctx, c.write); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if tk, a, err := serve.TokenByHash(ctx, f.hash); err != nil || !c.seen(tk, a) {
					t.Errorf("token after %s: an older answer (err %v)", c.name, err)
				}
			}
		}
	}
}

// Writes that change nothing the cache holds leave it as it is: the last use of a
// token drops only that token; the audit log, idempotency records, SSH keys and
// sessions drop nothing (for writes outside a Tx, see
// TestWatcherCountsOnlyOtherConnections).
func TestCacheOutlivesWritesOfOtherRows(t *testing.T) {
	t.Parallel()
	for _, st := range cacheStores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			db, _ := st.open(t)
			cacheOutlivesWritesOfOtherRows(t, db)
		})
	}
}

func cacheOutlivesWritesOfOtherRows(t *testing.T, db *sqlstore.DB) {
	ctx := context.Background()
	f := seedCacheFixture(t, db)
	refs := []hosting.ServerRef{{ID: f.srv}, {Name: "server-abc123"}}
	fill := func() {
		t.Helper()
		for _, ref := range refs {
			if _, err := db.Server(ctx, f.acct, ref); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := db.TokenByHash(ctx, f.hash); err != nil {
			t.Fatal(err)
		}
	}
	fill()
	// unchanged checks that no counter moved and that the cache still answers: a read
	// by id that missed would have emptied the map for what it filed (the entry by
	// name).
	counters := db.CacheCounters()
	unchanged := func(after string) {
		t.Helper()
		if got := db.CacheCounters(); !slices.Equal(got, counters) {
			t.Errorf("after %s: change counters (anything, servers, tokens) %v, were %v", after, got, counters)
		}
		if _, err := db.Server(ctx, f.acct, refs[0]); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.TokenByHash(ctx, f.hash); err != nil {
			t.Fatal(err)
		}
		if s, tk := db.CachedEntries(); s != 1 || tk != 1 {
			t.Errorf("after %s: cache holds %d servers and %d tokens, want 1 (by id and by name) and 1", after, s, tk)
		}
	}
	unchanged("filling")

	acct := f.acct
	writes := []struct {
		name  string
		write func(tx store.Tx) error
	}{
		{"audit entry", func(tx store.Tx) error {
			return tx.AddAuditEntry(ctx, hosting.AuditEntry{At: cacheNow, Actor: "api", AccountID: &acct, Action: "server.rename",
				Target: "server-abc123", Status: 200})
		}},
		{"idempotency record", func(tx store.Tx) error {
			return tx.SaveIdempotencyKey(ctx, hosting.IdempotencyRecord{AccountID: acct, Key: "k1", RequestHash: []byte{1},
				State: hosting.IdempotencyDone, Status: 201, CreatedAt: cacheNow}, cacheNow.Add(-time.Hour))
		}},
		{"ssh key", func(tx store.Tx) error {
			_, err := tx.CreateSSHKey(ctx, hosting.SSHKey{AccountID: acct, Name: "k", PublicKey: "ssh-ed25519 AAAA", Fingerprint: "SHA256:x", CreatedAt: cacheNow})
			return err
		}},
		{"session", func(tx store.Tx) error {
			_, err := tx.CreateSession(ctx, hosting.Session{AccountID: acct, Hash: []byte("session"), CreatedAt: cacheNow, ExpiresAt: cacheNow.Add(time.Hour)})
			return err
		}},
	}
	for _, w := range writes {
		if err := db.InTx(ctx, w.write); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		unchanged(w.name)
	}

	// A token's last use: that token is read afresh, the servers stay.
	used := cacheNow.Add(time.Hour)
	if err := db.InTx(ctx, func(tx store.Tx) error { return tx.TouchToken(ctx, f.tok, used) }); err != nil {
		t.Fatal(err)
	}
	if s, tk := db.CachedEntries(); s != 1 || tk != 0 {
		t.Errorf("after a last use: cache holds %d servers and %d tokens, want 1 and 0", s, tk)
	}
	if tk, _, err := db.TokenByHash(ctx, f.hash); err != nil || tk.LastUsedAt == nil || !tk.LastUsedAt.Equal(used) {
		t.Errorf("token after its last use: %v, %v", tk.LastUsedAt, err)
	}
	unchanged("a last use")

	// A change of accounts leaves the servers; one of servers leaves the tokens.
	if err := db.InTx(ctx, func(tx store.Tx) error { return tx.SetAccountLanguage(ctx, acct, "de") }); err != nil {
		t.Fatal(err)
	}
	if got := db.CacheCounters(); got[0] != counters[0] || got[1] != counters[1] || got[2] == counters[2] {
		t.Errorf("after an account's change: change counters %v, were %v (want only tokens' moved)", got, counters)
	}
	counters = db.CacheCounters()
	if err := db.InTx(ctx, func(tx store.Tx) error { return tx.SetServerStatus(ctx, f.srv, hosting.StatusStopped) }); err != nil {
		t.Fatal(err)
	}
	if got := db.CacheCounters(); got[0] != counters[0] || got[1] == counters[1] || got[2] != counters[2] {
		t.Errorf("after a server's change: change counters %v, were %v (want only servers' moved)", got, counters)
	}
}

// What this process writes on the store's writer outside a Tx (River's job queue,
// the simulated driver's counters, metric samples) changes nothing the cache holds:
// the change watcher, which looks for other connections' commits, does not count it.
func TestWatcherCountsOnlyOtherConnections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlstoretest.SQLite(t, t.TempDir())
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
	db := sqlstoretest.SQLite(t, t.TempDir())
	hash := sha256.Sum256([]byte("copy"))
	expires := time.Now().Add(time.Hour).Round(time.Second)
	err := db.InTx(ctx, func(tx store.Tx) error {
		acct, err := tx.CreateAccount(ctx, hosting.Account{Email: "d@example.com", Language: "en", Currency: "EUR", Quotas: hosting.Quotas{Servers: 1}, CreatedAt: time.Now()})
		if err != nil {
			return err
		}
		_, err = tx.CreateToken(ctx, hosting.Token{AccountID: acct, Name: "t", Hash: hash[:], Scopes: hosting.Scopes{hosting.ScopeRead, hosting.ScopePower},
			ExpiresAt: &expires, CreatedAt: time.Now()})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		tk, _, err := db.TokenByHash(ctx, hash[:])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(tk.Hash, hash[:]) || len(tk.Scopes) != 2 || tk.Scopes[1] != hosting.ScopePower || tk.ExpiresAt == nil || !tk.ExpiresAt.Equal(expires) {
			t.Fatalf("token changed by an earlier caller: %+v", tk)
		}
		tk.Hash[0]++
		tk.Scopes[1] = hosting.ScopeServers
		*tk.ExpiresAt = tk.ExpiresAt.Add(time.Hour)
	}

	f := seedCacheFixture(t, db)
	ref := hosting.ServerRef{ID: f.srv}
	for range 3 {
		srv, err := db.Server(ctx, f.acct, ref)
		if err != nil {
			t.Fatal(err)
		}
		if srv.ProjectID == nil || *srv.ProjectID != f.project || srv.DisplayName != "web" {
			t.Fatalf("server changed by an earlier caller: %+v", srv)
		}
		*srv.ProjectID = -1
		srv.DisplayName = "changed"
	}
}

// On SQLite, a write of this process drops the entries of the servers whose rows it
// changed and keeps the others (the pre-update hook names the rows); another
// process, which cannot know them, empties its map; a transaction changing more rows
// than are noted counts as changing every server.
func TestOwnWritesDropOnlyTheirServers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	serve, admin := sqlstoretest.SQLite(t, dir), sqlstoretest.SQLite(t, dir)
	f := seedCacheFixture(t, serve)
	newServer := func(tx store.Tx, name string) (int64, error) {
		return tx.CreateServer(ctx, hosting.Server{AccountID: f.acct, Name: name, Status: hosting.StatusRunning, LocationID: 1, PlanID: 1,
			ImageID: 1, VCPUs: 1, MemoryMB: 1024, DiskGB: 20, SSHKeyIDs: []int64{}, CreatedAt: cacheNow})
	}
	var other int64
	if err := serve.InTx(ctx, func(tx store.Tx) (err error) { other, err = newServer(tx, "server-other"); return err }); err != nil {
		t.Fatal(err)
	}
	read := func(db *sqlstore.DB, ref hosting.ServerRef) hosting.Server {
		t.Helper()
		s, err := db.Server(ctx, f.acct, ref)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	entries := func(when string, want int) {
		t.Helper()
		if s, _ := serve.CachedEntries(); s != want {
			t.Errorf("%s: %d servers held, want %d", when, s, want)
		}
	}
	byName := hosting.ServerRef{Name: "server-abc123"}
	read(serve, byName)
	read(serve, hosting.ServerRef{ID: other})
	read(admin, byName)
	entries("filled", 2)

	counters := serve.CacheCounters()
	if err := serve.InTx(ctx, func(tx store.Tx) error { return tx.SetServerStatus(ctx, f.srv, hosting.StatusStopped) }); err != nil {
		t.Fatal(err)
	}
	if got := serve.CacheCounters(); got[1] == counters[1] {
		t.Error("the servers' counter did not move: another process would answer the older server")
	}
	entries("after its own write of one server", 1)
	if s := read(serve, byName); s.Status != hosting.StatusStopped {
		t.Errorf("status %s after the write, want stopped", s.Status)
	}
	if s := read(admin, byName); s.Status != hosting.StatusStopped {
		t.Errorf("another process: status %s after the write, want stopped", s.Status)
	}
	entries("the written server read again", 2) // the other one's entry outlived the write

	// An operation started and finished changes the server it runs on only.
	var op int64
	if err := serve.InTx(ctx, func(tx store.Tx) (err error) {
		op, err = tx.StartOperation(ctx, hosting.Operation{AccountID: f.acct, ServerID: f.srv, Type: hosting.OpPower,
			Action: hosting.PowerOn, StartedAt: cacheNow})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	entries("after an operation started", 1)
	if s := read(serve, byName); s.Operation == nil || s.Operation.ID != op {
		t.Errorf("operation %+v, want %d", s.Operation, op)
	}
	if err := serve.InTx(ctx, func(tx store.Tx) error { return tx.FinishOperation(ctx, op, hosting.OpSuccess, "", cacheNow) }); err != nil {
		t.Fatal(err)
	}
	entries("after it finished", 1)
	if s := read(serve, byName); s.Operation != nil {
		t.Errorf("operation %+v after it finished", s.Operation)
	}
	entries("read again", 2)

	// Another process's write empties the map at the next read.
	if err := admin.InTx(ctx, func(tx store.Tx) error { return tx.SetServerStatus(ctx, other, hosting.StatusStopped) }); err != nil {
		t.Fatal(err)
	}
	read(serve, byName)
	entries("after another process's write", 1)
	if s := read(serve, hosting.ServerRef{ID: other}); s.Status != hosting.StatusStopped {
		t.Errorf("status %s after another process's write, want stopped", s.Status)
	}
	entries("both read again", 2)

	// Too many rows to note: every server counts as changed.
	if err := serve.InTx(ctx, func(tx store.Tx) error {
		for i := range 4100 {
			if _, err := newServer(tx, fmt.Sprintf("server-bulk%d", i)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	read(serve, byName)
	entries("after a write of 4,100 servers", 1)
}

// The same for tokens: this process's write of an account drops the tokens of that
// account, of a token that token; the others stay. Another process's empties them.
func TestOwnWritesDropOnlyTheirTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	serve, admin := sqlstoretest.SQLite(t, dir), sqlstoretest.SQLite(t, dir)
	f := seedCacheFixture(t, serve)
	hash2, hash3 := sha256.Sum256([]byte("second")), sha256.Sum256([]byte("other account's"))
	var tok2, acct3 int64
	if err := serve.InTx(ctx, func(tx store.Tx) (err error) {
		if tok2, err = tx.CreateToken(ctx, hosting.Token{AccountID: f.acct, Name: "t2", Hash: hash2[:], Scopes: hosting.Scopes{hosting.ScopeRead}, CreatedAt: cacheNow}); err != nil {
			return err
		}
		if acct3, err = tx.CreateAccount(ctx, hosting.Account{Email: "d@example.com", Name: "d", Language: "en", Currency: "EUR", CreatedAt: cacheNow}); err != nil {
			return err
		}
		_, err = tx.CreateToken(ctx, hosting.Token{AccountID: acct3, Name: "t3", Hash: hash3[:], Scopes: hosting.Scopes{hosting.ScopeRead}, CreatedAt: cacheNow})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	hashes := [][]byte{f.hash, hash2[:], hash3[:]}
	read := func(h []byte) (hosting.Token, hosting.Account) {
		t.Helper()
		tk, a, err := serve.TokenByHash(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		return tk, a
	}
	entries := func(when string, want int) {
		t.Helper()
		if _, tk := serve.CachedEntries(); tk != want {
			t.Errorf("%s: %d tokens held, want %d", when, tk, want)
		}
	}
	in := func(db *sqlstore.DB, fn func(tx store.Tx) error) {
		t.Helper()
		if err := db.InTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	fill := func(when string) {
		t.Helper()
		for _, h := range hashes {
			read(h)
		}
		entries(when, 3)
	}
	fill("filled")

	// An account's change: both its tokens go, the other account's stays.
	in(serve, func(tx store.Tx) error { return tx.SetAccountLanguage(ctx, f.acct, "de") })
	entries("after its own write of an account", 1)
	if _, a := read(hash2[:]); a.Language != "de" {
		t.Errorf("language %q after the write, want de", a.Language)
	}
	entries("one of its tokens read again", 2) // the other account's outlived the write
	fill("read again")

	// A token's change: that token goes.
	in(serve, func(tx store.Tx) error { return tx.RevokeToken(ctx, tok2, cacheNow) })
	entries("after its own write of a token", 2)
	if tk, _ := read(hash2[:]); tk.RevokedAt == nil {
		t.Error("token not revoked after the write")
	}
	fill("read again")

	// A new account (an insert of accounts) drops nothing held.
	in(serve, func(tx store.Tx) error {
		_, err := tx.CreateAccount(ctx, hosting.Account{Email: "e@example.com", Name: "e", Language: "en", Currency: "EUR", CreatedAt: cacheNow})
		return err
	})
	entries("after a new account", 3)

	// Another process's write empties the map at the next read.
	in(admin, func(tx store.Tx) error { return tx.SetAccountLanguage(ctx, acct3, "fr") })
	read(f.hash)
	entries("after another process's write", 1)
	if _, a := read(hash3[:]); a.Language != "fr" {
		t.Errorf("language %q after another process's write, want fr", a.Language)
	}
}
