package sqlstore

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/berthhq/berth/internal/hosting"
)

// fill sets every field reachable from v, pointers and slices included, to a value
// of its own that is not the zero value: strings "f<n>", numbers n, true, a time of
// n seconds and n nanoseconds in UTC, slices of two.
func fill(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("f%d", *n))
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(*n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(t, v.Index(i), n)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(int64(*n)*1000, int64(*n)).UTC()))
			return
		}
		for i := range v.NumField() {
			fill(t, v.Field(i), n)
		}
	default:
		t.Fatalf("fill: a field of kind %s: teach fill (and appendServer) about it", v.Kind())
	}
}

// Every field of a server, found by reflection, comes back from the cache's
// encoding as it went in; so does a server with nothing set, or empty lists. A field
// added to hosting.Server or hosting.Operation and not to appendServer fails here.
func TestServerCodecCarriesEveryField(t *testing.T) {
	t.Parallel()
	var full hosting.Server
	n := 0
	fill(t, reflect.ValueOf(&full).Elem(), &n)
	deleted := time.Date(2026, 11, 28, 20, 1, 2, 3_000_000, time.UTC)
	for _, c := range []struct {
		name string
		s    hosting.Server
	}{
		{"every field set", full},
		{"nothing set", hosting.Server{}},
		{"empty lists, not nil", hosting.Server{ID: 1, SSHKeyIDs: []int64{}, Keys: []hosting.SSHKey{}}},
		{"as the store reads one", hosting.Server{ID: 1 << 62, AccountID: -1, Name: "web-1", Status: hosting.StatusRunning,
			CreatedAt: fromMS(1_764_000_000_123), DeletedAt: &deleted, SSHKeyIDs: []int64{}, VCPUs: -2147483648}},
	} {
		b, ok := appendServer(nil, &c.s)
		if !ok {
			t.Errorf("%s: not encoded", c.name)
			continue
		}
		got, ok := decodeServer(b)
		if !ok || !reflect.DeepEqual(got, c.s) {
			t.Errorf("%s: decoded %+v (%v), want %+v", c.name, got, ok, c.s)
		}
		// Every shorter prefix, and one byte more, is refused, never a panic.
		for i := range b {
			if _, ok := decodeServer(b[:i]); ok {
				t.Errorf("%s: the first %d of %d bytes decode", c.name, i, len(b))
			}
		}
		if _, ok := decodeServer(append(b, 0)); ok {
			t.Errorf("%s: a byte more decodes", c.name)
		}
	}
	// The decoded server's strings are its own: the bytes it came from may change.
	b, _ := appendServer(nil, &full)
	got, _ := decodeServer(b)
	clear(b)
	if !reflect.DeepEqual(got, full) {
		t.Error("the decoded server changed with the bytes it was read from")
	}
	// A time in another zone is not kept (the store reads every time in UTC).
	local := hosting.Server{CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("X", 3600))}
	if _, ok := appendServer(nil, &local); ok {
		t.Error("a time not in UTC was encoded")
	}
}

// Servers read, dropped and read again over and over fill the chunks with dead bytes;
// the chunks stay within their bound, and the live entries stay whole and findable.
func TestServerEntriesStayBoundedUnderChurn(t *testing.T) {
	t.Parallel()
	e := newServerEntries(500)
	server := func(id int64, round int) *hosting.Server {
		s := &hosting.Server{ID: id, AccountID: id % 7, Name: fmt.Sprintf("server-%d-%d", id, round%3),
			DisplayName: fmt.Sprintf("round %d", round), SSHKeyIDs: []int64{}}
		if round%2 == 0 {
			s.Operation = &hosting.Operation{ID: id*1000 + int64(round), Type: hosting.OpPower}
		}
		return s
	}
	last := map[int64]int{}
	for round := range 200 {
		for id := range int64(300) {
			if (id+int64(round))%5 == 0 {
				e.drop(id)
				delete(last, id)
				continue
			}
			s := server(id, round)
			b, ok := appendServer(nil, s)
			if !ok {
				t.Fatal("not encoded")
			}
			e.put(s, b, 0)
			last[id] = round
		}
	}
	if e.used > len(e.chunks) || len(e.chunks) != max(2, (500*entryBudget+chunkSize-1)/chunkSize) {
		t.Errorf("%d chunks in use of %d", e.used, len(e.chunks))
	}
	made := 0
	for _, c := range e.chunks {
		if c != nil {
			made++
		}
	}
	if made > len(e.chunks) {
		t.Errorf("%d chunks made, bound %d", made, len(e.chunks))
	}
	if e.len() == 0 {
		t.Fatal("nothing held")
	}
	checkServerEntries(t, &e)
	for id, slot := range e.slots {
		want := server(id, last[id])
		b, _, ok := e.get(slot.account, hosting.ServerRef{Name: want.Name})
		if !ok {
			t.Fatalf("server %d not found by its name %q", id, want.Name)
		}
		got, _ := decodeServer(b)
		if !reflect.DeepEqual(&got, want) {
			t.Fatalf("server %d: held %+v, want the last read %+v", id, got, want)
		}
	}
}

// A read by name whose hash leads to another server's entry (two names of one hash)
// is a miss, answered by the store, not the other server.
func TestCacheNameHashCollisionIsAMiss(t *testing.T) {
	t.Parallel()
	c := testCache(t)
	ctx := context.Background()
	load := func(s hosting.Server) func() (hosting.Server, error) {
		return func() (hosting.Server, error) { return s, nil }
	}
	a := hosting.Server{ID: 1, AccountID: 1, Name: "a"}
	b := hosting.Server{ID: 2, AccountID: 1, Name: "b"}
	for _, s := range []hosting.Server{a, b} {
		if _, err := c.server(ctx, 1, hosting.ServerRef{ID: s.ID}, load(s)); err != nil {
			t.Fatal(err)
		}
	}
	// Make "a" hash to b's entry, as a collision would.
	c.servers.names[c.servers.nameHash(1, "a")] = 2
	loads := 0
	got, err := c.server(ctx, 1, hosting.ServerRef{Name: "a"}, func() (hosting.Server, error) {
		loads++
		return a, nil
	})
	if err != nil || got.ID != 1 || loads != 1 {
		t.Errorf("read of a by name: server %d, %d loads, %v; want server 1 from the store", got.ID, loads, err)
	}
}

// A hit: one server, as the store reads a provisioned one, answered from the cache.
// Reports its encoding's bytes.
func BenchmarkCacheServerHit(b *testing.B) {
	c := testCache(b)
	ipv4, ipv6 := "203.0.113.17", "2001:db8:0:11::1"
	s := hosting.Server{ID: 123456, AccountID: 42, Name: "web-123456", DisplayName: "web-123456", Status: hosting.StatusRunning,
		LocationID: 1, PlanID: 2, ImageID: 3, VCPUs: 2, MemoryMB: 4096, DiskGB: 40, IPv4: &ipv4, IPv6: &ipv6,
		RootPassHash: "$argon2id$v=19$m=65536,t=3,p=2$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNo",
		SSHKeyIDs:    []int64{7}, CreatedAt: fromMS(1_764_000_000_123)}
	ctx := context.Background()
	ref := hosting.ServerRef{ID: s.ID}
	load := func() (hosting.Server, error) { return s, nil }
	if _, err := c.server(ctx, 42, ref, load); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.server(ctx, 42, ref, func() (hosting.Server, error) { b.Fatal("a miss"); return s, nil }); err != nil {
			b.Fatal(err)
		}
	}
	enc, _ := appendServer(nil, &s)
	b.ReportMetric(float64(len(enc)), "entry-bytes")
}

// The heap a held server takes: 100,000 servers like BenchmarkCacheServerHit's read
// into a cache of that bound, the live heap before and after (go test -bench
// CacheHeap -benchtime 1x). docs/operating.md, Memory, quotes it.
func BenchmarkCacheHeapPerServer(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	ipv4, ipv6 := "203.0.113.17", "2001:db8:0:11::1"
	for b.Loop() {
		c, err := openCache(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		c.setMaxServers(n)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for id := range int64(n) {
			s := hosting.Server{ID: id + 1, AccountID: id/10 + 1, Name: fmt.Sprintf("web-%d", id), DisplayName: fmt.Sprintf("web-%d", id),
				Status: hosting.StatusRunning, LocationID: 1, PlanID: 2, ImageID: 3, VCPUs: 2, MemoryMB: 4096, DiskGB: 40,
				IPv4: &ipv4, IPv6: &ipv6, RootPassHash: "$argon2id$v=19$m=65536,t=3,p=2$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNo",
				SSHKeyIDs: []int64{7}, CreatedAt: fromMS(1_764_000_000_123)}
			if _, err := c.server(ctx, s.AccountID, hosting.ServerRef{ID: s.ID}, func() (hosting.Server, error) { return s, nil }); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if c.servers.len() != n {
			b.Fatalf("%d held, want %d", c.servers.len(), n)
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heap-bytes/server")
		runtime.KeepAlive(c)
		c.close()
	}
}

// The bound is kept within 1 and MaxReadCacheServers, whatever it is asked (a ring
// sized from 2^63 servers once overflowed), and a smaller bound drops the oldest.
func TestServerEntriesBound(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ n, want int }{{math.MinInt, 1}, {-1, 1}, {0, 1}, {1, 1}, {MaxReadCacheServers, MaxReadCacheServers},
		{MaxReadCacheServers + 1, MaxReadCacheServers}, {math.MaxInt, MaxReadCacheServers}} {
		e := newServerEntries(c.n)
		if e.max != c.want || len(e.chunks) != chunksFor(c.want) || len(e.chunks) < 2 {
			t.Errorf("bound %d: %d entries in %d chunks, want %d in %d", c.n, e.max, len(e.chunks), c.want, chunksFor(c.want))
		}
	}
	e := newServerEntries(100)
	for id := range int64(100) {
		s := &hosting.Server{ID: id, AccountID: 1, Name: fmt.Sprint(id)}
		b, _ := appendServer(nil, s)
		e.put(s, b, 0)
	}
	e.setMax(10)
	if e.len() > 10 {
		t.Errorf("%d held after the bound went to 10", e.len())
	}
	checkServerEntries(t, &e)
	e.setMax(1)
	s := &hosting.Server{ID: 500, AccountID: 1}
	b, _ := appendServer(nil, s)
	e.put(s, b, 0)
	if _, _, ok := e.get(1, hosting.ServerRef{ID: 500}); !ok || e.len() != 1 {
		t.Errorf("bound 1: %d held, the last put found %v", e.len(), ok)
	}
}
