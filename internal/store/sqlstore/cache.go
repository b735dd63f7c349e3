package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/berthhq/berth/internal/hosting"
)

// The two reads every API request makes — the token and, mostly, one server — are
// answered from memory while nothing has been written since they were read.
//
// "Nothing written" is a change counter that every committed write transaction
// increments after its commit, in every process that opens the database: berthd serve
// and each admin command. The counter lives in a file of the data dir mapped into
// memory (MAP_SHARED), so an admin command's write is seen by the serving process at
// its next request, without a round trip. A reader notes the counter before it
// queries and files what it read under that value, so a write that commits during the
// query invalidates the entry at once: the cache never answers older data than a
// fresh query would have after the write was reported done.
//
// Writes by anything else (a sqlite3 shell, a restored backup) are caught by a watcher
// that asks SQLite every second, on the connection this process writes on, whether
// another connection committed (PRAGMA data_version) and then counts a change too.
// This process's own writes that do not go through a Tx (River's job queue, the
// compute driver's tables, metric samples: through WriteDB) are not counted: they
// must not change what the cache holds (TestNoRawWritesToCachedTables).
//
// Reads inside a transaction never use the cache.

// genFile is the counter's file in the data dir.
const genFile = GenFile

// GenFile is the change counter's file in the data dir; DBFile the database's.
const (
	GenFile = "berth.gen"
	DBFile  = "berth.db"
)

// maxCached bounds each map; when full it is emptied (a burst of misses, no growth).
const maxCached = 100_000

type cache struct {
	mapping []byte
	gen     *atomic.Uint64

	mu sync.RWMutex
	// held is the counter value the maps' entries were read under. An entry can be
	// answered only while the counter still has its value, so when one read under a
	// newer value is filed, every older entry is dead and the maps start afresh: they
	// hold what was read since the last write, not every token and server ever read
	// (on a busy server, most of them stale, up to maxCached each).
	held    uint64
	tokens  map[[32]byte]cachedToken
	servers map[serverKey]cachedServer
}

type cachedToken struct {
	gen uint64
	t   hosting.Token
	a   hosting.Account
}

type serverKey struct {
	account int64
	id      int64
	name    string
}

type cachedServer struct {
	gen uint64
	s   hosting.Server
}

// openCache maps the data dir's change counter.
func openCache(dir string) (*cache, error) {
	f, err := os.OpenFile(filepath.Join(dir, genFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("change counter: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("change counter: %w", err)
	}
	if st.Size() < 8 {
		// Growing a file zero-fills; a concurrent opener doing the same is harmless.
		if err := f.Truncate(8); err != nil {
			return nil, fmt.Errorf("change counter: %w", err)
		}
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, 8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("change counter: map: %w", err)
	}
	return &cache{
		mapping: m,
		gen:     (*atomic.Uint64)(unsafe.Pointer(&m[0])),
		tokens:  map[[32]byte]cachedToken{},
		servers: map[serverKey]cachedServer{},
	}, nil
}

func (c *cache) close() error {
	if c == nil || c.mapping == nil {
		return nil
	}
	m := c.mapping
	c.mapping = nil
	return syscall.Munmap(m)
}

// watch counts a change whenever SQLite reports that a connection other
// than this process's writer committed, asking on that writer every interval until
// stop is closed. (Asked on a connection of its own, it would count this process's
// own writes too, the ones not counted on purpose: the job queue's, the metrics'.)
// It takes its first reading before it returns, so nothing committed after that is
// missed.
func (c *cache) watch(db *sql.DB, interval time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-stop
		cancel()
	}()
	first, err := dataVersion(ctx, db)
	if err != nil {
		first = dataVersionAt{v: -1}
	}
	go c.watchLoop(ctx, db, interval, first, done)
}

// dataVersionAt is PRAGMA data_version as one connection answered it.
type dataVersionAt struct {
	v    int64
	conn any // the driver's connection: another one's data_version says nothing
}

func dataVersion(ctx context.Context, db *sql.DB) (dataVersionAt, error) {
	var d dataVersionAt
	conn, err := db.Conn(ctx)
	if err != nil {
		return d, err
	}
	defer conn.Close()
	if err := conn.Raw(func(dc any) error { d.conn = dc; return nil }); err != nil {
		return d, err
	}
	err = conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&d.v)
	return d, err
}

func (c *cache) watchLoop(ctx context.Context, db *sql.DB, interval time.Duration, last dataVersionAt, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		d, err := dataVersion(ctx, db)
		if ctx.Err() != nil {
			return
		}
		if err != nil || d != last {
			c.changed() // another connection committed, or cannot tell: assume the worst
		}
		last = d
	}
}

// changed records that a write committed (or may have).
func (c *cache) changed() {
	if c != nil {
		c.gen.Add(1)
	}
}

// A nil cache (PostgreSQL: other processes write, and nothing here would learn of
// it) reads through every time.

func (c *cache) token(hash []byte, load func() (hosting.Token, hosting.Account, error)) (hosting.Token, hosting.Account, error) {
	if c == nil || len(hash) != 32 {
		return load()
	}
	key := [32]byte(hash)
	gen := c.gen.Load()
	c.mu.RLock()
	e, ok := c.tokens[key]
	c.mu.RUnlock()
	if ok && e.gen == gen {
		return cloneToken(e.t), e.a, nil
	}
	t, a, err := load()
	if err != nil {
		return t, a, err
	}
	c.mu.Lock()
	if c.admit(gen) {
		if len(c.tokens) >= maxCached {
			c.tokens = map[[32]byte]cachedToken{}
		}
		c.tokens[key] = cachedToken{gen: gen, t: cloneToken(t), a: a}
	}
	c.mu.Unlock()
	return t, a, nil
}

func (c *cache) server(accountID int64, ref hosting.ServerRef, load func() (hosting.Server, error)) (hosting.Server, error) {
	if c == nil {
		return load()
	}
	key := serverKey{account: accountID, id: ref.ID, name: ref.Name}
	gen := c.gen.Load()
	c.mu.RLock()
	e, ok := c.servers[key]
	c.mu.RUnlock()
	if ok && e.gen == gen {
		return cloneServer(e.s), nil
	}
	s, err := load()
	if err != nil {
		return s, err
	}
	c.mu.Lock()
	if c.admit(gen) {
		if len(c.servers) >= maxCached {
			c.servers = map[serverKey]cachedServer{}
		}
		c.servers[key] = cachedServer{gen: gen, s: cloneServer(s)}
	}
	c.mu.Unlock()
	return s, nil
}

// admit reports whether an entry read under counter value gen is worth filing (it is
// not when entries read under a newer value are already filed: it is dead), and drops
// the entries it makes dead. New maps rather than clear: a map keeps the room it once
// grew to. c.mu must be held for writing.
func (c *cache) admit(gen uint64) bool {
	switch {
	case gen < c.held:
		return false
	case gen > c.held:
		c.held = gen
		if len(c.tokens) > 0 {
			c.tokens = map[[32]byte]cachedToken{}
		}
		if len(c.servers) > 0 {
			c.servers = map[serverKey]cachedServer{}
		}
	}
	return true
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// cloneToken copies everything a caller could change in place.
func cloneToken(t hosting.Token) hosting.Token {
	t.Hash = slices.Clone(t.Hash)
	t.Scopes = slices.Clone(t.Scopes)
	t.ExpiresAt, t.LastUsedAt, t.RevokedAt = clonePtr(t.ExpiresAt), clonePtr(t.LastUsedAt), clonePtr(t.RevokedAt)
	return t
}

// cloneServer copies everything a caller could change in place.
func cloneServer(s hosting.Server) hosting.Server {
	s.ProjectID, s.AppID, s.RecipeID = clonePtr(s.ProjectID), clonePtr(s.AppID), clonePtr(s.RecipeID)
	s.IPv4, s.IPv6 = clonePtr(s.IPv4), clonePtr(s.IPv6)
	s.Operation = clonePtr(s.Operation)
	s.SSHKeyIDs = slices.Clone(s.SSHKeyIDs)
	s.Keys = slices.Clone(s.Keys)
	s.DeletedAt = clonePtr(s.DeletedAt)
	return s
}
