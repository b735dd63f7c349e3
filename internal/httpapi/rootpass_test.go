package httpapi_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/GehirnInc/crypt/sha512_crypt"

	"github.com/berthhq/berth/internal/testenv"
)

// TestRootPasswordCharacters: root_password is 8 to 72 characters, whatever their
// bytes (docs/api.md, Servers); the hash the guest gets is one its crypt(3) checks.
func TestRootPasswordCharacters(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := env.NewAccount("en", "", "")
	for _, pw := range []string{strings.Repeat("é", 40), strings.Repeat("😀", 72), "correct horse battery staple"} {
		srv := order(t, a, with(baseOrder(), "root_password", pw))
		stored, err := env.App.DB.ServerAny(context.Background(), num(t, srv["id"]))
		if err != nil {
			t.Fatal(err)
		}
		h := stored.RootPassHash
		if !strings.HasPrefix(h, "$6$rounds=100000$") {
			t.Fatalf("root password hash %q, want SHA-512-crypt", h)
		}
		if err := sha512_crypt.New().Verify(h, []byte(pw)); err != nil {
			t.Errorf("the hash of %q does not verify: %v", pw, err)
		}
		if sha512_crypt.New().Verify(h, []byte(pw+"x")) == nil {
			t.Errorf("the hash of %q verifies another password", pw)
		}
		// What the guest does: crypt(3) of the password with the hash as its setting.
		if py, err := exec.LookPath("python3"); err == nil {
			out, err := exec.Command(py, "-W", "ignore", "-c",
				"import crypt,sys; sys.stdout.write(crypt.crypt(sys.argv[1], sys.argv[2]) or '')", pw, h).Output()
			if err != nil {
				t.Logf("python3 crypt unavailable: %v", err)
			} else if string(out) != h {
				t.Errorf("the system's crypt(3) makes %q of %q, not %q", out, pw, h)
			}
		}
	}
	for _, tc := range []struct{ pw, msg string }{
		{strings.Repeat("é", 73), msg("en", "validation.between_chars", "min", 8, "max", 72)},
		{strings.Repeat("😀", 7), msg("en", "validation.between_chars", "min", 8, "max", 72)},
		{"password\u001b[2J", msg("en", "validation.no_control_chars")},
		{"password\u0000", msg("en", "validation.no_control_chars")},
	} {
		wantInvalidMsg(t, a.Do("POST", "/servers", with(baseOrder(), "root_password", tc.pw)), "root_password", tc.msg)
	}
}
