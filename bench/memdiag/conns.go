package main

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"time"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// connMemory is what SQLite says one connection of a pool holds (sqlite3_db_status):
// its page cache, its prepared statements and its schema, in KiB, and its page cache
// hits and misses since the last reading.
type connMemory struct {
	CacheKB, StmtKB, SchemaKB int
	Hits, Misses              int
	// Per attached database (main, temp): pages in its page cache / the cache's bound.
	Pages []string
}

// poolMemory reads connMemory of every connection of db, holding them all at once
// (so each is a different one; requests on the pool wait meanwhile). n is the pool's
// size; a connection the pool had not opened yet is opened and shows near zero.
func poolMemory(ctx context.Context, db *sql.DB, n int) []connMemory {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var out []connMemory
	var held []*sql.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range n {
		c, err := db.Conn(ctx)
		if err != nil {
			break
		}
		held = append(held, c)
		_ = c.Raw(func(dc any) error {
			out = append(out, dbStatus(dc))
			return nil
		})
	}
	return out
}

// dbStatus reads the sqlite3* handle out of modernc.org/sqlite's conn (its first
// field, db uintptr) and asks sqlite3_db_status.
func dbStatus(dc any) connMemory {
	v := reflect.ValueOf(dc)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct || v.Elem().Field(0).Kind() != reflect.Uintptr {
		return connMemory{CacheKB: -1}
	}
	f := v.Elem().Field(0)
	db := *(*uintptr)(unsafe.Pointer(f.UnsafeAddr()))
	tls := libc.NewTLS()
	defer tls.Close()
	buf := tls.Alloc(8)
	defer tls.Free(8)
	get := func(op int32, reset int32) int {
		if sqlite3.Xsqlite3_db_status(tls, db, op, buf, buf+4, reset) != sqlite3.SQLITE_OK {
			return -1
		}
		return int(*at[int32](buf))
	}
	return connMemory{
		Pages:    cachePages(db),
		CacheKB:  get(sqlite3.SQLITE_DBSTATUS_CACHE_USED, 0) >> 10,
		StmtKB:   get(sqlite3.SQLITE_DBSTATUS_STMT_USED, 0) >> 10,
		SchemaKB: get(sqlite3.SQLITE_DBSTATUS_SCHEMA_USED, 0) >> 10,
		Hits:     get(sqlite3.SQLITE_DBSTATUS_CACHE_HIT, 1),
		Misses:   get(sqlite3.SQLITE_DBSTATUS_CACHE_MISS, 1),
	}
}

// cachePages walks sqlite3 → Db[] → Btree → BtShared → Pager → PCache → PCache1 (the
// layouts modernc.org/sqlite/lib exports for this platform) to each attached
// database's page cache: "name:pages/bound+pinned".
func cachePages(h uintptr) []string {
	db := at[sqlite3.Tsqlite3](h)
	var out []string
	for i := range int(db.FnDb) {
		d := at[sqlite3.TDb](db.FaDb + uintptr(i)*unsafe.Sizeof(sqlite3.TDb{}))
		if d.FpBt == 0 {
			continue
		}
		bt := at[sqlite3.TBtree](d.FpBt)
		bs := at[sqlite3.TBtShared](bt.FpBt)
		pager := at[sqlite3.TPager](bs.FpPager)
		pc := at[sqlite3.TPCache](pager.FpPCache)
		if pc.FpCache == 0 {
			continue
		}
		c1 := at[sqlite3.TPCache1](pc.FpCache)
		out = append(out, fmt.Sprintf("%s:%d/%d+%d", libc.GoString(d.FzDbSName), c1.FnPage, c1.FnMax, pc.FnRefSum))
	}
	return out
}
