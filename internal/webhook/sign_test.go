package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The example of Standard Webhooks' reference libraries (libraries/go/webhook_test.go
// TestWebhookSign of github.com/standard-webhooks/standard-webhooks, the same in its
// C#, Java and Elixir tests), which docs/webhooks.md works by hand.
const (
	specSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTimestamp = 1614265330
	specBody      = `{"test": 2432232314}`
	specSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignSpecExample(t *testing.T) {
	t.Parallel()
	got, err := Sign(specID, time.Unix(specTimestamp, 0), []byte(specBody), specSecret)
	if err != nil {
		t.Fatal(err)
	}
	if got != specSignature {
		t.Errorf("Sign = %q, want %q", got, specSignature)
	}
	if got := hmacSignature(t, specSecret, specID, specTimestamp, specBody); got != specSignature {
		t.Errorf("crypto/hmac = %q, want %q", got, specSignature)
	}
}

// hmacSignature computes a signature with crypto/hmac alone, as the spec says.
func hmacSignature(t *testing.T, secret, id string, ts int64, body string) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s.%d.%s", id, ts, body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// opensslSignature computes a signature with the openssl command, which is not Go.
func opensslSignature(t *testing.T, secret, id string, ts int64, body string) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("openssl", "dgst", "-sha256", "-mac", "HMAC", "-macopt", "hexkey:"+hex.EncodeToString(key), "-binary")
	cmd.Stdin = strings.NewReader(fmt.Sprintf("%s.%d.%s", id, ts, body))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("openssl: %v", err)
	}
	return "v1," + base64.StdEncoding.EncodeToString(out)
}

// needOpenSSL skips, loudly, where openssl is missing (.ci/run installs it).
func needOpenSSL(t *testing.T, unchecked string) {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("SKIPPED: openssl is not installed: " + unchecked + " is not checked")
	}
}

func TestSignOpenSSL(t *testing.T) {
	t.Parallel()
	needOpenSSL(t, "the signature against an independent computation")
	bodies := []string{specBody, `{}`, "{\"type\":\"server.created\",\"data\":{\"name\":\"ü % \\\"x\\\"\"}}\n", ""}
	for i, body := range bodies {
		secret, err := NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		id, ts := fmt.Sprintf("evt_%d", i+1), time.Now().Unix()+int64(i)
		got, err := Sign(id, time.Unix(ts, 0), []byte(body), secret)
		if err != nil {
			t.Fatal(err)
		}
		if want := opensslSignature(t, secret, id, ts, body); got != want {
			t.Errorf("body %q: Sign = %q, openssl = %q", body, got, want)
		}
	}
	if got := opensslSignature(t, specSecret, specID, specTimestamp, specBody); got != specSignature {
		t.Errorf("openssl on the spec's example = %q, want %q", got, specSignature)
	}
}

func TestSignRotation(t *testing.T) {
	t.Parallel()
	current, _ := NewSecret()
	old, _ := NewSecret()
	at := time.Unix(1700000000, 0)
	got, err := Sign("evt_9", at, []byte(`{"a":1}`), current, old)
	if err != nil {
		t.Fatal(err)
	}
	want := hmacSignature(t, current, "evt_9", at.Unix(), `{"a":1}`) + " " +
		hmacSignature(t, old, "evt_9", at.Unix(), `{"a":1}`)
	if got != want {
		t.Errorf("Sign with two secrets = %q, want %q", got, want)
	}
}

func TestSignBadSecret(t *testing.T) {
	t.Parallel()
	for _, secrets := range [][]string{
		nil,
		{""},
		{"whsec_"},
		{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, // no prefix
		{"whsec_not base64!"},
		{specSecret, "whsec_%%"}, // the old secret is malformed
	} {
		if _, err := Sign("evt_1", time.Now(), nil, secrets...); !errors.Is(err, ErrSecret) {
			t.Errorf("Sign with %q: err = %v, want ErrSecret", secrets, err)
		}
	}
}

func TestNewSecret(t *testing.T) {
	t.Parallel()
	a, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewSecret()
	key, ok := strings.CutPrefix(a, "whsec_")
	if !ok {
		t.Fatalf("NewSecret = %q, no whsec_ prefix", a)
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(raw) != 32 {
		t.Errorf("NewSecret = %q: %d bytes, %v; want 32 bytes of base64", a, len(raw), err)
	}
	if a == b {
		t.Errorf("two NewSecret are the same: %q", a)
	}
}
