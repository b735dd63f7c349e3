package sqlstore

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"sync"
	"time"
)

// On PostgreSQL the cache's change counters are in the database (table berth_gens),
// and a write transaction that changed what the cache holds adds to its kinds'
// counters in the same transaction, just before it commits (DB.commit): they change
// exactly when what they count does, for every process of a deployment, as on
// SQLite the mapped file's counters are advanced by every process that opens it.
// Memory cannot be shared between processes on several machines, so a process reads
// the counters from the database before it answers from memory: a fence. A fence is
// a read that began after the request arrived: a write reported done before the
// request was sent, by any process, has committed by then, counters and all, and its
// entry is not answered; and what a read queries after its fence is at least as new
// as the counters the fence saw, so it is filed under them rightly. One query serves
// every request waiting when it begins (they are batched), so under load a fence
// costs a small part of a query per request, and an idle process one query.
//
// What changes the tables other than through a Tx of this code (SQL typed by an
// operator in psql, a script) adds to no counter. The tables' triggers notify it on
// ForeignWriteChannel when it commits (migration 00025; Berth's own connections say
// berth.app = on and are left out), and each process that listens (berthd serve)
// then empties its cache (DB.ForeignWrite): such a change shows within the
// notification's delivery. While a process does not listen (an admin command; a
// serve whose listening connection broke) an entry is also never answered once it
// is older than pgEntryTTL, so such a change shows within that. Tokens keep that
// bound always: another process's record of a token's last use is not counted.

// pgEntryTTL bounds how long a cached read is answered on PostgreSQL while foreign
// writes are not listened to, and a token's always.
const pgEntryTTL = 30 * time.Second

// ForeignWriteChannel is the PostgreSQL channel a write of servers, operations,
// tokens or accounts from outside Berth notifies when it commits.
const ForeignWriteChannel = "berth_foreign_write"

// foreignWriteParam is the setting of Berth's own connections that the triggers
// look at.
const foreignWriteParam = "berth.app"

// ForeignWrite tells a DB on PostgreSQL that a write from outside Berth committed (a
// notification on ForeignWriteChannel), or may have (listening starts, or failed):
// its cache empties. watching says whether such writes are listened to from now
// on: while they are, a server's entry has no pgEntryTTL.
func (db *DB) ForeignWrite(watching bool) {
	if db.cache == nil || db.cache.pg == nil {
		return
	}
	c := db.cache
	// Not watching first, then the count: an entry read after the count is filed
	// newer than everything before, and one answered meanwhile is bounded by the TTL.
	if !watching {
		c.pgWatching.Store(false)
	}
	c.pgForeign.Add(1)
	if watching {
		c.pgWatching.Store(true)
	}
}

// pgGenQuery reads the counters, in the order of the const block (anyGen ...).
const pgGenQuery = `SELECT COALESCE(sum(anything), 0), COALESCE(sum(servers), 0), COALESCE(sum(tokens), 0) FROM berth_gens`

// pgGenShards is how many rows berth_gens has (its migration makes them).
const pgGenShards = 32

// pgGenAdd adds to the counters of the kinds a transaction changed ($1 servers, $2
// tokens), in one row ($3) of berth_gens.
const pgGenAdd = `UPDATE berth_gens SET servers = servers + $1, tokens = tokens + $2 WHERE shard = $3`

type pgGens struct {
	db *DB

	mu sync.Mutex
	// next is the fence that begins when the one running ends; the requests that
	// arrive meanwhile wait for it.
	next    *fence
	running bool
}

type fence struct {
	done chan struct{}
	vals [numGens]uint64
	err  error
}

// newPostgresCache is the cache of a PostgreSQL database.
func newPostgresCache(db *DB) *cache {
	c := newCache()
	c.pg = &pgGens{db: db}
	return c
}

// read returns the counters as a query begun after it was called found them.
func (p *pgGens) read(ctx context.Context) ([numGens]uint64, error) {
	p.mu.Lock()
	f := p.next
	if f == nil {
		f = &fence{done: make(chan struct{})}
		p.next = f
	}
	if !p.running {
		p.running = true
		go p.run()
	}
	p.mu.Unlock()
	select {
	case <-f.done:
		return f.vals, f.err
	case <-ctx.Done():
		return [numGens]uint64{}, ctx.Err()
	}
}

// run runs the fences one after another while requests wait for one.
func (p *pgGens) run() {
	for {
		p.mu.Lock()
		f := p.next
		p.next = nil
		if f == nil {
			p.running = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		f.vals, f.err = p.query(ctx)
		cancel()
		close(f.done)
	}
}

func (p *pgGens) query(ctx context.Context) ([numGens]uint64, error) {
	var v [numGens]int64
	st, err := p.db.stmt(ctx, pgGenQuery)
	if err != nil {
		return [numGens]uint64{}, err
	}
	if err := st.QueryRowContext(ctx).Scan(&v[anyGen], &v[serversGen], &v[tokensGen]); err != nil {
		return [numGens]uint64{}, err
	}
	var out [numGens]uint64
	for i := range v {
		out[i] = uint64(v[i])
	}
	return out, nil
}

// add adds to the counters of what tx changed, in tx.
// A transaction that changed what DNS serves notifies every process on DNSChannel.
func (p *pgGens) add(ctx context.Context, tx *sql.Tx, k kinds) error {
	if k&kindDNS != 0 {
		// Delivered once the transaction commits, never if it does not.
		if _, err := tx.ExecContext(ctx, `SELECT pg_notify('`+DNSChannel+`', '0')`); err != nil {
			return err
		}
	}
	if k&(kindServers|kindTokens) == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, pgGenAdd, b2i(k&kindServers != 0), b2i(k&kindTokens != 0), rand.IntN(pgGenShards))
	return err
}

// DNSChannel is the PostgreSQL channel every transaction that changed what DNS
// serves (zones, their RRsets, PTRs, servers) notifies when it commits.
const DNSChannel = "berth_dns_changed"

// DNSVersion changes whenever what Berth's nameserver serves may have changed
// (docs/operating.md, DNS): on SQLite with every such write of any process that opens
// the data dir, and every commit of another connection; on PostgreSQL with every
// such write of this process, and each call of DNSChanged. A cache of what DNS
// serves keeps an entry while it is the value it was read under.
func (db *DB) DNSVersion() uint64 { return db.cache.dnsVersion() }

// DNSChanged tells a DB on PostgreSQL that another process changed what DNS serves
// (its notification on DNSChannel), or may have (notifications were lost while
// listening failed).
func (db *DB) DNSChanged() {
	if db.cache != nil && db.cache.pg != nil {
		db.cache.pgDNS.Add(1)
	}
}
