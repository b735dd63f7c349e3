package main

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/GehirnInc/crypt/sha512_crypt"

	"github.com/berthhq/berth/internal/compute"
	"github.com/berthhq/berth/internal/testenv"
)

// passHashes records the root password hash of each machine created.
type passHashes struct {
	compute.Driver
	mu     sync.Mutex
	hashes []string
}

func (d *passHashes) Create(ctx context.Context, name string, spec compute.Spec) (compute.Machine, error) {
	d.mu.Lock()
	d.hashes = append(d.hashes, spec.RootPassHash)
	d.mu.Unlock()
	return d.Driver.Create(ctx, name, spec)
}

// TestRootPasswordStdin: server create --root-password-stdin sends the first line of
// stdin as the root password (the machine gets its hash; a short one is the API's
// 422 on root_password), refuses empty stdin and --root-password with it, and
// --root-password still works.
func TestRootPasswordStdin(t *testing.T) {
	t.Parallel()
	rec := &passHashes{}
	env := testenv.New(t, testenv.Options{WrapDriver: func(d compute.Driver) compute.Driver { rec.Driver = d; return rec }})
	acct := env.NewAccount("en", "100", "")
	c := newCLI(t, "BERTH_URL="+env.URL, "BERTH_TOKEN="+acct.Token)
	order := []string{"server", "create", "--plan", "s1-1c-1g", "--location", "fsn1", "--image", "ubuntu-24.04", "-q"}
	for _, tt := range []struct {
		name, stdin string
		extra       []string
		code        int
		stderr      string
	}{
		{"stdin", "from-stdin-Pw1\nsecond line\n", []string{"--root-password-stdin"}, 0, ""},
		{"flag", "", []string{"--root-password", "from-flag-Pw1"}, 0, ""},
		{"short on stdin", "short\n", []string{"--root-password-stdin"}, 4, "  root_password: "},
		{"empty stdin", "", []string{"--root-password-stdin"}, 1, "--root-password-stdin: stdin holds nothing"},
		{"both", "from-stdin-Pw1\n", []string{"--root-password-stdin", "--root-password", "from-flag-Pw1"}, 1, "none of the others can be"},
	} {
		r := c.runIn(tt.stdin, append(order, tt.extra...)...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", tt.name, r.code, r.stderr, tt.code, tt.stderr)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.hashes) != 2 {
		t.Fatalf("%d machines created, want 2", len(rec.hashes))
	}
	for i, pw := range []string{"from-stdin-Pw1", "from-flag-Pw1"} {
		if err := sha512_crypt.New().Verify(rec.hashes[i], []byte(pw)); err != nil {
			t.Errorf("machine %d: its root password hash %q is not of %q: %v", i+1, rec.hashes[i], pw, err)
		}
	}
}
