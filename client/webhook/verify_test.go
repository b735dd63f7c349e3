package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/berthhq/berth/client/webhook"
)

// Two secrets of the form Berth hands out, and the spec's example secret.
const (
	secretA    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	secretB    = "whsec_3q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	secretNone = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // secretA without its prefix
)

// sign is a signature computed here with crypto/hmac alone, not by the library Verify uses.
func sign(secret, id string, ts int64, body string) string {
	key, err := base64.StdEncoding.DecodeString(secret[len("whsec_"):])
	if err != nil {
		panic(err)
	}
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s.%d.%s", id, ts, body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func headers(id string, ts int64, sig string) http.Header {
	h := http.Header{}
	for k, v := range map[string]string{"webhook-id": id, "webhook-timestamp": strconv.FormatInt(ts, 10), "webhook-signature": sig} {
		if v != "" {
			h.Set(k, v)
		}
	}
	return h
}

func TestVerify(t *testing.T) {
	t.Parallel()
	const body = `{"type":"server.created","timestamp":"2026-03-01T11:00:00Z","data":{"id":12}}`
	now := time.Now().Unix()
	okA := sign(secretA, "evt_1", now, body)
	okB := sign(secretB, "evt_1", now, body)
	for _, tc := range []struct {
		name   string
		secret string
		header http.Header
		body   string
		want   error
	}{
		{"good", secretA, headers("evt_1", now, okA), body, nil},
		{"the secret without whsec_", secretNone, headers("evt_1", now, okA), body, nil},
		{"rotation: the new secret", secretA, headers("evt_1", now, okA+" "+okB), body, nil},
		{"rotation: the old secret", secretB, headers("evt_1", now, okA+" "+okB), body, nil},
		{"among other kinds", secretB, headers("evt_1", now, "v1a,AAAA v2,xyz "+okB), body, nil},
		{"4m50s old", secretA, headers("evt_1", now-290, sign(secretA, "evt_1", now-290, body)), body, nil},
		{"4m50s ahead", secretA, headers("evt_1", now+290, sign(secretA, "evt_1", now+290, body)), body, nil},
		{"5m10s old", secretA, headers("evt_1", now-310, sign(secretA, "evt_1", now-310, body)), body, webhook.ErrTooOld},
		{"5m10s ahead", secretA, headers("evt_1", now+310, sign(secretA, "evt_1", now+310, body)), body, webhook.ErrTooNew},
		{"another secret", secretB, headers("evt_1", now, okA), body, webhook.ErrNoSignature},
		{"body changed", secretA, headers("evt_1", now, okA), body + " ", webhook.ErrNoSignature},
		{"id changed", secretA, headers("evt_2", now, okA), body, webhook.ErrNoSignature},
		{"timestamp changed", secretA, headers("evt_1", now-1, okA), body, webhook.ErrNoSignature},
		{"not v1", secretA, headers("evt_1", now, "v2"+okA[2:]), body, webhook.ErrNoSignature},
		{"signature without version", secretA, headers("evt_1", now, okA[3:]), body, webhook.ErrNoSignature},
		{"no id", secretA, headers("", now, okA), body, webhook.ErrMissingHeaders},
		{"no signature", secretA, headers("evt_1", now, ""), body, webhook.ErrMissingHeaders},
		{"no timestamp", secretA, func() http.Header { h := headers("evt_1", now, okA); h.Del("webhook-timestamp"); return h }(), body, webhook.ErrMissingHeaders},
		{"timestamp not a number", secretA, func() http.Header { h := headers("evt_1", now, okA); h.Set("webhook-timestamp", "soon"); return h }(), body, webhook.ErrInvalidTimestamp},
		{"empty secret", "", headers("evt_1", now, okA), body, webhook.ErrSecret},
		{"prefix alone", "whsec_", headers("evt_1", now, okA), body, webhook.ErrSecret},
		{"secret not base64", "whsec_not base64", headers("evt_1", now, okA), body, webhook.ErrSecret},
	} {
		err := webhook.Verify(tc.secret, tc.header, []byte(tc.body))
		if (tc.want == nil && err != nil) || !errors.Is(err, tc.want) {
			t.Errorf("%s: Verify = %v, want %v", tc.name, err, tc.want)
		}
	}
}

// The spec's example (its signature is checked in internal/webhook), sent in 2021: too old.
func TestVerifySpecExample(t *testing.T) {
	t.Parallel()
	h := headers("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	if err := webhook.Verify(secretA, h, []byte(`{"test": 2432232314}`)); !errors.Is(err, webhook.ErrTooOld) {
		t.Errorf("Verify = %v, want ErrTooOld", err)
	}
}
