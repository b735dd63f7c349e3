package main

import (
	"sort"
	"sync"
	"syscall"
	"unsafe"

	_ "modernc.org/libc" // the allocator read below
	"modernc.org/memory"
)

// SQLite's C heap is modernc.org/libc's one memory.Allocator. Its counters
// (-tags memory.counters) say only what is mapped; to tell what SQLite holds live
// from what the allocator keeps mapped for reuse, and what of either is resident,
// memdiag reads the allocator's own bookkeeping. The mirrors below copy the layout of
// memory.Allocator and its page header in modernc.org/memory v1.12.1 (go.mod pins
// it); they are read under libc's allocator lock and only for this diagnosis.

//go:linkname libcAllocator modernc.org/libc.allocator
var libcAllocator memory.Allocator

//go:linkname libcAllocatorMu modernc.org/libc.allocatorMu
var libcAllocatorMu sync.Mutex

type allocatorMirror struct {
	Allocs    int
	Bytes     int
	cap       [64]int
	lists     [64]uintptr
	Mmaps     int
	pages     [64]uintptr
	regs      map[uintptr]struct{}
	freed     map[int][]uintptr
	freedSize int
	cold      map[int]int
	live      int
	hiLive    int
}

type pageMirror struct {
	brk  int
	log  uint
	size int
	used int
}

const pageHeader = int(unsafe.Sizeof(pageMirror{}))

// cHeap is where SQLite's C heap is, in KiB: regions holding live allocations
// (slots of a size class in shared 64 KiB pages; one large allocation each) and the
// empty regions the allocator retains, each with what of it is resident.
type cHeap struct {
	SharedPages, SharedKB, SharedResKB, SharedSlotKB int
	LargeRegions, LargeKB, LargeResKB, LargeReqKB    int
	EmptyRegions, EmptyKB, EmptyResKB                int
	// Large allocations by region size (KiB) → count, the biggest classes first.
	LargeBySize map[int]int
	// Slots in use per size class (bytes) → count.
	SlotsBySize map[int]int
	// Empty regions by size (KiB) → count.
	EmptyBySize map[int]int
}

func readCHeap() cHeap {
	libcAllocatorMu.Lock()
	defer libcAllocatorMu.Unlock()
	a := (*allocatorMirror)(unsafe.Pointer(&libcAllocator))
	empty := map[uintptr]bool{}
	for _, s := range a.freed {
		for _, p := range s {
			empty[p] = true
		}
	}
	for _, p := range a.pages {
		if p != 0 && at[pageMirror](p).used == 0 {
			empty[p] = true
		}
	}
	h := cHeap{LargeBySize: map[int]int{}, SlotsBySize: map[int]int{}, EmptyBySize: map[int]int{}}
	for p := range a.regs {
		pg := at[pageMirror](p)
		res := resident(p, pg.size)
		switch {
		case empty[p]:
			h.EmptyRegions++
			h.EmptyKB += pg.size
			h.EmptyResKB += res
			h.EmptyBySize[pg.size>>10]++
		case pg.log != 0:
			h.SharedPages++
			h.SharedKB += pg.size
			h.SharedResKB += res
			h.SharedSlotKB += pg.used << pg.log
			h.SlotsBySize[1<<pg.log] += pg.used
		default:
			h.LargeRegions++
			h.LargeKB += pg.size
			h.LargeResKB += res
			h.LargeReqKB += pg.size - pageHeader
			h.LargeBySize[pg.size>>10]++
		}
	}
	for _, v := range []*int{&h.SharedKB, &h.SharedResKB, &h.SharedSlotKB, &h.LargeKB, &h.LargeResKB, &h.LargeReqKB, &h.EmptyKB, &h.EmptyResKB} {
		*v >>= 10
	}
	return h
}

// at is the T at address p of memory outside the Go heap (the C heap's mappings).
// Going through a pointer-typed copy of p keeps vet's unsafeptr check, meant for Go
// memory, quiet.
func at[T any](p uintptr) *T { return (*T)(*(*unsafe.Pointer)(unsafe.Pointer(&p))) }

// resident is how many bytes of the region [p, p+size) are in RAM (mincore).
func resident(p uintptr, size int) int {
	ps := syscall.Getpagesize()
	vec := make([]byte, (size+ps-1)/ps)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, p, uintptr(size), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return -1
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n * ps
}

// top returns at most n of m's entries, largest keys first, flattened: key, count,
// key, count, ...
func top(m map[int]int, n int) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(keys)))
	var out []int
	for _, k := range keys[:min(n, len(keys))] {
		out = append(out, k, m[k])
	}
	return out
}
