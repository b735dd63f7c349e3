package sqlstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
)

// After a write, what the maps held before can never be answered again; they must
// not keep it. (They once did, until maxCached entries: on a server whose every
// request reads a token and a server and whose writes never stop, a map of mostly
// dead entries growing for as long as new servers are read; the soak saw it.)
func TestCacheKeepsOnlyLiveEntries(t *testing.T) {
	t.Parallel()
	c := testCache(t)
	loads := 0
	read := func(id int64) {
		t.Helper()
		_, err := c.server(context.Background(), 1, hosting.ServerRef{ID: id}, func() (hosting.Server, error) {
			loads++
			return hosting.Server{ID: id, AccountID: 1, Name: fmt.Sprintf("server-%d", id)}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		hash := sha256.Sum256(fmt.Appendf(nil, "token-%d", id))
		_, _, err = c.token(context.Background(), hash[:], func() (hosting.Token, hosting.Account, error) {
			loads++
			return hosting.Token{ID: id, Hash: hash[:]}, hosting.Account{ID: 1}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	const n = 100
	for id := range int64(n) {
		read(id)
	}
	for id := range int64(n) {
		read(id)
	}
	if loads != 2*n {
		t.Fatalf("%d loads for %d servers and tokens read twice, want %d (the second reads from memory)", loads, n, 2*n)
	}
	for round := range 3 {
		c.changed()
		read(n + int64(round))
		if got := c.servers.len(); got != 1 {
			t.Errorf("after write %d: %d servers held, want 1 (only the one read since)", round+1, got)
		}
		if got := len(c.tokens); got != 1 {
			t.Errorf("after write %d: %d tokens held, want 1 (only the one read since)", round+1, got)
		}
	}

	// A read that began before a write and ends after a newer read was filed is not
	// filed: it could never be answered.
	_, err := c.server(context.Background(), 1, hosting.ServerRef{ID: 2000}, func() (hosting.Server, error) {
		c.changed() // a write commits during the query
		read(1000)  // and another read, after it, is filed
		return hosting.Server{ID: 2000, AccountID: 1}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.servers.len(); got != 1 {
		t.Errorf("%d servers held, want 1 (the one read after the write)", got)
	}
}

// A write of one kind empties only its own map; one of "anything" both.
func TestCacheCountsKindsApart(t *testing.T) {
	t.Parallel()
	c := testCache(t)
	loads := 0
	read := func() {
		t.Helper()
		if _, err := c.server(context.Background(), 1, hosting.ServerRef{ID: 1}, func() (hosting.Server, error) {
			loads++
			return hosting.Server{ID: 1, AccountID: 1}, nil
		}); err != nil {
			t.Fatal(err)
		}
		hash := sha256.Sum256([]byte("t"))
		if _, _, err := c.token(context.Background(), hash[:], func() (hosting.Token, hosting.Account, error) {
			loads += 10
			return hosting.Token{ID: 1, Hash: hash[:]}, hosting.Account{ID: 1}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	read()
	for _, step := range []struct {
		name  string
		write func()
		loads int // 1: the server read again, 10: the token, 11: both
	}{
		{"nothing", func() {}, 0},
		{"a write of nothing cached", func() { c.committed(&writes{}) }, 0},
		{"a write of servers", func() { c.committed(&writes{kinds: kindServers}) }, 1},
		{"a write of tokens", func() { c.committed(&writes{kinds: kindTokens}) }, 10},
		{"a write of both", func() { c.committed(&writes{kinds: kindServers | kindTokens}) }, 11},
		{"anything", c.changed, 11},
		{"a token's last use", func() { c.committed(&writes{touched: []int64{1}}) }, 10},
		{"another token's last use", func() { c.committed(&writes{touched: []int64{2}}) }, 0},
	} {
		loads = 0
		step.write()
		read()
		if loads != step.loads {
			t.Errorf("after %s: loads %d, want %d", step.name, loads, step.loads)
		}
	}
}

// A token read while a last use of it commits is not filed: it may hold the last use
// from before, and nothing else would drop it.
func TestCacheFilesNoTokenReadDuringATouch(t *testing.T) {
	t.Parallel()
	c := testCache(t)
	hash := sha256.Sum256([]byte("t"))
	loads := 0
	read := func(during func()) {
		t.Helper()
		_, _, err := c.token(context.Background(), hash[:], func() (hosting.Token, hosting.Account, error) {
			loads++
			during()
			return hosting.Token{ID: 1, Hash: hash[:]}, hosting.Account{ID: 1}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	read(func() { c.committed(&writes{touched: []int64{1}}) })
	read(func() {})
	if loads != 2 {
		t.Errorf("%d loads, want 2: the token read during its touch was answered again", loads)
	}
	read(func() {})
	if loads != 2 {
		t.Errorf("%d loads, want 2: the token read after the touch was not filed", loads)
	}
}

func TestStatementKinds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		query string
		want  kinds
	}{
		{`SELECT s.id FROM servers s LEFT JOIN operations o ON o.id = s.operation_id`, 0},
		{` select * from tokens`, 0},
		{tokenByHashQuery, 0},
		{touchTokenQuery, 0},
		// What DNS serves of a server is its names, addresses and deletion: an UPDATE
		// of servers that sets none of them is no DNS change.
		{`UPDATE servers SET status = ? WHERE id = ?`, kindServers},
		{`update "Servers" set status = ?`, kindServers},
		{`UPDATE OR FAIL main.servers SET suspended = (suspended & 2) + ?, operation_id = NULL WHERE id = ? AND deleted_at IS NULL`, kindServers},
		{`UPDATE servers SET plan_id = ?, vcpus = ?, memory_mb = ?, disk_gb = ? WHERE id = ?`, kindServers},
		{`UPDATE servers SET status = 'a''(b', image_id = ? WHERE id IN (?, ?) -- name = (`, kindServers},
		{`UPDATE servers SET ipv4 = ?, ipv6 = ? WHERE id = ?`, kindServers | kindDNS},
		{`UPDATE servers SET status = ?, "Deleted_At" = ? WHERE id = ?`, kindServers | kindDNS},
		{`UPDATE servers SET status = COALESCE(?, status), ipv6_net = ? WHERE id = ?`, kindServers | kindDNS},
		{`UPDATE servers SET status = '(', name = ?`, kindServers | kindDNS},
		{`UPDATE servers SET status = ? /* ( */, name = ?`, kindServers | kindDNS},
		{`UPDATE servers SET (status, name) = (?, ?)`, kindServers | kindDNS},
		{`UPDATE servers AS s SET status = ?`, kindServers | kindDNS},
		{`UPDATE servers SET status = (SELECT status FROM servers WHERE id = ?)`, kindServers | kindDNS},
		{`UPDATE servers SET status = ? WHERE id IN (SELECT server_id FROM server_ptrs)`, kindServers | kindDNS},
		{`UPDATE servers SET status = ? /* unclosed`, kindServers | kindDNS},
		{`INSERT INTO servers (name) VALUES (?)`, kindServers | kindDNS},
		{`UPDATE meters SET rate = ? FROM servers WHERE servers.id = meters.resource_id`, kindServers | kindDNS},
		{`UPDATE operations SET status = ? WHERE server_id IN (SELECT id FROM servers)`, kindServers | kindDNS},
		{`UPDATE operations SET status = ?`, kindServers},
		{`INSERT INTO operations (account_id) VALUES (?) RETURNING id`, kindServers},
		{`DELETE FROM main.servers WHERE id = ?`, kindServers | kindDNS},
		{`UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, kindTokens},
		{`UPDATE accounts SET quota_tokens = ? WHERE id = ?`, kindTokens},
		{`UPDATE accounts SET credit = credit - t.total FROM (SELECT account_id FROM charge_batch) AS t`, kindTokens},
		{`INSERT INTO transactions (account_id) SELECT b.account_id FROM charge_batch b JOIN accounts a ON a.id = b.account_id`, kindTokens},
		{`WITH x AS (SELECT id FROM servers) UPDATE tokens SET name = ''`, kindServers | kindTokens | kindDNS},
		{`INSERT INTO audit_log (at, actor) VALUES (?, ?)`, 0},
		{`INSERT INTO server_keys (server_id) VALUES (?)`, 0},
		{`INSERT INTO metric_samples (server_id) VALUES (?)`, 0},
		{`DELETE FROM idempotency_keys WHERE created_at < ?`, 0},
		{`UPDATE projects SET name = ?`, 0},
		{`UPDATE zones SET serial = ? WHERE id = ?`, kindDNS},
		{`INSERT INTO zone_rrsets (zone_id, name) VALUES (?, ?)`, kindDNS},
		{`DELETE FROM server_ptrs WHERE server_id = ?`, kindDNS},
	} {
		if got := statementKinds(c.query); got != c.want {
			t.Errorf("%q: %b, want %b", c.query, got, c.want)
		}
	}
}

// A full map makes room by dropping a part of its entries, not all of them: after
// maxCached+1 tokens are read, the map holds all but an eighth, the one read last
// among them, and a token's entry and its key by id go together; after maxCached+1
// servers, all but the oldest chunk's, the one read last among them.
func TestCacheEvictsAPartWhenFull(t *testing.T) {
	t.Parallel()
	c := testCache(t)
	ctx := context.Background()
	for id := range int64(maxCached + 1) {
		if _, err := c.server(ctx, 1, hosting.ServerRef{ID: id}, func() (hosting.Server, error) {
			return hosting.Server{ID: id, AccountID: 1, Name: fmt.Sprintf("server-%d", id)}, nil
		}); err != nil {
			t.Fatal(err)
		}
		hash := sha256.Sum256(fmt.Appendf(nil, "token-%d", id))
		if _, _, err := c.token(ctx, hash[:], func() (hosting.Token, hosting.Account, error) {
			return hosting.Token{ID: id, Hash: hash[:]}, hosting.Account{ID: 1}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	want := maxCached - maxCached/evictShare + 1
	if len(c.tokens) != want || len(c.tokenKeys) != want {
		t.Errorf("held %d tokens, %d token keys; want %d each", len(c.tokens), len(c.tokenKeys), want)
	}
	for id, key := range c.tokenKeys {
		if e, ok := c.tokens[key]; !ok || e.t.ID != id {
			t.Fatalf("token key %d names no entry of that token", id)
		}
	}
	// A chunk's worth goes, the first read: a chunk holds at most this many.
	perChunk := chunkSize / (entryHeader + 1)
	if n := c.servers.len(); n > maxCached || n < maxCached+1-perChunk {
		t.Errorf("held %d servers; want fewer than %d, by a chunk's worth", n, maxCached)
	}
	if _, ok := c.servers.slots[maxCached]; !ok {
		t.Error("the server read last is not held")
	}
	if _, ok := c.servers.slots[0]; ok {
		t.Error("the server read first is still held")
	}
	checkServerEntries(t, &c.servers)
}

// checkServerEntries checks that every entry decodes to its server, and that the
// names and operations maps name entries of that name and operation.
func checkServerEntries(t *testing.T, e *serverEntries) {
	t.Helper()
	for id, slot := range e.slots {
		b, _, ok := e.get(slot.account, hosting.ServerRef{ID: id})
		if !ok {
			t.Fatalf("server %d: no entry", id)
		}
		s, ok := decodeServer(b)
		if !ok || s.ID != id || s.AccountID != slot.account || e.nameHash(s.AccountID, s.Name) != slot.name {
			t.Fatalf("server %d: entry decodes to %+v (%v)", id, s, ok)
		}
	}
	for h, id := range e.names {
		if slot, ok := e.slots[id]; !ok || slot.name != h {
			t.Fatalf("name %x: server %d has no entry of that name", h, id)
		}
	}
	for op, id := range e.ops {
		if slot, ok := e.slots[id]; !ok || slot.op != op {
			t.Fatalf("operation %d: server %d has no entry of it", op, id)
		}
	}
}

// forget drops the entries of the rows a write of this process changed, found by
// server id or by the operation an entry shows, with their names; it drops nothing
// and leaves the map to be emptied when a change it does not know was counted
// since the map was read.
func TestCacheForgetsChangedRows(t *testing.T) {
	t.Parallel()
	c := testCache(t)
	ctx := context.Background()
	loads := 0
	read := func(ref hosting.ServerRef) hosting.Server {
		t.Helper()
		s, err := c.server(ctx, 1, ref, func() (hosting.Server, error) {
			loads++
			id := ref.ID
			if ref.Name != "" {
				_, _ = fmt.Sscanf(ref.Name, "server-%d", &id)
			}
			s := hosting.Server{ID: id, AccountID: 1, Name: fmt.Sprintf("server-%d", id)}
			if id == 1 {
				s.Operation = &hosting.Operation{ID: 7}
			}
			return s, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for id := range int64(4) {
		read(hosting.ServerRef{ID: id + 1})
	}
	read(hosting.ServerRef{Name: "server-3"})
	if loads != 4 {
		t.Fatalf("%d loads for 4 servers, one read twice (by id, then by name)", loads)
	}
	c.forget([]int64{2}, []int64{7, 99}) // server 2, and server 1 through its operation
	if c.servers.len() != 2 || len(c.servers.names) != 2 || len(c.servers.ops) != 0 {
		t.Errorf("after forget: %d servers, %d names, %d operations held; want 2, 2, 0", c.servers.len(), len(c.servers.names), len(c.servers.ops))
	}
	loads = 0
	read(hosting.ServerRef{Name: "server-3"})
	read(hosting.ServerRef{ID: 4})
	if loads != 0 {
		t.Errorf("%d loads of servers the write did not change, want 0", loads)
	}
	read(hosting.ServerRef{ID: 1})
	read(hosting.ServerRef{Name: "server-2"})
	if loads != 2 {
		t.Errorf("%d loads of the servers the write changed, want 2", loads)
	}
	// Another account's server by the same id or name is not this entry.
	if _, err := c.server(ctx, 2, hosting.ServerRef{ID: 3}, func() (hosting.Server, error) { return hosting.Server{}, errNotHere }); err != errNotHere {
		t.Errorf("another account's read by id: %v, want a load", err)
	}
	if _, err := c.server(ctx, 2, hosting.ServerRef{Name: "server-3"}, func() (hosting.Server, error) { return hosting.Server{}, errNotHere }); err != errNotHere {
		t.Errorf("another account's read by name: %v, want a load", err)
	}

	// A change counted that forget does not know (another process's): forget keeps
	// its hands off, and the next read empties the map.
	c.changed()
	c.forget([]int64{4}, nil)
	if c.servers.len() != 4 {
		t.Errorf("forget after an unknown change: %d servers held, want the 4 left for the next read to drop", c.servers.len())
	}
	loads = 0
	read(hosting.ServerRef{ID: 3})
	if loads != 1 || c.servers.len() != 1 {
		t.Errorf("after an unknown change: %d loads, %d servers held; want 1 and 1", loads, c.servers.len())
	}
}

var errNotHere = errors.New("not here")

// On PostgreSQL an entry older than pgEntryTTL is not answered, but a server's is
// while writes from outside Berth are listened to; on SQLite age does not matter.
func TestCacheFreshness(t *testing.T) {
	t.Parallel()
	old, recent := time.Now().Add(-2*pgEntryTTL), time.Now()
	sqlite := testCache(t)
	pg := &cache{pg: &pgGens{}}
	for _, c := range []struct {
		name    string
		c       *cache
		watched bool
		at      time.Time
		server  bool
		want    bool
	}{
		{"sqlite, old", sqlite, false, old, true, true},
		{"postgres, recent server", pg, false, recent, true, true},
		{"postgres, old server, not watched", pg, false, old, true, false},
		{"postgres, old server, watched", pg, true, old, true, true},
		{"postgres, old token, watched", pg, true, old, false, false},
		{"postgres, recent token, watched", pg, true, recent, false, true},
	} {
		c.c.pgWatching.Store(c.watched)
		if got := c.c.fresh(c.at, c.server); got != c.want {
			t.Errorf("%s: fresh %v, want %v", c.name, got, c.want)
		}
	}
}

// testCache is a cache of its own data dir, closed when t ends.
func testCache(t testing.TB) *cache {
	t.Helper()
	c, err := openCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.close() })
	return c
}
