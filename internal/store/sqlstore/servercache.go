package sqlstore

import (
	"encoding/binary"
	"hash/maphash"

	"github.com/berthhq/berth/internal/hosting"
)

// serverEntries is the read cache's servers: each encoded (appendServer) into chunks
// of bytes filled one after the other, a ring, and found through maps of plain
// numbers. Nothing in it holds a pointer but the list of chunks, so however many
// servers it holds, the collector has next to nothing to mark: at a million servers,
// held as Go values, marking them took a fifth of the CPU of the requests that read
// them (bench/README.md). A server takes about 300 bytes of heap here, 700 as Go
// values (BenchmarkCacheHeapPerServer).
//
// An entry replaced or dropped leaves its bytes where they are until its chunk comes
// round again. When the entries reach their bound (max), or the chunks theirs
// (len(chunks): room for max entries of entryBudget bytes), the oldest chunk is
// emptied, dropping the entries still in it: the servers read longest ago go first,
// a chunk's worth (a few hundred) at a time.
//
// The caller (cache) holds its lock: c.mu for reading for get, for writing for the
// rest.
type serverEntries struct {
	slots map[int64]serverSlot
	// names finds an entry by its account and name (nameHash); ops by the operation
	// it shows. Each names an entry with that name hash or operation. Two names of
	// one hash share a key: the later wins, and a read of the other by name finds
	// an entry of another name, which it takes as a miss.
	names map[uint64]int64
	ops   map[int64]int64
	seed  maphash.Seed

	// chunks is the ring; those from tail to head (used of them) hold entries,
	// head the one being filled. A chunk is made when first filled.
	chunks     [][]byte
	head, tail int
	used       int
	max        int
}

// serverSlot is where an entry is, and what dropping it needs without reading it.
type serverSlot struct {
	chunk   uint32 // index in chunks
	off     uint32 // of its header in the chunk
	account int64
	name    uint64 // nameHash
	op      int64  // the operation it shows, 0 for none
	at      int64  // when it was read, Unix ns, on PostgreSQL only (pgEntryTTL)
}

const (
	// chunkSize is a chunk's bytes: a few hundred entries.
	chunkSize = 64 << 10
	// entryHeader is an entry's header in a chunk: its server's id, its length.
	entryHeader = 8 + 4
	// entryBudget is the chunk bytes the bound allows a server: 1.7 times what a
	// typical entry takes (about 175 bytes and its header), the rest for the bytes
	// of entries replaced and dropped that wait for their chunk to come round.
	entryBudget = 320
)

// MaxReadCacheServers bounds the bound: 100,000,000 servers, about 80 GB.
const MaxReadCacheServers = 100_000_000

func newServerEntries(n int) serverEntries {
	e := serverEntries{seed: maphash.MakeSeed()}
	e.setMax(n)
	return e
}

// chunksFor is the ring's size for a bound of n entries.
func chunksFor(n int) int { return max(2, (n*entryBudget+chunkSize-1)/chunkSize) }

// reset empties it: new maps, as a map keeps the room it once grew to, and no
// chunks (the collector takes them; they are made again as they fill).
func (e *serverEntries) reset() {
	e.slots, e.names, e.ops = map[int64]serverSlot{}, map[uint64]int64{}, map[int64]int64{}
	if n := chunksFor(e.max); len(e.chunks) == n {
		clear(e.chunks)
	} else {
		e.chunks = make([][]byte, n)
	}
	e.head, e.tail, e.used = 0, 0, 1
}

func (e *serverEntries) len() int { return len(e.slots) }

func (e *serverEntries) nameHash(account int64, name string) uint64 {
	return maphash.String(e.seed, name) ^ uint64(account)*0x9e3779b97f4a7c15
}

// setMax bounds it at n entries (at least 1, at most MaxReadCacheServers), dropping
// the oldest over that.
func (e *serverEntries) setMax(n int) {
	e.max = min(max(n, 1), MaxReadCacheServers)
	if chunksFor(e.max) != len(e.chunks) {
		// The ring changes size: start afresh rather than move what it holds.
		e.reset()
	}
	for len(e.slots) > e.max {
		e.evictOldest()
	}
}

// get finds the encoding of an account's server by ref, with when it was read;
// false when none is held. The encoding is valid while the lock is held. A name's
// entry may be another name's (nameHash): the caller compares.
func (e *serverEntries) get(account int64, ref hosting.ServerRef) ([]byte, int64, bool) {
	id := ref.ID
	if ref.Name != "" {
		var ok bool
		if id, ok = e.names[e.nameHash(account, ref.Name)]; !ok {
			return nil, 0, false
		}
	}
	slot, ok := e.slots[id]
	if !ok || slot.account != account {
		return nil, 0, false
	}
	c := e.chunks[slot.chunk]
	n := binary.LittleEndian.Uint32(c[slot.off+8:])
	start := slot.off + entryHeader
	return c[start : start+n], slot.at, true
}

// put files a server's encoding b, read at at, in place of any entry it had, making
// room as it must. An encoding too long for a chunk is not filed.
func (e *serverEntries) put(s *hosting.Server, b []byte, at int64) {
	e.drop(s.ID) // its name or operation may have changed
	need := entryHeader + len(b)
	if need > chunkSize {
		return
	}
	for len(e.slots) >= e.max {
		e.evictOldest()
	}
	if len(e.chunks[e.head])+need > chunkSize {
		next := (e.head + 1) % len(e.chunks)
		if e.used == len(e.chunks) {
			e.evictOldest() // next is the tail
		}
		e.head = next
		e.used++
	}
	if e.chunks[e.head] == nil {
		e.chunks[e.head] = make([]byte, 0, chunkSize)
	}
	c := e.chunks[e.head]
	off := len(c)
	c = binary.LittleEndian.AppendUint64(c, uint64(s.ID))
	c = binary.LittleEndian.AppendUint32(c, uint32(len(b)))
	e.chunks[e.head] = append(c, b...)
	slot := serverSlot{chunk: uint32(e.head), off: uint32(off), account: s.AccountID, name: e.nameHash(s.AccountID, s.Name), at: at}
	if s.Operation != nil {
		slot.op = s.Operation.ID
		e.ops[slot.op] = s.ID
	}
	e.slots[s.ID] = slot
	e.names[slot.name] = s.ID
}

// drop removes a server's entry with its name's and operation's; its bytes stay
// until its chunk is emptied.
func (e *serverEntries) drop(id int64) {
	slot, ok := e.slots[id]
	if !ok {
		return
	}
	delete(e.slots, id)
	if e.names[slot.name] == id {
		delete(e.names, slot.name)
	}
	if slot.op != 0 && e.ops[slot.op] == id {
		delete(e.ops, slot.op)
	}
}

// evictOldest empties the oldest chunk, dropping the entries still in it: those
// whose slot is there, not the ones filed again elsewhere since. The last chunk in
// use is emptied in place.
func (e *serverEntries) evictOldest() {
	c := e.chunks[e.tail]
	for off := 0; off+entryHeader <= len(c); {
		id := int64(binary.LittleEndian.Uint64(c[off:]))
		if slot, ok := e.slots[id]; ok && int(slot.chunk) == e.tail && int(slot.off) == off {
			e.drop(id)
		}
		off += entryHeader + int(binary.LittleEndian.Uint32(c[off+8:]))
	}
	if c != nil {
		e.chunks[e.tail] = c[:0]
	}
	if e.used > 1 {
		e.tail = (e.tail + 1) % len(e.chunks)
		e.used--
	}
}
