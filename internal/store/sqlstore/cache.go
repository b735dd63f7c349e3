package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/berthhq/berth/internal/hosting"
)

// The two reads every API request makes — the token and, mostly, one server — are
// answered from memory while nothing they read has been written since.
//
// "Nothing written" is a set of change counters: one for what Server reads (the
// servers table and the operations it joins), one for what TokenByHash reads (tokens
// and accounts), and one for "anything, maybe". A write transaction notes which
// counters its statements concern (markingQuerier: a statement that names servers or
// operations, tokens or accounts, and is not a SELECT) and increments those after its
// commit, in every process that opens the database: berthd serve and each admin
// command. A write that concerns neither (metric samples, the audit log, idempotency
// records, the job queue, a token's last use) leaves the cache as it is. The counters
// live in a file of the data dir mapped into memory (MAP_SHARED), so an admin
// command's write is seen by the serving process at its next request, without a round
// trip. A reader notes the counters before it queries and files what it read under
// their values, so a write that commits during the query invalidates the entry at
// once: the cache never answers older data than a fresh query would have after the
// write was reported done.
//
// On SQLite, this process's own write transactions also learn which rows of those
// tables they changed (rowhook.go): the counters move as above, for the other
// processes, while this one drops only the entries of those rows (forget,
// forgetTokens) and keeps the rest.
//
// A token's last use (TouchToken) is the exception: it is written once a minute per
// token, by the process that authenticates (on SQLite, the one serving), and counting
// it would empty the token cache as often. Instead, once it commits, that process
// drops the one token's entry and files none that was read while it ran. (Another
// process's, were there one, would be caught by the watcher below.)
//
// Writes that do not go through a Tx (River's job queue, the compute driver's tables,
// metric samples: through WriteDB) and raw SQL through Tx.SQL (jobs) are not looked
// at: they must not change what the cache holds (TestNoRawWritesToCachedTables).
// Commits on any other connection — another process's (an admin command's, counted
// already; one of a build from before the counters were split, which counts every
// write as "anything"), a sqlite3 shell's, a restored backup — are caught by a
// watcher that asks SQLite every second, on the connection this process writes on,
// whether another connection committed (PRAGMA data_version), and then counts
// "anything".
//
// Reads inside a transaction never use the cache.

// genFile is the counters' file in the data dir.
const genFile = GenFile

// GenFile is the change counters' file in the data dir; DBFile the database's.
const (
	GenFile = "berth.gen"
	DBFile  = "berth.db"
)

// The counters, 8 bytes each, in the order of the file. anyGen comes first: builds
// before the counters were split incremented the file's first 8 bytes on every write,
// and such a one (an admin command of the older build) is still seen.
const (
	anyGen = iota
	serversGen
	tokensGen
	dnsGen // what the nameserver serves (DNSVersion)
	numGens
)

// kinds is a set of what the cache holds that a write may have changed.
type kinds uint32

const (
	kindServers kinds = 1 << iota // servers and their operations: what Server reads
	kindTokens                    // tokens and accounts: what TokenByHash reads
	kindDNS                       // zones, their RRsets, PTRs and servers: what DNS serves
)

// maxCached bounds each map unless told otherwise (DB.SetReadCacheServers for the
// servers'): 100,000 servers are about 40 MB (servercache.go), as many tokens about
// 30 MB. A full map of tokens drops an eighth of its entries, the first Go's map
// iteration meets (a random start), to make room; a full one of servers its oldest
// few hundred. Either once dropped them all, a burst of misses each time it filled,
// which kept it about half full on average when more servers were read than it holds.
const maxCached = 100_000

// DefaultReadCacheServers is the servers the read cache holds unless told otherwise.
const DefaultReadCacheServers = maxCached

// evictShare: a full map drops 1/evictShare of its entries.
const evictShare = 8

type cache struct {
	// SQLite: the counters, in the data dir's mapped file.
	mapping []byte
	gens    [numGens]*atomic.Uint64
	// PostgreSQL: the counters, in the database (cache_postgres.go).
	pg *pgGens
	// pgDNS counts on PostgreSQL what DNS serves changing: this process's writes, and
	// other processes' as they notify them (DNSChanged).
	pgDNS atomic.Uint64
	// pgForeign counts on PostgreSQL the writes from outside Berth notified (or maybe
	// missed), added to the counter "anything" the database holds; pgWatching says
	// whether they are being listened to (ForeignWrite).
	pgForeign  atomic.Uint64
	pgWatching atomic.Bool

	mu sync.RWMutex
	// heldServers and heldTokens are the counter values the maps' entries were read
	// under. An entry can be answered only while the counters still have its values,
	// so when one read under newer values is filed, every older entry is dead and the
	// map starts afresh: it holds what was read since the last write that concerns
	// it, not everything ever read (on a busy server, most of it stale, up to
	// maxCached each).
	//
	// On SQLite this process's own writes of servers and operations drop only the
	// entries of the rows they changed (rowHook): the map's counter values move on
	// with the commit, its other entries stay (forget).
	heldServers gen
	heldTokens  gen
	// servers holds the servers' entries, found by id, by account and name, or by
	// the operation they show (an operation's row changing changes it).
	servers serverEntries
	tokens  map[[32]byte]*cachedToken
	// tokenKeys finds a token's entry by its id; accountTokens the tokens of an
	// account that have one.
	tokenKeys     map[int64][32]byte
	accountTokens map[int64]map[int64]struct{}
	// touches counts the touches committed; a token read while one committed is not
	// filed (it may hold the last use from before).
	touches uint64
}

// gen is what an entry was read under: the counter "anything" and its kind's own.
type gen struct{ any, kind uint64 }

// before reports whether g is older than h in a counter, that is, dead once h was
// read: counters only grow.
func (g gen) before(h gen) bool { return g.any < h.any || g.kind < h.kind }

type cachedToken struct {
	at time.Time // when it was read (PostgreSQL: pgEntryTTL)
	t  hosting.Token
	a  hosting.Account
}

// openCache maps the data dir's change counters.
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
	const size = 8 * numGens
	if st.Size() < size {
		// Growing a file zero-fills (a file of the older build keeps its first
		// counter); a concurrent opener doing the same is harmless.
		if err := f.Truncate(size); err != nil {
			return nil, fmt.Errorf("change counter: %w", err)
		}
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("change counter: map: %w", err)
	}
	c := newCache()
	c.mapping = m
	for i := range c.gens {
		c.gens[i] = (*atomic.Uint64)(unsafe.Pointer(&m[8*i]))
	}
	return c, nil
}

func newCache() *cache {
	c := &cache{servers: newServerEntries(maxCached)}
	c.resetTokens()
	return c
}

// resetTokens empties the tokens' maps, as resetServers the servers'.
func (c *cache) resetTokens() {
	c.tokens, c.tokenKeys, c.accountTokens = map[[32]byte]*cachedToken{}, map[int64][32]byte{}, map[int64]map[int64]struct{}{}
}

// resetServers empties the servers' entries. c.mu must be held for writing.
func (c *cache) resetServers() { c.servers.reset() }

// setMaxServers bounds the servers' entries at n (at least 1), dropping what is over.
func (c *cache) setMaxServers(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.servers.setMax(n)
}

func (c *cache) close() error {
	if c == nil || c.mapping == nil {
		return nil
	}
	m := c.mapping
	c.mapping = nil
	return syscall.Munmap(m)
}

// watch counts a change of anything whenever SQLite reports that a connection other
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

// dnsVersion changes whenever what DNS serves may have: on SQLite a write of it by
// any process, or a commit the watcher cannot tell apart; on PostgreSQL a write of
// this process, or a notification of another's (dnsChanged).
func (c *cache) dnsVersion() uint64 {
	if c.pg != nil {
		return c.pgDNS.Load()
	}
	return c.gens[anyGen].Load() + c.gens[dnsGen].Load()
}

// changed records that anything may have changed.
func (c *cache) changed() {
	if c != nil && c.pg == nil {
		c.gens[anyGen].Add(1)
	}
}

// committed records what a write transaction changed, once it has committed (or
// failed to: it may have landed anyway).
func (c *cache) committed(w *writes) {
	if c == nil {
		return
	}
	k := w.kinds
	if c.pg == nil { // PostgreSQL's were added to in the transaction (pgGens.add)
		if k&kindServers != 0 {
			if w.rows.precise() {
				c.forget(w.rows.servers, w.rows.ops)
			} else {
				c.gens[serversGen].Add(1)
			}
		}
		if k&kindTokens != 0 {
			if w.rows.precise() {
				c.forgetTokens(w.rows.tokens, w.rows.accounts)
			} else {
				c.gens[tokensGen].Add(1)
			}
		}
		if k&kindDNS != 0 {
			c.gens[dnsGen].Add(1)
		}
	} else if k&kindDNS != 0 {
		c.pgDNS.Add(1)
	}
	if len(w.touched) > 0 {
		c.mu.Lock()
		for _, id := range w.touched {
			c.dropToken(id)
		}
		c.touches++
		c.mu.Unlock()
	}
}

// forget counts a write of servers whose changed rows are known, servers and ops
// (the ids of the servers and operations rows it inserted, changed or deleted): the
// other processes, which do not know them, empty their maps at the count; this one
// drops only those rows' entries and keeps the rest, its counter value moving on
// with the count. It does so only when the map was read under the counters' values
// just before (nothing else was counted since): else the map is out of date anyway
// and the next read empties it. The count and the move are one step under c.mu, so
// no read can see the new value before the entries it dropped are gone; a read that
// began before the write and files after it is refused (admit: it is older), one
// that filed before forget is dropped with the rows it may have read stale.
func (c *cache) forget(servers, ops []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.count(serversGen, &c.heldServers) {
		return
	}
	for _, id := range servers {
		c.servers.drop(id)
	}
	for _, op := range ops {
		if id, ok := c.servers.ops[op]; ok {
			c.servers.drop(id)
		}
	}
}

// count adds one to a kind's counter and, when its map (whose entries were read
// under held) was read under the values just before, moves held on with it,
// reporting so: the map's entries stay but for those the caller drops. c.mu must be
// held for writing.
func (c *cache) count(kind int, held *gen) bool {
	v := c.gens[kind].Add(1)
	if *held != (gen{any: c.gens[anyGen].Load(), kind: v - 1}) {
		return false
	}
	held.kind = v
	return true
}

// forgetTokens is forget for tokens: the entries of the tokens changed, and of every
// token of the accounts changed.
func (c *cache) forgetTokens(tokens, accounts []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.count(tokensGen, &c.heldTokens) {
		return
	}
	for _, id := range tokens {
		c.dropToken(id)
	}
	for _, a := range accounts {
		for id := range c.accountTokens[a] {
			c.dropToken(id)
		}
	}
}

// dropToken removes a token's entry, found by its id, with its keys. c.mu must be
// held for writing.
func (c *cache) dropToken(id int64) {
	key, ok := c.tokenKeys[id]
	if !ok {
		return
	}
	c.dropTokenEntry(key, c.tokens[key])
}

func (c *cache) dropTokenEntry(key [32]byte, e *cachedToken) {
	delete(c.tokens, key)
	if e == nil {
		return
	}
	if c.tokenKeys[e.t.ID] == key {
		delete(c.tokenKeys, e.t.ID)
	}
	if ts := c.accountTokens[e.a.ID]; ts != nil {
		delete(ts, e.t.ID)
		if len(ts) == 0 {
			delete(c.accountTokens, e.a.ID)
		}
	}
}

// now is what an entry of a kind read now is read under; false when that cannot be
// told (PostgreSQL failed to answer), and the read goes to the database.
func (c *cache) now(ctx context.Context, kind int) (gen, bool) {
	if c.pg != nil {
		foreign := c.pgForeign.Load() // before the fence: a notification after it is newer
		v, err := c.pg.read(ctx)
		if err != nil {
			return gen{}, false
		}
		return gen{any: v[anyGen] + foreign, kind: v[kind]}, true
	}
	return gen{any: c.gens[anyGen].Load(), kind: c.gens[kind].Load()}, true
}

// fresh reports whether an entry read at at may still be answered: always on SQLite,
// whose every change is counted; on PostgreSQL within pgEntryTTL, or always for a
// server while writes from outside Berth are listened to (ForeignWrite).
func (c *cache) fresh(at time.Time, server bool) bool {
	return c.pg == nil || server && c.pgWatching.Load() || time.Since(at) < pgEntryTTL
}

// readAt is when an entry read now is read, for fresh: 0 on SQLite, which does not
// look.
func (c *cache) readAt() int64 {
	if c.pg == nil {
		return 0
	}
	return time.Now().UnixNano()
}

// A nil cache reads through every time.

func (c *cache) token(ctx context.Context, hash []byte, load func() (hosting.Token, hosting.Account, error)) (hosting.Token, hosting.Account, error) {
	if c == nil || len(hash) != 32 {
		return load()
	}
	key := [32]byte(hash)
	g, known := c.now(ctx, tokensGen)
	if !known {
		return load()
	}
	c.mu.RLock()
	e, ok := c.tokens[key]
	held := c.heldTokens
	touches := c.touches
	c.mu.RUnlock()
	if ok && held == g && c.fresh(e.at, false) {
		return cloneToken(e.t), e.a, nil
	}
	t, a, err := load()
	if err != nil {
		return t, a, err
	}
	c.mu.Lock()
	if touches == c.touches && admit(&c.heldTokens, g, c.resetTokens) {
		if old, ok := c.tokens[key]; ok {
			c.dropTokenEntry(key, old)
		} else if len(c.tokens) >= maxCached {
			n := maxCached / evictShare
			for k, e := range c.tokens {
				if n <= 0 {
					break
				}
				c.dropTokenEntry(k, e)
				n--
			}
		}
		c.tokens[key] = &cachedToken{at: time.Now(), t: cloneToken(t), a: a}
		c.tokenKeys[t.ID] = key
		ts := c.accountTokens[a.ID]
		if ts == nil {
			ts = map[int64]struct{}{}
			c.accountTokens[a.ID] = ts
		}
		ts[t.ID] = struct{}{}
	}
	c.mu.Unlock()
	return t, a, nil
}

func (c *cache) server(ctx context.Context, accountID int64, ref hosting.ServerRef, load func() (hosting.Server, error)) (hosting.Server, error) {
	if c == nil {
		return load()
	}
	g, known := c.now(ctx, serversGen)
	if !known {
		return load()
	}
	c.mu.RLock()
	b, at, ok := c.servers.get(accountID, ref)
	var s hosting.Server
	if ok && c.heldServers == g && c.fresh(time.Unix(0, at), true) {
		s, ok = decodeServer(b) // a copy: b is the cache's
		ok = ok && (ref.Name == "" || s.Name == ref.Name)
	} else {
		ok = false
	}
	c.mu.RUnlock()
	if ok {
		return s, nil
	}
	s, err := load()
	if err != nil {
		return s, err
	}
	at = c.readAt()
	enc, ok := appendServer(nil, &s)
	c.mu.Lock()
	if ok && admit(&c.heldServers, g, c.resetServers) {
		c.servers.put(&s, enc, at)
	}
	c.mu.Unlock()
	return s, nil
}

// admit reports whether an entry read under g is worth filing in a map whose entries
// were read under *held (it is not when it is older in a counter: it is dead), and
// when g is newer, empties the map (reset: new maps rather than clear, as a map keeps
// the room it once grew to). c.mu must be held for writing.
func admit(held *gen, g gen, reset func()) bool {
	switch {
	case g == *held:
		return true
	case g.before(*held):
		return false
	}
	*held = g
	reset()
	return true
}

// writes is what a write transaction changed that the cache may hold. Like the
// transaction, it is used by one goroutine at a time.
type writes struct {
	kinds kinds
	// touched lists the tokens whose last use it recorded.
	touched []int64
	// rows are the servers and operations rows it changed, when known (rowHook).
	rows changedRows
}

// markingQuerier runs a write transaction's statements, noting in w what each may
// change.
type markingQuerier struct {
	q querier
	w *writes
	// hook notes the rows of servers and operations the transaction changes (SQLite;
	// nil on PostgreSQL).
	hook *rowHook
}

func (m markingQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if m.w.rows.on(m.hook, m.mark(query), false) {
		defer m.w.rows.pause()
	}
	return m.q.ExecContext(ctx, query, args...)
}

func (m markingQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	m.w.rows.on(m.hook, m.mark(query), true)
	return m.q.QueryContext(ctx, query, args...)
}

func (m markingQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	m.w.rows.on(m.hook, m.mark(query), true)
	return m.q.QueryRowContext(ctx, query, args...)
}

// mark notes what a statement may change, and returns it.
func (m markingQuerier) mark(query string) kinds {
	k := statementKinds(query)
	m.w.kinds |= k
	return k
}

// touched notes on q's transaction, if it is one the cache follows, that it
// recorded a token's last use.
func touched(q querier, tokenID int64) {
	if p, ok := q.(pgQuerier); ok {
		q = p.q
	}
	if m, ok := q.(markingQuerier); ok {
		m.w.touched = append(m.w.touched, tokenID)
	}
}

// statementKinds says what a statement run in a write transaction may change of
// what the cache holds: any but a SELECT that names one of the cached reads' tables
// (whatever it does with it: a join into another table's write counts too), except
// that an UPDATE of servers is a DNS change only when it sets what DNS serves
// (dnsColumnsSet). Berth's
// schema has no cascades, and its only triggers (the usage counts of migration 00031,
// PostgreSQL 00026) write columns of accounts that no cached read holds, so a row
// the cache holds changes only by a statement naming its table. touchTokenQuery is
// counted apart (touched).
// touchTokenQueryPostgres is touchTokenQuery as it reaches PostgreSQL.
var touchTokenQueryPostgres = rebindPostgres(touchTokenQuery)

func statementKinds(query string) kinds {
	if query == touchTokenQuery || query == touchTokenQueryPostgres {
		return 0
	}
	var k kinds
	first, servers := true, false
	for i := 0; i < len(query); {
		if !isIdent(query[i]) {
			i++
			continue
		}
		j := i
		for j < len(query) && isIdent(query[j]) {
			j++
		}
		w := query[i:j]
		if first {
			if strings.EqualFold(w, "SELECT") {
				return 0
			}
			first = false
		}
		switch {
		case strings.EqualFold(w, "servers"):
			// dnsColumnsSet reads the whole statement: asked once, at the first.
			if !servers && dnsColumnsSet(query) {
				k |= kindDNS
			}
			servers = true
			k |= kindServers
		case strings.EqualFold(w, "operations"):
			k |= kindServers
		case strings.EqualFold(w, "zones"), strings.EqualFold(w, "zone_rrsets"), strings.EqualFold(w, "server_ptrs"):
			k |= kindDNS
		case strings.EqualFold(w, "tokens"), strings.EqualFold(w, "accounts"):
			k |= kindTokens
		}
		i = j
	}
	return k
}

// dnsServerColumns are the columns of servers that what DNS serves reads
// (dnsnames.go): a server's names and addresses, and whether it is deleted.
var dnsServerColumns = []string{"id", "account_id", "name", "ipv4", "ipv6", "ipv4_net", "ipv6_net", "deleted_at"}

// dnsColumnsSet reports whether query may change what DNS serves of the servers
// table, which it names: false only for an UPDATE of servers (UPDATE [OR x]
// [schema.]servers SET) that assigns none of dnsServerColumns and names servers
// nowhere else, true for anything else. A server's status, power, suspension or
// plan changing is not a DNS change, and does not empty the nameserver's cache.
func dnsColumnsSet(query string) bool {
	type token struct {
		word string // an identifier, quotes taken off; "" for a sign
		sign byte
	}
	var toks []token
	for i := 0; i < len(query); {
		switch b := query[i]; {
		case b == '"' || isIdent(b):
			j := i
			for j < len(query) && (query[j] == '"' || isIdent(query[j])) {
				j++
			}
			toks = append(toks, token{word: strings.ToLower(strings.ReplaceAll(query[i:j], `"`, ""))})
			i = j
		case b == ' ' || b == '\t' || b == '\n' || b == '\r':
			i++
		case b == '\'': // a string, its quotes doubled inside
			j := i + 1
			for j < len(query) && (query[j] != '\'' || j+1 < len(query) && query[j+1] == '\'') {
				if query[j] == '\'' {
					j++
				}
				j++
			}
			toks = append(toks, token{sign: b})
			i = j + 1
		case strings.HasPrefix(query[i:], "--"), strings.HasPrefix(query[i:], "/*"):
			end := "\n"
			if b == '/' {
				end = "*/"
			}
			j := strings.Index(query[i:], end)
			switch {
			case j >= 0:
				i += j + len(end)
			case b == '-': // to the end
				i = len(query)
			default: // an unclosed /*: SQLite's error, but be safe
				return true
			}
		default:
			toks = append(toks, token{sign: b})
			i++
		}
	}
	at := func(n int, word string) bool { return n < len(toks) && toks[n].word == word }
	n := 0
	if !at(n, "update") {
		return true
	}
	n++
	if at(n, "or") {
		n += 2
	}
	if n+1 < len(toks) && toks[n+1].sign == '.' {
		n += 2
	}
	if !at(n, "servers") || !at(n+1, "set") {
		return true
	}
	depth, column := 0, true
	for _, t := range toks[n+2:] {
		switch {
		case t.word == "servers":
			return true
		case t.sign == '(':
			if column {
				return true // SET (a, b) = ...
			}
			depth++
		case t.sign == ')':
			depth--
		case depth > 0:
		case t.sign == ',':
			column = true
		case column && t.word != "":
			if slices.Contains(dnsServerColumns, t.word) {
				return true
			}
			column = false
		}
	}
	return false
}

func isIdent(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

// cloneToken copies everything a caller could change in place: what the pointers
// and the hash hold in one allocation (a cache hit on every request makes one).
func cloneToken(t hosting.Token) hosting.Token {
	v := new(struct {
		hash                       [32]byte
		expires, lastUsed, revoked time.Time
	})
	if len(t.Hash) <= len(v.hash) && t.Hash != nil {
		t.Hash = v.hash[:copy(v.hash[:], t.Hash):len(t.Hash)]
	} else {
		t.Hash = slices.Clone(t.Hash)
	}
	t.Scopes = slices.Clone(t.Scopes)
	t.ExpiresAt = cloneInto(t.ExpiresAt, &v.expires)
	t.LastUsedAt = cloneInto(t.LastUsedAt, &v.lastUsed)
	t.RevokedAt = cloneInto(t.RevokedAt, &v.revoked)
	return t
}

// cloneInto copies *p into *into and returns into; nil stays nil.
func cloneInto[T any](p *T, into *T) *T {
	if p == nil {
		return nil
	}
	*into = *p
	return into
}

// SetReadCacheServers bounds the servers the read cache holds at n (at least 1;
// about 800 bytes of memory each: docs/operating.md, Memory). maxCached by default.
func (db *DB) SetReadCacheServers(n int) {
	if db.cache != nil {
		db.cache.setMaxServers(n)
	}
}
