package sqlstore

// CacheCounters is the change counters of db's cache.
func (db *DB) CacheCounters() []uint64 {
	return []uint64{db.cache.gen.Load()}
}
