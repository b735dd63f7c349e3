package sqlstore

import "context"

// CachedEntries is how many servers and tokens db's cache holds.
func (db *DB) CachedEntries() (servers, tokens int) {
	db.cache.mu.RLock()
	defer db.cache.mu.RUnlock()
	return db.cache.servers.len(), len(db.cache.tokens)
}

// CacheCounters is the change counters of db's cache: anything, servers, tokens.
func (db *DB) CacheCounters() []uint64 {
	if db.cache.pg != nil {
		v, err := db.cache.pg.read(context.Background())
		if err != nil {
			panic(err)
		}
		return v[:]
	}
	out := make([]uint64, len(db.cache.gens))
	for i, g := range db.cache.gens {
		out[i] = g.Load()
	}
	return out
}
