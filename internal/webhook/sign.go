// Package webhook delivers an event to a webhook's URL the way docs/webhooks.md
// describes it to receivers: a POST signed per Standard Webhooks, sent only to an
// address outside the provider's network (docs/SECURITY.md, API7), cut after 15 s,
// retried on the schedule of NextAttempt. It knows nothing of Berth's store or jobs:
// the caller keeps the delivery log and schedules the next attempt.
package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The headers of a delivery (docs/webhooks.md, "A delivery").
const (
	HeaderID        = standardwebhooks.HeaderWebhookID
	HeaderTimestamp = standardwebhooks.HeaderWebhookTimestamp
	HeaderSignature = standardwebhooks.HeaderWebhookSignature
)

// SecretPrefix starts every secret; SecretBytes is the length of the random key after it.
const (
	SecretPrefix = "whsec_"
	SecretBytes  = 32
)

// ErrSecret is the error of a secret that is not "whsec_" and the base64 of a key.
var ErrSecret = errors.New("webhook secret is not whsec_ and the base64 of a key")

// NewSecret is a new signing secret: "whsec_" and the base64 of 32 random bytes
// (docs/webhooks.md, "The signature"). It fails only when the system's random source does.
func NewSecret() (string, error) {
	key := make([]byte, SecretBytes)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("webhook secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// Sign is the value of the webhook-signature header of a delivery of body under the
// id and the time of the attempt: "v1,<base64 HMAC-SHA256 of id.timestamp.body>" once
// per secret, space-separated, in the order given (the current secret, then during a
// rotation the old one; docs/webhooks.md, "Secret rotation"). Standard Webhooks'
// own Go library computes each signature; it signs with one secret, so Sign joins
// them. It fails with ErrSecret on a malformed secret, or when no secret is given.
func Sign(id string, at time.Time, body []byte, secrets ...string) (string, error) {
	if len(secrets) == 0 {
		return "", fmt.Errorf("%w: no secret", ErrSecret)
	}
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		wh, err := signer(s)
		if err != nil {
			return "", err
		}
		sig, err := wh.Sign(id, at, body)
		if err != nil {
			return "", fmt.Errorf("webhook signature: %w", err)
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

// Standard Webhooks' bounds on a secret's key, in bytes.
const (
	minSecretKey = 24
	maxSecretKey = 64
)

// CheckSecret checks a secret an operator gives (a webhook license's hook,
// docs/operating.md): "whsec_" and the base64 of a key of 24 to 64 bytes, as
// Standard Webhooks asks. It fails with ErrSecret.
func CheckSecret(secret string) error {
	if _, err := signer(secret); err != nil {
		return err
	}
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if len(raw) < minSecretKey || len(raw) > maxSecretKey {
		return fmt.Errorf("%w: its key is %d bytes, want %d to %d", ErrSecret, len(raw), minSecretKey, maxSecretKey)
	}
	return nil
}

// signer is the library's signer of a secret. The library takes any string whose
// base64 decodes, the empty one too; a Berth secret has its prefix and a key.
func signer(secret string) (*standardwebhooks.Webhook, error) {
	key, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: no %s prefix", ErrSecret, SecretPrefix)
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(raw) == 0 {
		return nil, fmt.Errorf("%w: no key after the prefix", ErrSecret)
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSecret, err)
	}
	return wh, nil
}
