// Package webhook checks that a webhook delivery came from Berth (docs/webhooks.md):
// Verify checks its signature and its age with the webhook's secret.
//
//	body, _ := io.ReadAll(r.Body)
//	if err := webhook.Verify(secret, r.Header, body); err != nil {
//		http.Error(w, "bad signature", http.StatusUnauthorized)
//		return
//	}
//
// Deliveries follow Standard Webhooks (standardwebhooks.com), whose Go library
// Verify uses. A delivery may come more than once and out of order: handle each
// webhook-id once.
package webhook

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The headers of a delivery.
const (
	HeaderID        = "webhook-id"        // the event's id: handle each once
	HeaderTimestamp = "webhook-timestamp" // when the attempt was sent, Unix seconds
	HeaderSignature = "webhook-signature" // "v1,<base64>" once per secret, space-separated
)

// Tolerance is how far a delivery's webhook-timestamp may be from the receiver's
// clock: a delivery recorded and replayed later fails with ErrTooOld.
const Tolerance = 5 * time.Minute

// The errors of Verify; match them with errors.Is.
var (
	ErrSecret           = errors.New("the secret is not whsec_ and the base64 of a key")
	ErrMissingHeaders   = standardwebhooks.ErrRequiredHeaders     // webhook-id, -timestamp or -signature missing
	ErrInvalidTimestamp = standardwebhooks.ErrInvalidHeaders      // webhook-timestamp is not Unix seconds
	ErrNoSignature      = standardwebhooks.ErrNoMatchingSignature // no signature matches the secret
	ErrTooOld           = standardwebhooks.ErrMessageTooOld       // sent more than Tolerance ago
	ErrTooNew           = standardwebhooks.ErrMessageTooNew       // sent more than Tolerance ahead of this clock
)

// Verify checks a delivery: its headers (webhook-id, webhook-timestamp,
// webhook-signature) and its body exactly as received (parsed and serialized again,
// JSON no longer matches). It is nil when one of the header's signatures is the
// secret's for the id, timestamp and body, and the timestamp is within Tolerance of
// now. During a secret rotation the header carries both secrets' signatures: the new
// secret and the old one verify alike. It fails with one of the errors above.
func Verify(secret string, header http.Header, body []byte) error {
	key := strings.TrimPrefix(secret, "whsec_")
	if raw, err := base64.StdEncoding.DecodeString(key); err != nil || len(raw) == 0 {
		return fmt.Errorf("webhook: %w", ErrSecret)
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return fmt.Errorf("webhook: %w", ErrSecret)
	}
	err = wh.Verify(body, header)
	for _, e := range []error{ErrMissingHeaders, ErrInvalidTimestamp, ErrNoSignature, ErrTooOld, ErrTooNew} {
		if errors.Is(err, e) {
			return fmt.Errorf("webhook: %w", e)
		}
	}
	return err
}
