package testenv

import (
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// PublicKey is a fresh ed25519 public key in OpenSSH's authorized_keys form, as the
// API takes SSH keys, without a comment (append " "+comment for one).
func PublicKey(t testing.TB) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return AuthorizedKey(t, pub)
}

// AuthorizedKey is pub (an ed25519.PublicKey, *ecdsa.PublicKey, *rsa.PublicKey…) as
// ssh-keygen writes it, without the comment and the line end.
func AuthorizedKey(t testing.TB, pub any) string {
	t.Helper()
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
}
