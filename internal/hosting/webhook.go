package hosting

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/berthhq/berth/internal/webhook"
)

// A Webhook sends the account's events that its EventTypes match to its URL
// (docs/webhooks.md). Secret signs every delivery; for SecretOverlap after a
// rotation PreviousSecret signs it too. Both are kept readable: an HMAC needs its key
// (docs/SECURITY.md, "Secrets at rest").
type Webhook struct {
	ID         int64
	AccountID  int64
	URL        string
	EventTypes []EventPattern
	Enabled    bool
	// DisabledReason says why Berth disabled it ("" when enabled, or disabled by its
	// owner).
	DisabledReason string
	Secret         string
	PreviousSecret string
	// PreviousUntil is when PreviousSecret stops signing (nil: no previous secret).
	PreviousUntil *time.Time
	CreatedAt     time.Time
}

// The webhooks' bounds (docs/api.md, Webhooks).
const (
	// MaxWebhooks is how many webhooks an account may hold. It is a constant, not
	// one of the account's Quotas: no account needs more, and an operator has no
	// reason to raise it.
	MaxWebhooks = 10
	// MaxAttemptsShown is how many of a delivery's attempts its record shows, the
	// latest: each redelivery adds up to ten, without end.
	MaxAttemptsShown = 20
	// WebhookURLMaxLen bounds a webhook's url.
	WebhookURLMaxLen = 2048
	// MaxWebhookEventTypes bounds a webhook's event_types.
	MaxWebhookEventTypes = 100
	// SecretOverlap is how long the previous secret signs after a rotation.
	SecretOverlap = 24 * time.Hour
	// WebhookDeliveriesPageSize is how many deliveries a page of the log holds.
	WebhookDeliveriesPageSize = 50
)

// Why Berth disables a webhook (Webhook.DisabledReason).
const (
	WebhookGone    = "gone"    // the receiver answered 410 Gone
	WebhookFailing = "failing" // every attempt of a delivery failed
)

// Secrets are the secrets that sign a delivery at now: the current one, then the
// previous one while it still signs.
func (w *Webhook) Secrets(now time.Time) []string {
	out := []string{w.Secret}
	if w.PreviousSecret != "" && w.PreviousUntil != nil && now.Before(*w.PreviousUntil) {
		out = append(out, w.PreviousSecret)
	}
	return out
}

// Wants reports whether e is delivered to w: w is enabled and one of its patterns
// matches e's type. A webhook.test event goes only to the webhook it tests.
func (w *Webhook) Wants(e Event) bool {
	if !w.Enabled || w.AccountID != e.AccountID {
		return false
	}
	if e.Type == EventWebhookTest {
		return e.Resource.Type == "webhook" && e.Resource.ID == w.ID
	}
	return slices.ContainsFunc(w.EventTypes, func(p EventPattern) bool { return p.Matches(e.Type) })
}

// DeliveryState is where a delivery stands.
type DeliveryState string

const (
	DeliveryPending   DeliveryState = "pending"   // an attempt is to come
	DeliveryDelivered DeliveryState = "delivered" // an attempt was answered 2xx
	DeliveryFailed    DeliveryState = "failed"    // given up: attempts failed, or the webhook was disabled or gone
)

// A WebhookDelivery is one event sent to one webhook, over one or more attempts.
type WebhookDelivery struct {
	ID            int64
	AccountID     int64
	WebhookID     int64
	EventID       int64
	EventType     EventType
	State         DeliveryState
	Attempts      int
	NextAttemptAt *time.Time
	CreatedAt     time.Time
	// Log is its attempts, oldest first (filled where a list shows them).
	Log []WebhookAttempt
}

// A WebhookAttempt is one try of a delivery, as the delivery log shows it.
type WebhookAttempt struct {
	ID         int64
	DeliveryID int64
	At         time.Time
	Status     int // 0: no answer
	Latency    time.Duration
	// Answer is the first webhook.AnswerBytes of the answer's body as text
	// (AnswerText).
	Answer string
	Reason string // why it failed; "" when delivered
}

// AnswerText is what the delivery log keeps of an answer's body: at most its first
// webhook.AnswerBytes, as valid UTF-8 (a byte that is not, or a character cut at the
// cap, becomes U+FFFD) without NUL (which PostgreSQL's text refuses).
func AnswerText(b []byte) string {
	return StorableText(string(b[:min(len(b), webhook.AnswerBytes)]))
}

// StorableText is s as a text column of either store keeps it: a byte that is not
// valid UTF-8, and NUL (which PostgreSQL's text refuses), become U+FFFD. For texts
// Berth records as they came (a delivery's answer, the audit log's target) rather
// than refuses.
func StorableText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// CheckWebhookURL validates a webhook's url on field: at most WebhookURLMaxLen
// characters and what webhook.CheckURL asks (https, no user name, a host that is no
// refused address unless allowPrivate; own are Berth's own address pools).
func CheckWebhookURL(v *Validation, field, raw string, allowPrivate bool, own []netip.Prefix) {
	if utf8.RuneCountInString(raw) > WebhookURLMaxLen {
		v.Add(field, "validation.max_chars", "max", WebhookURLMaxLen)
		return
	}
	if strings.TrimSpace(raw) == "" {
		v.Add(field, "validation.required")
		return
	}
	err := webhook.CheckURL(raw, allowPrivate, own)
	var ue *webhook.URLError
	switch {
	case err == nil:
	case errors.As(err, &ue) && ue.Rule == webhook.RuleAddress:
		v.Add(field, "validation.webhook_url_address", "address", ue.Addr.String(), "reason", ue.Detail)
	case errors.As(err, &ue):
		v.Add(field, "validation.webhook_url_"+ue.Rule)
	default:
		v.Add(field, "validation.webhook_url_url")
	}
}

// CheckWebhookEventTypes validates a webhook's event_types on field: 1 to
// MaxWebhookEventTypes patterns, each one GET /events's types takes (a type, a
// resource's types `server.*`, or `*`), none twice.
func CheckWebhookEventTypes(v *Validation, field string, list []string) []EventPattern {
	if len(list) == 0 {
		v.Add(field, "validation.required")
		return nil
	}
	if len(list) > MaxWebhookEventTypes {
		v.Add(field, "validation.max_items", "max", MaxWebhookEventTypes)
		return nil
	}
	out := make([]EventPattern, 0, len(list))
	for _, item := range list {
		ps, msg := ParseEventPatterns(item)
		if msg != "" || len(ps) != 1 || string(ps[0]) != item || slices.Contains(out, ps[0]) {
			v.Add(field, "validation.webhook_event_types")
			return nil
		}
		out = append(out, ps[0])
	}
	return out
}
