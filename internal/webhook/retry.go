package webhook

import "time"

// Schedule is how long after each failed attempt the next one comes (docs/webhooks.md,
// "Retries"): after the first fails 5 s, after the second 5 min, ... after the ninth
// 24 h; the tenth failed attempt is the last, and the webhook is disabled.
var Schedule = [...]time.Duration{
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	14 * time.Hour,
	20 * time.Hour,
	24 * time.Hour,
}

// MaxAttempts is the number of attempts a delivery gets before the webhook is disabled.
const MaxAttempts = len(Schedule) + 1

// NextAttempt says how long after attempt (1 for the first) failed to try again, and
// false when that attempt was the last: the delivery is given up and the webhook
// disabled. An attempt below 1 counts as the first.
func NextAttempt(attempt int) (time.Duration, bool) {
	attempt = max(attempt, 1)
	if attempt > len(Schedule) {
		return 0, false
	}
	return Schedule[attempt-1], true
}

// Outcome is what an attempt's answer means for the delivery and the webhook.
type Outcome int

const (
	// Retry: no 2xx answer (another status, a redirect, a timeout, a refused address,
	// a name that does not resolve); NextAttempt says when.
	Retry Outcome = iota
	// Delivered: a 2xx answer.
	Delivered
	// Gone: 410 Gone; the webhook is disabled at once.
	Gone
)

func (o Outcome) String() string {
	switch o {
	case Delivered:
		return "delivered"
	case Gone:
		return "gone"
	default:
		return "retry"
	}
}

// Classify is the Outcome of an attempt answered with status (0: no answer).
func Classify(status int) Outcome {
	switch {
	case status >= 200 && status <= 299:
		return Delivered
	case status == 410:
		return Gone
	default:
		return Retry
	}
}
