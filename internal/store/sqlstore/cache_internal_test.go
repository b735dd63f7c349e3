package sqlstore

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/berthhq/berth/internal/hosting"
)

// After a write, what the maps held before can never be answered again; they must
// not keep it. (They once did, until maxCached entries: on a server whose every
// request reads a token and a server and whose writes never stop, a map of mostly
// dead entries growing for as long as new servers are read; the soak saw it.)
func TestCacheKeepsOnlyLiveEntries(t *testing.T) {
	t.Parallel()
	c, err := openCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.close() })
	loads := 0
	read := func(id int64) {
		t.Helper()
		_, err := c.server(1, hosting.ServerRef{ID: id}, func() (hosting.Server, error) {
			loads++
			return hosting.Server{ID: id, AccountID: 1, Name: fmt.Sprintf("server-%d", id)}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		hash := sha256.Sum256(fmt.Appendf(nil, "token-%d", id))
		_, _, err = c.token(hash[:], func() (hosting.Token, hosting.Account, error) {
			loads++
			return hosting.Token{ID: id, Hash: hash[:]}, hosting.Account{ID: 1}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	const n = 100
	for id := range int64(n) {
		read(id)
	}
	for id := range int64(n) {
		read(id)
	}
	if loads != 2*n {
		t.Fatalf("%d loads for %d servers and tokens read twice, want %d (the second reads from memory)", loads, n, 2*n)
	}
	for round := range 3 {
		c.changed()
		read(n + int64(round))
		if got := len(c.servers); got != 1 {
			t.Errorf("after write %d: %d servers held, want 1 (only the one read since)", round+1, got)
		}
		if got := len(c.tokens); got != 1 {
			t.Errorf("after write %d: %d tokens held, want 1 (only the one read since)", round+1, got)
		}
	}

	// A read that began before a write and ends after a newer read was filed is not
	// filed: it could never be answered.
	_, err = c.server(1, hosting.ServerRef{ID: 2000}, func() (hosting.Server, error) {
		c.changed() // a write commits during the query
		read(1000)  // and another read, after it, is filed
		return hosting.Server{ID: 2000, AccountID: 1}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(c.servers); got != 1 {
		t.Errorf("%d servers held, want 1 (the one read after the write)", got)
	}
}
