package embedded

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/miekg/dns"

	"github.com/berthhq/berth/internal/nameserver"
)

// counting is a Memory that counts the calls to Enclosing.
type counting struct {
	*Memory
	calls atomic.Int32
}

func (c *counting) Enclosing(ctx context.Context, name string) (nameserver.Zone, bool, error) {
	c.calls.Add(1)
	return c.Memory.Enclosing(ctx, name)
}

// TestZoneBuiltOncePerSerial: the Source is asked once a query, and a zone is built
// again only when its serial changed, by one query of many asking at once.
func TestZoneBuiltOncePerSerial(t *testing.T) {
	t.Parallel()
	src := &counting{Memory: NewMemory()}
	z := testZone()
	if err := src.Publish(context.Background(), z); err != nil {
		t.Fatal(err)
	}
	s := New(src, Options{})
	ask := func() *zone {
		w := &fakeWriter{remote: udpClient()}
		s.ServeDNS(w, new(dns.Msg).SetQuestion("www.example.com.", dns.TypeA))
		got, _ := s.kept("example.com.")
		return got.zone
	}
	first := ask()
	if again := ask(); again != first || src.calls.Load() != 2 {
		t.Fatalf("same serial: rebuilt %v, Enclosing called %d times for 2 queries", again != first, src.calls.Load())
	}
	z.Serial++
	if err := src.Publish(context.Background(), z); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	zones := make([]*zone, 20)
	for i := range zones {
		wg.Go(func() { zones[i] = ask() })
	}
	wg.Wait()
	for _, got := range zones {
		if got == first || got != zones[0] || got.serial != z.Serial {
			t.Fatalf("after serial %d: zones %p (first %p), serial %d", z.Serial, got, first, got.serial)
		}
	}
	if n := s.builds.Load(); n != 2 {
		t.Fatalf("%d builds for 2 serials", n)
	}
}
